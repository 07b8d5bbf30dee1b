package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/runner"
)

// persistDecided stores one result per decision as serve does (an inbox
// delivery claimed, its result persisted through the Sink) at the env's
// clock: a benign decision bypassed by memory (closed without a person),
// any other left to a person. It returns the analysis ids.
func (e *dispatchEnv) persistDecided(decisions ...openrecall.Decision) []string {
	e.t.Helper()
	ctx := context.Background()
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	for i := range decisions {
		a := firingAlert(fmt.Sprintf("crash-%d-%d", e.clock.Now().Unix(), i))
		if _, err := e.store.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alerts", Alert: a}}, 0, name); err != nil {
			e.t.Fatal(err)
		}
	}
	ds, err := e.store.Claim(ctx, len(decisions))
	if err != nil || len(ds) != len(decisions) {
		e.t.Fatalf("claim: %d deliveries, %v", len(ds), err)
	}
	rs := make([]openrecall.Result, len(ds))
	ids := make([]string, len(ds))
	for i, d := range ds {
		r := openrecall.Result{AnalysisID: d.AnalysisID, Batch: "digest", Alert: d.Alert, Outcome: openrecall.ResultTriaged,
			Decision: decisions[i], Identity: openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout"},
			Fingerprint: openrecall.Fingerprint{ErrorClass: "crashloopbackoff"}}
		if decisions[i].Benign() {
			r.Bypassed = true
		} else {
			r.Triage.RequiresHumanApproval = true
		}
		r.Audit = audit.Entries(r, e.clock.Now())
		rs[i], ids[i] = r, d.AnalysisID
	}
	if _, err := e.sink.PersistBatch(ctx, rs, make([]*openrecall.CostPoint, len(rs))); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// digestHook is a webhook endpoint on loopback that records the digest
// bodies it receives.
type digestHook struct {
	recv   notify.Receiver
	mu     sync.Mutex
	bodies []notify.WebhookDigestBody
}

func newDigestHook(t *testing.T, name string) *digestHook {
	t.Helper()
	h := &digestHook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b notify.WebhookDigestBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Errorf("%s: body: %v", name, err)
		}
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	url, err := notify.ParseSecret(srv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	if h.recv, err = notify.NewWebhook(notify.WebhookConfig{Name: name, URL: url}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *digestHook) received() []notify.WebhookDigestBody {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]notify.WebhookDigestBody(nil), h.bodies...)
}

// digestIntents returns the digest intents in the outbox, as
// "receiver analysis_id state".
func (e *dispatchEnv) digestIntents() []string {
	e.t.Helper()
	all, err := e.store.Intents(context.Background(), openrecall.IntentFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, in := range all {
		if in.Kind == openrecall.IntentDigest {
			out = append(out, in.Receiver+" "+in.AnalysisID+" "+in.State)
		}
	}
	return out
}

// TestDigestOncePerWindowAcrossProcesses: two serve processes sharing the
// outbox write a window's digest once per receiver, and only once the
// window ended and settled; an empty window sends nothing; the digest
// delivered counts exactly the window's analyses closed without a person
// (not the escalated one, not the next window's), by identity, with links.
func TestDigestOncePerWindowAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	e := newDispatchEnv(t, memory.Options{Instance: "a"})
	second := openStore(t, e.location, memory.Options{Now: e.clock.Now, Instance: "b"})
	hook := newDigestHook(t, "chat")
	every := map[string]time.Duration{"chat": 30 * time.Minute}

	// t0 is 12:00: the window [12:00, 12:30) holds three closures and an
	// escalation; the next window one closure.
	e.clock.Add(5 * time.Minute)
	closed := e.persistDecided(openrecall.DecisionKnownBenign, openrecall.DecisionEscalated, openrecall.DecisionDuplicate)
	e.clock.Add(20 * time.Minute)
	closed = append(closed[:1], closed[2], e.persistDecided(openrecall.DecisionFalsePositive)[0])
	e.clock.Add(5*time.Minute + 30*time.Second) // 12:30:30
	e.persistDecided(openrecall.DecisionKnownBenign)

	mk := func(st *memory.Store) *runner.Dispatcher {
		d, err := runner.NewDispatcher(runner.DispatchConfig{Outbox: st, Reader: st, Digests: st, DigestEvery: every,
			Receivers: []notify.Receiver{hook.recv}, Now: e.clock.Now, Logger: e.log})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := mk(e.store), mk(second)
	// 12:30:30: the window ended, but not a minute ago: completions
	// stamped before its end may still be committing.
	if n, err := a.DigestPass(ctx); err != nil || n != 0 {
		t.Fatalf("before the window settled: wrote %d, %v", n, err)
	}
	e.clock.Add(time.Minute) // 12:31:30
	var wg sync.WaitGroup
	wrote := make([]int, 2)
	for i, d := range []*runner.Dispatcher{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := d.DigestPass(ctx)
			if err != nil {
				t.Error(err)
			}
			wrote[i] = n
		}()
	}
	wg.Wait()
	window := openrecall.DigestID(t0, t0.Add(30*time.Minute))
	if wrote[0]+wrote[1] != 1 {
		t.Errorf("the two processes wrote %v digests, want 1 in all", wrote)
	}
	if got := e.digestIntents(); len(got) != 1 || got[0] != "chat "+window+" pending" {
		t.Errorf("digest intents %q, want one for %s (the earlier windows are empty)", got, window)
	}

	run := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{hook.recv}, Digests: e.store, DigestEvery: every,
		ReviewURL: func(id string) string { return "https://openrecall.example.com/results/" + id }})
	waitFor(t, "the digest is delivered", func() bool { return len(hook.received()) == 1 })
	quiet(run)
	run.stop()
	got := hook.received()
	if len(got) != 1 {
		t.Fatalf("%d digests delivered, want 1", len(got))
	}
	dg := got[0].Digest
	if got[0].Kind != "digest" || got[0].Key != runner.DigestKey(window) || dg.Closed != 3 || !dg.From.Equal(t0) ||
		len(dg.Identities) != 1 || dg.Identities[0].Count != 3 || len(dg.Families) != 1 || dg.Families[0].Count != 3 {
		t.Fatalf("the digest %+v, want 3 closures of KubePodCrashLooping @ checkout in [12:00, 12:30)", got[0])
	}
	var links []string
	for _, l := range dg.Identities[0].Analyses {
		links = append(links, l.AnalysisID)
		if l.ReviewURL != "https://openrecall.example.com/results/"+l.AnalysisID {
			t.Errorf("link %+v", l)
		}
	}
	// The latest completed first: the false positive at 12:25, then the
	// two of 12:05 (newest id first).
	if want := []string{closed[2], closed[1], closed[0]}; strings.Join(links, " ") != strings.Join(want, " ") {
		t.Errorf("links %v, want %v", links, want)
	}
	if got := e.digestIntents(); len(got) != 1 || got[0] != "chat "+window+" sent" {
		t.Errorf("digest intents after delivery %q", got)
	}
	// A sent digest keeps no delivery state: it is pruned as any sent
	// intent is.
	if ins, _ := e.store.Intents(ctx, openrecall.IntentFilter{AnalysisID: window}); len(ins) != 1 || ins[0].Delivery != nil {
		t.Errorf("the sent digest %+v keeps a state", ins)
	}
	// Writing again, from either process, writes nothing.
	for _, d := range []*runner.Dispatcher{a, b} {
		if n, err := d.DigestPass(ctx); err != nil || n != 0 {
			t.Errorf("a second pass wrote %d, %v", n, err)
		}
	}
}

// TestDigestRunsInTheDispatcher: the running dispatcher writes and sends
// each window's digest by itself, once, however often it looks.
func TestDigestRunsInTheDispatcher(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{})
	hook := newDigestHook(t, "chat")
	e.clock.Add(time.Minute)
	e.persistDecided(openrecall.DecisionKnownBenign, openrecall.DecisionKnownBenign)
	e.clock.Add(31 * time.Minute) // 12:32: [12:00, 12:30) ended and settled
	run := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{hook.recv}, Digests: e.store,
		DigestEvery: map[string]time.Duration{"chat": 30 * time.Minute}, DigestPoll: 10 * time.Millisecond})
	waitFor(t, "the digest is delivered", func() bool { return len(hook.received()) == 1 })
	time.Sleep(100 * time.Millisecond) // ten more looks
	quiet(run)
	if got := hook.received(); len(got) != 1 || got[0].Digest.Closed != 2 {
		t.Errorf("digests delivered %+v, want one of 2 closures", got)
	}
}

// TestDigestOfAnEmptiedWindowIsADeadLetter: a digest whose window holds
// nothing closed any more when it is sent (its results pruned) is a dead
// letter that says so, and nothing is sent.
func TestDigestOfAnEmptiedWindowIsADeadLetter(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{})
	hook := newDigestHook(t, "chat")
	id := openrecall.DigestID(t0, t0.Add(30*time.Minute))
	if n, err := e.store.AddDigest(context.Background(), id, runner.DigestKey(id), []string{"chat"}); err != nil || n != 1 {
		t.Fatalf("add digest: %d, %v", n, err)
	}
	run := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{hook.recv}, Digests: e.store})
	waitFor(t, "the digest is a dead letter", func() bool { return strings.HasSuffix(strings.Join(e.digestIntents(), ""), " dead") })
	quiet(run)
	ins, err := e.store.Intents(context.Background(), openrecall.IntentFilter{AnalysisID: id})
	if err != nil || len(ins) != 1 || !strings.Contains(ins[0].LastError, "holds no analysis closed without a person") {
		t.Errorf("the dead letter %+v, %v", ins, err)
	}
	if n := len(hook.received()); n != 0 {
		t.Errorf("%d digests sent", n)
	}
}

// TestDispatcherRefusesImpossibleDigests: a digest needs a store, a
// receiver of that name that takes digests, and a window from a minute to
// a day.
func TestDispatcherRefusesImpossibleDigests(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{})
	hook := newDigestHook(t, "chat")
	pd, err := notify.NewPagerDuty(notify.PagerDutyConfig{Name: "pager", RoutingKey: mustSecret(t, strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	recvs := []notify.Receiver{hook.recv, pd}
	tests := []struct {
		name  string
		store runner.Digests
		every map[string]time.Duration
		want  string
	}{
		{"no store", nil, map[string]time.Duration{"chat": time.Hour}, "without a store"},
		{"unknown receiver", e.store, map[string]time.Duration{"mail": time.Hour}, "mail, which is not a receiver"},
		{"a pager", e.store, map[string]time.Duration{"pager": time.Hour}, "pager, a pagerduty receiver, which pages"},
		{"too short", e.store, map[string]time.Duration{"chat": time.Second}, "every 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runner.NewDispatcher(runner.DispatchConfig{Outbox: e.store, Reader: e.store, Receivers: recvs, Digests: tt.store, DigestEvery: tt.every})
			if !errors.Is(err, openrecall.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewDispatcher: %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
}

func mustSecret(t *testing.T, s string) notify.Secret {
	t.Helper()
	v, err := notify.ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
