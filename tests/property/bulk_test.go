package property

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// bulkProperty is the rule of a bulk approval (DESIGN §12a): it acts on
// exactly the confirmed ids that wait, and reports each once.
func bulkProperty() pbt.Property {
	return pbt.ForAll("P153_bulk_approval_acts_on_exactly_the_confirmed_ids_that_wait",
		"A bulk approval, confirmed, acts on exactly the confirmed ids that wait and reports each id once: for any analyses that wait with a proposal, wait without one or were decided before, and any confirmed list of their ids and unknown ones (repeats included), the approval returns one item per distinct id in the order first given — decided (its proposal retained by the person who confirmed, one analyst-decision audit entry) for one that waited with a proposal, failed (still waiting, undecided) for one without, decided already (its first decision unchanged) for one decided before, not found for an unknown id — and changes no analysis it was not given.",
		"BulkApprovalGen", bulkCaseGen(), checkBulk, pbt.Expensive(4),
		pbt.Pin("an unknown id between two that wait, one repeated", bulkCase{States: []int{0, 0, 1, 2}, Picks: []int{0, 6, 1, 0, 2, 3}}),
		pbt.Classify(func(c bulkCase) []string {
			var out []string
			for _, p := range c.Picks {
				switch {
				case p >= bulkPool:
					out = append(out, "unknown id")
				case c.state(p) == 0:
					out = append(out, "waits with a proposal")
				}
			}
			return out
		}),
		pbt.Cover("unknown id", 20), pbt.Cover("waits with a proposal", 40))
}

// bulkPool is how many analyses a case stores; picks from bulkPool up name
// no analysis.
const bulkPool = 5

// bulkCase is a queue and a confirmed bulk approval of it.
type bulkCase struct {
	// States holds, per analysis of the pool, 0: it waits with a
	// proposal, 1: it waits without one, 2: a person decided it before.
	// An analysis past the slice's end waits with a proposal.
	States []int
	// Picks are the confirmed ids, in order: an index into the pool, or
	// bulkPool and up for an id that names no analysis.
	Picks []int
}

func (c bulkCase) state(i int) int {
	if i < len(c.States) {
		return c.States[i]
	}
	return 0
}

func bulkCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(bulkCase{}), map[string]gopter.Gen{
		"States": gg.SliceOfN(bulkPool, gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(0)}, {Weight: 1, Gen: gg.Const(1)}, {Weight: 1, Gen: gg.Const(2)}})),
		"Picks":  gg.SliceOf(gg.IntRange(0, bulkPool+1)),
	})
}

// bulkID is the analysis id of pick p.
func bulkID(p int) string {
	if p >= bulkPool {
		return fmt.Sprintf("run-p153-nope-%d", p)
	}
	return fmt.Sprintf("run-p153-%06d", p)
}

func checkBulk(c bulkCase) error {
	ctx := context.Background()
	return inKeyedDesk(ctx, "openrecall-pbt-bulk-", func(d *keyedDesk) error { return checkBulkIn(ctx, d, c) })
}

func checkBulkIn(ctx context.Context, d *keyedDesk, c bulkCase) error {
	st, app := d.st, d.app
	for i := range bulkPool {
		name := fmt.Sprintf("Bulk%d", i)
		r := openrecall.Result{
			AnalysisID: bulkID(i), Batch: "run-p153", Outcome: openrecall.ResultTriaged,
			Alert:    openrecall.Alert{ID: "a-" + name, Title: "alert " + name, Severity: openrecall.SeverityHigh, Status: "firing", Labels: map[string]string{"alertname": name, "service": "db"}},
			Identity: openrecall.Identity{Rule: name, Service: "db"}, Decision: openrecall.DecisionEscalated,
			Triage: openrecall.TriageResult{Decision: openrecall.DecisionEscalated, RequiresHumanApproval: true},
			Steps:  []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK}},
		}
		if c.state(i) != 1 {
			r.Analysis = &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Model: "local-strong"}
		}
		r.Audit = audit.Entries(r, fixedNow())
		if _, err := d.sink.Persist(ctx, r, nil); err != nil {
			return fmt.Errorf("setup: persist: %v", err)
		}
		if c.state(i) == 2 {
			if _, err := app.Decide(ctx, usecase.DecideRequest{AnalysisID: r.AnalysisID, AsProposed: true, Decision: usecase.Decision{Analyst: "bob"}}); err != nil {
				return fmt.Errorf("setup: decide before: %v", err)
			}
		}
	}
	decisions := func(id string) (int, error) {
		es, err := st.AuditByAnalysis(ctx, id)
		n := 0
		for _, e := range es {
			if e.Step == usecase.StepAnalystDecision {
				n++
			}
		}
		return n, err
	}
	var ids, want []string
	for _, p := range c.Picks {
		ids = append(ids, bulkID(p))
		if !slices.Contains(want, bulkID(p)) {
			want = append(want, bulkID(p))
		}
	}
	got := app.ApproveAll(ctx, ids, usecase.Decision{Analyst: "alice"})
	var gotIDs []string
	for _, it := range got {
		gotIDs = append(gotIDs, it.AnalysisID)
	}
	if !slices.Equal(gotIDs, want) {
		return fmt.Errorf("outcomes: one per distinct id in order, want %v, got %v", want, gotIDs)
	}
	picked := map[string]string{}
	for _, it := range got {
		picked[it.AnalysisID] = it.Outcome
	}
	for _, p := range c.Picks {
		if p >= bulkPool && picked[bulkID(p)] != usecase.BulkNotFound {
			return fmt.Errorf("unknown id: %s reported %q, want %q", bulkID(p), picked[bulkID(p)], usecase.BulkNotFound)
		}
	}
	for i := range bulkPool {
		id := bulkID(i)
		outcome, was := picked[id]
		w, err := st.WaitingFor(ctx, id)
		if err != nil {
			return fmt.Errorf("read: %s: %v", id, err)
		}
		n, err := decisions(id)
		if err != nil {
			return fmt.Errorf("read: %s: %v", id, err)
		}
		switch s := c.state(i); {
		case s == 2:
			if was && outcome != usecase.BulkAlready || w.DecidedBy != "bob" || n != 1 {
				return fmt.Errorf("decided before: %s reported %q (given %v), decided by %q, %d decision entries; want %q, bob's, 1", id, outcome, was, w.DecidedBy, n, usecase.BulkAlready)
			}
		case !was:
			if w.Decided || n != 0 {
				return fmt.Errorf("not given: %s was decided by %q (%d decision entries)", id, w.DecidedBy, n)
			}
		case s == 1:
			if outcome != usecase.BulkFailed || w.Decided || n != 0 {
				return fmt.Errorf("no proposal: %s reported %q, decided %v (%d decision entries); want %q, still waiting", id, outcome, w.Decided, n, usecase.BulkFailed)
			}
		default:
			if outcome != usecase.BulkDecided || !w.Decided || w.DecidedBy != "alice" || w.Decision != openrecall.DecisionKnownBenign || n != 1 {
				return fmt.Errorf("waits with a proposal: %s reported %q, decided %v %s by %q, %d decision entries; want %q, known_benign by alice, 1", id, outcome, w.Decided, w.Decision, w.DecidedBy, n, usecase.BulkDecided)
			}
		}
	}
	return nil
}
