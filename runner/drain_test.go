package runner_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestNewDayOnePipeline: one pipeline serves every day (DESIGN §7): on a
// new UTC day the cost curve continues in the new day's batch, the one
// CostBatch names, and the daily model budget starts afresh inside the
// router; each day's spend is in the store's ledger.
func TestNewDayOnePipeline(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	built := 0
	const limit = openrecall.NanoUSD(1_000_000_000) // a dollar a day: never reached
	e := newEnv(t, options{now: clock, built: &built, perDay: limit})
	if got := e.run.CostBatch(); got != "serve-2026-11-30" {
		t.Errorf("CostBatch %q on 2026-11-30", got)
	}
	a := e.wait(e.enqueue(`{"id":"a","title":"checkout 5xx spike","service":"checkout"}`))
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	b := e.wait(e.enqueue(`{"id":"b","title":"checkout 5xx spike","service":"checkout"}`))
	if built != 1 {
		t.Errorf("%d pipelines built over two days, want one", built)
	}
	if got := e.run.CostBatch(); got != "serve-2026-12-01" {
		t.Errorf("CostBatch %q on 2026-12-01", got)
	}
	for _, batch := range []string{"serve-2026-11-30", "serve-2026-12-01"} {
		c, err := usecase.ReadCost(context.Background(), e.store, usecase.CostRequest{Batch: batch})
		if err != nil || c.Summary.Alerts != 1 {
			t.Errorf("cost of %s: %+v, %v; want 1 alert", batch, c.Summary, err)
		}
	}
	for i, sv := range []openrecall.Served{a, b} {
		day := []string{"2026-11-30", "2026-12-01"}[i]
		res := sv.Result
		if res == nil || res.Cost <= 0 {
			t.Fatalf("analysis on %s: %+v; want a priced model call", day, res)
		}
		spent, err := e.store.BudgetSpent(context.Background(), day)
		if err != nil || spent != res.Cost {
			t.Errorf("ledger of %s: spent %d, %v; want the day's one analysis, %d", day, spent, err, res.Cost)
		}
		// The route's budget state is the day's: the second day's call
		// sees nothing of the first day's spend.
		analysed := 0
		for _, st := range res.Steps {
			if st.Step != openrecall.StepAnalysis {
				continue
			}
			analysed++
			if st.Budget.Limit != limit || st.Budget.Spent > res.Cost {
				t.Errorf("analysis on %s: step %s budget %+v; want the day's (limit %d, at most %d spent)", day, st.Step, st.Budget, limit, res.Cost)
			}
		}
		if analysed == 0 {
			t.Errorf("analysis on %s: no model step in %+v", day, res.Steps)
		}
	}
}

// TestStopFinishesAnalyses: after stop, Run returns nil once every
// analysis it began is stored with its delivery completed; nothing is
// left claimed.
func TestStopFinishesAnalyses(t *testing.T) {
	e := newEnv(t, options{})
	var ids []string
	for i := range 6 {
		ids = append(ids, e.enqueue(fmt.Sprintf(`{"id":"a%d","title":"disk %d%% full on db-%d","service":"db"}`, i, 90+i, i)))
	}
	e.wait(ids[0])
	if err := e.stop(); err != nil {
		t.Fatalf("Run after stop: %v", err)
	}
	pending := 0
	for _, id := range ids {
		sv, err := e.store.Served(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if sv.Done && (sv.Result == nil || sv.Result.Outcome != openrecall.ResultTriaged) {
			t.Errorf("%s done without its result: %+v", id, sv.Result)
		}
		if !sv.Done {
			pending++
		}
	}
	if n, err := e.store.InboxDepth(context.Background()); err != nil || n != pending {
		t.Errorf("inbox depth %d, %v after stop; want the %d not analysed, waiting for the next start", n, err, pending)
	}
}
