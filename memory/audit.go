package memory

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/openrecall/openrecall"
)

// walkPage is how many audit entries WalkAudit reads per query.
const walkPage = 512

// SealFunc seals entries for appending after the chain head: given the head's
// hash, the sequence number the first entry must take and the entries, it
// returns them with Sequence set to nextSeq, nextSeq+1, … and their PrevHash
// and Hash filled. Memory stores what it returns and knows nothing of hashing.
type SealFunc func(prevHash string, nextSeq int64, entries []openrecall.AuditEntry) []openrecall.AuditEntry

const auditColumns = `sequence, analysis_id, batch, alert_id, step_index, step, model, tier, reason,
	outcome, memory_hits, proposed_decision, escalation_reason, live, skipped, cost, baseline, savings,
	latency_ns, time_ns, prev_hash, hash`

// auditWidth is the number of auditColumns.
var auditWidth = strings.Count(auditColumns, ",") + 1

// AppendAudit appends entries to the audit trail atomically: in one immediate
// transaction it reads the head, fills a zero Time with the Store's clock,
// calls seal(headHash, headSeq+1, entries), inserts what seal returns and
// moves the head to the last of them. It returns the entries as stored (times
// in UTC). seal must return as many entries as it was given, numbered from
// nextSeq without gaps; anything else is refused and nothing is stored. The
// caller's slice is not modified.
func (s *Trail) AppendAudit(ctx context.Context, entries []openrecall.AuditEntry, seal SealFunc) ([]openrecall.AuditEntry, error) {
	if seal == nil {
		return nil, fmt.Errorf("append audit: nil seal function: %w", openrecall.ErrInvalid)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	var out []openrecall.AuditEntry
	err := s.inTx(ctx, "append audit", func(tx *sql.Tx) error {
		var err error
		out, err = s.appendAuditTx(ctx, tx, entries, seal)
		return err
	})
	return out, err
}

// inTx runs fn in one immediate transaction and commits it; what names the
// operation in errors.
func (s *conn) inTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return translate(what+": begin", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return translate(what+": commit", err)
	}
	return nil
}

// appendAuditTx is AppendAudit inside the caller's transaction: the entries
// go in with multi-row inserts, in sequence order.
func (s *conn) appendAuditTx(ctx context.Context, tx *sql.Tx, entries []openrecall.AuditEntry, seal SealFunc) ([]openrecall.AuditEntry, error) {
	in := make([]openrecall.AuditEntry, len(entries))
	copy(in, entries)
	now := s.now().UTC()
	for i := range in {
		if in[i].Time.IsZero() {
			in[i].Time = now
		} else {
			in[i].Time = in[i].Time.UTC()
		}
	}
	var headSeq int64
	var headHash string
	if err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`+s.d.forUpdate()).Scan(&headSeq, &headHash); err != nil {
		return nil, translate("append audit: read head", err)
	}
	sealed := seal(headHash, headSeq+1, in)
	if len(sealed) != len(in) {
		return nil, fmt.Errorf("append audit: seal returned %d entries for %d: %w", len(sealed), len(in), openrecall.ErrInvalid)
	}
	// sealed is seal's answer for our copy of the entries: the stored form
	// goes back into it.
	out, args, err := auditArgs(sealed, headSeq)
	if err != nil {
		return nil, err
	}
	if err := insertRows(ctx, tx, `INSERT INTO audit_entries (`+auditColumns+`) VALUES `, auditWidth, args); err != nil {
		return nil, translate(fmt.Sprintf("append audit: insert entries %d–%d", out[0].Sequence, out[len(out)-1].Sequence), err)
	}
	last := out[len(out)-1]
	if _, err := tx.ExecContext(ctx, `UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1`, last.Sequence, last.Hash); err != nil {
		return nil, translate("append audit: move head", err)
	}
	return out, nil
}

// auditArgs checks that seal numbered sealed after headSeq and returns
// the entries in their stored form (times in UTC, in sealed itself) and the
// rows' bound values, auditWidth per entry in auditColumns' order. A value
// repeated across rows is boxed once (boxes).
func auditArgs(sealed []openrecall.AuditEntry, headSeq int64) ([]openrecall.AuditEntry, []any, error) {
	var (
		ids, alerts, batches, steps, models, tiers, reasons, outcomes, proposed, escalations, hashes boxes[string]
		amounts, times                                                                               boxes[int64]
	)
	args := make([]any, 0, len(sealed)*auditWidth)
	for i := range sealed {
		e := &sealed[i]
		if want := headSeq + 1 + int64(i); e.Sequence != want {
			return nil, nil, fmt.Errorf("append audit: seal numbered entry %d as %d, want %d: %w", i, e.Sequence, want, openrecall.ErrInvalid)
		}
		var ts any // NULL for the zero time; values are given as the driver's own types
		if !e.Time.IsZero() {
			e.Time = e.Time.UTC()
			ns, err := nanos(e.Time)
			if err != nil {
				return nil, nil, fmt.Errorf("append audit: entry %d: %w", e.Sequence, err)
			}
			ts = times.of(ns)
		}
		// live and skipped are integer flags on both backends (boolInt).
		args = append(args, e.Sequence, ids.of(e.AnalysisID), batches.of(e.Batch), alerts.of(e.AlertID), int64(e.StepIndex), steps.of(e.Step),
			models.of(e.Model), tiers.of(string(e.Tier)), reasons.of(e.Reason), outcomes.of(e.Outcome), int64(e.MemoryHits), proposed.of(string(e.ProposedDecision)),
			escalations.of(e.EscalationReason), boolInt(e.Live), boolInt(e.Skipped), amounts.of(int64(e.Cost)), amounts.of(int64(e.Baseline)), amounts.of(int64(e.Savings)),
			amounts.of(int64(e.Latency)), ts, hashes.of(e.PrevHash), hashes.of(e.Hash))
	}
	return sealed, args, nil
}

// maxInsertVars bounds the bound parameters of one multi-row insert, well
// under SQLite's limit (32766 since 3.32).
const maxInsertVars = 4000

// insertRows inserts rows of width values each, given one after the other
// in args, in order: head is "INSERT INTO t (columns) VALUES ", to which one
// "($n, …)" per row is added, numbered by params. The rows go in through
// statements of a power-of-two number of rows (the largest that fits
// maxInsertVars, then the binary digits of the rest), so that the few
// statement texts repeat and the writer connection's statement cache
// prepares each once.
func insertRows(ctx context.Context, tx *sql.Tx, head string, width int, args []any) error {
	return insertRowsThen(ctx, tx, head, "", width, args)
}

// insertRowsThen is insertRows with tail (such as " ON CONFLICT … DO
// NOTHING") after the rows of each statement.
func insertRowsThen(ctx context.Context, tx *sql.Tx, head, tail string, width int, args []any) error {
	n := len(args) / width
	per := 1
	for 2*per*width <= maxInsertVars {
		per *= 2
	}
	for n > 0 {
		k := per
		for k > n {
			k /= 2
		}
		if _, err := tx.ExecContext(ctx, insertText(head, tail, width, k), args[:k*width]...); err != nil {
			return err
		}
		args, n = args[k*width:], n-k
	}
	return nil
}

// insertTexts holds the statement texts insertRows built, by head, tail,
// width and row count.
var insertTexts sync.Map

type insertKey struct {
	head, tail  string
	width, rows int
}

// insertText returns head followed by rows tuples of width parameters and
// tail.
func insertText(head, tail string, width, rows int) string {
	key := insertKey{head, tail, width, rows}
	if q, ok := insertTexts.Load(key); ok {
		return q.(string)
	}
	var p params
	var q strings.Builder
	q.Grow(len(head) + rows*(width*5+4) + len(tail))
	q.WriteString(head)
	for i := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(" + p.list(width) + ")")
	}
	q.WriteString(tail)
	insertTexts.Store(key, q.String())
	return q.String()
}

func scanAudit(r rowScanner) (openrecall.AuditEntry, error) {
	var (
		e                     openrecall.AuditEntry
		tier, proposed        string
		cost, baseline, saved int64
		latency               int64
		ts                    sql.NullInt64
	)
	if err := r.Scan(&e.Sequence, &e.AnalysisID, &e.Batch, &e.AlertID, &e.StepIndex, &e.Step, &e.Model, &tier,
		&e.Reason, &e.Outcome, &e.MemoryHits, &proposed, &e.EscalationReason, &e.Live, &e.Skipped,
		&cost, &baseline, &saved, &latency, &ts, &e.PrevHash, &e.Hash); err != nil {
		return openrecall.AuditEntry{}, err
	}
	e.Tier = openrecall.Tier(tier)
	e.ProposedDecision = openrecall.Decision(proposed)
	e.Cost, e.Baseline, e.Savings = openrecall.NanoUSD(cost), openrecall.NanoUSD(baseline), openrecall.NanoUSD(saved)
	e.Latency = time.Duration(latency)
	if ts.Valid {
		e.Time = fromNanos(ts.Int64)
	}
	return e, nil
}

// AuditByAnalysis returns the audit entries of one analysis in sequence
// order; none is an empty slice, not an error.
func (s *Trail) AuditByAnalysis(ctx context.Context, analysisID string) ([]openrecall.AuditEntry, error) {
	return auditByAnalysis(ctx, s.db, analysisID)
}

// querier runs a query on the Store's pool or in a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// auditByAnalysis is AuditByAnalysis on q (the Store's pool or a
// transaction).
func auditByAnalysis(ctx context.Context, q querier, analysisID string) ([]openrecall.AuditEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_entries
		WHERE analysis_id = $1 ORDER BY sequence`, analysisID)
	if err != nil {
		return nil, translate("audit by analysis", err)
	}
	defer rows.Close()
	out := []openrecall.AuditEntry{}
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, translate("audit by analysis: scan", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("audit by analysis", err)
	}
	return out, nil
}

// WalkAudit calls fn for every audit entry in sequence order, stopping at the
// first error fn returns (which WalkAudit returns unwrapped). It reads in
// pages and holds no connection while fn runs, so fn may use the Store.
func (s *Trail) WalkAudit(ctx context.Context, fn func(openrecall.AuditEntry) error) error {
	after := int64(-1 << 63)
	for {
		page, err := s.auditPage(ctx, after)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(page) < walkPage {
			return nil
		}
		after = page[len(page)-1].Sequence
	}
}

func (s *conn) auditPage(ctx context.Context, after int64) ([]openrecall.AuditEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_entries
		WHERE sequence > $1 ORDER BY sequence LIMIT $2`, after, walkPage)
	if err != nil {
		return nil, translate("walk audit", err)
	}
	defer rows.Close()
	var out []openrecall.AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, translate("walk audit: scan", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("walk audit", err)
	}
	return out, nil
}

// AuditHead returns the sequence number and hash of the last appended entry
// as recorded in the head row, (0, "") for an empty trail. It is kept apart
// from the entries so that deleting the last entries is detectable.
func (s *Trail) AuditHead(ctx context.Context) (seq int64, hash string, err error) {
	if err := s.db.QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&seq, &hash); err != nil {
		return 0, "", translate("audit head", err)
	}
	return seq, hash, nil
}
