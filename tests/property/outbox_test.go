package property

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// outboxProperties are the laws of the outbox (DESIGN §12b): what is
// written with a result, and the order and fencing of what is delivered.
func outboxProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P148_outbox_intents_stored_with_results_delivered_in_episode_order",
			"Every stored result has exactly the notification intents its hook gives it (DESIGN §12b), one per receiver — a resolve or an update only for an episode its receiver has a trigger of — written in the sink's transaction, and a result not stored (fenced out of its delivery by another serve process) has none; and for any interleaving of persists, claims, sends, failures with their next tries, dead letters, retries by hand, renewals and lease expiries of two serve processes sharing the outbox, an episode's intents (one receiver, one key) are handed out in creation order — never one while an earlier one is pending, an earlier dead letter holding nothing back — each with the state the latest delivery of its episode that returned one gave, never to a process that holds it nor while another's lease on it holds, never before its next try; each is delivered at most once, only by the process whose claim holds (the others' outcomes refused, writing nothing), never after a later intent of its episode was delivered; and draining leaves every intent sent or dead.",
			"OutboxRunGen", outboxRunGen(), checkOutbox, pbt.Expensive(4),
			pbt.Pin("a trigger in flight holds its resolve back; the resolve reads the trigger's state", outboxRun{
				Results: []outboxResult{{Episode: 0, Kind: 0, Recv: 1, Fate: 5}, {Episode: 0, Kind: 1, Recv: 1, Fate: 5}, {Episode: 0, Kind: 2, Recv: 1, Fate: 5}},
				Initial: 3,
				Steps:   []outboxStep{{Kind: outboxClaim, Proc: 0, N: 3}, {Kind: outboxClaim, Proc: 1, N: 3}, {Kind: outboxSend, Proc: 0, N: 1}, {Kind: outboxClaim, Proc: 1, N: 3}, {Kind: outboxSend, Proc: 1, N: 1}, {Kind: outboxClaim, Proc: 0, N: 3}},
			}),
			pbt.Pin("a fenced-out result and one taken over", outboxRun{
				Results: []outboxResult{{Episode: 0, Kind: 0, Recv: 3, Fate: 0}, {Episode: 1, Kind: 0, Recv: 3, Fate: 1}},
				Initial: 2,
				Steps:   []outboxStep{{Kind: outboxClaim, Proc: 0, N: 1}, {Kind: outboxClaim, Proc: 1, N: 2}, {Kind: outboxPass, Proc: 0, N: 1}, {Kind: outboxClaim, Proc: 1, N: 2}, {Kind: outboxSend, Proc: 0, N: 1}},
			}),
			pbt.Pin("a dead trigger retried after its resolve went out", outboxRun{
				Results: []outboxResult{{Episode: 0, Kind: 0, Recv: 1, Fate: 5}, {Episode: 0, Kind: 1, Recv: 1, Fate: 5}},
				Initial: 2,
				Steps:   []outboxStep{{Kind: outboxClaim, Proc: 0, N: 2}, {Kind: outboxDead, Proc: 0, N: 1}, {Kind: outboxClaim, Proc: 0, N: 2}, {Kind: outboxSend, Proc: 0, N: 1}, {Kind: outboxRetry, N: 1}},
			}),
			pbt.Pin("a dead trigger holds its resolve back no longer", outboxRun{
				Results: []outboxResult{{Episode: 0, Kind: 0, Recv: 1, Fate: 5}, {Episode: 0, Kind: 1, Recv: 1, Fate: 5}},
				Initial: 2,
				Steps:   []outboxStep{{Kind: outboxClaim, Proc: 0, N: 2}, {Kind: outboxDead, Proc: 0, N: 1}},
			}),
			pbt.Pin("a process's first send still in flight when the intent comes back", outboxRun{
				Results: []outboxResult{{Episode: 0, Kind: 0, Recv: 1, Fate: 5}},
				Initial: 1,
				Steps:   []outboxStep{{Kind: outboxClaim, Proc: 0, N: 1}, {Kind: outboxPass, Proc: 0, N: 1}, {Kind: outboxClaim, Proc: 1, N: 1}, {Kind: outboxFail, Proc: 1, N: 1}, {Kind: outboxClaim, Proc: 0, N: 1}},
			}),
			pbt.Classify(func(r outboxRun) []string {
				var labels []string
				kinds := map[int]map[int]bool{}
				fenced := false
				for _, res := range r.Results {
					fenced = fenced || res.Fate < 2
					if kinds[res.Episode] == nil {
						kinds[res.Episode] = map[int]bool{}
					}
					kinds[res.Episode][res.Kind] = true
				}
				if fenced {
					labels = append(labels, "fenced out")
				}
				for _, k := range kinds {
					if len(k) > 1 {
						labels = append(labels, "episode of several kinds")
						break
					}
				}
				steps := map[int]bool{}
				for _, s := range r.Steps {
					steps[s.Kind] = true
				}
				if steps[outboxPass] {
					labels = append(labels, "lease passes")
				}
				if steps[outboxFail] || steps[outboxDead] {
					labels = append(labels, "failures")
				}
				return labels
			}),
			pbt.Cover("fenced out", 20), pbt.Cover("episode of several kinds", 40), pbt.Cover("lease passes", 20), pbt.Cover("failures", 40),
		),
	}
}

// Outbox step kinds: what one step of a run does. Proc picks the process
// (0: a, 1: b), N the count, or the Nth (from 1, wrapping) of what the
// process holds.
const (
	outboxPersist = iota // the next result is persisted
	outboxClaim          // Proc claims up to N intents
	outboxSend           // Proc delivers its Nth intent (with a state unless N is 3)
	outboxFail           // Proc's Nth intent fails: its next try in (N-1) half hours
	outboxDead           // Proc's Nth intent becomes a dead letter
	outboxPass           // the leases of Proc's intents pass (a pause longer than them)
	outboxRetry          // a person retries the Nth dead letter by hand
	outboxRenew          // Proc renews its leases
	outboxTick           // half an hour passes
	outboxKinds
)

// outboxResult is one result of a run: the alert episode it is about (x0
// or x1), its kind (trigger, resolve, update), the receivers its hook gives
// (a mask of r0 and r1) and its fate: 0, fenced out of its delivery and
// never stored; 1, fenced out of one process's persist and stored by the
// process that took its delivery over; else stored by a process directly.
type outboxResult struct {
	Episode, Kind, Recv, Fate int
}

type outboxStep struct {
	Kind, Proc, N int
}

// outboxRun is a run: Initial results persisted, then the steps.
type outboxRun struct {
	Results []outboxResult
	Initial int
	Steps   []outboxStep
}

func outboxRunGen() gopter.Gen {
	result := gg.Struct(reflect.TypeOf(outboxResult{}), map[string]gopter.Gen{
		"Episode": gg.IntRange(0, 1),
		"Kind":    gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(0)}, {Weight: 2, Gen: gg.Const(1)}, {Weight: 1, Gen: gg.Const(2)}}),
		"Recv":    gg.IntRange(1, 3),
		"Fate":    gg.IntRange(0, 9),
	})
	step := gg.Struct(reflect.TypeOf(outboxStep{}), map[string]gopter.Gen{
		"Kind": gg.Weighted([]gg.WeightedGen{
			{Weight: 3, Gen: gg.Const(outboxPersist)}, {Weight: 6, Gen: gg.Const(outboxClaim)}, {Weight: 4, Gen: gg.Const(outboxSend)},
			{Weight: 3, Gen: gg.Const(outboxFail)}, {Weight: 2, Gen: gg.Const(outboxDead)}, {Weight: 3, Gen: gg.Const(outboxPass)},
			{Weight: 2, Gen: gg.Const(outboxRetry)}, {Weight: 1, Gen: gg.Const(outboxRenew)}, {Weight: 1, Gen: gg.Const(outboxTick)},
		}),
		"Proc": gg.IntRange(0, 1),
		"N":    gg.IntRange(1, 3),
	})
	return gg.Struct(reflect.TypeOf(outboxRun{}), map[string]gopter.Gen{
		"Results": gg.SliceOfN(7, result),
		"Initial": gg.IntRange(1, 4),
		"Steps":   gg.SliceOfN(30, step),
	})
}

var outboxKindNames = [3]string{openrecall.IntentTrigger, openrecall.IntentResolve, openrecall.IntentUpdate}

// outboxHook is the runs' Sink.Notify, a function of the result as the
// product's route tree is: the receivers and kind its alert's labels name,
// its alert id the episode's key. The version of a result a fenced-out
// process persists names a receiver no stored result has ("leak").
func outboxHook(r openrecall.Result, _ string) []openrecall.Intent {
	kind, key := r.Alert.Labels["kind"], r.Alert.ID
	if r.Alert.Labels["recv"] == "leak" {
		return []openrecall.Intent{{Receiver: "leak", Kind: kind, Key: key}}
	}
	mask, _ := strconv.Atoi(r.Alert.Labels["recv"])
	var out []openrecall.Intent
	for i, name := range []string{"r0", "r1"} {
		if mask&(1<<i) != 0 {
			out = append(out, openrecall.Intent{Receiver: name, Kind: kind, Key: key})
		}
	}
	return out
}

// outboxClock is the processes' shared clock, moved by the run.
type outboxClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *outboxClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *outboxClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// mIntent is the model of one intent.
type mIntent struct {
	seq      int // creation order
	id       int64
	episode  string // receiver and key
	analysis string
	state    string
	holder   int  // the process whose claim the database holds, -1 none
	live     bool // the holder's lease has not passed
	nextAt   time.Time
	delivery map[string]string // what its send returned, once sent
}

// outboxModel is a run's model, and the violations it saw.
type outboxModel struct {
	intents []*mIntent // by seq
	byID    map[int64]*mIntent
	held    [2][]int64 // what each process claimed and has not reported, oldest claim first
	wrong   []string
}

func (m *outboxModel) violate(format string, args ...any) {
	m.wrong = append(m.wrong, fmt.Sprintf(format, args...))
}

// prior is what the model says intent x's Prior is: the delivery of the
// latest earlier intent of its episode sent with one.
func (m *outboxModel) prior(x *mIntent) map[string]string {
	var p map[string]string
	for _, y := range m.intents[:x.seq] {
		if y.episode == x.episode && y.state == openrecall.IntentSent && len(y.delivery) > 0 {
			p = y.delivery
		}
	}
	return p
}

// handed checks intent in, handed to process p by a claim at now, against
// the model, and records the claim.
func (m *outboxModel) handed(p int, in openrecall.OutboxIntent, now time.Time) {
	x := m.byID[in.ID]
	switch {
	case x == nil:
		m.violate("process %d was handed intent %d, which no stored result has", p, in.ID)
		return
	case x.state != openrecall.IntentPending:
		m.violate("process %d was handed intent %d (%s), which is %s", p, x.seq, x.episode, x.state)
	case slices.Contains(m.held[p], in.ID):
		m.violate("process %d was handed intent %d (%s), which it holds: its first send is in flight", p, x.seq, x.episode)
	case x.holder >= 0 && x.holder != p && x.live:
		m.violate("process %d was handed intent %d (%s) while process %d's lease on it holds", p, x.seq, x.episode, x.holder)
	case in.NextAt.After(now) || x.nextAt.After(now):
		m.violate("process %d was handed intent %d (%s) before its next try at %s", p, x.seq, x.episode, x.nextAt)
	}
	for _, y := range m.intents[:x.seq] {
		if y.episode == x.episode && y.state == openrecall.IntentPending {
			m.violate("process %d was handed intent %d (%s) while the earlier intent %d of its episode is pending", p, x.seq, x.episode, y.seq)
			break
		}
	}
	if want := m.prior(x); !maps.Equal(want, in.Prior) {
		m.violate("intent %d (%s) was handed with Prior %v, want %v", x.seq, x.episode, in.Prior, want)
	}
	x.holder, x.live = p, true
	m.held[p] = append(m.held[p], in.ID)
}

// runOutbox plays r on two processes sharing one fresh memory and drains
// what is left; it returns the violations seen, in order.
func runOutbox(r outboxRun) ([]string, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-outbox-")
	if err != nil {
		return nil, fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	loc, drop, err := storeLocation(dir)
	if err != nil {
		return nil, fmt.Errorf("setup: %v", err)
	}
	defer drop()
	clock := &outboxClock{t: fixedNow()}
	var procs [2]*memory.Store
	var sinks [2]memory.Sink
	for i, name := range []string{"a", "b"} {
		st, err := memory.Open(ctx, loc, memory.Options{Now: clock.Now, Instance: name, Lease: time.Minute})
		if err != nil {
			return nil, fmt.Errorf("setup: %v", err)
		}
		defer func() { _ = st.Close() }()
		procs[i] = st
		// The product's sink (internal/compose), with the hook the
		// routes will give it.
		root, err := productRoot(st, nil, clock.Now, compose.Notify(outboxHook))
		if err != nil {
			return nil, err
		}
		if sinks[i], err = root.Sink(ctx); err != nil {
			return nil, fmt.Errorf("setup: %v", err)
		}
	}
	raw, err := rawInbox(loc)
	if err != nil {
		return nil, fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = raw.Close() }()

	m := &outboxModel{byID: map[int64]*mIntent{}}
	triggered := map[string]bool{}
	next := 0
	persist := func() error {
		if next >= len(r.Results) {
			return nil
		}
		i, spec := next, r.Results[next]
		next++
		res := openrecall.Result{AnalysisID: fmt.Sprintf("res-%d", i), Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal,
			Alert: openrecall.Alert{ID: fmt.Sprintf("x%d", spec.Episode), Labels: map[string]string{"kind": outboxKindNames[spec.Kind], "recv": strconv.Itoa(spec.Recv)}}}
		by := i % 2
		if spec.Fate < 2 {
			// The result of a delivery a claimed and b took over when a's
			// lease passed: a's persist is fenced out.
			ds, err := procs[0].Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alertmanager", Alert: openrecall.Alert{ID: fmt.Sprintf("fence-%d", i), Title: "disk full",
				Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring}}}, 0, func(id int64) string { return fmt.Sprintf("serve-%06d", id) })
			if err != nil {
				return err
			}
			if got, err := procs[0].Claim(ctx, 10); err != nil || len(got) != 1 || got[0].ID != ds[0].ID {
				return fmt.Errorf("a claims the delivery: %+v, %v", got, err)
			}
			if _, err := raw.ExecContext(ctx, "UPDATE inbox SET lease_until = 1 WHERE id = $1", ds[0].ID); err != nil {
				return err
			}
			if got, err := procs[1].Claim(ctx, 10); err != nil || len(got) != 1 || got[0].ID != ds[0].ID {
				return fmt.Errorf("b takes the delivery over: %+v, %v", got, err)
			}
			res.AnalysisID = ds[0].AnalysisID
			leak := res
			leak.Alert.Labels = map[string]string{"kind": outboxKindNames[spec.Kind], "recv": "leak"}
			leak.Audit = []openrecall.AuditEntry{{AnalysisID: res.AnalysisID, AlertID: res.Alert.ID, Step: openrecall.StepIntake, Outcome: "fenced"}}
			if _, err := sinks[0].PersistBatch(ctx, []openrecall.Result{leak}, []*openrecall.CostPoint{nil}); err != nil {
				return err
			}
			by = 1
		}
		var want []openrecall.Intent
		if spec.Fate != 0 {
			res.Audit = []openrecall.AuditEntry{{AnalysisID: res.AnalysisID, AlertID: res.Alert.ID, Step: openrecall.StepIntake, Outcome: "stored"}}
			if _, err := sinks[by].PersistBatch(ctx, []openrecall.Result{res}, []*openrecall.CostPoint{nil}); err != nil {
				return err
			}
			// A resolve or update is written only for an episode its
			// receiver has a trigger of (stored before, or earlier in
			// the hook's answer).
			for _, in := range outboxHook(res, "") {
				ep := in.Receiver + "|" + in.Key
				if in.Kind == openrecall.IntentTrigger {
					triggered[ep] = true
				} else if !triggered[ep] {
					continue
				}
				want = append(want, in)
			}
		}
		// What the outbox holds of the result is its hook's intents, in
		// the hook's order, once each; nothing of a result not stored.
		got, err := procs[0].Intents(ctx, openrecall.IntentFilter{AnalysisID: res.AnalysisID})
		if err != nil {
			return err
		}
		slices.Reverse(got)
		var gotI []openrecall.Intent
		for _, in := range got {
			gotI = append(gotI, in.Intent)
		}
		if !slices.Equal(gotI, want) {
			m.violate("result %d (fate %d) has intents %v, its hook gives %v", i, spec.Fate, gotI, want)
		}
		trail, err := procs[0].AuditByAnalysis(ctx, res.AnalysisID)
		if err != nil {
			return err
		}
		if stored := len(trail) > 0; stored != (spec.Fate != 0) || (stored && trail[0].Outcome != "stored") {
			m.violate("result %d (fate %d): trail %+v", i, spec.Fate, trail)
		}
		for k, in := range got {
			if k < len(want) && in.Intent == want[k] {
				x := &mIntent{seq: len(m.intents), id: in.ID, episode: in.Receiver + "|" + in.Key, analysis: in.AnalysisID,
					state: openrecall.IntentPending, holder: -1, nextAt: in.NextAt}
				m.intents = append(m.intents, x)
				m.byID[in.ID] = x
			}
		}
		return nil
	}
	claim := func(p, n int) (int, error) {
		got, err := procs[p].ClaimIntents(ctx, n)
		if err != nil {
			return 0, fmt.Errorf("claim by %d: %v", p, err)
		}
		for _, in := range got {
			m.handed(p, in, clock.Now())
		}
		return len(got), nil
	}
	// report reports the outcome of p's kth held intent: what the model
	// expects is that it is written exactly when p's claim is the one the
	// database holds.
	report := func(p, k, kind, n int) error {
		id := m.held[p][k]
		m.held[p] = slices.Delete(m.held[p], k, k+1)
		x := m.byID[id]
		mine := x.holder == p
		var err error
		var state map[string]string
		switch kind {
		case outboxSend:
			if n != 3 {
				state = map[string]string{"seq": strconv.Itoa(x.seq), "by": strconv.Itoa(p)}
			}
			err = procs[p].IntentSent(ctx, id, state)
		case outboxFail:
			next := clock.Now().Add(time.Duration(n-1) * 30 * time.Minute)
			err = procs[p].IntentFailed(ctx, id, "status 503", next)
			if err == nil {
				x.nextAt = next
			}
		case outboxDead:
			err = procs[p].IntentDead(ctx, id, "status 400")
		}
		switch {
		case err != nil && !errors.Is(err, openrecall.ErrLeaseLost):
			return fmt.Errorf("outcome of %d by %d: %v", x.seq, p, err)
		case err != nil && mine:
			m.violate("process %d's outcome of intent %d (%s) was refused while its claim holds: %v", p, x.seq, x.episode, err)
		case err == nil && !mine:
			m.violate("process %d's outcome of intent %d (%s) was written though process %d took it over", p, x.seq, x.episode, x.holder)
		}
		if err != nil || !mine {
			return nil
		}
		x.holder, x.live = -1, false
		switch kind {
		case outboxSend:
			for _, y := range m.intents[x.seq+1:] {
				if y.episode == x.episode && y.state == openrecall.IntentSent {
					m.violate("intent %d (%s) was delivered after the later intent %d of its episode", x.seq, x.episode, y.seq)
					break
				}
			}
			x.state, x.delivery = openrecall.IntentSent, state
		case outboxDead:
			x.state = openrecall.IntentDead
		}
		return nil
	}
	nth := func(p, n int) int { return (n - 1) % len(m.held[p]) }

	for range r.Initial {
		if err := persist(); err != nil {
			return nil, fmt.Errorf("persist: %v", err)
		}
	}
	for _, s := range r.Steps {
		p := s.Proc
		switch s.Kind {
		case outboxPersist:
			err = persist()
		case outboxClaim:
			_, err = claim(p, s.N)
		case outboxSend, outboxFail, outboxDead:
			if len(m.held[p]) > 0 {
				err = report(p, nth(p, s.N), s.Kind, s.N)
			}
		case outboxPass:
			for _, id := range m.held[p] {
				if x := m.byID[id]; x.holder == p {
					x.live = false
				}
			}
			_, err = raw.ExecContext(ctx, "UPDATE outbox SET lease_until = 1 WHERE lease_owner = $1", procs[p].Owner())
		case outboxRetry:
			var dead []*mIntent
			for _, x := range m.intents {
				if x.state == openrecall.IntentDead {
					dead = append(dead, x)
				}
			}
			if len(dead) > 0 {
				x := dead[(s.N-1)%len(dead)]
				switch rerr := procs[0].RetryIntent(ctx, x.id); {
				case rerr == nil:
					x.state, x.nextAt = openrecall.IntentPending, clock.Now()
				case !errors.Is(rerr, openrecall.ErrInvalid):
					err = rerr
				}
			}
		case outboxRenew:
			for _, id := range m.held[p] {
				if x := m.byID[id]; x.holder == p {
					x.live = true
				}
			}
			err = procs[p].RenewIntents(ctx)
		case outboxTick:
			clock.add(30 * time.Minute)
		}
		if err != nil {
			return nil, fmt.Errorf("step %+v: %v", s, err)
		}
	}
	// The drain, as the dispatchers would: every next try comes, each
	// process reports what it holds (a send), and claims; until a round
	// claims nothing.
	clock.add(24 * time.Hour)
	for round := 0; round < 20; round++ {
		n := 0
		for p := range procs {
			for len(m.held[p]) > 0 {
				if err := report(p, 0, outboxSend, 1); err != nil {
					return nil, fmt.Errorf("drain: %v", err)
				}
			}
			k, err := claim(p, 100)
			if err != nil {
				return nil, fmt.Errorf("drain: %v", err)
			}
			n += k
		}
		if n == 0 {
			break
		}
	}
	all, err := procs[0].Intents(ctx, openrecall.IntentFilter{})
	if err != nil {
		return nil, err
	}
	if len(all) != len(m.intents) {
		m.violate("the outbox holds %d intents, the stored results' hooks gave %d", len(all), len(m.intents))
	}
	for _, in := range all {
		x := m.byID[in.ID]
		switch {
		case x == nil:
		case in.State == openrecall.IntentPending:
			m.violate("intent %d (%s) is still pending after the drain", x.seq, x.episode)
		case in.State != x.state || !maps.Equal(in.Delivery, x.delivery):
			m.violate("intent %d (%s) is %s with %v, the model says %s with %v", x.seq, x.episode, in.State, in.Delivery, x.state, x.delivery)
		}
	}
	return m.wrong, nil
}

func checkOutbox(r outboxRun) error {
	wrong, err := runOutbox(r)
	if err != nil {
		return err
	}
	if len(wrong) > 0 {
		return fmt.Errorf("outbox: %s (%d violations)", wrong[0], len(wrong))
	}
	return nil
}

// TestIntentKindsAreNotifyKinds: the outbox's kinds are notify's words, so
// a receiver reads an intent's kind as its notification's (the root
// package cannot import notify to share the constants).
func TestIntentKindsAreNotifyKinds(t *testing.T) {
	for got, want := range map[string]string{openrecall.IntentTrigger: notify.KindTrigger, openrecall.IntentResolve: notify.KindResolve,
		openrecall.IntentUpdate: notify.KindUpdate} {
		if got != want {
			t.Errorf("the outbox's kind %q is notify's %q", got, want)
		}
	}
}
