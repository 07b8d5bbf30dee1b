package memory

import (
	"context"
	"database/sql"
	"fmt"

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
	// Waits, when not nil, says which results wait for a person: they are
	// recorded with their audit entries, in the same transaction.
	Waits WaitsFunc
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

// PersistBatch stores a batch of results in one transaction: all their
// audit entries, chained in input order, then all their cost points, then
// their alert groups and exception proposals, and the completions of their strong calls (the
// running mean of the expected completion), each kind with multi-row inserts. Either all of it is stored
// or none.
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
	if s.Seal == nil || (len(costs) > 0 && s.SealCosts == nil) {
		return nil, fmt.Errorf("persist: nil seal function: %w", openrecall.ErrInvalid)
	}
	if err := checkBatches(costs); err != nil {
		return nil, err
	}
	var sealed []openrecall.AuditEntry
	err := s.Store.inTx(ctx, "persist", func(tx *sql.Tx) error {
		if len(entries) > 0 {
			var err error
			if sealed, err = s.Store.appendAuditTx(ctx, tx, entries, s.Seal); err != nil {
				return err
			}
		}
		if len(costs) > 0 {
			if err := s.Store.appendCostPointsTx(ctx, tx, costs, s.SealCosts); err != nil {
				return err
			}
		}
		if err := recordGroupsTx(ctx, tx, results); err != nil {
			return err
		}
		if err := recordProposalsTx(ctx, tx, results); err != nil {
			return err
		}
		if err := recordStrongCompletionsTx(ctx, tx, results); err != nil {
			return err
		}
		return recordWaitingTx(ctx, tx, results, s.Waits, s.Store.now())
	})
	if err != nil {
		return nil, err
	}
	out := make([][]openrecall.AuditEntry, len(results))
	for i, r := range results {
		n := len(r.Audit)
		out[i], sealed = sealed[:n:n], sealed[n:]
	}
	return out, nil
}
