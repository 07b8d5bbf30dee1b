package usecase

import (
	"time"

	"context"
	"fmt"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
)

// CostStore is the memory a run's cost curve is read from. memory.Store
// satisfies it.
type CostStore interface {
	CostPoints(ctx context.Context, batch string) ([]openrecall.CostPoint, error)
	LatestBatch(ctx context.Context) (string, error)
}

// CostRequest asks for the cost curve of one run.
type CostRequest struct {
	// Batch names the run; empty takes Prefer when it has cost points, and
	// the latest run otherwise.
	Batch string
	// Prefer, when not empty, is the run to show without Batch if it has
	// any cost points (the server's run of the day).
	Prefer string
}

// Cost is a run's cost curve. Summary is what `cost -o json` prints and
// GET /api/v1/cost answers.
type Cost struct {
	Batch   string
	Points  []openrecall.CostPoint
	Summary costcurve.Summary
	// Invalid, when not nil, says why the points do not add up (a warning;
	// the summary is still theirs).
	Invalid error
}

// ReadCost returns the cost curve req names. Without runs it returns an
// error wrapping openrecall.ErrNotFound from LatestBatch; a run without cost
// points is an error wrapping openrecall.ErrNotFound too.
func ReadCost(ctx context.Context, st CostStore, req CostRequest) (Cost, error) {
	batch := req.Batch
	if batch == "" && req.Prefer != "" {
		if points, err := st.CostPoints(ctx, req.Prefer); err == nil && len(points) > 0 {
			batch = req.Prefer
		}
	}
	if batch == "" {
		var err error
		if batch, err = st.LatestBatch(ctx); err != nil {
			return Cost{}, err
		}
	}
	points, err := st.CostPoints(ctx, batch)
	if err != nil {
		return Cost{}, err
	}
	if len(points) == 0 {
		return Cost{}, &NoCostPointsError{Batch: batch}
	}
	return Cost{Batch: batch, Points: points, Summary: costcurve.Summarize(points), Invalid: costcurve.Validate(points)}, nil
}

// NoCostPointsError is the error of a run without cost points. It wraps
// openrecall.ErrNotFound.
type NoCostPointsError struct {
	Batch string
}

// Error names the run.
func (e *NoCostPointsError) Error() string {
	return fmt.Sprintf("batch %q has no cost points: %v", e.Batch, openrecall.ErrNotFound)
}

// Unwrap returns openrecall.ErrNotFound.
func (e *NoCostPointsError) Unwrap() error { return openrecall.ErrNotFound }

// ResultStore is the memory finished analyses are read from. memory.Store
// satisfies it.
type ResultStore interface {
	Served(ctx context.Context, analysisID string) (openrecall.Served, error)
	ServedSince(ctx context.Context, cursor int64, limit int) ([]openrecall.Served, error)
}

// Results is a page of finished analyses in completion order, as GET
// /api/v1/results answers it: pass Next as the cursor of the next page.
type Results struct {
	Results []openrecall.Served `json:"results"`
	Next    int64               `json:"next"`
}

// ReadResult returns the finished analysis analysisID, or an error wrapping
// openrecall.ErrNotFound. An analysis whose documents were pruned after the
// retention is a *openrecall.PrunedError naming it and retention (0 when
// unknown), wrapping openrecall.ErrPruned; ReadResults lists such analyses
// with Pruned set instead.
func ReadResult(ctx context.Context, st ResultStore, analysisID string, retention time.Duration) (openrecall.Served, error) {
	sv, err := st.Served(ctx, analysisID)
	if err == nil && sv.Pruned {
		return sv, &openrecall.PrunedError{AnalysisID: analysisID, PrunedAt: sv.PrunedAt, Retention: retention}
	}
	return sv, err
}

// ReadResults returns up to limit finished analyses after the cursor since.
func ReadResults(ctx context.Context, st ResultStore, since int64, limit int) (Results, error) {
	out, err := st.ServedSince(ctx, since, limit)
	if err != nil {
		return Results{}, err
	}
	next := since
	if n := len(out); n > 0 {
		next = out[n-1].Cursor
	}
	return Results{Results: out, Next: next}, nil
}
