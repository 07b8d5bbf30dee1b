package cockpit_test

import (
	"testing"
	"time"

	"github.com/openrecall/openrecall/server/cockpit"
)

// TestThrottleBackoffGrows: past the free failures each failure blocks an
// address for twice the last block, up to the maximum, also for a guesser
// who tries once as each block ends (time blocked forgives nothing); quiet
// unblocked time forgives one failure per Decay; a success forgives the
// address; other addresses are not blocked; IPv6 addresses count by /64.
func TestThrottleBackoffGrows(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	per := cockpit.Backoff{Free: 2, Base: time.Second, Max: 10 * time.Second, Decay: time.Minute}
	th := cockpit.NewThrottle(per, cockpit.Backoff{Free: 1000, Base: time.Second, Max: time.Second, Decay: time.Second}, func() time.Time { return now })
	const a = "192.0.2.1"
	th.Fail(a)
	th.Fail(a)
	if _, ok := th.Allow(a); !ok {
		t.Fatal("blocked within the free failures")
	}
	var blocks []time.Duration
	for range 6 {
		th.Fail(a)
		wait, ok := th.Allow(a)
		if ok {
			t.Fatal("not blocked past the free failures")
		}
		blocks = append(blocks, wait)
		now = now.Add(wait)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if blocks[i] != want[i] {
			t.Fatalf("blocks %v, want %v", blocks, want)
		}
	}
	if _, ok := th.Allow("192.0.2.2"); !ok {
		t.Error("another address blocked")
	}
	// Six minutes unblocked forgive six of the eight failures: the next
	// failure is the third, blocked a second.
	now = now.Add(6 * time.Minute)
	th.Fail(a)
	if wait, ok := th.Allow(a); ok || wait != time.Second {
		t.Errorf("after six quiet minutes: wait %v, want 1s", wait)
	}
	now = now.Add(time.Second)
	th.Succeed(a)
	th.Fail(a)
	if _, ok := th.Allow(a); !ok {
		t.Error("a failure after a success blocked at once")
	}
	// One host's IPv6 /64 is one address.
	for _, v6 := range []string{"2001:db8::1", "2001:db8::2", "2001:db8::3"} {
		th.Fail(v6)
	}
	if _, ok := th.Allow("2001:db8::ffff"); ok {
		t.Error("a /64 not counted as one address")
	}
}
