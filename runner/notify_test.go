package runner_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// TestServedResultsAreNotified: a result the routes send to a receiver is
// written with its intent and delivered by the runner's dispatcher —
// the escalated alert's trigger, then its recovery's resolve with the same
// key — while what the routes send nowhere notifies no one; and Run
// returns only once the sends in flight ended.
func TestServedResultsAreNotified(t *testing.T) {
	var mu sync.Mutex
	var got []notify.WebhookBody
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b notify.WebhookBody
		if err := json.NewDecoder(r.Body).Decode(&b); err == nil {
			mu.Lock()
			got = append(got, b)
			mu.Unlock()
		}
	}))
	defer hook.Close()
	e := newEnv(t, options{webhook: hook.URL})
	fired := e.wait(e.enqueue(`{"id":"ssh-1","title":"Brute force: 500 failed ssh logins for root from 203.0.113.9","service":"bastion","severity":"high"}`))
	if d := fired.Result.Decision; d != openrecall.DecisionEscalated && d != openrecall.DecisionReal {
		t.Fatalf("the brute force was decided %s, want it left to a person", d)
	}
	recovered := e.wait(e.enqueue(`{"id":"ssh-1","title":"Brute force: 500 failed ssh logins for root from 203.0.113.9","service":"bastion","severity":"high","status":"resolved"}`))
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("the webhook got %d notifications, want 2 (trigger, resolve): %+v", len(got), got)
	}
	key := notify.EpisodeKey(fired.AnalysisID)
	if got[0].Kind != notify.KindTrigger || got[0].Key != key || got[0].AnalysisID != fired.AnalysisID {
		t.Errorf("first notification %s %s about %s, want the trigger %s about %s", got[0].Kind, got[0].Key, got[0].AnalysisID, key, fired.AnalysisID)
	}
	if got[1].Kind != notify.KindResolve || got[1].Key != key || got[1].AnalysisID != recovered.AnalysisID {
		t.Errorf("second notification %s %s about %s, want the resolve %s about %s", got[1].Kind, got[1].Key, got[1].AnalysisID, key, recovered.AnalysisID)
	}
	pending, err := e.store.OutboxCounts(t.Context())
	if err != nil || pending.Pending != 0 || pending.Dead != 0 {
		t.Errorf("outbox after the run: %+v, %v; want nothing pending or dead", pending, err)
	}
}
