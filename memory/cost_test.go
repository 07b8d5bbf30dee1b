package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

func TestCostPoints(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if _, err := s.LatestBatch(ctx); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("LatestBatch on an empty store: err = %v, want ErrNotFound", err)
	}
	run1 := []openrecall.CostPoint{
		{Index: 1, Batch: "run-1", AlertID: "b", Tier: openrecall.TierStrong, Cost: 900, Baseline: 900, CumulativeCost: 900, CumulativeBaseline: 1800},
		{Index: 0, Batch: "run-1", AlertID: "a", Bypassed: true, Cost: 0, Baseline: 900, CumulativeCost: 0, CumulativeBaseline: 900},
	}
	run2 := []openrecall.CostPoint{{Index: 0, Batch: "run-0-later", AlertID: "c", Tier: openrecall.TierCheap, Cost: 10, Baseline: 900, CumulativeCost: 10, CumulativeBaseline: 900}}
	if err := s.AppendCostPoints(ctx, run1, testCostSeal); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendCostPoints(ctx, run2, testCostSeal); err != nil {
		t.Fatal(err)
	}
	got, err := s.CostPoints(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]openrecall.CostPoint{run1[1], run1[0]}, got); diff != "" {
		t.Errorf("CostPoints in index order (-want +got):\n%s", diff)
	}
	latest, err := s.LatestBatch(ctx)
	if err != nil || latest != "run-0-later" {
		t.Errorf("LatestBatch = %q %v, want the last registered run-0-later", latest, err)
	}
	batches, err := s.Batches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"run-1", "run-0-later"}, batches); diff != "" {
		t.Errorf("Batches (-want +got):\n%s", diff)
	}
	empty, err := s.CostPoints(ctx, "unknown")
	if err != nil || len(empty) != 0 {
		t.Errorf("CostPoints(unknown) = %v %v, want empty", empty, err)
	}

	// A duplicate index refuses the whole append.
	dup := []openrecall.CostPoint{{Index: 2, Batch: "run-1"}, {Index: 0, Batch: "run-1"}}
	if err := s.AppendCostPoints(ctx, dup, testCostSeal); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("duplicate point: err = %v, want ErrInvalid", err)
	}
	if got, _ := s.CostPoints(ctx, "run-1"); len(got) != 2 {
		t.Errorf("after a refused append run-1 has %d points, want 2", len(got))
	}
	if err := s.AppendCostPoints(ctx, []openrecall.CostPoint{{Index: 0}}, testCostSeal); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("point without batch: err = %v, want ErrInvalid", err)
	}
}
