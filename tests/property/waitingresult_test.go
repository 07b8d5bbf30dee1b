package property

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// waitingResultProperties are the rules of the result a waiting item
// reads back (DESIGN §12a, §9: the waiting row and its seal), whatever
// the row stores it as.
func waitingResultProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P179_waiting_item_reads_back_its_triaged_result",
			"Every waiting item read back (WaitingFor) holds exactly the result that was triaged, without its audit entries (what a copy written with the row would hold), for results persisted in batches through the inbox, some waiting and some not, whether decided since or not, after the inbox's finished rows were pruned (their result documents emptied) or not; an analysis that did not wait reads as not found; and once the document a waiting item reads its result from is edited in the table, that item is refused (ErrIntegrity), never served with the edit.",
			"WaitingResultCaseGen", waitingResultCaseGen(), checkWaitingResult, pbt.Expensive(3),
			pbt.Classify(classifyWaitingResult), pbt.Cover("fires", 50), pbt.Cover("prunes", 15), pbt.Cover("edits", 40)),
	}
}

// waitingResultCase is an inbox history: bodies accepted an hour apart,
// the deliveries of each finished in its hour (Finish) or left pending,
// each finished firing's result drawn from Final, Approval and Model (so
// that some wait and some do not) and persisted with the other results of
// its body in one batch; then decisions retained about some (Retain), a
// pruning pass with a retention in hours (0: none), and an edit of the
// document of the Tamper-th waiting item (-1: none).
type waitingResultCase struct {
	Plan      gen.DeliveryPlan
	Finish    []bool
	Final     []int
	Approval  []bool
	Model     []int
	Retain    []bool
	Retention int
	Tamper    int
}

func waitingResultCaseGen() gopter.Gen {
	nd := len(openrecall.Decisions)
	return gg.Struct(reflect.TypeOf(waitingResultCase{}), map[string]gopter.Gen{
		"Plan":      gen.DeliveryPlanGen(),
		"Finish":    gg.SliceOfN(5, gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(true)}, {Weight: 1, Gen: gg.Const(false)}})),
		"Final":     gg.SliceOfN(4, gg.IntRange(0, nd-1)),
		"Approval":  gg.SliceOfN(3, gg.Bool()),
		"Model":     gg.SliceOfN(3, gg.IntRange(-1, nd-1)),
		"Retain":    gg.SliceOfN(3, gg.Bool()),
		"Retention": gg.IntRange(0, 4),
		"Tamper":    gg.IntRange(-1, 3),
	})
}

// classifyWaitingResult labels a case by what it exercises: a firing
// delivered (some result can wait), a pruning pass that reaches a body's
// finished rows, an edit of a waiting item's document.
func classifyWaitingResult(c waitingResultCase) []string {
	var out []string
	for _, b := range c.Plan.Bodies {
		if slices.ContainsFunc(b, func(s gen.DeliveryStep) bool { return s.Kind == gen.DeliverFiring }) {
			out = append(out, "fires")
			break
		}
	}
	if c.Retention > 0 && len(c.Plan.Bodies) > c.Retention {
		out = append(out, "prunes")
	}
	if c.Tamper >= 0 {
		out = append(out, "edits")
	}
	return out
}

// pick returns xs[i modulo its length], or zero for an empty slice.
func pick[T any](xs []T, i int) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	return xs[i%len(xs)]
}

func checkWaitingResult(c waitingResultCase) error {
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "waitresult")
	if err != nil {
		return err
	}
	defer h.close()
	st, ex, app, sink, clock := h.st, h.ex, h.app, h.sink, h.clock
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	var order []string                      // every finished analysis, in order
	twins := map[string]openrecall.Result{} // what a copy beside the waiting row would hold
	var waiting []string
	queued, fired := 0, 0
	for bi, body := range c.Plan.Bodies {
		clock.set(h.base.Add(time.Duration(bi) * time.Hour))
		ds := make([]openrecall.Delivery, len(body))
		for i, s := range body {
			ds[i] = s.Delivery()
			ds[i].Alert.Title = fmt.Sprintf("disk full on db-%d <%d> \"é\"", s.Alert, bi)
			ds[i].Alert.Labels = map[string]string{"alertname": "DiskFull", "service": "db", "note": "a&b</script>"}
		}
		out, err := st.Enqueue(ctx, ds, 0, name)
		if err != nil {
			return fmt.Errorf("body %d: enqueue: %v", bi, err)
		}
		var done []int64
		var results []openrecall.Result
		var points []*openrecall.CostPoint
		for _, d := range out {
			if d.Duplicate {
				continue
			}
			queued++
			if !pick(c.Finish, queued) {
				continue
			}
			r := openrecall.Result{AnalysisID: d.AnalysisID, Batch: "serve-p179", Alert: d.Alert,
				Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK}}}
			switch {
			case d.Rejection != "":
				r.Outcome = openrecall.ResultRejected
			case d.State == openrecall.AlertFiring:
				fired++
				r.Outcome = openrecall.ResultTriaged
				r.Decision = openrecall.Decisions[pick(c.Final, fired)]
				r.Identity, r.Fingerprint = ex.Identify(d.Alert), ex.Extract(d.Alert)
				r.Triage = openrecall.TriageResult{Decision: r.Decision, RequiresHumanApproval: pick(c.Approval, fired),
					EscalationReason: "no memory matches", AlertSeverity: d.Alert.Severity}
				if m := pick(c.Model, fired); m >= 0 {
					r.Analysis = &openrecall.Analysis{Decision: openrecall.Decisions[m], Confidence: 0.5, Model: "local-strong",
						Summary: fmt.Sprintf("firing %d: \"check\" <db> & restart", fired), Hypotheses: []string{"a deploy", "a disk"}}
				}
				r.Steps = append(r.Steps, openrecall.RouteStep{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Model: "gpt-4o",
					Reason: "weak memory", Outcome: openrecall.OutcomeOK, Cost: 10, Baseline: 10, PromptTokens: 406})
				r.Cost, r.Baseline = 10, 10
			default:
				r.Outcome = openrecall.ResultResolved
			}
			r.Audit = audit.Entries(r, clock.now())
			twin := r
			twin.Audit = nil
			twins[r.AnalysisID] = twin
			order = append(order, r.AnalysisID)
			if _, waits := usecase.WaitingFor(r); waits {
				waiting = append(waiting, r.AnalysisID)
			}
			done, results, points = append(done, d.ID), append(results, r), append(points, nil)
		}
		if len(results) == 0 {
			continue
		}
		if _, err := sink.PersistBatch(ctx, results, points); err != nil {
			return fmt.Errorf("body %d: persist: %v", bi, err)
		}
		if err := st.Complete(ctx, done, results); err != nil {
			return fmt.Errorf("body %d: complete: %v", bi, err)
		}
	}
	end := h.base.Add(time.Duration(len(c.Plan.Bodies)) * time.Hour)
	clock.set(end)
	for i, id := range waiting {
		if !pick(c.Retain, i) {
			continue
		}
		if _, err := app.Retain(ctx, usecase.RetainRequest{Subject: usecase.Subject{AnalysisID: id},
			Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Note: "cleared", Analyst: "alice"}}); err != nil {
			return fmt.Errorf("retain about %s: %v", id, err)
		}
	}
	if c.Retention > 0 {
		if _, err := st.PruneInboxAll(ctx, end.Add(-time.Duration(c.Retention)*time.Hour), 2); err != nil {
			return fmt.Errorf("prune: %v", err)
		}
	}
	waits := map[string]bool{}
	for _, id := range waiting {
		waits[id] = true
	}
	for _, id := range order {
		w, err := st.WaitingFor(ctx, id)
		if !waits[id] {
			if !errors.Is(err, openrecall.ErrNotFound) {
				return fmt.Errorf("%s did not wait, yet reads as %+v (%v)", id, w, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting %s: %v", id, err)
		}
		if w.Result == nil || !reflect.DeepEqual(*w.Result, twins[id]) {
			return fmt.Errorf("waiting %s reads back\n%#v\nwant the triaged result\n%#v", id, w.Result, twins[id])
		}
	}
	if c.Tamper < 0 || len(waiting) == 0 {
		return nil
	}
	id := waiting[c.Tamper%len(waiting)]
	if err := tamperWaitingResult(h.loc, id); err != nil {
		return err
	}
	if w, err := st.WaitingFor(ctx, id); !errors.Is(err, openrecall.ErrIntegrity) {
		return fmt.Errorf("waiting %s with its result document edited read as %+v (%v), want ErrIntegrity", id, w.Result, err)
	}
	return nil
}

// tamperWaitingResult edits, in the table, the result document the
// waiting item of analysis id is read from: the decision it carries.
func tamperWaitingResult(loc, id string) error {
	return rawExec(loc, fmt.Sprintf(`UPDATE waiting SET result = replace(result, '"decision":"', '"decision":"x') WHERE analysis_id = '%s'`, id))
}
