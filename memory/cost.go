package memory

import (
	"context"
	"fmt"

	"github.com/openrecall/openrecall"
)

const costColumns = `idx, batch, alert_id, tier, bypassed, cost, baseline, cumulative_cost, cumulative_baseline`

// AppendCostPoints stores points atomically. Each point needs a batch name;
// a (batch, index) pair that is already stored is refused with an error
// wrapping openrecall.ErrInvalid, and then nothing is stored. A batch is
// registered the first time one of its points is appended.
func (s *Store) AppendCostPoints(ctx context.Context, points []openrecall.CostPoint) error {
	if len(points) == 0 {
		return nil
	}
	for _, p := range points {
		if p.Batch == "" {
			return fmt.Errorf("append cost points: point %d has no batch: %w", p.Index, openrecall.ErrInvalid)
		}
	}
	created, err := nanos(s.now().UTC())
	if err != nil {
		return fmt.Errorf("append cost points: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return translate("append cost points: begin", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO cost_points (`+costColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return translate("append cost points: prepare", err)
	}
	defer stmt.Close()
	for _, p := range points {
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, p.Batch, created); err != nil {
			return translate(fmt.Sprintf("append cost points: batch %q", p.Batch), err)
		}
		if _, err := stmt.ExecContext(ctx, p.Index, p.Batch, p.AlertID, string(p.Tier), p.Bypassed, int64(p.Cost),
			int64(p.Baseline), int64(p.CumulativeCost), int64(p.CumulativeBaseline)); err != nil {
			return translate(fmt.Sprintf("append cost points: batch %q index %d", p.Batch, p.Index), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return translate("append cost points: commit", err)
	}
	return nil
}

// CostPoints returns the points of one batch in index order; an unknown
// batch gives an empty slice.
func (s *Store) CostPoints(ctx context.Context, batch string) ([]openrecall.CostPoint, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+costColumns+` FROM cost_points WHERE batch = ? ORDER BY idx`, batch)
	if err != nil {
		return nil, translate("cost points", err)
	}
	defer rows.Close()
	out := []openrecall.CostPoint{}
	for rows.Next() {
		var (
			p                            openrecall.CostPoint
			tier                         string
			cost, base, cumCost, cumBase int64
		)
		if err := rows.Scan(&p.Index, &p.Batch, &p.AlertID, &tier, &p.Bypassed, &cost, &base, &cumCost, &cumBase); err != nil {
			return nil, translate("cost points: scan", err)
		}
		p.Tier = openrecall.Tier(tier)
		p.Cost, p.Baseline = openrecall.NanoUSD(cost), openrecall.NanoUSD(base)
		p.CumulativeCost, p.CumulativeBaseline = openrecall.NanoUSD(cumCost), openrecall.NanoUSD(cumBase)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("cost points", err)
	}
	return out, nil
}

// LatestBatch returns the batch registered most recently (the last run), or
// an error wrapping openrecall.ErrNotFound when there is none.
func (s *Store) LatestBatch(ctx context.Context) (string, error) {
	var name string
	if err := s.db.QueryRowContext(ctx, `SELECT name FROM batches ORDER BY id DESC LIMIT 1`).Scan(&name); err != nil {
		return "", translate("latest batch", err)
	}
	return name, nil
}

// Batches returns every batch name, oldest first (in the order they were
// registered).
func (s *Store) Batches(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM batches ORDER BY id`)
	if err != nil {
		return nil, translate("batches", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, translate("batches: scan", err)
		}
		out = append(out, name)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("batches", err)
	}
	return out, nil
}
