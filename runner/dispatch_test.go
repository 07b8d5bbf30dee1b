package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/runner"
)

// t0 is when the dispatch tests' clock starts.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testClock is a clock that stands still until the test moves it: the
// store's (NextAt, Since) and the dispatcher's, shared.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// dispatchEnv is an outbox in a real store (a SQLite file, or the test's
// PostgreSQL schema) whose results are stored as serve stores them: an
// inbox delivery claimed, and its result persisted by memory.Sink with a
// Notify hook that sends every result to the env's receivers.
type dispatchEnv struct {
	t     *testing.T
	clock *testClock
	// location is where the store lives, for a second process's.
	location string
	store    *memory.Store
	sink     memory.Sink
	obs      *dispatchEvents
	logs     *observer.ObservedLogs
	log      *zap.Logger
}

func newDispatchEnv(t *testing.T, opts memory.Options, receivers ...string) *dispatchEnv {
	t.Helper()
	clock := &testClock{t: t0}
	opts.Now = clock.Now
	e := &dispatchEnv{t: t, clock: clock, location: storetest.Location(t), obs: &dispatchEvents{}}
	e.store = openStore(t, e.location, opts)
	sealer := storetest.Keyed(t, e.store, trailKey)
	e.sink = memory.Sink{Store: e.store, Seal: sealer.Seal, SealCosts: sealer.SealCosts, Notify: notifyTo(receivers...), Waits: waitsWhenEscalated}
	core, logs := observer.New(zapcore.DebugLevel)
	e.logs, e.log = logs, zap.New(core)
	return e
}

// openStore opens the memory at location, closed when t ends.
func openStore(t *testing.T, location string, opts memory.Options) *memory.Store {
	t.Helper()
	st, err := memory.Open(context.Background(), location, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// notifyTo is a Notify hook that gives every result an intent for each of
// receivers: a resolve for a resolved alert, a trigger otherwise, keyed by
// the alert's id (one episode per alert in these tests).
func notifyTo(receivers ...string) memory.NotifyFunc {
	return func(r openrecall.Result, _ string) []openrecall.Intent {
		kind := openrecall.IntentTrigger
		if r.Alert.Status == openrecall.StatusResolved {
			kind = openrecall.IntentResolve
		}
		var out []openrecall.Intent
		for _, name := range receivers {
			out = append(out, openrecall.Intent{Receiver: name, Kind: kind, Key: "openrecall-" + r.Alert.ID})
		}
		return out
	}
}

// waitsWhenEscalated records an escalated result as waiting for a person.
func waitsWhenEscalated(r openrecall.Result) (openrecall.Waiting, bool) {
	if r.Decision != openrecall.DecisionEscalated {
		return openrecall.Waiting{}, false
	}
	return openrecall.Waiting{AnalysisID: r.AnalysisID, Batch: r.Batch, Reason: openrecall.WaitEscalated, Why: "escalated",
		Severity: r.Alert.Severity, Title: r.Alert.Title, AlertID: r.Alert.ID}, true
}

func firingAlert(id string) openrecall.Alert {
	return openrecall.Alert{ID: id, Title: "disk full on " + id, Severity: "high", Status: openrecall.StatusFiring}
}

func resolvedAlert(id string) openrecall.Alert {
	a := firingAlert(id)
	a.Status = openrecall.StatusResolved
	return a
}

// persist accepts alerts into the inbox one by one, claims them and stores
// their results in one batch (with their intents), and returns their
// analysis ids. A firing alert's result is decided real, or escalated when
// its id starts with "esc"; a resolved alert's is a recorded recovery.
func (e *dispatchEnv) persist(alerts ...openrecall.Alert) []string {
	e.t.Helper()
	ctx := context.Background()
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	for _, a := range alerts {
		if _, err := e.store.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alerts", Alert: a}}, 0, name); err != nil {
			e.t.Fatal(err)
		}
	}
	ds, err := e.store.Claim(ctx, len(alerts))
	if err != nil || len(ds) != len(alerts) {
		e.t.Fatalf("claim: %d deliveries, %v; want %d", len(ds), err, len(alerts))
	}
	results := make([]openrecall.Result, len(ds))
	ids := make([]string, len(ds))
	for i, d := range ds {
		r := openrecall.Result{AnalysisID: d.AnalysisID, Batch: "dispatch", Alert: d.Alert, Outcome: openrecall.ResultTriaged,
			Decision: openrecall.DecisionReal,
			Steps:    []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Reason: "the disk filled", Outcome: openrecall.OutcomeOK}}}
		switch {
		case d.Alert.Status == openrecall.StatusResolved:
			r.Outcome, r.Decision = openrecall.ResultResolved, ""
		case strings.HasPrefix(d.Alert.ID, "esc"):
			r.Decision = openrecall.DecisionEscalated
		}
		r.Audit = audit.Entries(r, e.clock.Now())
		results[i], ids[i] = r, d.AnalysisID
	}
	if _, err := e.sink.PersistBatch(ctx, results, make([]*openrecall.CostPoint, len(results))); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// intents returns receiver's intents, oldest first.
func (e *dispatchEnv) intents(receiver string) []openrecall.OutboxIntent {
	e.t.Helper()
	got, err := e.store.Intents(context.Background(), openrecall.IntentFilter{Receiver: receiver})
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Reverse(got)
	return got
}

// states returns the states of receiver's intents, oldest first.
func (e *dispatchEnv) states(receiver string) []string {
	e.t.Helper()
	var out []string
	for _, in := range e.intents(receiver) {
		out = append(out, in.State)
	}
	return out
}

// running is a dispatcher the test runs.
type running struct {
	d *runner.Dispatcher
	// stop closes the dispatcher's halt channel and waits for Run.
	stop func()
	done <-chan struct{}
}

// run starts a dispatcher over the env's store with cfg (its Outbox and
// Reader default to the store), the env's clock, observer and logger, a
// poll of 20ms and, unless cfg says, a jitter of one half and a back-off
// base of 2s: a first retry waits exactly one second. It is stopped when
// the test ends.
func (e *dispatchEnv) run(cfg runner.DispatchConfig) *running {
	e.t.Helper()
	if cfg.Outbox == nil {
		cfg.Outbox = e.store
	}
	if cfg.Reader == nil {
		cfg.Reader = e.store
	}
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0.5 }
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = 2 * time.Second
	}
	cfg.Now, cfg.Observer, cfg.Logger, cfg.Poll = e.clock.Now, e.obs, e.log, 20*time.Millisecond
	d, err := runner.NewDispatcher(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(testenv.Remaining(e.t)))
	halt := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, halt)
	}()
	var once sync.Once
	r := &running{d: d, done: done, stop: func() {
		once.Do(func() {
			close(halt)
			<-done
			cancel()
		})
	}}
	e.t.Cleanup(r.stop)
	return r
}

// waitFor polls until cond holds, failing the test if it does not within
// waitLimit (or before the test's deadline nears): a bound on a hang, not
// on speed, since what it waits for takes milliseconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	limit := time.Now().Add(min(waitLimit, testenv.Remaining(t)))
	for !cond() {
		if time.Now().After(limit) {
			t.Fatalf("%s: not within %s", what, waitLimit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLimit bounds each wait of the dispatch tests.
const waitLimit = 20 * time.Second

// quiet gives the dispatcher a moment (woken) in which nothing it should
// not do may happen; the assertions after it can fail, never pass by luck.
func quiet(r *running) {
	r.d.Wake()
	time.Sleep(150 * time.Millisecond)
}

// dispatchEvents records what the dispatcher observes.
type dispatchEvents struct {
	mu   sync.Mutex
	list []string
}

func (o *dispatchEvents) add(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, s)
}

func (o *dispatchEvents) Sent(receiver, kind string, _ time.Duration) {
	o.add("sent " + receiver + " " + kind)
}
func (o *dispatchEvents) Dead(receiver string)      { o.add("dead " + receiver) }
func (o *dispatchEvents) LeaseLost(receiver string) { o.add("lease-lost " + receiver) }
func (o *dispatchEvents) Failed(receiver string, retried bool) {
	if retried {
		o.add("failed " + receiver + " retried")
	} else {
		o.add("failed " + receiver + " given up")
	}
}

// all returns the events so far.
func (o *dispatchEvents) all() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.list)
}

// count counts the events equal to ev.
func (o *dispatchEvents) count(ev string) int {
	n := 0
	for _, got := range o.all() {
		if got == ev {
			n++
		}
	}
	return n
}

// hook is a webhook endpoint on loopback behind the real webhook receiver:
// it records each request and answers as answer says (200 when answer
// writes nothing).
type hook struct {
	recv   notify.Receiver
	mu     sync.Mutex
	bodies []notify.WebhookBody
	ids    []string // the notification id header of each request
	// answer answers the n-th request (from 1); it may block.
	answer func(w http.ResponseWriter, n int)
}

// newHook serves a webhook receiver named name at a loopback URL whose
// path carries token (a credential, as such URLs do).
func newHook(t *testing.T, name, token string, answer func(w http.ResponseWriter, n int)) *hook {
	t.Helper()
	h := &hook{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b notify.WebhookBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Errorf("%s: body: %v", name, err)
		}
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.ids = append(h.ids, r.Header.Get(notify.WebhookIDHeader))
		n := len(h.bodies)
		h.mu.Unlock()
		if h.answer != nil {
			h.answer(w, n)
		}
	}))
	t.Cleanup(srv.Close)
	url, err := notify.ParseSecret(srv.URL + "/hooks/" + token)
	if err != nil {
		t.Fatal(err)
	}
	if h.recv, err = notify.NewWebhook(notify.WebhookConfig{Name: name, URL: url}); err != nil {
		t.Fatal(err)
	}
	return h
}

// requests returns the bodies received so far.
func (h *hook) requests() []notify.WebhookBody {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.bodies)
}

// idHeaders returns the notification id header of each request so far.
func (h *hook) idHeaders() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ids)
}

// kinds returns the kinds of the requests so far, with their alert ids.
func (h *hook) kinds() []string {
	var out []string
	for _, b := range h.requests() {
		out = append(out, b.Kind+" "+b.Alert.ID)
	}
	return out
}

// status answers a request with code and, when given, a Retry-After.
func status(w http.ResponseWriter, code int, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"error":"answered %d"}`, code)
}

// gate blocks requests until opened (once, from any goroutine).
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// TestDispatchDeliversOnceAndMarksSent: one stored result's intent is
// posted once, with the notification a receiver needs (kind, episode key,
// the intent's stable id, the result, the review link, when it was made),
// and marked sent; nothing is posted again.
func TestDispatchDeliversOnceAndMarksSent(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", nil)
	ids := e.persist(firingAlert("x"))
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv},
		ReviewURL: func(id string) string { return "https://openrecall.example.com/results/" + id }})
	waitFor(t, "the intent sent", func() bool { return e.obs.count("sent hook trigger") == 1 })
	quiet(r)

	ins := e.intents("hook")
	if len(ins) != 1 || ins[0].State != openrecall.IntentSent || ins[0].Attempts != 1 || ins[0].SentAt.IsZero() {
		t.Fatalf("intents %+v, want one sent at the first attempt", ins)
	}
	got := h.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	b := got[0]
	type made struct {
		Kind, Key, ID, AnalysisID, ReviewURL, AlertID string
		Decision                                      openrecall.Decision
		At                                            time.Time
	}
	want := made{Kind: openrecall.IntentTrigger, Key: "openrecall-x", ID: runner.IntentNotificationID(ins[0].ID), AnalysisID: ids[0],
		ReviewURL: "https://openrecall.example.com/results/" + ids[0], AlertID: "x", Decision: openrecall.DecisionReal, At: ins[0].CreatedAt}
	if diff := cmp.Diff(want, made{Kind: b.Kind, Key: b.Key, ID: b.ID, AnalysisID: b.AnalysisID, ReviewURL: b.ReviewURL, AlertID: b.Alert.ID,
		Decision: b.Decision, At: b.At}); diff != "" {
		t.Errorf("the notification (-want +got):\n%s", diff)
	}
	if ids := h.idHeaders(); ids[0] != b.ID {
		t.Errorf("id header %q, body id %q", ids[0], b.ID)
	}
	if diff := cmp.Diff([]string{"sent hook trigger"}, e.obs.all()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}

// TestDispatchRetriesWithBackoff: a 500 is tried again after the back-off
// (full jitter over the base doubled per attempt, capped at the max), not
// before, under the same notification id; the 200 after it marks the
// intent sent.
func TestDispatchRetriesWithBackoff(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", func(w http.ResponseWriter, n int) {
		if n <= 3 {
			status(w, http.StatusInternalServerError, "")
		}
	})
	e.persist(firingAlert("x"))
	// Jitter one half: the first retry waits half of 2s, the second half
	// of 4s, the third half of min(8s, 5s).
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}, BackoffBase: 2 * time.Second, BackoffMax: 5 * time.Second})

	steps := []struct {
		wait time.Duration // the back-off after the failure
	}{{time.Second}, {2 * time.Second}, {2500 * time.Millisecond}}
	for i, st := range steps {
		attempt := i + 1
		waitFor(t, fmt.Sprintf("failure %d recorded", attempt), func() bool { return e.obs.count("failed hook retried") == attempt })
		in := e.intents("hook")[0]
		if want := e.clock.Now().Add(st.wait); in.State != openrecall.IntentPending || in.Attempts != attempt || !in.NextAt.Equal(want) ||
			!strings.Contains(in.LastError, "500") {
			t.Fatalf("after failure %d: %s, attempt %d, next at %s, last error %q; want pending, next at %s, a 500",
				attempt, in.State, in.Attempts, in.NextAt, in.LastError, want)
		}
		e.clock.Add(st.wait - time.Millisecond)
		quiet(r)
		if n := len(h.requests()); n != attempt {
			t.Fatalf("%d requests a millisecond before the back-off ended, want %d", n, attempt)
		}
		e.clock.Add(time.Millisecond)
		r.d.Wake()
	}
	waitFor(t, "the intent sent", func() bool { return e.obs.count("sent hook trigger") == 1 })
	if got := e.states("hook"); !slices.Equal(got, []string{openrecall.IntentSent}) {
		t.Errorf("states %v, want sent", got)
	}
	in := e.intents("hook")[0]
	wantID := runner.IntentNotificationID(in.ID)
	if ids := h.idHeaders(); !slices.Equal(ids, slices.Repeat([]string{wantID}, 4)) {
		t.Errorf("notification ids %v, want %s on each of the 4 tries", ids, wantID)
	}
}

// TestDispatchHonoursRetryAfter: a 429 with Retry-After: 3 is not tried
// again before three seconds have passed, however short the back-off.
func TestDispatchHonoursRetryAfter(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", func(w http.ResponseWriter, n int) {
		if n == 1 {
			status(w, http.StatusTooManyRequests, "3")
		}
	})
	e.persist(firingAlert("x"))
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}, Rand: func() float64 { return 0 }})
	waitFor(t, "the 429 recorded", func() bool { return e.obs.count("failed hook retried") == 1 })
	if in := e.intents("hook")[0]; !in.NextAt.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("next try at %s, want %s: the Retry-After", in.NextAt, t0.Add(3*time.Second))
	}
	e.clock.Add(2 * time.Second)
	quiet(r)
	if n := len(h.requests()); n != 1 {
		t.Fatalf("%d requests two seconds after a Retry-After of three, want 1", n)
	}
	e.clock.Add(time.Second)
	r.d.Wake()
	waitFor(t, "the intent sent", func() bool { return e.obs.count("sent hook trigger") == 1 })
	if n := len(h.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestDispatchDeadLettersARefusal: a 400 makes the intent a dead letter at
// once, keeping the receiver's answer (its URL's credential masked) and
// logging nothing of the credential; it is not tried again.
func TestDispatchDeadLettersARefusal(t *testing.T) {
	const token = "tok-0123456789abcdef0123456789"
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", token, func(w http.ResponseWriter, n int) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":"no such field at /hooks/%s"}`, token)
	})
	e.persist(firingAlert("x"))
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}})
	waitFor(t, "the dead letter", func() bool { return e.obs.count("dead hook") == 1 })
	quiet(r)
	if n := len(h.requests()); n != 1 {
		t.Fatalf("%d requests, want 1: a refusal is not retried", n)
	}
	in := e.intents("hook")[0]
	if in.State != openrecall.IntentDead || !strings.Contains(in.LastError, "400") || !strings.Contains(in.LastError, "no such field") {
		t.Errorf("intent %s with last error %q, want dead with the 400's answer", in.State, in.LastError)
	}
	if diff := cmp.Diff([]string{"failed hook given up", "dead hook"}, e.obs.all()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	if strings.Contains(in.LastError, token) {
		t.Errorf("the dead letter shows the URL's credential: %q", in.LastError)
	}
	for _, entry := range e.logs.All() {
		if line := fmt.Sprint(entry.Message, entry.ContextMap()); strings.Contains(line, token) {
			t.Errorf("a log line shows the URL's credential: %s", line)
		}
	}
	if len(e.logs.FilterMessageSnippet("dead letter").All()) != 1 {
		t.Errorf("logs %v, want one dead letter warning", e.logs.All())
	}
}

// TestDispatchDeadLettersPastMaxAge: an intent that keeps failing is tried
// again until its tries began MaxAge ago, then is a dead letter.
func TestDispatchDeadLettersPastMaxAge(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", func(w http.ResponseWriter, _ int) { status(w, http.StatusInternalServerError, "") })
	e.persist(firingAlert("x"))
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}, MaxAge: 10 * time.Second})
	waitFor(t, "the first failure", func() bool { return e.obs.count("failed hook retried") == 1 })
	e.clock.Add(9 * time.Second)
	r.d.Wake()
	waitFor(t, "the second failure", func() bool { return e.obs.count("failed hook retried") == 2 })
	if in := e.intents("hook")[0]; in.State != openrecall.IntentPending {
		t.Fatalf("intent %s nine seconds into a max age of ten, want pending", in.State)
	}
	e.clock.Add(time.Hour) // past any back-off, and the max age
	r.d.Wake()
	waitFor(t, "the dead letter", func() bool { return e.obs.count("dead hook") == 1 })
	in := e.intents("hook")[0]
	if in.State != openrecall.IntentDead || in.Attempts != 3 || !strings.Contains(in.LastError, "500") || !strings.Contains(in.LastError, "max age") {
		t.Errorf("intent %s after %d attempts, last error %q; want dead after 3, saying 500 and max age", in.State, in.Attempts, in.LastError)
	}
	if diff := cmp.Diff([]string{"failed hook retried", "failed hook retried", "failed hook given up", "dead hook"}, e.obs.all()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}

// TestDispatchReceiversDoNotHoldEachOtherUp: a receiver that refuses
// everything and one that never answers (every slot held) do not hold up
// a third receiver's deliveries.
func TestDispatchReceiversDoNotHoldEachOtherUp(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "bad", "stuck", "good")
	bad := newHook(t, "bad", "", func(w http.ResponseWriter, _ int) { status(w, http.StatusBadRequest, "") })
	g := newGate()
	stuck := newHook(t, "stuck", "", func(http.ResponseWriter, int) { <-g.ch })
	good := newHook(t, "good", "", nil)
	var alerts []openrecall.Alert
	for i := range 6 {
		alerts = append(alerts, firingAlert(fmt.Sprintf("a%d", i)))
	}
	e.persist(alerts...)
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{bad.recv, stuck.recv, good.recv}, Concurrency: 2})
	defer g.open()
	waitFor(t, "good's deliveries", func() bool { return e.obs.count("sent good trigger") == 6 })
	waitFor(t, "bad's dead letters", func() bool { return e.obs.count("dead bad") == 6 })
	waitFor(t, "stuck's 2 slots full", func() bool { return len(stuck.requests()) >= 2 })
	quiet(r)
	if n := len(stuck.requests()); n != 2 {
		t.Errorf("stuck has %d requests, want its 2 slots full and no more", n)
	}
	want := slices.Repeat([]string{openrecall.IntentSent}, 6)
	if got := e.states("good"); !slices.Equal(got, want) {
		t.Errorf("good's intents %v, want all sent", got)
	}
	g.open()
	waitFor(t, "stuck's deliveries once it answers", func() bool { return e.obs.count("sent stuck trigger") == 6 })
}

// TestDispatchBoundsConcurrencyPerReceiver: no more than Concurrency sends
// to one receiver are in flight at once, and that many are.
func TestDispatchBoundsConcurrencyPerReceiver(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	var now, most atomic.Int64
	g := newGate()
	h := newHook(t, "hook", "", func(http.ResponseWriter, int) {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-g.ch
	})
	var alerts []openrecall.Alert
	for i := range 7 {
		alerts = append(alerts, firingAlert(fmt.Sprintf("a%d", i)))
	}
	e.persist(alerts...)
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}, Concurrency: 3})
	defer g.open()
	waitFor(t, "three sends in flight", func() bool { return now.Load() == 3 })
	quiet(r)
	if n, m := len(h.requests()), most.Load(); n != 3 || m != 3 {
		t.Fatalf("%d requests, at most %d at once, while three are held; want 3 and 3", n, m)
	}
	g.open()
	waitFor(t, "every delivery", func() bool {
		// Nothing here fails a send: one that did (a loaded machine's
		// timeout) waits for a clock the test does not move, so say so
		// rather than wait out the limit.
		if e.obs.count("failed hook retried") > 0 {
			var why []string
			for _, in := range e.intents("hook") {
				if in.LastError != "" {
					why = append(why, in.LastError)
				}
			}
			t.Fatalf("a send failed where none should: %v", why)
		}
		return e.obs.count("sent hook trigger") == 7
	})
	if m := most.Load(); m != 3 {
		t.Errorf("at most %d sends at once, want 3", m)
	}
}

// TestDispatchKeepsEpisodeOrderThroughAFailure: a resolve is not sent while
// its trigger waits for its retry, and is sent after it.
func TestDispatchKeepsEpisodeOrderThroughAFailure(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", func(w http.ResponseWriter, n int) {
		if n == 1 {
			status(w, http.StatusServiceUnavailable, "")
		}
	})
	e.persist(firingAlert("x"), resolvedAlert("x"))
	if diff := cmp.Diff([]string{openrecall.IntentPending, openrecall.IntentPending}, e.states("hook")); diff != "" {
		t.Fatalf("intents (-want +got):\n%s", diff)
	}
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}})
	waitFor(t, "the trigger's failure", func() bool { return e.obs.count("failed hook retried") == 1 })
	quiet(r)
	if diff := cmp.Diff([]string{"trigger x"}, h.kinds()); diff != "" {
		t.Fatalf("requests while the trigger waits for its retry (-want +got):\n%s", diff)
	}
	e.clock.Add(time.Second)
	r.d.Wake()
	waitFor(t, "the resolve sent", func() bool { return e.obs.count("sent hook resolve") == 1 })
	if diff := cmp.Diff([]string{"trigger x", "trigger x", "resolve x"}, h.kinds()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{openrecall.IntentSent, openrecall.IntentSent}, e.states("hook")); diff != "" {
		t.Errorf("intents (-want +got):\n%s", diff)
	}
}

// TestDispatchUpdateCarriesTheDecision: a person's decision about an
// escalated analysis is sent to the receiver that heard of it, after its
// trigger, with the decision and who made it.
func TestDispatchUpdateCarriesTheDecision(t *testing.T) {
	ctx := context.Background()
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", nil)
	ids := e.persist(firingAlert("esc-1"))
	// The memory the decision retained carries the person's note.
	inc, _, err := e.store.Retain(ctx, openrecall.Incident{Fingerprint: openrecall.Fingerprint{ErrorClass: "disk_full", ServiceRole: "db"},
		Decision: openrecall.DecisionFalsePositive, Note: "the nightly backup fills it", SourceAlertID: "esc-1", Analyst: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	decided, err := e.store.Decide(ctx, openrecall.Waiting{AnalysisID: ids[0], AlertID: "esc-1", DecidedBy: "ana",
		DecidedAt: e.clock.Now(), Decision: openrecall.DecisionFalsePositive, MemoryID: inc.ID})
	if err != nil || !decided {
		t.Fatalf("decide: %v, %v", decided, err)
	}
	e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}})
	waitFor(t, "the update sent", func() bool { return e.obs.count("sent hook update") == 1 })
	got := h.requests()
	if len(got) != 2 || got[0].Kind != openrecall.IntentTrigger || got[1].Kind != openrecall.IntentUpdate {
		t.Fatalf("requests %v, want the trigger then the update", h.kinds())
	}
	want := &notify.WebhookDecided{Decision: openrecall.DecisionFalsePositive, Analyst: "ana", Note: "the nightly backup fills it"}
	if diff := cmp.Diff(want, got[1].Decided); diff != "" {
		t.Errorf("the update's decision (-want +got):\n%s", diff)
	}
	if got[1].AnalysisID != ids[0] || got[1].Key != got[0].Key {
		t.Errorf("the update is about %s in episode %s, want %s in the trigger's %s", got[1].AnalysisID, got[1].Key, ids[0], got[0].Key)
	}
}

// TestDispatchDeadLettersAPrunedResult: an intent whose result was pruned
// after the retention can no longer be made: a dead letter that says so,
// and nothing is posted.
func TestDispatchDeadLettersAPrunedResult(t *testing.T) {
	ctx := context.Background()
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", nil)
	e.persist(firingAlert("x"))
	e.clock.Add(time.Hour)
	if n, err := e.store.PruneInbox(ctx, e.clock.Now(), 0); err != nil || n != 1 {
		t.Fatalf("prune: %d, %v; want 1", n, err)
	}
	e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}, MaxAge: 24 * time.Hour})
	waitFor(t, "the dead letter", func() bool { return e.obs.count("dead hook") == 1 })
	in := e.intents("hook")[0]
	if in.State != openrecall.IntentDead || in.Attempts != 1 || !strings.Contains(in.LastError, "pruned") || strings.Contains(in.LastError, "max age") {
		t.Errorf("intent %s after %d attempts, last error %q; want dead at the first, saying the result was pruned", in.State, in.Attempts, in.LastError)
	}
	if n := len(h.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	if diff := cmp.Diff([]string{"dead hook"}, e.obs.all()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}

// slowReceiver is a receiver that takes as long as the test says, past its
// context's deadline: what no real receiver does on purpose, and what a
// lease must survive (renewed) or lose (not renewed).
type slowReceiver struct {
	name   string
	called chan notify.Notification
	g      *gate
	mu     sync.Mutex
	// deadlines are the deadlines of the sends' contexts.
	deadlines []time.Time
}

func newSlowReceiver(name string) *slowReceiver {
	return &slowReceiver{name: name, called: make(chan notify.Notification, 16), g: newGate()}
}

func (r *slowReceiver) Name() string { return r.name }
func (r *slowReceiver) Type() string { return "test" }

func (r *slowReceiver) Send(ctx context.Context, n notify.Notification) (notify.Delivery, error) {
	d, _ := ctx.Deadline()
	r.mu.Lock()
	r.deadlines = append(r.deadlines, d)
	r.mu.Unlock()
	r.called <- n
	<-r.g.ch
	return notify.Delivery{State: map[string]string{"ts": "1"}}, nil
}

// renewals is the store as the dispatcher's outbox, counting its
// renewals, or making none when off.
type renewals struct {
	*memory.Store
	n   atomic.Int64
	off bool
}

func (r *renewals) RenewIntents(ctx context.Context) error {
	r.n.Add(1)
	if r.off {
		return nil
	}
	return r.Store.RenewIntents(ctx)
}

// TestDispatchRenewsLeasesOfSendsInFlight: while a send is in flight its
// claim is renewed every third of the lease, so it outlasts the lease and
// no other process takes the intent over; with nothing in flight there is
// nothing to renew.
func TestDispatchRenewsLeasesOfSendsInFlight(t *testing.T) {
	ctx := context.Background()
	const lease = 600 * time.Millisecond
	e := newDispatchEnv(t, memory.Options{Lease: lease, Instance: "a"}, "slow")
	other := openStore(t, e.location, memory.Options{Now: e.clock.Now, Lease: time.Minute, Instance: "b"})
	e.persist(firingAlert("x"))
	slow := newSlowReceiver("slow")
	out := &renewals{Store: e.store}
	e.run(runner.DispatchConfig{Receivers: []notify.Receiver{slow}, Outbox: out, Lease: lease})
	defer slow.g.open()
	<-slow.called
	waitFor(t, "renewals past the lease", func() bool { return out.n.Load() >= 4 })
	if got, err := other.ClaimIntents(ctx, 1); err != nil || len(got) != 0 {
		t.Fatalf("another process claimed %d intents (%v) while the send's claim was renewed, want none", len(got), err)
	}
	slow.g.open()
	waitFor(t, "the intent sent", func() bool { return e.obs.count("sent slow trigger") == 1 })
	time.Sleep(lease / 2)
	before := out.n.Load()
	time.Sleep(lease)
	if after := out.n.Load(); after != before {
		t.Errorf("%d renewals with nothing in flight, want none", after-before)
	}
}

// TestDispatchLeaseLostToAnotherProcess: a send that outlasts its lease
// (not renewed) finds the intent taken over by another process: its
// outcome is refused and counted, and the other process reports it.
func TestDispatchLeaseLostToAnotherProcess(t *testing.T) {
	ctx := context.Background()
	const lease = 200 * time.Millisecond
	e := newDispatchEnv(t, memory.Options{Lease: lease, Instance: "a"}, "slow")
	other := openStore(t, e.location, memory.Options{Now: e.clock.Now, Lease: time.Minute, Instance: "b"})
	e.persist(firingAlert("x"))
	slow := newSlowReceiver("slow")
	e.run(runner.DispatchConfig{Receivers: []notify.Receiver{slow}, Outbox: &renewals{Store: e.store, off: true}, Lease: lease})
	defer slow.g.open()
	n := <-slow.called
	claimed := e.intents("slow")[0]
	slow.mu.Lock()
	deadline := slow.deadlines[0]
	slow.mu.Unlock()
	if claimed.LeaseUntil.IsZero() || deadline.IsZero() || !deadline.Before(claimed.LeaseUntil) {
		t.Errorf("the send's deadline %s, its claim's lease until %s: want the send to end first", deadline, claimed.LeaseUntil)
	}
	var taken []openrecall.OutboxIntent
	waitFor(t, "the other process takes the intent over", func() bool {
		var err error
		if taken, err = other.ClaimIntents(ctx, 1, "slow"); err != nil {
			t.Fatal(err)
		}
		return len(taken) == 1
	})
	slow.g.open()
	waitFor(t, "the lease lost", func() bool { return e.obs.count("lease-lost slow") == 1 })
	if n.ID != runner.IntentNotificationID(taken[0].ID) {
		t.Errorf("sent %s, the other process took %d", n.ID, taken[0].ID)
	}
	if got := e.states("slow"); !slices.Equal(got, []string{openrecall.IntentPending}) {
		t.Fatalf("intents %v after the refused outcome, want pending (the other process holds it)", got)
	}
	if err := other.IntentSent(ctx, taken[0].ID, nil); err != nil {
		t.Fatalf("the holder reports the outcome: %v", err)
	}
	if diff := cmp.Diff([]string{"lease-lost slow"}, e.obs.all()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	if len(e.logs.FilterMessageSnippet("another process took the notification over").FilterLevelExact(zapcore.InfoLevel).All()) != 1 {
		t.Errorf("logs %v, want one info line for the lease lost", e.logs.All())
	}
}

// TestDispatchStopLetsSendsInFlightEnd: after halt, Run returns only once
// the sends in flight ended and their outcomes were recorded, and claims
// nothing more.
func TestDispatchStopLetsSendsInFlightEnd(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "slow")
	e.persist(firingAlert("x"), firingAlert("y"))
	slow := newSlowReceiver("slow")
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{slow}, Concurrency: 1})
	defer slow.g.open()
	<-slow.called
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r.stop()
	}()
	select {
	case <-stopped:
		t.Fatal("Run returned with a send in flight")
	case <-time.After(150 * time.Millisecond):
	}
	slow.g.open()
	<-stopped
	if diff := cmp.Diff([]string{openrecall.IntentSent, openrecall.IntentPending}, e.states("slow")); diff != "" {
		t.Errorf("intents after the stop (-want +got):\n%s", diff)
	}
	if len(slow.called) != 0 {
		t.Errorf("%d more sends after the stop, want none", len(slow.called))
	}
}

// TestNewDispatcherRefusesABadConfig: what a dispatcher needs, and what it
// cannot do, is refused at start.
func TestNewDispatcherRefusesABadConfig(t *testing.T) {
	st := newDispatchEnv(t, memory.Options{}).store
	a, b := newSlowReceiver("a"), newSlowReceiver("a")
	tests := []struct {
		name string
		cfg  runner.DispatchConfig
	}{
		{"no outbox", runner.DispatchConfig{Reader: st}},
		{"no reader", runner.DispatchConfig{Outbox: st}},
		{"a name twice", runner.DispatchConfig{Outbox: st, Reader: st, Receivers: []notify.Receiver{a, b}}},
		{"a nil receiver", runner.DispatchConfig{Outbox: st, Reader: st, Receivers: []notify.Receiver{nil}}},
		{"negative concurrency", runner.DispatchConfig{Outbox: st, Reader: st, Concurrency: -1}},
		{"negative max age", runner.DispatchConfig{Outbox: st, Reader: st, MaxAge: -time.Second}},
		{"max below base", runner.DispatchConfig{Outbox: st, Reader: st, BackoffBase: time.Minute, BackoffMax: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runner.NewDispatcher(tt.cfg); err == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := runner.NewDispatcher(runner.DispatchConfig{Outbox: st, Reader: st, Receivers: []notify.Receiver{a}}); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
	if _, err := runner.NewDispatcher(runner.DispatchConfig{Outbox: st, Reader: st, BackoffBase: time.Hour}); err != nil {
		t.Errorf("a base above the default max, with no max: %v", err)
	}
}

// flakyStore is the store as the dispatcher's outbox and reader, failing
// its first read of a result and its first report of a delivery, as a
// storage hiccup does.
type flakyStore struct {
	*memory.Store
	reads, reports atomic.Int64
}

var errHiccup = errors.New("disk I/O error")

func (s *flakyStore) Served(ctx context.Context, analysisID string) (openrecall.Served, error) {
	if s.reads.Add(1) == 1 {
		return openrecall.Served{}, errHiccup
	}
	return s.Store.Served(ctx, analysisID)
}

func (s *flakyStore) IntentSent(ctx context.Context, id int64, state map[string]string) error {
	if s.reports.Add(1) == 1 {
		return errHiccup
	}
	return s.Store.IntentSent(ctx, id, state)
}

// TestDispatchRidesOutStorageErrors: a result that cannot be read for a
// moment is tried again after the back-off (nothing sent meanwhile), and
// a delivery whose report fails is reported again under the same claim,
// not sent again.
func TestDispatchRidesOutStorageErrors(t *testing.T) {
	e := newDispatchEnv(t, memory.Options{}, "hook")
	h := newHook(t, "hook", "", nil)
	e.persist(firingAlert("x"))
	flaky := &flakyStore{Store: e.store}
	r := e.run(runner.DispatchConfig{Receivers: []notify.Receiver{h.recv}, Outbox: flaky, Reader: flaky})
	waitFor(t, "the failed read recorded", func() bool { return e.intents("hook")[0].LastError != "" })
	in := e.intents("hook")[0]
	if in.State != openrecall.IntentPending || !in.NextAt.Equal(t0.Add(time.Second)) || !strings.Contains(in.LastError, errHiccup.Error()) {
		t.Fatalf("after the failed read: %s, next at %s, last error %q; want pending a second, saying why", in.State, in.NextAt, in.LastError)
	}
	quiet(r)
	if n := len(h.requests()); n != 0 {
		t.Fatalf("%d requests before the retry, want none", n)
	}
	e.clock.Add(time.Second)
	r.d.Wake()
	waitFor(t, "the intent sent", func() bool { return e.obs.count("sent hook trigger") == 1 })
	if got := e.states("hook"); !slices.Equal(got, []string{openrecall.IntentSent}) {
		t.Errorf("states %v, want sent", got)
	}
	if n, reports := len(h.requests()), flaky.reports.Load(); n != 1 || reports != 2 {
		t.Errorf("%d requests and %d reports, want 1 request reported twice", n, reports)
	}
	if len(e.logs.FilterMessageSnippet("record the notification's outcome; will retry").All()) != 1 {
		t.Errorf("logs %v, want one error for the failed report", e.logs.All())
	}
}
