package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// ClosesFunc says whether a result was closed without a person and, when
// it was, how (usecase.ClosedBy is the product's rule).
type ClosesFunc func(r openrecall.Result) (openrecall.Closure, bool)

// historyWidth is the number of columns recordClosuresTx writes.
const historyWidth = 14

// recordClosuresTx records, in the transaction that stores results, those
// closed without a person (closes), with multi-row inserts; an analysis
// recorded already keeps its first row (and what a person said of it).
// Each result document is docs' (nil: encoded here).
func recordClosuresTx(ctx context.Context, tx *sql.Tx, results []openrecall.Result, closes ClosesFunc, now time.Time, docs *jsonfast.Docs) error {
	if closes == nil {
		return nil
	}
	var args []any
	var buf []byte
	first, last := "", ""
	for _, r := range results {
		c, ok := closes(r)
		if !ok {
			continue
		}
		if c.At.IsZero() {
			c.At = now
		}
		at, err := nanos(c.At)
		if err != nil {
			return fmt.Errorf("history %s: %w", c.AnalysisID, err)
		}
		voters := c.Voters
		if voters == nil {
			voters = []openrecall.Voter{}
		}
		vs, err := json.Marshal(voters)
		if err != nil {
			return fmt.Errorf("history %s: encode voters: %w", c.AnalysisID, err)
		}
		if buf, err = docs.Append(buf[:0], &r, nil, true); err != nil {
			return fmt.Errorf("history %s: encode result: %w", c.AnalysisID, err)
		}
		args = append(args, c.AnalysisID, c.Batch, at, c.Kind, c.AlertID, c.Identity.Rule, c.Identity.Service, c.Title,
			string(c.Severity), string(c.Decision), string(vs), c.ExceptionID, c.GroupID, string(buf))
		if first == "" {
			first = c.AnalysisID
		}
		last = c.AnalysisID
	}
	if len(args) == 0 {
		return nil
	}
	err := insertRowsThen(ctx, tx, `INSERT INTO history (analysis_id, batch, at, kind, alert_id, rule, service, title, severity, decision,
		voters, exception_id, group_id, result) VALUES `, ` ON CONFLICT (analysis_id) DO NOTHING`, historyWidth, args)
	return translate("history "+first+" to "+last, err)
}

// RecordClosures stores what was closed without a person among results
// (closes is the rule), outside a run (a test, an import); an analysis
// recorded already keeps its first row.
func (s *Decisions) RecordClosures(ctx context.Context, results []openrecall.Result, closes ClosesFunc) error {
	return s.inTx(ctx, "record history", func(tx *sql.Tx) error {
		return recordClosuresTx(ctx, tx, results, closes, s.now(), nil)
	})
}

const historyColumns = `analysis_id, batch, at, kind, alert_id, rule, service, title, severity, decision, voters, exception_id, group_id,
	wrong_at, COALESCE(wrong_by, ''), COALESCE(wrong_reason, '')`

func scanClosure(r rowScanner, extra ...any) (openrecall.Closure, error) {
	var c openrecall.Closure
	var at int64
	var wrongAt sql.NullInt64
	var severity, decision, voters string
	dest := []any{&c.AnalysisID, &c.Batch, &at, &c.Kind, &c.AlertID, &c.Identity.Rule, &c.Identity.Service, &c.Title,
		&severity, &decision, &voters, &c.ExceptionID, &c.GroupID, &wrongAt, &c.WrongBy, &c.WrongReason}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return c, err
	}
	c.At = fromNanos(at)
	c.Severity, c.Decision = openrecall.Severity(severity), openrecall.Decision(decision)
	if err := json.Unmarshal([]byte(voters), &c.Voters); err != nil {
		return c, fmt.Errorf("history %s: voters: %w", c.AnalysisID, err)
	}
	if wrongAt.Valid {
		c.Wrong, c.WrongAt = true, fromNanos(wrongAt.Int64)
	}
	return c, nil
}

// historyCursor is a closure's place in the listing: its time and analysis
// id, as ClosureFilter.After carries it ("nanos:analysis id").
func historyCursor(c openrecall.Closure) string {
	return strconv.FormatInt(c.At.UnixNano(), 10) + ":" + c.AnalysisID
}

// History returns a page of what was closed without a person, newest
// first (by time, then analysis id), as f selects. A cursor that is not
// one wraps openrecall.ErrInvalid.
func (s *Decisions) History(ctx context.Context, f openrecall.ClosureFilter) (openrecall.ClosurePage, error) {
	q := `SELECT ` + historyColumns + ` FROM history WHERE TRUE`
	var args []any
	var p params
	if f.Kind != "" {
		q += " AND kind = " + p.next()
		args = append(args, f.Kind)
	}
	if text := strings.TrimSpace(f.Search); text != "" {
		pat := "%" + likeEscaper.Replace(strings.ToLower(text)) + "%"
		var ors []string
		for _, col := range []string{"title", "rule", "service"} {
			ors = append(ors, "LOWER("+col+")"+s.d.like()+p.next()+` ESCAPE '\'`)
			args = append(args, pat)
		}
		q += " AND (" + strings.Join(ors, " OR ") + ")"
	}
	if f.After != "" {
		ns, id, ok := strings.Cut(f.After, ":")
		at, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil || id == "" {
			return openrecall.ClosurePage{}, fmt.Errorf("history: cursor %q is not one this listing gave: %w", f.After, openrecall.ErrInvalid)
		}
		a, b, c := p.next(), p.next(), p.next()
		q += " AND (at < " + a + " OR at = " + b + " AND analysis_id < " + c + ")"
		args = append(args, at, at, id)
	}
	q += " ORDER BY at DESC, analysis_id DESC"
	if f.Limit > 0 {
		q += " LIMIT " + p.next()
		args = append(args, f.Limit+1)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return openrecall.ClosurePage{}, translate("history", err)
	}
	defer rows.Close()
	out := openrecall.ClosurePage{Closures: []openrecall.Closure{}}
	for rows.Next() {
		c, err := scanClosure(rows)
		if err != nil {
			return openrecall.ClosurePage{}, translate("history: scan", err)
		}
		out.Closures = append(out.Closures, c)
	}
	if err := rows.Err(); err != nil {
		return openrecall.ClosurePage{}, translate("history", err)
	}
	if f.Limit > 0 && len(out.Closures) > f.Limit {
		out.Closures = out.Closures[:f.Limit]
		out.Next = historyCursor(out.Closures[f.Limit-1])
	}
	return out, nil
}

// Closure returns the record of analysisID closed without a person, with
// its result; an analysis never closed so wraps openrecall.ErrNotFound.
func (s *Decisions) Closure(ctx context.Context, analysisID string) (openrecall.Closure, error) {
	var body string
	c, err := scanClosure(s.db.QueryRowContext(ctx, `SELECT `+historyColumns+`, result FROM history WHERE analysis_id = $1`, analysisID), &body)
	if err != nil {
		return c, translate("history "+analysisID, err)
	}
	c.Result = &openrecall.Result{}
	if err := json.Unmarshal([]byte(body), c.Result); err != nil {
		return c, fmt.Errorf("history %s: result: %w", analysisID, err)
	}
	return c, nil
}

// MarkWrong records that a person (c's WrongBy, at c's WrongAt, for c's
// WrongReason) said memory was wrong to close analysis c.AnalysisID, and
// puts w, the analysis as it waits for that person, in the queue, in one
// transaction. It returns false, changing nothing, when a person said so
// already; an analysis never closed without a person wraps
// openrecall.ErrNotFound.
func (s *Decisions) MarkWrong(ctx context.Context, c openrecall.Closure, w openrecall.Waiting) (bool, error) {
	at, err := nanos(c.WrongAt)
	if err != nil {
		return false, fmt.Errorf("history %s: %w", c.AnalysisID, err)
	}
	changed := false
	err = s.inTx(ctx, "history "+c.AnalysisID+": wrong", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE history SET wrong_at = $1, wrong_by = $2, wrong_reason = $3
			WHERE analysis_id = $4 AND wrong_at IS NULL`, at, c.WrongBy, c.WrongReason, c.AnalysisID)
		if err != nil {
			return translate("history "+c.AnalysisID+": wrong", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return translate("history "+c.AnalysisID+": wrong", err)
		}
		if changed = n == 1; !changed {
			var one int
			return translate("history "+c.AnalysisID, tx.QueryRowContext(ctx, `SELECT 1 FROM history WHERE analysis_id = $1`, c.AnalysisID).Scan(&one))
		}
		return s.insertWaitingTx(ctx, tx, []openrecall.Waiting{w})
	})
	return changed, err
}
