package workflow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestGrouperForgetsExpiredGroupsOfEveryKey: a long run that sees many
// keys once each (the firings of a storm on one instance each, or senders
// whose Alert DNA differs per alert) holds only the groups that have not
// expired, not one per key it ever saw (issue [miss-path]: serve's heap
// grew with the keys, since a key forgot its old groups only when it
// opened a new one).
func TestGrouperForgetsExpiredGroupsOfEveryKey(t *testing.T) {
	const keys = 20000
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	now := start.Add(keys * time.Minute)
	g := &grouper{window: time.Hour, gate: newTurnstile(), now: func() time.Time { return now }, open: map[openrecall.GroupKey][]*openGroup{}}
	ctx := context.Background()
	// One firing a minute, each of its own key: 24 h of them (1,440) are
	// not expired at any moment.
	live := int(forgetAfter * g.window / time.Minute)
	peak := 0
	for i := range keys {
		key := openrecall.GroupKey{Identity: openrecall.Identity{Rule: "InstanceDown", Service: fmt.Sprintf("node-%d", i)}}
		at := start.Add(time.Duration(i) * time.Minute)
		g.saw(at)
		og, err := g.joinable(ctx, key, openrecall.SeverityMedium, at)
		if err != nil || og != nil {
			t.Fatalf("firing %d: joined %v, %v; want a group of its own", i, og, err)
		}
		g.add(&openGroup{id: fmt.Sprint("g-", i), key: key, last: at, done: make(chan struct{})})
		held := 0
		for _, list := range g.open {
			held += len(list)
		}
		if held != g.held || len(g.open) > held {
			t.Fatalf("firing %d: %d groups in %d keys, counted %d", i, held, len(g.open), g.held)
		}
		peak = max(peak, held)
	}
	if limit := 2*(live+1) + minSweep; peak > limit {
		t.Errorf("the grouper held up to %d groups of %d keys seen once each; want at most %d (twice the %d not expired, plus %d)", peak, keys, limit, live, minSweep)
	}
}
