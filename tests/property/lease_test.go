package property

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"reflect"
	"slices"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// leaseProperties are the rules of the inbox's leases (DESIGN §13, issue
// 33): what a renewal forfeits, that nothing owned stays pending, and that
// a delivery's result is its last claimer's.
func leaseProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P115_renewal_forfeits_only_what_another_holds",
			"Over any interleaving of claims by two serve processes, renewals (some with a claim of either process committed between the renewal's UPDATE and its judgement), completions, leases let pass and rows a process owns without knowing it, a process counts as lost exactly the claims the other process took from it, and the other takes a claim only after its lease passed unrenewed: a renewal never forfeits a claim it made itself during the renewal, nor one the database still says is its own, nor releases one it holds.",
			"LeaseRunGen", leaseRunGen(), checkLeaseLosses, pbt.Expensive(4)),
		pbt.ForAll("P116_nothing_owned_stays_pending",
			"After any such interleaving, renewing and then claiming and completing until nothing is claimed leaves no delivery pending: a claim is never forfeited while its row stays the process's own, and a row a process owns and works on no longer is released by its next renewal.",
			"LeaseRunGen", leaseRunGen(), checkLeaseDrained, pbt.Expensive(4)),
		pbt.ForAll("P117_last_claimer_completes_once",
			"After any such interleaving, every delivery is completed once, with the result of the process that claimed it last, stored through the product's sink: the audit trail holds that process's entry of the analysis and nothing else (the result document carries it as stored), a pending delivery has nothing in the trail, and a process whose claim the other took writes nothing; a Claim never hands a process a delivery it holds and has not completed (its first analysis is still in flight).",
			"LeaseRunGen", leaseRunGen(), checkLeaseLastClaimer, pbt.Expensive(4)),
	}
}

// Lease step kinds: what one step of a run does. Proc picks the process
// (0: a, 1: b), N the count or the index among what it holds.
const (
	leaseClaim       = iota // Proc claims up to N deliveries
	leaseRenew              // Proc renews
	leaseRenewRacing        // Proc renews; the other process (N odd) or Proc itself claims up to N between its UPDATE and its judgement
	leaseComplete           // Proc completes the Nth delivery it holds
	leasePass               // the lease of the Nth delivery Proc holds passes (a pause longer than it)
	leaseOwnUnknown         // the oldest unclaimed delivery becomes Proc's without Proc knowing (a Claim whose answer was lost)
	leaseEnqueue            // N new deliveries arrive
	leaseKinds
)

// leaseStep is one step of a run.
type leaseStep struct {
	Kind int
	Proc int
	N    int
}

// leaseRun is a run: Initial deliveries, then the steps.
type leaseRun struct {
	Initial int
	Steps   []leaseStep
}

func leaseRunGen() gopter.Gen {
	step := gg.Struct(reflect.TypeOf(leaseStep{}), map[string]gopter.Gen{
		"Kind": gg.Weighted([]gg.WeightedGen{
			{Weight: 4, Gen: gg.Const(leaseClaim)}, {Weight: 2, Gen: gg.Const(leaseRenew)}, {Weight: 4, Gen: gg.Const(leaseRenewRacing)},
			{Weight: 3, Gen: gg.Const(leaseComplete)}, {Weight: 2, Gen: gg.Const(leasePass)}, {Weight: 1, Gen: gg.Const(leaseOwnUnknown)},
			{Weight: 1, Gen: gg.Const(leaseEnqueue)},
		}),
		"Proc": gg.IntRange(0, 1),
		"N":    gg.IntRange(1, 3),
	})
	return gg.Struct(reflect.TypeOf(leaseRun{}), map[string]gopter.Gen{
		"Initial": gg.IntRange(1, 6),
		"Steps":   gg.SliceOfN(12, step),
	})
}

// leaseOutcome is what a run observed, for the three properties to judge.
type leaseOutcome struct {
	lost, taken [2]int64 // LeasesLost of each process; claims the other took from it
	pending     int      // deliveries pending after the drain
	wrong       []string // deliveries whose stored result is not their last claimer's
	reclaimed   []string // a Claim handed a process a delivery it held
	early       []string // a process took a claim of the other before its lease passed
}

var leaseDecisions = [2]openrecall.Decision{openrecall.DecisionReal, openrecall.DecisionFalsePositive}

// runLeases plays r on two processes sharing one fresh memory (their
// leases a minute long: a lease passes only when a step says so) and
// drains what is left.
func runLeases(r leaseRun) (leaseOutcome, error) {
	var out leaseOutcome
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-lease-")
	if err != nil {
		return out, fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	loc, drop, err := storeLocation(dir)
	if err != nil {
		return out, fmt.Errorf("setup: %v", err)
	}
	defer drop()
	var racing func() // the claim a step commits during a renewal
	var procs [2]*memory.Store
	var sinks [2]memory.Sink
	for i, name := range []string{"a", "b"} {
		st, err := memory.Open(ctx, loc, memory.Options{Now: fixedNow, Instance: name, Lease: time.Minute, AfterRenew: func() {
			if f := racing; f != nil {
				racing = nil
				f()
			}
		}})
		if err != nil {
			return out, fmt.Errorf("setup: %v", err)
		}
		defer func() { _ = st.Close() }()
		procs[i] = st
		root, err := productRoot(st, nil, fixedNow)
		if err != nil {
			return out, err
		}
		if sinks[i], err = root.Sink(ctx); err != nil {
			return out, fmt.Errorf("setup: sink: %v", err)
		}
	}
	raw, err := rawInbox(loc)
	if err != nil {
		return out, fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = raw.Close() }()

	held := [2][]openrecall.Delivery{} // what each process claimed and has not completed, oldest claim first
	last := map[int64]int{}            // delivery → the process that claimed it last
	analysis := map[int64]string{}     // delivery → its analysis id
	passed := map[int64]bool{}         // deliveries whose last claim's lease passed, not renewed since
	next := 0
	enqueue := func(n int) error {
		var ds []openrecall.Delivery
		for range n {
			ds = append(ds, openrecall.Delivery{Endpoint: "alertmanager", Alert: openrecall.Alert{ID: fmt.Sprintf("lease-%d", next), Title: "disk full", Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring}})
			next++
		}
		_, err := procs[0].Enqueue(ctx, ds, 0, func(id int64) string { return fmt.Sprintf("lease-%06d", id) })
		return err
	}
	claim := func(p, n int) error {
		ds, err := procs[p].Claim(ctx, n)
		if err != nil {
			return fmt.Errorf("claim by %d: %v", p, err)
		}
		for _, d := range ds {
			if slices.ContainsFunc(held[p], func(h openrecall.Delivery) bool { return h.ID == d.ID }) {
				out.reclaimed = append(out.reclaimed, fmt.Sprintf("process %d was handed delivery %d, which it holds", p, d.ID))
				continue
			}
			if q := 1 - p; slices.ContainsFunc(held[q], func(h openrecall.Delivery) bool { return h.ID == d.ID }) && last[d.ID] == q {
				out.taken[q]++
				if !passed[d.ID] {
					out.early = append(out.early, fmt.Sprintf("process %d took delivery %d from process %d before its lease passed", p, d.ID, q))
				}
			}
			delete(passed, d.ID)
			last[d.ID] = p
			analysis[d.ID] = d.AnalysisID
			held[p] = append(held[p], d)
		}
		return nil
	}
	// renew renews p's leases: every delivery p claimed last and did
	// not complete is p's again for a minute.
	renew := func(p int) error {
		for id, q := range last {
			if q == p {
				delete(passed, id)
			}
		}
		return procs[p].RenewLeases(ctx)
	}
	// complete stores p's result of a delivery it claimed as serve does:
	// through the product's sink, which completes the delivery in the
	// batch's transaction under p's claim. Its one audit entry names p.
	complete := func(p, i int) error {
		d := held[p][i]
		held[p] = slices.Delete(held[p], i, i+1)
		res := openrecall.Result{AnalysisID: d.AnalysisID, Outcome: openrecall.ResultTriaged, Decision: leaseDecisions[p],
			Audit: []openrecall.AuditEntry{{AnalysisID: d.AnalysisID, AlertID: d.Alert.ID, Step: openrecall.StepIntake, Outcome: string(leaseDecisions[p])}}}
		_, err := sinks[p].PersistBatch(ctx, []openrecall.Result{res}, []*openrecall.CostPoint{nil})
		return err
	}
	if err := enqueue(r.Initial); err != nil {
		return out, fmt.Errorf("enqueue: %v", err)
	}
	for _, s := range r.Steps {
		p := s.Proc
		switch s.Kind {
		case leaseClaim:
			err = claim(p, s.N)
		case leaseRenew:
			err = renew(p)
		case leaseRenewRacing:
			by := p
			if s.N%2 == 1 {
				by = 1 - p
			}
			var cerr error
			racing = func() { cerr = claim(by, s.N) }
			err = renew(p)
			racing = nil
			if err == nil {
				err = cerr
			}
		case leaseComplete:
			if len(held[p]) > 0 {
				err = complete(p, s.N%len(held[p]))
			}
		case leasePass:
			if len(held[p]) > 0 {
				d := held[p][s.N%len(held[p])].ID
				passed[d] = passed[d] || last[d] == p
				_, err = raw.ExecContext(ctx, "UPDATE inbox SET lease_until = 1 WHERE id = $1 AND lease_owner = $2", d, procs[p].Owner())
			}
		case leaseOwnUnknown:
			_, err = raw.ExecContext(ctx, `UPDATE inbox SET lease_owner = $1, lease_until = $2, attempt = attempt + 1
				WHERE id = (SELECT MIN(id) FROM inbox WHERE done_seq IS NULL AND lease_owner = '')`, procs[p].Owner(), time.Now().Add(time.Hour).UnixNano())
		case leaseEnqueue:
			err = enqueue(s.N)
		}
		if err != nil {
			return out, fmt.Errorf("step %+v: %v", s, err)
		}
	}
	// The drain, as serve's workers and renewals would: renew, complete
	// what is held, claim; until a round claims nothing.
	for round := 0; ; round++ {
		if round == 10 {
			break // what is left is counted as pending
		}
		claimed := false
		for p := range procs {
			if err := renew(p); err != nil {
				return out, fmt.Errorf("drain: renew: %v", err)
			}
			for len(held[p]) > 0 {
				if err := complete(p, 0); err != nil {
					return out, fmt.Errorf("drain: complete: %v", err)
				}
			}
			if err := claim(p, 100); err != nil {
				return out, fmt.Errorf("drain: %v", err)
			}
			claimed = claimed || len(held[p]) > 0
		}
		if !claimed {
			break
		}
	}
	for p := range procs {
		out.lost[p] = procs[p].LeasesLost()
	}
	n, err := procs[0].InboxDepth(ctx)
	if err != nil {
		return out, fmt.Errorf("depth: %v", err)
	}
	out.pending = n
	for id, p := range last {
		sv, err := procs[0].Served(ctx, analysis[id])
		if err != nil {
			return out, fmt.Errorf("served %d: %v", id, err)
		}
		if sv.Done && (sv.Result == nil || sv.Result.Decision != leaseDecisions[p]) {
			out.wrong = append(out.wrong, fmt.Sprintf("delivery %d: result %+v, want process %d's", id, sv.Result, p))
		}
		// What the trail holds of the delivery's analysis is what its
		// completion holds: the last claimer's entry once it is done,
		// nothing while it is pending; never a fenced-out process's.
		trail, err := procs[0].AuditByAnalysis(ctx, analysis[id])
		if err != nil {
			return out, fmt.Errorf("audit of %d: %v", id, err)
		}
		switch {
		case sv.Done && (len(trail) != 1 || trail[0].Outcome != string(leaseDecisions[p])):
			out.wrong = append(out.wrong, fmt.Sprintf("delivery %d: done with trail %+v, want process %d's one entry", id, trail, p))
		case sv.Done && !slices.EqualFunc(sv.Result.Audit, trail, func(a, b openrecall.AuditEntry) bool { return a.Sequence == b.Sequence && a.Hash == b.Hash }):
			out.wrong = append(out.wrong, fmt.Sprintf("delivery %d: its result carries %+v, the trail holds %+v", id, sv.Result.Audit, trail))
		case !sv.Done && len(trail) > 0:
			out.wrong = append(out.wrong, fmt.Sprintf("delivery %d: pending with trail %+v stored", id, trail))
		}
	}
	slices.Sort(out.wrong)
	return out, nil
}

// rawInbox opens the memory at loc as a plain database, for what a step
// does behind the processes' backs (a lease passing, a row owned unknown).
func rawInbox(loc string) (*sql.DB, error) {
	if storetest.Postgres() {
		return sql.Open("pgx", loc)
	}
	return sql.Open("sqlite3", "file:"+loc+"?_busy_timeout=5000")
}

func checkLeaseLosses(r leaseRun) error {
	out, err := runLeases(r)
	if err != nil {
		return err
	}
	if len(out.early) > 0 {
		return fmt.Errorf("%s", out.early[0])
	}
	if out.lost != out.taken {
		return fmt.Errorf("leases lost %v, want the claims the other process took %v", out.lost, out.taken)
	}
	return nil
}

func checkLeaseDrained(r leaseRun) error {
	out, err := runLeases(r)
	if err != nil {
		return err
	}
	if out.pending != 0 {
		return fmt.Errorf("%d deliveries pending after the drain, want none", out.pending)
	}
	return nil
}

func checkLeaseLastClaimer(r leaseRun) error {
	out, err := runLeases(r)
	if err != nil {
		return err
	}
	if len(out.reclaimed) > 0 {
		return fmt.Errorf("%s", out.reclaimed[0])
	}
	if len(out.wrong) > 0 {
		return fmt.Errorf("%d deliveries with another process's result; first %s", len(out.wrong), out.wrong[0])
	}
	return nil
}
