package runner

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/workflow"
)

// retrySink is the runner's sink: it persists a batch of results through
// the configured sink, retrying storage errors until ctx is done.
type retrySink struct {
	sink workflow.Sink
	log  *zap.Logger
}

// Persist persists one result; see PersistBatch.
func (rs retrySink) Persist(ctx context.Context, r openrecall.Result, point *openrecall.CostPoint) ([]openrecall.AuditEntry, error) {
	sealed, err := rs.PersistBatch(ctx, []openrecall.Result{r}, []*openrecall.CostPoint{point})
	if err != nil {
		return nil, err
	}
	return sealed[0], nil
}

// PersistBatch persists results in one go when the sink can take a batch,
// else one at a time, and retries until it succeeds or ctx is done.
func (rs retrySink) PersistBatch(ctx context.Context, results []openrecall.Result, points []*openrecall.CostPoint) ([][]openrecall.AuditEntry, error) {
	var out [][]openrecall.AuditEntry
	err := retry(ctx, rs.log, "store results", results[0].AnalysisID, len(results), func() error {
		if bs, ok := rs.sink.(workflow.BatchSink); ok {
			sealed, err := bs.PersistBatch(ctx, results, points)
			out = sealed
			return err
		}
		out = make([][]openrecall.AuditEntry, len(results))
		for i := range results {
			sealed, err := rs.sink.Persist(ctx, results[i], points[i])
			if err != nil {
				return err
			}
			out[i] = sealed
		}
		return nil
	})
	return out, err
}

// retry runs op until it succeeds or ctx is done, logging each failure.
func retry(ctx context.Context, log *zap.Logger, what, first string, n int, op func() error) error {
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		err := op()
		if err == nil {
			return nil
		}
		log.Error(what+"; will retry", zap.String("first", first), zap.Int("results", n), zap.Error(err))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}
