package memory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

func sinkResult(id string, steps int) openrecall.Result {
	r := openrecall.Result{AnalysisID: id, Batch: "b1", Alert: openrecall.Alert{ID: "alert-" + id}, Outcome: openrecall.ResultTriaged}
	for i := range steps {
		r.Steps = append(r.Steps, openrecall.RouteStep{Step: fmt.Sprintf("step-%d", i), Reason: "r", Outcome: openrecall.OutcomeOK})
	}
	r.Audit = audit.Entries(r, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return r
}

func TestSinkPersistBatchSplitsChainedEntriesPerResult(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal}
	results := []openrecall.Result{sinkResult("a", 1), sinkResult("b", 3), sinkResult("c", 2)}
	p0 := openrecall.CostPoint{Index: 0, Batch: "b1", AlertID: "alert-a", Cost: 1, Baseline: 5, CumulativeCost: 1, CumulativeBaseline: 5}
	p2 := openrecall.CostPoint{Index: 1, Batch: "b1", AlertID: "alert-c", Cost: 2, Baseline: 5, CumulativeCost: 3, CumulativeBaseline: 10}
	out, err := sink.PersistBatch(ctx, results, []*openrecall.CostPoint{&p0, nil, &p2})
	if err != nil {
		t.Fatal(err)
	}
	seq := int64(1)
	for i, r := range results {
		if len(out[i]) != len(r.Audit) {
			t.Fatalf("result %d: %d stored entries, want %d", i, len(out[i]), len(r.Audit))
		}
		for _, e := range out[i] {
			if e.AnalysisID != r.AnalysisID || e.Sequence != seq || e.Hash == "" {
				t.Errorf("result %d entry: analysis %s seq %d hash %q; want %s, %d, a hash", i, e.AnalysisID, e.Sequence, e.Hash, r.AnalysisID, seq)
			}
			seq++
		}
		stored, err := st.AuditByAnalysis(ctx, r.AnalysisID)
		if err != nil || len(stored) != len(r.Audit) {
			t.Errorf("AuditByAnalysis(%s): %d entries, %v", r.AnalysisID, len(stored), err)
		}
	}
	v := audit.NewVerifier()
	if err := st.WalkAudit(ctx, func(e openrecall.AuditEntry) error { v.Add(e); return nil }); err != nil {
		t.Fatal(err)
	}
	headSeq, headHash, err := st.AuditHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if problems := v.Finish(headSeq, headHash); len(problems) != 0 {
		t.Errorf("chain after a batch: %v", problems)
	}
	points, err := st.CostPoints(ctx, "b1")
	if err != nil || len(points) != 2 || points[1].AlertID != "alert-c" {
		t.Errorf("cost points %+v, %v; want the two given, in order", points, err)
	}
	one, err := sink.Persist(ctx, sinkResult("d", 2), nil)
	if err != nil || len(one) != 2 || one[0].Sequence != seq {
		t.Errorf("Persist after the batch: %+v, %v; want 2 entries from sequence %d", one, err, seq)
	}
}

// TestSinkPersistBatchAllOrNothing pins that a batch is one transaction: when
// its cost point is refused (an index the batch already stored), none of its
// audit entries, cost points or strong completions are stored, and the next
// batch chains on as if it had never been tried.
func TestSinkPersistBatchAllOrNothing(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal}
	p0 := openrecall.CostPoint{Index: 0, Batch: "b1", AlertID: "alert-a", Cost: 1, Baseline: 5, CumulativeCost: 1, CumulativeBaseline: 5}
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{sinkResult("a", 2)}, []*openrecall.CostPoint{&p0}); err != nil {
		t.Fatal(err)
	}
	seq0, hash0, err := st.AuditHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	strong := sinkResult("b", 1)
	strong.Steps = append(strong.Steps, openrecall.RouteStep{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Model: "gpt-4o", CompletionTokens: 300})
	strong.Audit = audit.Entries(strong, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	again := p0 // the same (batch, index): refused
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{strong}, []*openrecall.CostPoint{&again}); err == nil {
		t.Fatal("a batch with an already stored cost point was accepted")
	}
	seq, hash, err := st.AuditHead(ctx)
	if err != nil || seq != seq0 || hash != hash0 {
		t.Errorf("audit head moved to %d %q (%v) by a refused batch; want %d %q", seq, hash, err, seq0, hash0)
	}
	if got, err := st.AuditByAnalysis(ctx, "b"); err != nil || len(got) != 0 {
		t.Errorf("refused batch left %d audit entries (%v)", len(got), err)
	}
	if c, err := st.StrongCompletions(ctx, "gpt-4o"); err != nil || c.Calls != 0 {
		t.Errorf("refused batch recorded strong completions %+v (%v)", c, err)
	}
	p1 := openrecall.CostPoint{Index: 1, Batch: "b1", AlertID: "alert-b", Cost: 1, Baseline: 5, CumulativeCost: 2, CumulativeBaseline: 10}
	out, err := sink.PersistBatch(ctx, []openrecall.Result{strong}, []*openrecall.CostPoint{&p1})
	if err != nil || len(out[0]) != len(strong.Audit) || out[0][0].Sequence != seq0+1 {
		t.Fatalf("next batch: %+v, %v; want entries from sequence %d", out, err, seq0+1)
	}
	if c, err := st.StrongCompletions(ctx, "gpt-4o"); err != nil || c.Calls != 1 || c.CompletionTokens != 300 {
		t.Errorf("strong completions %+v (%v), want 1 call of 300 tokens", c, err)
	}
}
