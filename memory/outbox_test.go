package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/testenv"
)

// notifyBoth is a Sink.Notify that sends every result to two receivers,
// pager and chat: a resolve for a resolved alert, a trigger otherwise, the
// alert's id the episode's key.
func notifyBoth(r openrecall.Result, _ string) []openrecall.Intent {
	kind := openrecall.IntentTrigger
	if r.Alert.Status == openrecall.StatusResolved {
		kind = openrecall.IntentResolve
	}
	return []openrecall.Intent{{Receiver: "pager", Kind: kind, Key: r.Alert.ID}, {Receiver: "chat", Kind: kind, Key: r.Alert.ID}}
}

// notifyPager is a Sink.Notify that sends every result to pager alone.
func notifyPager(r openrecall.Result, ep string) []openrecall.Intent {
	return notifyBoth(r, ep)[:1]
}

// alertResult is a stored result about alert (firing, or resolved).
func alertResult(id, alert string, resolved bool) openrecall.Result {
	r := sinkResult(id, 1)
	r.Alert.ID, r.Alert.Status = alert, openrecall.StatusFiring
	if resolved {
		r.Alert.Status = openrecall.StatusResolved
	}
	return r
}

// persistNotified stores rs in one batch through a sink with notify.
func persistNotified(t *testing.T, st *Store, notify NotifyFunc, rs ...openrecall.Result) {
	t.Helper()
	sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal, Notify: notify}
	if _, err := sink.PersistBatch(context.Background(), rs, make([]*openrecall.CostPoint, len(rs))); err != nil {
		t.Fatal(err)
	}
}

// intentsOf returns the intents of an analysis, oldest first, as
// "receiver/kind/key/state".
func intentsOf(t *testing.T, st *Store, analysisID string) []string {
	t.Helper()
	got, err := st.Intents(context.Background(), openrecall.IntentFilter{AnalysisID: analysisID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(got) - 1; i >= 0; i-- {
		out = append(out, got[i].Receiver+"/"+got[i].Kind+"/"+got[i].Key+"/"+got[i].State)
	}
	return out
}

// claimed returns the ids of intents as "receiver/analysis", in order.
func claimed(ins []openrecall.OutboxIntent) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.Receiver+"/"+in.AnalysisID)
	}
	return out
}

// passIntentLease makes the lease of intent id pass, as a pause longer
// than it would.
func passIntentLease(t *testing.T, st *Store, id int64) {
	t.Helper()
	if _, err := st.db.Exec(`UPDATE outbox SET lease_until = 1 WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
}

// TestIntentsAreWrittenWithTheirResult: the sink writes each stored
// result's intents in the batch's transaction, one row per receiver, and a
// batch that is refused stores neither its results nor their intents. An
// invalid intent, or two for one receiver of one result, refuses the
// batch: a result is never stored with only some of its intents.
func TestIntentsAreWrittenWithTheirResult(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	persistNotified(t, st, notifyBoth, alertResult("a", "x", false), alertResult("b", "x", true))
	if diff := cmp.Diff([]string{"pager/trigger/x/pending", "chat/trigger/x/pending"}, intentsOf(t, st, "a")); diff != "" {
		t.Errorf("a's intents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pager/resolve/x/pending", "chat/resolve/x/pending"}, intentsOf(t, st, "b")); diff != "" {
		t.Errorf("b's intents (-want +got):\n%s", diff)
	}

	// A refused batch (a cost point stored already) stores no intent.
	sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal, Notify: notifyBoth}
	p0 := openrecall.CostPoint{Index: 0, Batch: "b1", AlertID: "x", Cost: 1, Baseline: 5, CumulativeCost: 1, CumulativeBaseline: 5}
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{alertResult("c", "x", false)}, []*openrecall.CostPoint{&p0}); err != nil {
		t.Fatal(err)
	}
	again := p0
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{alertResult("d", "z", false)}, []*openrecall.CostPoint{&again}); err == nil {
		t.Fatal("a batch with an already stored cost point was accepted")
	}
	if got := intentsOf(t, st, "d"); len(got) != 0 {
		t.Errorf("a refused batch stored intents %v", got)
	}

	for name, hook := range map[string]NotifyFunc{
		"no receiver": func(openrecall.Result, string) []openrecall.Intent {
			return []openrecall.Intent{{Kind: "trigger", Key: "k"}}
		},
		"unknown kind": func(openrecall.Result, string) []openrecall.Intent {
			return []openrecall.Intent{{Receiver: "p", Kind: "page", Key: "k"}}
		},
		"no key": func(openrecall.Result, string) []openrecall.Intent {
			return []openrecall.Intent{{Receiver: "p", Kind: "trigger"}}
		},
		"key too long": func(openrecall.Result, string) []openrecall.Intent {
			return []openrecall.Intent{{Receiver: "p", Kind: "trigger", Key: strings.Repeat("k", 256)}}
		},
		"key not ASCII": func(openrecall.Result, string) []openrecall.Intent {
			return []openrecall.Intent{{Receiver: "p", Kind: "trigger", Key: "ké"}}
		},
		"one receiver twice": func(r openrecall.Result, _ string) []openrecall.Intent {
			return append(notifyPager(r, ""), notifyPager(r, "")...)
		},
	} {
		sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal, Notify: hook}
		_, err := sink.PersistBatch(ctx, []openrecall.Result{alertResult("e", "z", false)}, []*openrecall.CostPoint{nil})
		if !errors.Is(err, openrecall.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		if got, err := st.AuditByAnalysis(ctx, "e"); err != nil || len(got) != 0 {
			t.Errorf("%s: the result was stored (%d entries, %v) without its intents", name, len(got), err)
		}
	}
}

// TestFencedResultWritesNoIntents: a result whose delivery another process
// took over is not stored, and neither are its intents; the process that
// holds the delivery stores its result with its own.
func TestFencedResultWritesNoIntents(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	a := openWith(t, location, Options{Now: newClock().Now, Instance: "a", Lease: time.Minute})
	b := openWith(t, location, Options{Now: newClock().Now, Instance: "b", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	ds, err := a.Claim(ctx, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("a claims: %+v, %v", ds, err)
	}
	if _, err := a.db.Exec(`UPDATE inbox SET lease_until = 1 WHERE id = $1`, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Claim(ctx, 1); err != nil || len(got) != 1 {
		t.Fatalf("b takes the delivery over: %+v, %v", got, err)
	}
	ra := alertResult(ds[0].AnalysisID, "x", false)
	persistNotified(t, a, notifyBoth, ra) // fenced out: nothing stored
	if got := intentsOf(t, a, ra.AnalysisID); len(got) != 0 {
		t.Fatalf("a fenced-out result wrote intents %v", got)
	}
	persistNotified(t, b, notifyPager, ra)
	if diff := cmp.Diff([]string{"pager/trigger/x/pending"}, intentsOf(t, b, ra.AnalysisID)); diff != "" {
		t.Errorf("the holder's intents (-want +got):\n%s", diff)
	}
}

// TestClaimIntentsInEpisodeOrder: intents are claimed oldest first, and an
// intent never while an earlier one of its episode (receiver and key) is
// pending — claimed, or waiting for its next try; an earlier dead letter
// blocks nothing. Another episode, or another receiver of the same key, is
// not held back.
func TestClaimIntentsInEpisodeOrder(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	persistNotified(t, st, notifyBoth, alertResult("t1", "x", false))
	persistNotified(t, st, notifyBoth, alertResult("r1", "x", true), alertResult("t2", "y", false))
	got, err := st.ClaimIntents(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pager/t1", "chat/t1", "pager/t2", "chat/t2"}, claimed(got)); diff != "" {
		t.Fatalf("first claim (-want +got):\n%s", diff)
	}
	if more, err := st.ClaimIntents(ctx, 10); err != nil || len(more) != 0 {
		t.Fatalf("claimed %v (%v) while every episode has an earlier intent in flight", claimed(more), err)
	}
	// pager's trigger is sent: its resolve is next. chat's trigger failed
	// and waits an hour: its resolve waits behind it.
	if err := st.IntentSent(ctx, got[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.IntentFailed(ctx, got[1].ID, "status 503", st.now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	more, err := st.ClaimIntents(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pager/r1"}, claimed(more)); diff != "" {
		t.Fatalf("after pager's trigger was sent (-want +got):\n%s", diff)
	}
	// Its next try comes; then it becomes a dead letter, which no longer
	// holds the resolve back.
	if got, err := st.ClaimIntents(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("claimed %v (%v) before chat's trigger's next try", claimed(got), err)
	}
	if _, err := st.db.Exec(`UPDATE outbox SET next_at = 0 WHERE id = $1`, got[1].ID); err != nil {
		t.Fatal(err)
	}
	again, err := st.ClaimIntents(ctx, 10)
	if err != nil || len(again) != 1 || again[0].ID != got[1].ID || again[0].Attempts != 2 || again[0].LastError != "status 503" {
		t.Fatalf("chat's trigger's next try: %+v, %v; want it, attempt 2, its last error kept", again, err)
	}
	if err := st.IntentDead(ctx, again[0].ID, "status 400: bad payload"); err != nil {
		t.Fatal(err)
	}
	last, err := st.ClaimIntents(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"chat/r1"}, claimed(last)); diff != "" {
		t.Errorf("after chat's trigger died (-want +got):\n%s", diff)
	}
}

// TestClaimIntentsForReceivers: a claim for some receivers takes only
// their intents, oldest first, and leaves the others for a later claim.
func TestClaimIntentsForReceivers(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	persistNotified(t, st, notifyBoth, alertResult("t1", "x", false), alertResult("t2", "y", false))
	got, err := st.ClaimIntents(ctx, 10, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"chat/t1", "chat/t2"}, claimed(got)); diff != "" {
		t.Errorf("chat's claim (-want +got):\n%s", diff)
	}
	if got, err := st.ClaimIntents(ctx, 10, "chat", "mail"); err != nil || len(got) != 0 {
		t.Errorf("a second claim for chat and mail: %v, %v; want none", claimed(got), err)
	}
	got, err = st.ClaimIntents(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pager/t1"}, claimed(got)); diff != "" {
		t.Errorf("a claim for all (-want +got):\n%s", diff)
	}
}

// TestPriorFlowsFromTriggerToResolve: what the receiver returned for an
// episode's trigger is the Prior of its later intents, until a delivery
// returns another; one that returns nothing keeps the earlier state.
func TestPriorFlowsFromTriggerToResolve(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	persistNotified(t, st, notifyPager, alertResult("t1", "x", false))
	persistNotified(t, st, notifyPager, alertResult("r1", "x", true))
	persistNotified(t, st, func(r openrecall.Result, _ string) []openrecall.Intent {
		return []openrecall.Intent{{Receiver: "pager", Kind: openrecall.IntentUpdate, Key: "x"}}
	}, alertResult("u1", "x", true))
	slack := map[string]string{"channel": "C042", "ts": "1712345678.000100"}
	step := func(want map[string]string, state map[string]string) {
		t.Helper()
		got, err := st.ClaimIntents(ctx, 10)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %v; want one", claimed(got), err)
		}
		if diff := cmp.Diff(want, got[0].Prior); diff != "" {
			t.Errorf("%s's Prior (-want +got):\n%s", got[0].AnalysisID, diff)
		}
		if err := st.IntentSent(ctx, got[0].ID, state); err != nil {
			t.Fatal(err)
		}
	}
	step(nil, slack)                          // the trigger: no Prior; the message posted
	step(slack, nil)                          // the resolve updates it and returns nothing
	step(slack, map[string]string{"ts": "2"}) // the update still reads the trigger's
	sent, err := st.Intents(ctx, openrecall.IntentFilter{State: openrecall.IntentSent, Limit: 1})
	if err != nil || len(sent) != 1 || sent[0].AnalysisID != "u1" || sent[0].Delivery["ts"] != "2" || sent[0].SentAt.IsZero() {
		t.Errorf("the newest sent intent: %+v, %v", sent, err)
	}
}

// TestIntentLeasesAcrossStores: two serve processes on one database. A
// claim holds an intent for its lease: the other process takes it only
// once the lease passed, the process that let it pass does not take it
// back itself, and its outcome is then refused (ErrLeaseLost) and writes
// nothing, while the new holder's is stored, once.
func TestIntentLeasesAcrossStores(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	clock := newClock() // the processes' clocks agree: next tries are by the clock
	a := openWith(t, location, Options{Now: clock.Now, Instance: "a", Lease: time.Minute})
	b := openWith(t, location, Options{Now: clock.Now, Instance: "b", Lease: time.Minute})
	persistNotified(t, a, notifyPager, alertResult("t1", "x", false), alertResult("t2", "y", false))
	ga, err := a.ClaimIntents(ctx, 1)
	if err != nil || len(ga) != 1 || ga[0].Attempts != 1 || ga[0].LeaseUntil.IsZero() {
		t.Fatalf("a claims: %+v, %v", ga, err)
	}
	gb, err := b.ClaimIntents(ctx, 10)
	if err != nil || len(gb) != 1 || gb[0].ID == ga[0].ID {
		t.Fatalf("b claims %+v (%v); want the other intent only", gb, err)
	}
	if err := b.IntentSent(ctx, gb[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	passIntentLease(t, a, ga[0].ID)
	if got, err := a.ClaimIntents(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("a claimed its own passed lease again: %v, %v", claimed(got), err)
	}
	taken, err := b.ClaimIntents(ctx, 10)
	if err != nil || len(taken) != 1 || taken[0].ID != ga[0].ID || taken[0].Attempts != 2 {
		t.Fatalf("b takes the passed lease over: %+v, %v", taken, err)
	}
	if err := a.IntentSent(ctx, ga[0].ID, map[string]string{"by": "a"}); !errors.Is(err, openrecall.ErrLeaseLost) {
		t.Fatalf("a's fenced outcome: %v, want ErrLeaseLost", err)
	}
	if err := a.IntentFailed(ctx, ga[0].ID, "late", time.Now()); !errors.Is(err, openrecall.ErrLeaseLost) {
		t.Errorf("a's outcome reported again: %v, want ErrLeaseLost", err)
	}
	if err := b.IntentSent(ctx, ga[0].ID, map[string]string{"by": "b"}); err != nil {
		t.Fatal(err)
	}
	got, err := a.Intents(ctx, openrecall.IntentFilter{AnalysisID: "t1"})
	if err != nil || len(got) != 1 || got[0].State != openrecall.IntentSent || got[0].Delivery["by"] != "b" || got[0].Attempts != 2 {
		t.Errorf("t1's intent: %+v, %v; want sent by b after two claims", got, err)
	}
	if err := b.IntentSent(ctx, ga[0].ID, nil); !errors.Is(err, openrecall.ErrLeaseLost) {
		t.Errorf("an outcome reported twice: %v, want ErrLeaseLost", err)
	}
}

// TestIntentInFlightIsNotClaimedAgain: a process whose lease passed while
// it sent does not claim that intent again, even when the process that
// took it over gave it back with a failure: its first send is still in
// flight. Once it reports that send's outcome (refused), it may.
func TestIntentInFlightIsNotClaimedAgain(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	clock := newClock()
	a := openWith(t, location, Options{Now: clock.Now, Instance: "a", Lease: time.Minute})
	b := openWith(t, location, Options{Now: clock.Now, Instance: "b", Lease: time.Minute})
	persistNotified(t, a, notifyPager, alertResult("t1", "x", false))
	ga, err := a.ClaimIntents(ctx, 1)
	if err != nil || len(ga) != 1 {
		t.Fatalf("a claims: %+v, %v", ga, err)
	}
	passIntentLease(t, a, ga[0].ID)
	gb, err := b.ClaimIntents(ctx, 1)
	if err != nil || len(gb) != 1 {
		t.Fatalf("b claims: %+v, %v", gb, err)
	}
	if err := b.IntentFailed(ctx, gb[0].ID, "timeout", clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := a.ClaimIntents(ctx, 1); err != nil || len(got) != 0 {
		t.Fatalf("a claimed an intent whose first send is in flight: %v, %v", claimed(got), err)
	}
	if err := a.IntentSent(ctx, ga[0].ID, nil); !errors.Is(err, openrecall.ErrLeaseLost) {
		t.Fatalf("a's late outcome: %v, want ErrLeaseLost", err)
	}
	if got, err := a.ClaimIntents(ctx, 1); err != nil || len(got) != 1 || got[0].Attempts != 3 {
		t.Fatalf("a claims after its outcome was refused: %+v, %v; want attempt 3", got, err)
	}
}

// TestIntentClaimsOfAFormerStartAreTakenBack: a restart of the same
// instance takes its former run's claims back at once, and the former
// run's outcomes are refused.
func TestIntentClaimsOfAFormerStartAreTakenBack(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	clock := newClock()
	a := openWith(t, location, Options{Now: clock.Now, Instance: "a", Lease: time.Hour})
	persistNotified(t, a, notifyPager, alertResult("t1", "x", false))
	ga, err := a.ClaimIntents(ctx, 1)
	if err != nil || len(ga) != 1 {
		t.Fatalf("a claims: %+v, %v", ga, err)
	}
	other := openWith(t, location, Options{Now: clock.Now, Instance: "b", Lease: time.Hour})
	if got, err := other.ClaimIntents(ctx, 1); err != nil || len(got) != 0 {
		t.Fatalf("another instance took a claim within its lease: %v, %v", claimed(got), err)
	}
	restarted := openWith(t, location, Options{Now: clock.Now, Instance: "a", Lease: time.Hour})
	got, err := restarted.ClaimIntents(ctx, 1)
	if err != nil || len(got) != 1 || got[0].ID != ga[0].ID {
		t.Fatalf("the restart takes its former claim back: %+v, %v", got, err)
	}
	if err := a.IntentSent(ctx, ga[0].ID, nil); !errors.Is(err, openrecall.ErrLeaseLost) {
		t.Errorf("the former run's outcome: %v, want ErrLeaseLost", err)
	}
}

// TestRenewIntentsKeepsAClaim: a renewed claim outlasts its first lease,
// on the wall clock; once renewals stop, the lease passes and another
// process takes the intent over.
func TestRenewIntentsKeepsAClaim(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	clock := newClock()
	a := openWith(t, location, Options{Now: clock.Now, Instance: "a", Lease: time.Second})
	b := openWith(t, location, Options{Now: clock.Now, Instance: "b", Lease: time.Minute})
	persistNotified(t, a, notifyPager, alertResult("t1", "x", false))
	if got, err := a.ClaimIntents(ctx, 1); err != nil || len(got) != 1 {
		t.Fatalf("a claims: %+v, %v", got, err)
	}
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := a.RenewIntents(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := b.ClaimIntents(ctx, 1); err != nil || len(got) != 0 {
			t.Fatalf("b took a renewed claim: %v, %v", claimed(got), err)
		}
	}
	if !testenv.Poll(t, 20*time.Millisecond, func() bool {
		got, err := b.ClaimIntents(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return len(got) == 1
	}) {
		t.Fatal("b never took the claim over once a stopped renewing")
	}
}

// TestDeadLettersAreListedCountedAndRetried: a dead letter is listed and
// counted until a person retries it, which makes it pending again with its
// tries starting over. A retry is refused for an intent that is not dead,
// for an unknown one, and for one whose episode has a later intent sent:
// it would arrive after it.
func TestDeadLettersAreListedCountedAndRetried(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	persistNotified(t, st, notifyBoth, alertResult("t1", "x", false))
	persistNotified(t, st, notifyPager, alertResult("r1", "x", true))
	got, err := st.ClaimIntents(ctx, 10) // t1's two triggers
	if err != nil || len(got) != 2 {
		t.Fatalf("claim: %v, %v", claimed(got), err)
	}
	long := strings.Repeat("é", maxIntentError) // more bytes than kept
	for _, in := range got {
		if err := st.IntentDead(ctx, in.ID, long); err != nil {
			t.Fatal(err)
		}
	}
	dead, err := st.Intents(ctx, openrecall.IntentFilter{State: openrecall.IntentDead})
	if err != nil || len(dead) != 2 || dead[0].ID != got[1].ID || dead[0].DeadAt.IsZero() {
		t.Fatalf("dead letters: %+v, %v; want both, newest first", dead, err)
	}
	if e := dead[0].LastError; len(e) > maxIntentError || !strings.HasPrefix(long, e) || !strings.HasSuffix(e, "é") {
		t.Errorf("the last error kept is %d bytes, want at most %d, cut between runes", len(e), maxIntentError)
	}
	c, err := st.OutboxCounts(ctx)
	want := openrecall.OutboxCounts{Pending: 1, Dead: 2, OldestPending: c.OldestPending, ByReceiver: map[string]openrecall.ReceiverCounts{
		"pager": {Pending: 1, Dead: 1}, "chat": {Dead: 1}}}
	if diff := cmp.Diff(want, c); err != nil || diff != "" || c.OldestPending.IsZero() {
		t.Errorf("counts (-want +got), %v:\n%s", err, diff)
	}
	// pager's resolve goes out (the dead trigger blocks nothing): its
	// trigger can no longer be retried; chat's can.
	r, err := st.ClaimIntents(ctx, 10)
	if err != nil || len(r) != 1 {
		t.Fatalf("claim: %v, %v", claimed(r), err)
	}
	if err := st.RetryIntent(ctx, got[0].ID); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("retry of a trigger whose resolve is being sent: %v, want ErrInvalid", err)
	}
	if err := st.IntentSent(ctx, r[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.RetryIntent(ctx, got[0].ID); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("retry of a trigger whose resolve was sent: %v, want ErrInvalid", err)
	}
	if err := st.RetryIntent(ctx, r[0].ID); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("retry of a sent intent: %v, want ErrInvalid", err)
	}
	if err := st.RetryIntent(ctx, 999); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("retry of an unknown intent: %v, want ErrNotFound", err)
	}
	if err := st.RetryIntent(ctx, got[1].ID); err != nil {
		t.Fatal(err)
	}
	again, err := st.ClaimIntents(ctx, 10)
	if err != nil || len(again) != 1 || again[0].ID != got[1].ID || again[0].Attempts != 2 || !again[0].Since.After(again[0].CreatedAt) {
		t.Fatalf("the retried letter: %+v, %v; want claimed again, its tries since the retry", again, err)
	}
	if c, err := st.OutboxCounts(ctx); err != nil || c.Dead != 1 || c.Pending != 1 {
		t.Errorf("counts after the retry: %+v, %v", c, err)
	}
}

// TestPruneOutboxKeepsWhatAClaimReads: pruning deletes the intents sent
// before the cut, but never one a later intent reads as its Prior while
// its episode is open or an intent of it is pending; an episode whose
// resolve was sent before the cut goes whole. Pending intents and dead
// letters stay.
func TestPruneOutboxKeepsWhatAClaimReads(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	// Episode x: trigger sent with a state, update sent without; still
	// open. Episode y: trigger and resolve sent. Episode z: a dead
	// trigger. Episode w: a trigger sent with a state, then an update
	// pending.
	persistNotified(t, st, notifyPager, alertResult("x1", "x", false), alertResult("y1", "y", false),
		alertResult("z1", "z", false), alertResult("w1", "w", false))
	persistNotified(t, st, func(r openrecall.Result, _ string) []openrecall.Intent {
		return []openrecall.Intent{{Receiver: "pager", Kind: openrecall.IntentUpdate, Key: r.Alert.ID}}
	}, alertResult("x2", "x", false))
	persistNotified(t, st, notifyPager, alertResult("y2", "y", true))
	send := func(state map[string]string) {
		for {
			got, err := st.ClaimIntents(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				return
			}
			for _, in := range got {
				switch {
				case in.Key == "z":
					err = st.IntentDead(ctx, in.ID, "refused")
				case in.AnalysisID == "x2":
					err = st.IntentSent(ctx, in.ID, nil)
				default:
					err = st.IntentSent(ctx, in.ID, state)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	send(map[string]string{"ts": "1"})
	persistNotified(t, st, func(r openrecall.Result, _ string) []openrecall.Intent {
		return []openrecall.Intent{{Receiver: "pager", Kind: openrecall.IntentUpdate, Key: r.Alert.ID}}
	}, alertResult("w2", "w", false))
	n, err := st.PruneOutbox(ctx, st.now().Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	all, err := st.Intents(ctx, openrecall.IntentFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		left = append(left, in.AnalysisID+"/"+in.State)
	}
	if diff := cmp.Diff([]string{"w2/pending", "w1/sent", "z1/dead", "x1/sent"}, left); diff != "" || n != 3 {
		t.Errorf("after pruning %d (want 3: x2, y1, y2), left newest first (-want +got):\n%s", n, diff)
	}
	got, err := st.ClaimIntents(ctx, 1)
	if err != nil || len(got) != 1 || got[0].Prior["ts"] != "1" {
		t.Errorf("the pending update after pruning: %+v, %v; want its Prior kept", got, err)
	}
	if n, err := st.PruneOutbox(ctx, st.now().Add(-24*time.Hour), 0); err != nil || n != 0 {
		t.Errorf("pruning before anything was sent: %d, %v", n, err)
	}
}

// TestClaimIntentsRefusesAnotherSchemaVersion: a dispatcher claims nothing
// from a database another openrecall migrated.
func TestClaimIntentsRefusesAnotherSchemaVersion(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	persistNotified(t, s, notifyPager, alertResult("t1", "x", false))
	if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ClaimIntents(ctx, 10); !errors.Is(err, openrecall.ErrSchemaMismatch) || len(got) != 0 {
		t.Fatalf("claim from another schema: %v, %v; want ErrSchemaMismatch", claimed(got), err)
	}
}

// TestOutboxQueriesUseIndexes pins the plans of the claim's and pruning's
// reads on SQLite: the pending intents through outbox_state, an episode's
// earlier intents through outbox_episode, an analysis's through
// outbox_analysis.
func TestOutboxQueriesUseIndexes(t *testing.T) {
	sqliteOnly(t) // EXPLAIN QUERY PLAN is SQLite's
	s := openTemp(t)
	for q, index := range map[string]string{
		`SELECT o.id FROM outbox o WHERE o.state = 'pending' AND o.next_at <= 5 ORDER BY o.id LIMIT 8`:           "outbox_state",
		`SELECT 1 FROM outbox e WHERE e.receiver = 'r' AND e.episode = 'k' AND e.state = 'pending' AND e.id < 9`: "outbox_episode",
		`SELECT id FROM outbox WHERE analysis_id = 'a' ORDER BY id DESC`:                                         "outbox_analysis",
		`SELECT id FROM outbox WHERE state = 'sent' AND sent_at < 5 ORDER BY id LIMIT 8`:                         "outbox_",
	} {
		if plan := queryPlan(t, s, q); !strings.Contains(plan, index) {
			t.Errorf("%s: plan %q does not use %s", q, plan, index)
		}
	}
}

// TestRecoveriesAndDecisionsFollowTriggers: a resolve or an update is
// written only for an episode its receiver has a trigger of — a recovery
// or a decision is news only to whoever heard of the alert — and a
// person's decision of an analysis writes one update per receiver of its
// trigger, in the decision's transaction.
func TestRecoveriesAndDecisionsFollowTriggers(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	// x was sent to pager alone; y to no one.
	persistNotified(t, st, notifyPager, alertResult("a", "x", false))
	persistNotified(t, st, notifyBoth, alertResult("b", "x", true), alertResult("c", "y", true))
	if diff := cmp.Diff([]string{"pager/resolve/x/pending"}, intentsOf(t, st, "b")); diff != "" {
		t.Errorf("the recovery of x (-want +got):\n%s", diff)
	}
	if got := intentsOf(t, st, "c"); len(got) != 0 {
		t.Errorf("the recovery of y, never notified, has intents %v", got)
	}

	// A decision of a: an update to pager, and none to chat.
	w := openrecall.Waiting{AnalysisID: "a", AlertID: "x", Batch: "b", Since: time.Unix(1, 0), Reason: "escalated", Severity: openrecall.SeverityHigh,
		Result: &openrecall.Result{AnalysisID: "a"}}
	if err := st.RecordWaiting(ctx, []openrecall.Waiting{w}); err != nil {
		t.Fatal(err)
	}
	w.DecidedBy, w.DecidedAt, w.Decision = "ana", time.Unix(2, 0), openrecall.DecisionKnownBenign
	if ok, err := st.Decide(ctx, w); err != nil || !ok {
		t.Fatalf("decide: %v, %v", ok, err)
	}
	if diff := cmp.Diff([]string{"pager/trigger/x/pending", "pager/update/x/pending"}, intentsOf(t, st, "a")); diff != "" {
		t.Errorf("a's intents after its decision (-want +got):\n%s", diff)
	}
	// Deciding it again changes nothing, and writes no second update.
	if ok, err := st.Decide(ctx, w); err != nil || ok {
		t.Fatalf("decide again: %v, %v", ok, err)
	}
	if got := intentsOf(t, st, "a"); len(got) != 2 {
		t.Errorf("a second decision wrote an update: %v", got)
	}
}

// TestGroupDecisionUpdatesOnce pins a regression: a person's decision of
// a group wrote each member's updates (DecideGroup), and settling what
// waited of the head (Decide) wrote them again — two notes, two cards, two
// mails for one decision. Each receiver of a trigger gets one update.
func TestGroupDecisionUpdatesOnce(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := openrecall.Identity{Rule: "DiskFull", Service: "db"}
	head := alertResult("head", "x", false)
	head.Identity, head.Fingerprint = id, openrecall.Fingerprint{ErrorClass: "disk_full", ServiceRole: "db"}
	gid := openrecall.GroupID(head.AnalysisID)
	head.Group = &openrecall.GroupRef{ID: gid, Role: openrecall.GroupRoleHead, HeadAnalysisID: head.AnalysisID, HeadAlertID: head.Alert.ID, At: at}
	member := alertResult("member", "y", false)
	member.Identity = id
	member.Group = &openrecall.GroupRef{ID: gid, Role: openrecall.GroupRoleMember, HeadAnalysisID: head.AnalysisID, HeadAlertID: head.Alert.ID, At: at.Add(time.Minute)}
	persistNotified(t, st, notifyBoth, head, member)
	w := openrecall.Waiting{AnalysisID: "head", AlertID: "x", Batch: "b", Since: at, Reason: "escalated", Severity: openrecall.SeverityHigh,
		Result: &openrecall.Result{AnalysisID: "head"}}
	if err := st.RecordWaiting(ctx, []openrecall.Waiting{w}); err != nil {
		t.Fatal(err)
	}
	inc := openrecall.Incident{Fingerprint: head.Fingerprint, Identity: id, Severity: openrecall.SeverityHigh,
		Decision: openrecall.DecisionFalsePositive, Note: "one noisy deploy", SourceAlertID: "x", Analyst: "ana"}
	if _, _, _, _, err := st.DecideGroup(ctx, gid, inc); err != nil {
		t.Fatal(err)
	}
	// What the use case then does: settle what waited of the head.
	w.DecidedBy, w.DecidedAt, w.Decision = "ana", at.Add(time.Hour), openrecall.DecisionFalsePositive
	if ok, err := st.Decide(ctx, w); err != nil || !ok {
		t.Fatalf("settle the head: %v, %v", ok, err)
	}
	for _, a := range []string{"head", "member"} {
		key := map[string]string{"head": "x", "member": "y"}[a]
		want := []string{"pager/trigger/" + key + "/pending", "chat/trigger/" + key + "/pending",
			"pager/update/" + key + "/pending", "chat/update/" + key + "/pending"}
		if diff := cmp.Diff(want, intentsOf(t, st, a)); diff != "" {
			t.Errorf("%s's intents after the group's decision (-want +got):\n%s", a, diff)
		}
	}
}
