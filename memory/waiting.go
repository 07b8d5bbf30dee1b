package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// WaitsFunc says whether a result waits for a person and, when it does,
// what waits (usecase.WaitingFor is the product's rule).
type WaitsFunc func(r openrecall.Result) (openrecall.Waiting, bool)

// recordWaitingTx stores what waits for a person among results, in the
// transaction of their audit entries, with multi-row inserts. An analysis
// already recorded keeps its first row (and its decision).
func recordWaitingTx(ctx context.Context, tx *sql.Tx, results []openrecall.Result, waits WaitsFunc, now time.Time) error {
	if waits == nil {
		return nil
	}
	var ws []openrecall.Waiting
	for _, r := range results {
		w, ok := waits(r)
		if !ok {
			continue
		}
		if w.Since.IsZero() {
			w.Since = now
		}
		ws = append(ws, w)
	}
	return insertWaitingTx(ctx, tx, ws)
}

// waitingWidth is the number of columns insertWaitingTx writes.
const waitingWidth = 12

// insertWaitingTx inserts ws in order; an analysis already recorded (before
// or earlier in ws) keeps its first row.
func insertWaitingTx(ctx context.Context, tx *sql.Tx, ws []openrecall.Waiting) error {
	if len(ws) == 0 {
		return nil
	}
	args := make([]any, 0, len(ws)*waitingWidth)
	var buf []byte
	for _, w := range ws {
		body := "{}"
		if w.Result != nil {
			r := *w.Result
			r.Audit = nil
			// What json.Marshal writes (HTML escaped), without reflection.
			var err error
			if buf, err = jsonfast.AppendResult(buf[:0], r, true); err != nil {
				return fmt.Errorf("waiting %s: encode result: %w", w.AnalysisID, err)
			}
			body = string(buf)
		}
		since, err := nanos(w.Since)
		if err != nil {
			return fmt.Errorf("waiting %s: %w", w.AnalysisID, err)
		}
		args = append(args, w.AnalysisID, w.Batch, since, w.Reason, w.Why, string(w.Severity), w.Identity.Rule, w.Identity.Service,
			w.Title, w.AlertID, string(w.Proposed), body)
	}
	err := insertRowsThen(ctx, tx, `INSERT INTO waiting (analysis_id, batch, since, reason, why, severity, rule, service, title, alert_id, proposed, result)
		VALUES `, ` ON CONFLICT (analysis_id) DO NOTHING`, waitingWidth, args)
	if len(ws) == 1 {
		return translate("waiting "+ws[0].AnalysisID, err)
	}
	return translate(fmt.Sprintf("waiting %s to %s", ws[0].AnalysisID, ws[len(ws)-1].AnalysisID), err)
}

// RecordWaiting stores what waits for a person, outside a run (a test, an
// import); an analysis already recorded keeps its first row.
func (s *Store) RecordWaiting(ctx context.Context, ws []openrecall.Waiting) error {
	return s.inTx(ctx, "record waiting", func(tx *sql.Tx) error {
		return insertWaitingTx(ctx, tx, ws)
	})
}

const waitingColumns = `analysis_id, batch, since, reason, why, severity, rule, service, title, alert_id, proposed,
	decided_at, COALESCE(decided_by, ''), COALESCE(decision, ''), COALESCE(memory_id, '')`

func scanWaiting(r rowScanner, extra ...any) (openrecall.Waiting, error) {
	var w openrecall.Waiting
	var since int64
	var decidedAt sql.NullInt64
	var severity, proposed, decision string
	dest := []any{&w.AnalysisID, &w.Batch, &since, &w.Reason, &w.Why, &severity, &w.Identity.Rule, &w.Identity.Service,
		&w.Title, &w.AlertID, &proposed, &decidedAt, &w.DecidedBy, &decision, &w.MemoryID}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return w, err
	}
	w.Since = fromNanos(since)
	w.Severity, w.Proposed, w.Decision = openrecall.Severity(severity), openrecall.Decision(proposed), openrecall.Decision(decision)
	if decidedAt.Valid {
		w.Decided, w.DecidedAt = true, fromNanos(decidedAt.Int64)
	}
	return w, nil
}

// Awaiting returns what waits for a person and is not decided yet, oldest
// first, as f selects.
func (s *Store) Awaiting(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"severity", string(f.Severity)}, {"rule", f.Rule}, {"service", f.Service}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	// An analysis of an open group that waits is folded into the group,
	// which waits as one item (WaitingGroups).
	q := `SELECT ` + waitingColumns + ` FROM waiting INDEXED BY waiting_open WHERE decided_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM group_members AS m JOIN alert_groups AS g ON g.id = m.group_id
			WHERE m.analysis_id = waiting.analysis_id AND ` + groupWaitsCond + `)`
	for _, w := range where {
		q += " AND " + w
	}
	q += " ORDER BY since, analysis_id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate("awaiting", err)
	}
	defer rows.Close()
	out := []openrecall.Waiting{}
	for rows.Next() {
		w, err := scanWaiting(rows)
		if err != nil {
			return nil, translate("awaiting: scan", err)
		}
		out = append(out, w)
	}
	return out, translate("awaiting", rows.Err())
}

// WaitingFor returns what waited for a person about analysisID, with its
// result, decided or not; an analysis that never waited wraps
// openrecall.ErrNotFound.
func (s *Store) WaitingFor(ctx context.Context, analysisID string) (openrecall.Waiting, error) {
	var body string
	w, err := scanWaiting(s.db.QueryRowContext(ctx, `SELECT `+waitingColumns+`, result FROM waiting WHERE analysis_id = ?`, analysisID), &body)
	if err != nil {
		return w, translate("waiting "+analysisID, err)
	}
	w.Result = &openrecall.Result{}
	if err := json.Unmarshal([]byte(body), w.Result); err != nil {
		return w, fmt.Errorf("waiting %s: result: %w", analysisID, err)
	}
	return w, nil
}

// Decide marks what waits about analysisID as decided by w's DecidedBy,
// DecidedAt, Decision and MemoryID. It returns false, changing nothing, when
// the analysis was decided already or never waited.
func (s *Store) Decide(ctx context.Context, w openrecall.Waiting) (bool, error) {
	at, err := nanos(w.DecidedAt)
	if err != nil {
		return false, fmt.Errorf("decide %s: %w", w.AnalysisID, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE waiting SET decided_at = ?, decided_by = ?, decision = ?, memory_id = ?
		WHERE analysis_id = ? AND decided_at IS NULL`, at, w.DecidedBy, string(w.Decision), w.MemoryID, w.AnalysisID)
	if err != nil {
		return false, translate("decide "+w.AnalysisID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate("decide "+w.AnalysisID, err)
}

// groupWaitsCond selects, in alert_groups AS g, the groups that wait for a
// person (usecase.GroupWaits is the rule): no person decided them, they
// have members besides their head, and memory did not bypass their head
// (its members were closed by memory, nothing waits).
const groupWaitsCond = `g.decided_at IS NULL AND g.size > 1 AND COALESCE(json_extract(g.head, '$.bypassed'), 0) = 0`

// WaitingGroups returns the open alert groups that wait for a person's
// decision, oldest first (by their first firing), as f selects (the
// head's severity, the identity's fields).
func (s *Store) WaitingGroups(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Group, error) {
	q := `SELECT ` + groupColumns + ` FROM alert_groups AS g WHERE ` + groupWaitsCond
	var args []any
	for _, c := range []struct{ col, v string }{{"head_severity", string(f.Severity)}, {"rule", f.Rule}, {"service", f.Service}} {
		if c.v != "" {
			q += " AND g." + c.col + " = ?"
			args = append(args, c.v)
		}
	}
	q += " ORDER BY g.first_at, g.id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return s.queryGroups(ctx, "waiting groups", q, args...)
}

// AwaitingProposal returns the analyses not decided yet whose result
// carried the exception proposal id, oldest first.
func (s *Store) AwaitingProposal(ctx context.Context, id string) ([]openrecall.Waiting, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+waitingColumns+` FROM waiting INDEXED BY waiting_open
		WHERE decided_at IS NULL AND json_extract(result, '$.proposal.id') = ? ORDER BY since, analysis_id`, id)
	if err != nil {
		return nil, translate("awaiting proposal "+id, err)
	}
	defer rows.Close()
	out := []openrecall.Waiting{}
	for rows.Next() {
		w, err := scanWaiting(rows)
		if err != nil {
			return nil, translate("awaiting proposal: scan", err)
		}
		out = append(out, w)
	}
	return out, translate("awaiting proposal "+id, rows.Err())
}
