package memory

import (
	"context"

	"github.com/openrecall/openrecall"
)

// Sink persists a run's audit trail and cost curve into a Store, in the
// order the workflow hands results over. It satisfies workflow.Sink and
// workflow.BatchSink. Seal chains the audit entries and SealCosts the cost
// points (audit.Sealer's methods).
type Sink struct {
	Store     *Store
	Seal      SealFunc
	SealCosts CostSealFunc
}

// Persist stores one result's audit entries and its cost point (nil for
// results off the cost curve) and returns the entries as stored.
func (s Sink) Persist(ctx context.Context, r openrecall.Result, point *openrecall.CostPoint) ([]openrecall.AuditEntry, error) {
	out, err := s.PersistBatch(ctx, []openrecall.Result{r}, []*openrecall.CostPoint{point})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// PersistBatch stores a batch of results in three transactions: all their
// audit entries, chained in input order, then all their cost points, then
// the completions of their strong calls (the running mean of the expected
// completion).
// points[i] belongs to results[i]. It returns each result's entries as
// stored.
func (s Sink) PersistBatch(ctx context.Context, results []openrecall.Result, points []*openrecall.CostPoint) ([][]openrecall.AuditEntry, error) {
	var entries []openrecall.AuditEntry
	var costs []openrecall.CostPoint
	for i, r := range results {
		entries = append(entries, r.Audit...)
		if i < len(points) && points[i] != nil {
			costs = append(costs, *points[i])
		}
	}
	sealed, err := s.Store.AppendAudit(ctx, entries, s.Seal)
	if err != nil {
		return nil, err
	}
	if len(costs) > 0 {
		if err := s.Store.AppendCostPoints(ctx, costs, s.SealCosts); err != nil {
			return nil, err
		}
	}
	if err := s.Store.RecordStrongCompletions(ctx, results); err != nil {
		return nil, err
	}
	out := make([][]openrecall.AuditEntry, len(results))
	for i, r := range results {
		n := len(r.Audit)
		out[i], sealed = sealed[:n:n], sealed[n:]
	}
	return out, nil
}
