package memory

import (
	"context"
	"testing"

	"github.com/openrecall/openrecall"
)

func TestStrongCompletionsRunningMean(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	if c, err := st.StrongCompletions(ctx, "gpt-4o"); err != nil || c != (CompletionStats{}) {
		t.Fatalf("empty memory: %+v, %v", c, err)
	}
	if _, ok := (CompletionStats{}).Mean(); ok {
		t.Error("a mean without calls")
	}
	step := func(tier openrecall.Tier, model string, completion int, skipped bool) openrecall.RouteStep {
		return openrecall.RouteStep{Step: openrecall.StepAnalysis, Tier: tier, Model: model, CompletionTokens: completion, Skipped: skipped}
	}
	results := []openrecall.Result{
		{Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake}, step(openrecall.TierStrong, "gpt-4o", 200, false)}},
		{Steps: []openrecall.RouteStep{step(openrecall.TierCheap, "gpt-4o-mini", 90, false)}}, // cheap: not counted
		{Steps: []openrecall.RouteStep{step(openrecall.TierStrong, "gpt-4o", 0, true)}},       // no call made
		{Steps: []openrecall.RouteStep{step(openrecall.TierStrong, "gpt-4o", 251, false)}},
		{Steps: []openrecall.RouteStep{step(openrecall.TierStrong, "claude-sonnet-4", 300, false)}},
		{Steps: []openrecall.RouteStep{step(openrecall.TierStrong, "gpt-4o-2024-08-06", 100, false)}}, // a dated snapshot of gpt-4o
		{Steps: []openrecall.RouteStep{step(openrecall.TierStrong, "gpt-4o-mini", 999, false)}},       // another model
		{Steps: []openrecall.RouteStep{step(openrecall.TierStrong, "gpt-4oX", 999, false)}},           // another model
	}
	if err := st.RecordStrongCompletions(ctx, results); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordStrongCompletions(ctx, results[3:4]); err != nil {
		t.Fatal(err)
	}
	c, err := st.StrongCompletions(ctx, "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	// 200 + 251 + 251 + 100 (the dated snapshot) over 4 calls = 200.5 → 201
	if want := (CompletionStats{Calls: 4, CompletionTokens: 802}); c != want {
		t.Errorf("gpt-4o stats %+v, want %+v", c, want)
	}
	if m, ok := c.Mean(); !ok || m != 201 {
		t.Errorf("mean %d %v, want 201", m, ok)
	}
	if c, _ := st.StrongCompletions(ctx, "gpt-4o_"); c.Calls != 0 {
		t.Errorf("a LIKE wildcard in the name matched %+v", c)
	}
	if m, _ := (CompletionStats{Calls: 2, CompletionTokens: 5}).Mean(); m != 3 {
		t.Errorf("mean of 5 over 2 = %d, want 3 (rounded half up)", m)
	}
	if c, _ := st.StrongCompletions(ctx, "claude-sonnet-4"); c.Calls != 1 || c.CompletionTokens != 300 {
		t.Errorf("claude-sonnet-4 stats %+v", c)
	}
}

func TestBatchLive(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	entries := []openrecall.AuditEntry{{AnalysisID: "b-000000", Batch: "b", AlertID: "a", Step: openrecall.StepAnalysis, Live: false}}
	if _, err := st.AppendAudit(ctx, entries, testSeal); err != nil {
		t.Fatal(err)
	}
	if live, err := st.BatchLive(ctx, "b"); err != nil || live {
		t.Errorf("deterministic batch: live %v, %v", live, err)
	}
	entries[0].Live, entries[0].Batch, entries[0].AnalysisID = true, "c", "c-000000"
	if _, err := st.AppendAudit(ctx, entries, testSeal); err != nil {
		t.Fatal(err)
	}
	if live, err := st.BatchLive(ctx, "c"); err != nil || !live {
		t.Errorf("live batch: live %v, %v", live, err)
	}
}
