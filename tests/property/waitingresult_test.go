package property

import (
	"context"
	"database/sql"
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
			"Every waiting item read back (WaitingFor) holds exactly the result that was triaged, without its audit entries (what a copy written with the row would hold), and the queue lists each undecided one with its result's labels, for results persisted in batches through the inbox — claimed and completed in the sink's transaction (serve's path, where the row names its inbox row) or completed after it —, some waiting and some not, whether decided since or not, after the inbox's finished rows were pruned (their result documents emptied) or not; an analysis that did not wait reads as not found; the keyed audit verify reports no row; and once the document a waiting item reads its result from is edited in the table, that item is refused (ErrIntegrity), never served with the edit.",
			"WaitingResultCaseGen", waitingResultCaseGen(), checkWaitingResult, pbt.Expensive(3),
			pbt.Classify(classifyWaitingResult), pbt.Cover("fires", 50), pbt.Cover("claims", 30), pbt.Cover("prunes", 15), pbt.Cover("edits", 40)),
		pbt.ForAll("P182_waiting_row_names_its_finished_delivery",
			"A waiting row recorded in the transaction that finishes its analysis's claimed inbox delivery (serve's path) stores no copy of its result: it names that delivery's inbox row, and takes its own copy back when retention prunes that row; a row recorded any other way (a delivery completed after its result was stored, analyze) holds its copy and names no row.",
			"WaitingResultCaseGen", waitingResultCaseGen(), checkWaitingStorage, pbt.Expensive(3),
			pbt.Classify(classifyWaitingResult), pbt.Cover("claims", 30), pbt.Cover("prunes", 15)),
	}
}

// waitingResultCase is an inbox history: bodies accepted an hour apart,
// the deliveries of each finished in its hour (Finish) or left pending,
// each finished firing's result drawn from Final, Approval and Model (so
// that some wait and some do not) and persisted with the other results of
// its body in one batch, the body's deliveries claimed first and completed
// by that batch's transaction (Claim, serve's path) or completed after it;
// then decisions retained about some (Retain), a
// pruning pass with a retention in hours (0: none), and an edit of the
// document of the Tamper-th waiting item (-1: none).
type waitingResultCase struct {
	Plan      gen.DeliveryPlan
	Claim     []bool
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
		"Claim":     gg.SliceOfN(3, gg.Bool()),
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
// delivered (some result can wait), one delivered in a claimed body (its
// waiting row names its inbox row), a pruning pass that reaches a body's
// finished rows, an edit of a waiting item's document.
func classifyWaitingResult(c waitingResultCase) []string {
	var out []string
	fires, claims := false, false
	for bi, b := range c.Plan.Bodies {
		if slices.ContainsFunc(b, func(s gen.DeliveryStep) bool { return s.Kind == gen.DeliverFiring }) {
			fires, claims = true, claims || pick(c.Claim, bi)
		}
	}
	if fires {
		out = append(out, "fires")
	}
	if claims {
		out = append(out, "claims")
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

// waitingRun is a waitingResultCase's history, stored: every finished
// analysis in order, what a copy beside its waiting row would hold, those
// that wait, and those finished in a claimed body and decided since.
type waitingRun struct {
	*hourlyDesk
	order, waiting   []string
	twins            map[string]openrecall.Result
	claimed, decided map[string]bool
}

// runWaitingResult stores c's history on a new hourly desk; the caller
// closes it.
func runWaitingResult(ctx context.Context, c waitingResultCase) (*waitingRun, error) {
	h, err := openHourlyDesk(ctx, "waitresult")
	if err != nil {
		return nil, err
	}
	run := &waitingRun{hourlyDesk: h, twins: map[string]openrecall.Result{}, claimed: map[string]bool{}, decided: map[string]bool{}}
	ok := false
	defer func() {
		if !ok {
			h.close()
		}
	}()
	st, ex, app, sink, clock := h.st, h.ex, h.app, h.sink, h.clock
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
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
			return nil, fmt.Errorf("body %d: enqueue: %v", bi, err)
		}
		claimed := pick(c.Claim, bi)
		if claimed {
			// Serve's path: the sink takes the deliveries it claimed off
			// the inbox and stores their results in the batch's transaction.
			if _, err := st.Claim(ctx, 1000); err != nil {
				return nil, fmt.Errorf("body %d: claim: %v", bi, err)
			}
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
			run.twins[r.AnalysisID] = twin
			run.claimed[r.AnalysisID] = claimed
			run.order = append(run.order, r.AnalysisID)
			if _, waits := usecase.WaitingFor(r); waits {
				run.waiting = append(run.waiting, r.AnalysisID)
			}
			done, results, points = append(done, d.ID), append(results, r), append(points, nil)
		}
		if len(results) == 0 {
			continue
		}
		if _, err := sink.PersistBatch(ctx, results, points); err != nil {
			return nil, fmt.Errorf("body %d: persist: %v", bi, err)
		}
		if claimed {
			continue
		}
		if err := st.Complete(ctx, done, results); err != nil {
			return nil, fmt.Errorf("body %d: complete: %v", bi, err)
		}
	}
	end := h.base.Add(time.Duration(len(c.Plan.Bodies)) * time.Hour)
	clock.set(end)
	for i, id := range run.waiting {
		if !pick(c.Retain, i) {
			continue
		}
		run.decided[id] = true
		if _, err := app.Retain(ctx, usecase.RetainRequest{Subject: usecase.Subject{AnalysisID: id},
			Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Note: "cleared", Analyst: "alice"}}); err != nil {
			return nil, fmt.Errorf("retain about %s: %v", id, err)
		}
	}
	if c.Retention > 0 {
		if _, err := st.PruneInboxAll(ctx, end.Add(-time.Duration(c.Retention)*time.Hour), 2); err != nil {
			return nil, fmt.Errorf("prune: %v", err)
		}
	}
	ok = true
	return run, nil
}

func checkWaitingResult(c waitingResultCase) error {
	ctx := context.Background()
	run, err := runWaitingResult(ctx, c)
	if err != nil {
		return err
	}
	defer run.close()
	st, app, order, twins, waiting, decided := run.st, run.app, run.order, run.twins, run.waiting, run.decided
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
	listed, err := st.Awaiting(ctx, openrecall.WaitingFilter{})
	if err != nil {
		return fmt.Errorf("awaiting: %v", err)
	}
	seen := map[string]bool{}
	for _, w := range listed {
		if seen[w.AnalysisID] = true; !waits[w.AnalysisID] || decided[w.AnalysisID] {
			return fmt.Errorf("the queue lists %s, which does not wait", w.AnalysisID)
		}
		if want := twins[w.AnalysisID].Alert.Labels; !reflect.DeepEqual(w.Labels, want) {
			return fmt.Errorf("the queue lists %s with labels %v, want its result's %v", w.AnalysisID, w.Labels, want)
		}
	}
	for _, id := range waiting {
		if !decided[id] && !seen[id] {
			return fmt.Errorf("the queue does not list %s, which waits", id)
		}
	}
	if ps, err := rowProblems(ctx, app); err != nil || len(ps) != 0 {
		return fmt.Errorf("verify before any edit: %v %v", ps, err)
	}
	if c.Tamper < 0 || len(waiting) == 0 {
		return nil
	}
	id := waiting[c.Tamper%len(waiting)]
	if err := tamperWaitingResult(run.loc, id); err != nil {
		return err
	}
	if w, err := st.WaitingFor(ctx, id); !errors.Is(err, openrecall.ErrIntegrity) {
		return fmt.Errorf("waiting %s with its result document edited read as %+v (%v), want ErrIntegrity", id, w.Result, err)
	}
	return nil
}

// tamperWaitingResult edits, in the table, the result document the
// waiting item of analysis id is read from, the decision it carries: its
// own copy, or the document of the inbox row it names.
func tamperWaitingResult(loc, id string) error {
	if err := rawExec(loc, fmt.Sprintf(`UPDATE waiting SET result = replace(result, '"decision":"', '"decision":"x') WHERE analysis_id = '%s'`, id)); err != nil {
		return err
	}
	return rawExec(loc, fmt.Sprintf(`UPDATE inbox SET result = replace(result, '"decision":"', '"decision":"x')
		WHERE id = (SELECT result_inbox FROM waiting WHERE analysis_id = '%s')`, id))
}

// checkWaitingStorage checks what each waiting row of c's history stores:
// no copy and the name of its analysis's inbox row when its delivery was
// claimed and that row still holds its result, else its own copy.
func checkWaitingStorage(c waitingResultCase) error {
	ctx := context.Background()
	run, err := runWaitingResult(ctx, c)
	if err != nil {
		return err
	}
	defer run.close()
	db, err := rawInbox(run.loc)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	for _, id := range run.waiting {
		var own string
		var named sql.NullInt64
		var inbox int64
		var pruned bool
		if err := db.QueryRowContext(ctx, `SELECT w.result, w.result_inbox, i.id, i.pruned_at IS NOT NULL
			FROM waiting AS w JOIN inbox AS i ON i.analysis_id = w.analysis_id WHERE w.analysis_id = $1`, id).Scan(&own, &named, &inbox, &pruned); err != nil {
			return fmt.Errorf("waiting %s: %v", id, err)
		}
		want := run.claimed[id] && !pruned
		switch {
		case want && (!named.Valid || named.Int64 != inbox || own != ""):
			return fmt.Errorf("waiting %s of a claimed delivery holds %d bytes and names inbox row %v, want none and row %d", id, len(own), named, inbox)
		case !want && (named.Valid || own == ""):
			return fmt.Errorf("waiting %s (claimed %v, pruned %v) holds %d bytes and names inbox row %v, want its own copy", id, run.claimed[id], pruned, len(own), named)
		}
	}
	return nil
}
