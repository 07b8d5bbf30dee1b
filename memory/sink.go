package memory

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
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
	// Closes, when not nil, says which results were closed without a
	// person (History, DESIGN §12a): they are recorded with their audit
	// entries, in the same transaction.
	Closes ClosesFunc
	// Notify, when not nil, gives each result's notification intents
	// (DESIGN §12b): they are written to the outbox with the result, in
	// the same transaction, for the results stored (none for a result
	// fenced out, nor for one stored before).
	Notify NotifyFunc
	// Docs, when not nil, holds the documents of the batch persisted last
	// (PersistBatch resets it): a caller that prints the batch afterwards
	// (analyze's standard output) reads each result's document from it
	// rather than encoding the result again. Without it each batch's
	// documents are the call's own. It is not safe for concurrent use: a
	// Sink with Docs persists one batch at a time.
	Docs *jsonfast.Docs
	// Continue makes cost points continue their batch's stored curve:
	// their index and running sums follow the last point stored, which
	// another serve process sharing the daily curve may have appended
	// since this one read it. Without it such a point is refused.
	Continue bool
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
// their alert groups and exception proposals, the completions of their
// strong calls (the running mean of the expected completion) and their
// notification intents (Notify), each kind with multi-row inserts; and,
// for a result of a delivery this Store claimed from the inbox, the
// delivery's completion with the result (Store.Complete's rows). Either
// all of it is stored or none, so a served result is never stored without
// its delivery completed, nor the other way round, and a result is never
// stored without its intents, nor an intent without its result.
// points[i] belongs to results[i]. It returns each result's entries as
// stored (none for a result whose delivery another owner holds now:
// nothing of it is stored).
func (s Sink) PersistBatch(ctx context.Context, results []openrecall.Result, points []*openrecall.CostPoint) ([][]openrecall.AuditEntry, error) {
	if s.Seal == nil {
		return nil, fmt.Errorf("persist: nil seal function: %w", openrecall.ErrInvalid)
	}
	var (
		sealed []openrecall.AuditEntry
		out    [][]openrecall.AuditEntry
		f      fence
	)
	// Each result's document is encoded once, for every row that holds it
	// (waiting or history, and the inbox's) and for the caller's readers.
	docs := s.Docs
	if docs == nil {
		var ok bool
		if docs, ok = s.Store.docs.Get().(*jsonfast.Docs); !ok {
			docs = new(jsonfast.Docs)
		}
		defer func() {
			docs.Reset(nil)
			s.Store.docs.Put(docs)
		}()
	}
	docs.Reset(results)
	err := s.Store.inTx(ctx, "persist", func(tx *sql.Tx) error {
		// The deliveries this Store claimed are taken off the inbox first,
		// each only while this Store still holds it (lease.go): that is
		// the fence, and a result fenced out is not stored at all.
		var err error
		if f, err = s.Store.fenceTx(ctx, tx, results); err != nil {
			return err
		}
		var kept, fenced []openrecall.Result
		var entries []openrecall.AuditEntry
		var costs []openrecall.CostPoint
		for i, r := range results {
			if !f.keep[i] || f.stored[i] != nil {
				if !f.keep[i] {
					fenced = append(fenced, r)
				}
				continue
			}
			kept = append(kept, r)
			entries = append(entries, r.Audit...)
			if i < len(points) && points[i] != nil {
				costs = append(costs, *points[i])
			}
		}
		if len(costs) > 0 && s.SealCosts == nil {
			return fmt.Errorf("persist: nil seal function: %w", openrecall.ErrInvalid)
		}
		if err := checkBatches(costs); err != nil {
			return err
		}
		// What waits goes in first, so that each waiting row's binding is
		// chained right after its analysis's entries: the chain's order
		// does not depend on how results were batched.
		// A waiting row of a delivery taken now names its inbox row, which
		// finishTx fills below, instead of copying its result.
		refs := waitRefs(f)
		binds, err := s.Store.recordWaitingTx(ctx, tx, kept, s.Waits, s.Store.now(), refs, docs)
		if err != nil {
			return err
		}
		if len(binds) > 0 {
			byID := make(map[string]binding, len(binds))
			for _, b := range binds {
				byID[b.id] = b
			}
			entries = entries[:0:0]
			for _, r := range kept {
				entries = append(entries, r.Audit...)
				if b, ok := byID[r.AnalysisID]; ok {
					entries = append(entries, b.entry())
					delete(byID, r.AnalysisID)
				}
			}
			for _, b := range binds { // rows of no kept analysis (none expected)
				if _, ok := byID[b.id]; ok {
					entries = append(entries, b.entry())
				}
			}
		}
		sealed = nil
		if len(entries) > 0 {
			if sealed, err = s.Store.appendAuditTx(ctx, tx, entries, s.Seal); err != nil {
				return err
			}
		}
		if len(costs) > 0 {
			if err := s.Store.appendCostPointsTx(ctx, tx, costs, s.SealCosts, s.Continue); err != nil {
				return err
			}
		}
		if err := openFencedGroupsTx(ctx, tx, s.Store.sql, fenced, s.Store.now().UnixNano()); err != nil {
			return err
		}
		if err := recordGroupsTx(ctx, tx, s.Store.sql, kept, s.Store.now().UnixNano()); err != nil {
			return err
		}
		if err := recordClosuresTx(ctx, tx, kept, s.Closes, s.Store.now(), docs); err != nil {
			return err
		}
		if err := recordProposalsTx(ctx, tx, s.Store.sql, kept); err != nil {
			return err
		}
		if err := recordStrongCompletionsTx(ctx, tx, kept); err != nil {
			return err
		}
		if err := s.Store.recordIntentsTx(ctx, tx, kept, s.Notify, s.Store.now()); err != nil {
			return err
		}
		out = trails(results, f, sealed)
		// The completions go last: each result document carries its
		// entries as stored, and its seal's binding follows them in the
		// chain.
		return s.Store.finishTx(ctx, tx, f.taken, func(i int) openrecall.Result {
			r := results[i]
			r.Audit = out[i]
			return r
		}, refs, docs)
	})
	if err != nil {
		return nil, err
	}
	s.Store.settleFence(f)
	return out, nil
}

// trails splits sealed, the entries of the results of a batch that were
// stored now (kept, and not stored before) in input order, each followed
// by its waiting row's binding when it has one, into each result's entries
// as stored: those stored before for a result persisted by an earlier
// run, none for a result fenced out.
func trails(results []openrecall.Result, f fence, sealed []openrecall.AuditEntry) [][]openrecall.AuditEntry {
	out := make([][]openrecall.AuditEntry, len(results))
	for i, r := range results {
		switch {
		case !f.keep[i]:
			continue // another owner holds this delivery now: nothing stored
		case f.stored[i] != nil:
			out[i] = f.stored[i]
			continue
		}
		n := len(r.Audit)
		out[i], sealed = sealed[:n:n], sealed[n:]
		if len(sealed) > 0 && sealed[0].Batch == openrecall.SealBatch && sealed[0].AnalysisID == openrecall.RowWaiting+"-"+r.AnalysisID {
			sealed = sealed[1:] // its waiting row's binding
		}
	}
	return out
}
