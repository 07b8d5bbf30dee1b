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

// TestNewDayNewPipeline: on a new UTC day the runner builds a new pipeline
// (so the daily model budget starts afresh) and a new cost curve batch,
// the one CostBatch names.
func TestNewDayNewPipeline(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	var days []string
	e := newEnv(t, options{now: clock, days: &days})
	if got := e.run.CostBatch(); got != "serve-2026-11-30" {
		t.Errorf("CostBatch %q on 2026-11-30", got)
	}
	e.wait(e.enqueue(`{"id":"a","title":"checkout 5xx spike","service":"checkout"}`))
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	e.wait(e.enqueue(`{"id":"b","title":"checkout 5xx spike","service":"checkout"}`))
	if fmt.Sprint(days) != "[2026-11-30 2026-12-01]" {
		t.Errorf("pipelines built for %v, want one per day", days)
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
