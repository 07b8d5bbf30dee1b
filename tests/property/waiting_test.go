package property

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// waitingProperties are the rules of what waits for a person (DESIGN §12a).
func waitingProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P100_waits_until_settled_once",
			"An analysis waits for a person exactly when its alert was triaged, not bypassed, and escalated or in need of a person's approval; its proposal is the model's decision when the model gave one a person can retain, else memory's; the workflow's sink records it with the analysis's audit entries, and the first retain about the analysis settles it (off the queue, decided by that analyst, one analyst-decision audit entry) while a second retain changes neither the queue nor the trail, which stays intact.",
			"WaitCaseGen", waitCaseGen(), checkWaiting, pbt.Expensive(4)),
		bulkProperty(),
		chatProperty(),
	}
}

// waitCase is one analysed alert: indexes into the outcomes and
// decisions, so that every combination is reached by construction.
type waitCase struct {
	Outcome   int // triaged, rejected, resolved
	Bypassed  bool
	Final     int // openrecall.Decisions index: the result's decision
	Proposal  int // openrecall.Decisions index: triage's decision
	Approval  bool
	Model     int // -1: no analysis; else an openrecall.Decisions index
	Decide    int // openrecall.MemoryDecisions index: what the analyst retains
	DeadEnds  int
	Severity  int
	Analysts2 bool // the second retain names another analyst
}

var waitOutcomes = []string{openrecall.ResultTriaged, openrecall.ResultRejected, openrecall.ResultResolved}

func waitCaseGen() gopter.Gen {
	nd := len(openrecall.Decisions)
	return gg.Struct(reflect.TypeOf(waitCase{}), map[string]gopter.Gen{
		"Outcome":   gg.Weighted([]gg.WeightedGen{{Weight: 6, Gen: gg.Const(0)}, {Weight: 1, Gen: gg.Const(1)}, {Weight: 1, Gen: gg.Const(2)}}),
		"Bypassed":  gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Final":     gg.IntRange(0, nd-1),
		"Proposal":  gg.IntRange(0, nd-1),
		"Approval":  gg.Bool(),
		"Model":     gg.IntRange(-1, nd-1),
		"Decide":    gg.IntRange(0, len(openrecall.MemoryDecisions)-1),
		"DeadEnds":  gg.IntRange(0, 3),
		"Severity":  gg.IntRange(0, 4),
		"Analysts2": gg.Bool(),
	})
}

// result is the case as the workflow would hand it to its sink.
func (c waitCase) result() openrecall.Result {
	sevs := []openrecall.Severity{openrecall.SeverityCritical, openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityLow, ""}
	alert := openrecall.Alert{ID: "a-1", Title: "disk full on db-1", Severity: sevs[c.Severity], Status: "firing",
		Labels: map[string]string{"alertname": "DiskFull", "service": "db"}}
	r := openrecall.Result{
		AnalysisID: "run-p90-000000", Batch: "run-p90", Outcome: waitOutcomes[c.Outcome], Alert: alert,
		Identity: openrecall.Identity{Rule: "DiskFull", Service: "db"}, Bypassed: c.Bypassed,
		Decision: openrecall.Decisions[c.Final],
		Triage:   openrecall.TriageResult{Decision: openrecall.Decisions[c.Proposal], RequiresHumanApproval: c.Approval},
		Steps:    []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK}},
	}
	if c.Model >= 0 {
		r.Analysis = &openrecall.Analysis{Decision: openrecall.Decisions[c.Model], Model: "local-strong"}
	}
	return r
}

// expected is the oracle: whether the case waits, why and with what
// proposal.
func (c waitCase) expected() (waits bool, reason string, proposed openrecall.Decision) {
	r := c.result()
	if r.Outcome != openrecall.ResultTriaged || r.Bypassed {
		return false, "", ""
	}
	switch {
	case r.Decision == openrecall.DecisionEscalated:
		reason = openrecall.WaitEscalated
	case r.Triage.RequiresHumanApproval:
		reason = openrecall.WaitApproval
	default:
		return false, "", ""
	}
	if r.Analysis != nil && r.Analysis.Decision != openrecall.DecisionEscalated {
		return true, reason, r.Analysis.Decision
	}
	if r.Triage.Decision != openrecall.DecisionEscalated {
		return true, reason, r.Triage.Decision
	}
	return true, reason, ""
}

var p90Key = func() audit.Key {
	k, _ := audit.NewKey(bytes.Repeat([]byte{9}, audit.KeySize))
	return k
}()

func checkWaiting(c waitCase) error {
	ctx := context.Background()
	return inKeyedDesk(ctx, "openrecall-pbt-waiting-", func(d *keyedDesk) error { return checkWaitingIn(ctx, d, c) })
}

func checkWaitingIn(ctx context.Context, d *keyedDesk, c waitCase) error {
	st, app, sink := d.st, d.app, d.sink
	r := c.result()
	r.Audit = audit.Entries(r, fixedNow())
	if _, err := sink.Persist(ctx, r, nil); err != nil {
		return fmt.Errorf("persist: %v", err)
	}
	waits, reason, proposed := c.expected()
	queue, err := app.Queue(ctx, openrecall.WaitingFilter{})
	if err != nil {
		return fmt.Errorf("queue: %v", err)
	}
	if (len(queue) == 1) != waits || len(queue) > 1 {
		return fmt.Errorf("%d waiting, want waits=%v", len(queue), waits)
	}
	if !waits {
		return nil
	}
	w := queue[0]
	if w.Reason != reason || w.Proposed != proposed || w.AnalysisID != r.AnalysisID || w.Decided {
		return fmt.Errorf("waiting %+v, want reason %q, proposed %q, undecided", w, reason, proposed)
	}
	entries := func() (int, error) {
		es, err := st.AuditByAnalysis(ctx, r.AnalysisID)
		return len(es), err
	}
	before, err := entries()
	if err != nil {
		return err
	}
	deadEnds := []string{"checked inode usage", "restarted the exporter", "rotated logs"}[:c.DeadEnds]
	retain := func(analyst string) error {
		_, err := app.Retain(ctx, usecase.RetainRequest{
			Decision: usecase.Decision{Decision: openrecall.MemoryDecisions[c.Decide], Note: "checked", DeadEnds: deadEnds, Analyst: analyst},
			Subject:  usecase.Subject{AnalysisID: r.AnalysisID},
		})
		return err
	}
	if err := retain("alice"); err != nil {
		return fmt.Errorf("retain: %v", err)
	}
	after, err := entries()
	if err != nil {
		return err
	}
	settled, err := st.WaitingFor(ctx, r.AnalysisID)
	if err != nil {
		return err
	}
	if after != before+1 || !settled.Decided || settled.DecidedBy != "alice" || settled.Decision != openrecall.MemoryDecisions[c.Decide] || !settled.DecidedAt.Equal(fixedNow()) {
		return fmt.Errorf("after the retain: %d audit entries (were %d), %+v", after, before, settled)
	}
	second := "alice"
	if c.Analysts2 {
		second = "bob"
	}
	if err := retain(second); err != nil {
		return fmt.Errorf("second retain: %v", err)
	}
	again, err := entries()
	if err != nil {
		return err
	}
	still, err := st.WaitingFor(ctx, r.AnalysisID)
	if err != nil {
		return err
	}
	if again != after || still.DecidedBy != "alice" || !still.DecidedAt.Equal(settled.DecidedAt) {
		return fmt.Errorf("a second retain changed the settlement: %d audit entries (were %d), %+v", again, after, still)
	}
	if queue, err = app.Queue(ctx, openrecall.WaitingFilter{}); err != nil || len(queue) != 0 {
		return fmt.Errorf("after the retain, %d still waiting (%v)", len(queue), err)
	}
	v, err := app.VerifyAudit(ctx, "")
	if err != nil || !v.Intact {
		return fmt.Errorf("audit verify: %v %+v", err, v.Problems)
	}
	return nil
}
