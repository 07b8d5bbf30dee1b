package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
)

const costColumns = `idx, batch, alert_id, tier, bypassed, cost, baseline, cumulative_cost, cumulative_baseline`

// CostSealFunc chains cost points after the cost chain's head: given the
// head's hash, the sequence the first point takes and the points, it returns
// each point's hash (point i at sequence nextSeq+i, chained to the hash
// before it). Memory stores what it returns and knows nothing of hashing.
type CostSealFunc func(prevHash string, nextSeq int64, points []openrecall.CostPoint) []string

// AppendCostPoints stores points atomically, chained after the cost chain's
// head by seal, and moves the head to the last of them. Each point needs a
// batch name; a (batch, index) pair that is already stored is refused with
// an error wrapping openrecall.ErrInvalid, and then nothing is stored. A
// batch is registered the first time one of its points is appended.
func (s *Trail) AppendCostPoints(ctx context.Context, points []openrecall.CostPoint, seal CostSealFunc) error {
	if seal == nil {
		return fmt.Errorf("append cost points: nil seal function: %w", openrecall.ErrInvalid)
	}
	if len(points) == 0 {
		return nil
	}
	if err := checkBatches(points); err != nil {
		return err
	}
	return s.inTx(ctx, "append cost points", func(tx *sql.Tx) error {
		return s.appendCostPointsTx(ctx, tx, points, seal, false)
	})
}

// checkBatches refuses a point without a batch name.
func checkBatches(points []openrecall.CostPoint) error {
	for _, p := range points {
		if p.Batch == "" {
			return fmt.Errorf("append cost points: point %d has no batch: %w", p.Index, openrecall.ErrInvalid)
		}
	}
	return nil
}

// appendCostPointsTx is AppendCostPoints inside the caller's transaction:
// each new batch name registered once, the points in multi-row inserts in
// order. With rebase, points continue their batch's stored curve (see
// rebasePoints) instead of being refused where another writer appended.
func (s *conn) appendCostPointsTx(ctx context.Context, tx *sql.Tx, points []openrecall.CostPoint, seal CostSealFunc, rebase bool) error {
	created, err := nanos(s.now().UTC())
	if err != nil {
		return fmt.Errorf("append cost points: %w", err)
	}
	if rebase {
		if points, err = rebasePoints(ctx, tx, points); err != nil {
			return err
		}
	}
	var headSeq int64
	var headHash string
	if err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM cost_head WHERE id = 1`+s.d.forUpdate()).Scan(&headSeq, &headHash); err != nil {
		return translate("append cost points: read head", err)
	}
	sums := seal(headHash, headSeq+1, points)
	if len(sums) != len(points) {
		return fmt.Errorf("append cost points: seal returned %d hashes for %d points: %w", len(sums), len(points), openrecall.ErrInvalid)
	}
	prev := headHash
	registered := map[string]bool{}
	width := strings.Count(costColumns, ",") + 5 // and seq, prev_hash, hash, appended_at
	args := make([]any, 0, len(points)*width)
	var batches, tiers, hashes boxes[string]
	var amounts boxes[int64]
	at := any(created) // one box for every row
	for i, p := range points {
		if !registered[p.Batch] {
			registered[p.Batch] = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO batches (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, p.Batch, created); err != nil {
				return translate(fmt.Sprintf("append cost points: batch %q", p.Batch), err)
			}
		}
		seq := headSeq + 1 + int64(i)
		// bypassed is an integer flag on both backends (boolInt).
		args = append(args, int64(p.Index), batches.of(p.Batch), p.AlertID, tiers.of(string(p.Tier)), boolInt(p.Bypassed), amounts.of(int64(p.Cost)),
			amounts.of(int64(p.Baseline)), int64(p.CumulativeCost), int64(p.CumulativeBaseline), seq, hashes.of(prev), hashes.of(sums[i]), at)
		prev = sums[i]
	}
	if err := insertRows(ctx, tx, `INSERT INTO cost_points (`+costColumns+`, seq, prev_hash, hash, appended_at) VALUES `, width, args); err != nil {
		first, last := points[0], points[len(points)-1]
		return translate(fmt.Sprintf("append cost points: batch %q indexes %d–%d", first.Batch, first.Index, last.Index), err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cost_head SET seq = $1, hash = $2 WHERE id = 1`, headSeq+int64(len(points)), prev); err != nil {
		return translate("append cost points: move head", err)
	}
	return nil
}

// rebasePoints renumbers points to follow the last point stored in their
// batch and recomputes their running sums from it: several serve processes
// continue one daily curve, each from what was stored when it read it, so
// one process's next index may have been taken by another. Points that
// already follow the stored ones come back unchanged.
func rebasePoints(ctx context.Context, tx *sql.Tx, points []openrecall.CostPoint) ([]openrecall.CostPoint, error) {
	out := make([]openrecall.CostPoint, len(points))
	copy(out, points)
	type tail struct {
		idx        int
		cost, base int64
	}
	tails := map[string]*tail{}
	for i := range out {
		p := &out[i]
		t, ok := tails[p.Batch]
		if !ok {
			t = &tail{idx: -1}
			err := tx.QueryRowContext(ctx, `SELECT idx, cumulative_cost, cumulative_baseline FROM cost_points WHERE batch = $1 ORDER BY idx DESC LIMIT 1`,
				p.Batch).Scan(&t.idx, &t.cost, &t.base)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, translate(fmt.Sprintf("append cost points: batch %q tail", p.Batch), err)
			}
			tails[p.Batch] = t
		}
		t.idx++
		t.cost += int64(p.Cost)
		t.base += int64(p.Baseline)
		p.Index, p.CumulativeCost, p.CumulativeBaseline = t.idx, openrecall.NanoUSD(t.cost), openrecall.NanoUSD(t.base)
	}
	return out, nil
}

// CostPoints returns the points of one batch in index order; an unknown
// batch gives an empty slice.
func (s *Trail) CostPoints(ctx context.Context, batch string) ([]openrecall.CostPoint, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+costColumns+` FROM cost_points WHERE batch = $1 ORDER BY idx`, batch)
	if err != nil {
		return nil, translate("cost points", err)
	}
	defer rows.Close()
	out := []openrecall.CostPoint{}
	for rows.Next() {
		p, err := scanCost(rows)
		if err != nil {
			return nil, translate("cost points: scan", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("cost points", err)
	}
	return out, nil
}

// LatestBatch returns the batch registered most recently (the last run), or
// an error wrapping openrecall.ErrNotFound when there is none.
func (s *Trail) LatestBatch(ctx context.Context) (string, error) {
	var name string
	if err := s.db.QueryRowContext(ctx, `SELECT name FROM batches ORDER BY id DESC LIMIT 1`).Scan(&name); err != nil {
		return "", translate("latest batch", err)
	}
	return name, nil
}

// Batches returns every batch name, oldest first (in the order they were
// registered).
func (s *Trail) Batches(ctx context.Context) ([]string, error) {
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

// scanCost reads the costColumns of a row, then any extra destinations.
func scanCost(r rowScanner, extra ...any) (openrecall.CostPoint, error) {
	var (
		p                            openrecall.CostPoint
		tier                         string
		cost, base, cumCost, cumBase int64
	)
	if err := r.Scan(append([]any{&p.Index, &p.Batch, &p.AlertID, &tier, &p.Bypassed, &cost, &base, &cumCost, &cumBase}, extra...)...); err != nil {
		return openrecall.CostPoint{}, err
	}
	p.Tier = openrecall.Tier(tier)
	p.Cost, p.Baseline = openrecall.NanoUSD(cost), openrecall.NanoUSD(base)
	p.CumulativeCost, p.CumulativeBaseline = openrecall.NanoUSD(cumCost), openrecall.NanoUSD(cumBase)
	return p, nil
}
