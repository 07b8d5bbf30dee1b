package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// fakeCosts holds the cost points of runs (usecase.CostStore) and the
// finished analyses (usecase.ResultStore).
type fakeCosts struct {
	points map[string][]openrecall.CostPoint
	latest string
	served []openrecall.Served
}

func (c fakeCosts) CostPoints(_ context.Context, batch string) ([]openrecall.CostPoint, error) {
	return c.points[batch], nil
}

func (c fakeCosts) LatestBatch(context.Context) (string, error) {
	if c.latest == "" {
		return "", fmt.Errorf("no runs: %w", openrecall.ErrNotFound)
	}
	return c.latest, nil
}

func (c fakeCosts) Served(_ context.Context, id string) (openrecall.Served, error) {
	for _, sv := range c.served {
		if sv.AnalysisID == id {
			return sv, nil
		}
	}
	return openrecall.Served{}, fmt.Errorf("analysis %s: %w", id, openrecall.ErrNotFound)
}

func (c fakeCosts) ServedSince(_ context.Context, cursor int64, limit int) ([]openrecall.Served, error) {
	var out []openrecall.Served
	for _, sv := range c.served {
		if sv.Cursor > cursor && len(out) < limit {
			out = append(out, sv)
		}
	}
	return out, nil
}

// curve returns the cost points of a run: a bypass that cost nothing
// against a baseline of 1000, and a strong-model call of 400 against 1000.
func curve(batch string) []openrecall.CostPoint {
	return []openrecall.CostPoint{
		{Index: 0, Batch: batch, AlertID: "a1", Bypassed: true, Baseline: 1000, CumulativeBaseline: 1000},
		{Index: 1, Batch: batch, AlertID: "a2", Tier: openrecall.TierStrong, Cost: 400, Baseline: 1000, CumulativeCost: 400, CumulativeBaseline: 2000},
	}
}

func TestReadCost(t *testing.T) {
	st := fakeCosts{latest: "b2", points: map[string][]openrecall.CostPoint{"b1": curve("b1"), "b2": curve("b2"), "empty": nil}}
	tests := []struct {
		name string
		req  usecase.CostRequest
		want string
	}{
		{"the latest run", usecase.CostRequest{}, "b2"},
		{"the run named", usecase.CostRequest{Batch: "b1", Prefer: "b2"}, "b1"},
		{"the preferred run when it has points", usecase.CostRequest{Prefer: "b1"}, "b1"},
		{"the latest when the preferred has none", usecase.CostRequest{Prefer: "empty"}, "b2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := usecase.ReadCost(context.Background(), st, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Batch != tt.want || got.Invalid != nil {
				t.Errorf("ReadCost = run %q (invalid: %v), want run %q", got.Batch, got.Invalid, tt.want)
			}
			s := got.Summary
			if s.Alerts != 2 || s.Bypassed != 1 || s.Cost != 400 || s.Baseline != 2000 || s.Savings != 1600 || s.SavingsPercent != 80 {
				t.Errorf("summary %+v, want 2 alerts, 1 bypassed, cost 400 of 2000, saving 1600 (80%%)", s)
			}
		})
	}
	var none *usecase.NoCostPointsError
	if _, err := usecase.ReadCost(context.Background(), st, usecase.CostRequest{Batch: "empty"}); !errors.As(err, &none) || !errors.Is(err, openrecall.ErrNotFound) || none.Batch != "empty" {
		t.Errorf("a run without points: %v, want a NoCostPointsError of run empty wrapping ErrNotFound", err)
	}
	if _, err := usecase.ReadCost(context.Background(), fakeCosts{}, usecase.CostRequest{}); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("no runs: %v, want ErrNotFound", err)
	}
	bad := curve("bad")
	bad[1].CumulativeCost = 7
	got, err := usecase.ReadCost(context.Background(), fakeCosts{points: map[string][]openrecall.CostPoint{"bad": bad}}, usecase.CostRequest{Batch: "bad"})
	if err != nil || got.Invalid == nil {
		t.Errorf("points that do not add up: invalid %v, error %v; want a warning and the summary", got.Invalid, err)
	}
}

func TestReadResults(t *testing.T) {
	st := fakeCosts{served: []openrecall.Served{
		{Delivery: openrecall.Delivery{AnalysisID: "b1-1"}, Done: true, Cursor: 3},
		{Delivery: openrecall.Delivery{AnalysisID: "b1-2"}, Done: true, Cursor: 5, Pruned: true, PrunedAt: now},
		{Delivery: openrecall.Delivery{AnalysisID: "b1-3"}, Done: true, Cursor: 9},
	}}
	ctx := context.Background()
	page, err := usecase.ReadResults(ctx, st, 0, 2)
	if err != nil || len(page.Results) != 2 || page.Next != 5 {
		t.Fatalf("first page = %+v, %v; want 2 results, next 5", page, err)
	}
	page, err = usecase.ReadResults(ctx, st, page.Next, 2)
	if err != nil || len(page.Results) != 1 || page.Next != 9 {
		t.Fatalf("second page = %+v, %v; want 1 result, next 9", page, err)
	}
	page, err = usecase.ReadResults(ctx, st, 9, 2)
	if err != nil || len(page.Results) != 0 || page.Next != 9 {
		t.Fatalf("past the end = %+v, %v; want none, next kept at 9", page, err)
	}

	var pruned *openrecall.PrunedError
	_, err = usecase.ReadResult(ctx, st, "b1-2", 72*time.Hour)
	if !errors.As(err, &pruned) || !errors.Is(err, openrecall.ErrPruned) || pruned.Retention != 72*time.Hour || pruned.AnalysisID != "b1-2" {
		t.Errorf("a pruned result: %v, want a PrunedError naming b1-2 and the 72h retention", err)
	}
	if _, err := usecase.ReadResult(ctx, st, "b1-1", 0); err != nil {
		t.Errorf("a kept result: %v", err)
	}
	if _, err := usecase.ReadResult(ctx, st, "b1-404", 0); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("an unknown result: %v, want ErrNotFound", err)
	}
}

func TestParseDecision(t *testing.T) {
	for _, s := range []string{"false_positive", "duplicate", "known_benign", "real"} {
		if d, err := usecase.ParseDecision(s); err != nil || string(d) != s {
			t.Errorf("ParseDecision(%q) = %q, %v", s, d, err)
		}
	}
	for _, s := range []string{"escalated", "", "REAL"} {
		if _, err := usecase.ParseDecision(s); !errors.Is(err, openrecall.ErrInvalid) {
			t.Errorf("ParseDecision(%q): %v, want ErrInvalid", s, err)
		}
	}
	if got, want := usecase.Decisions(), "false_positive, duplicate, known_benign or real"; got != want {
		t.Errorf("Decisions() = %q, want %q", got, want)
	}
}
