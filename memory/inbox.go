package memory

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// Enqueue accepts deliveries into the durable inbox in one immediate
// transaction, so a receiver answers 202 only for what is on disk. For each
// delivery, in order:
//
//   - a rejected record (Rejection set) is queued, to get its rejected result
//     and audit entry;
//   - a firing alert already triaged, at a severity not higher than the one
//     triaged, is a redelivery unless the alert was resolved since (a new
//     episode; for an id that names its episode, such as Alertmanager's, a
//     firing after the resolve is a late redelivery too): it is not queued,
//     Duplicate is set and AnalysisID names the earlier triage;
//   - a resolved or acknowledged notice that repeats the alert's state is a
//     redelivery too;
//   - anything else is queued and moves the alert's state.
//
// name turns an inbox id into its analysis id. The limit (when positive) is
// back-pressure, not a ceiling on one body: when the inbox already holds
// limit pending records or more and the body has a delivery to queue,
// nothing is stored and the error wraps openrecall.ErrFull; a body that
// finds the backlog under the limit is stored whole, however many records
// it queues (the body's size has its own bound), so a webhook larger than
// the limit is accepted once the backlog drains rather than refused
// forever. It returns the deliveries
// with ID, AnalysisID, Duplicate and State filled; ReceivedAt is the Store's
// clock when zero.
func (s *Inbox) Enqueue(ctx context.Context, ds []openrecall.Delivery, limit int, name func(id int64) string) ([]openrecall.Delivery, error) {
	out := make([]openrecall.Delivery, len(ds))
	copy(out, ds)
	tx, err := s.db.BeginTx(withRowLocks(ctx), nil)
	if err != nil {
		return nil, translate("enqueue: begin", err)
	}
	defer tx.Rollback()
	if err := s.alertLocks(ctx, tx, out); err != nil {
		return nil, err
	}
	var depth int
	if err := tx.QueryRowContext(ctx, depthSQL).Scan(&depth); err != nil {
		return nil, translate("enqueue: inbox depth", err)
	}
	var queued, first int64
	for i := range out {
		d := &out[i]
		if d.ReceivedAt.IsZero() {
			d.ReceivedAt = s.now()
		}
		if d.Rejection == "" {
			if err := redelivery(ctx, tx, d); err != nil {
				return nil, err
			}
			if d.Duplicate {
				// The alert is still delivered: its state is not
				// forgotten (ForgetArchived) while it is.
				if _, err := tx.ExecContext(ctx, `UPDATE alert_state SET updated_at = $1 WHERE alert_id = $2`,
					s.now().UnixNano(), d.Alert.ID); err != nil {
					return nil, translate("enqueue: alert state", err)
				}
				continue
			}
		}
		if limit > 0 && depth >= limit {
			return nil, fmt.Errorf("enqueue: the inbox holds %d pending records, its limit is %d: %w", depth, limit, openrecall.ErrFull)
		}
		if err := insertDelivery(ctx, tx, d, name); err != nil {
			return nil, err
		}
		if queued == 0 {
			first = d.ID
		}
		queued++
		if d.Rejection == "" {
			if err := moveState(ctx, tx, d, s.now().UnixNano()); err != nil {
				return nil, err
			}
		}
	}
	if err := moveDepth(ctx, tx, first, queued); err != nil {
		return nil, translate("enqueue: inbox depth", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, translate("enqueue: commit", err)
	}
	return out, nil
}

// depthSlots is the number of inbox_depth rows: concurrent transactions
// that move the depth update different rows (by the inbox id of their
// first delivery) rather than wait for one.
const depthSlots = 16

// depthSQL reads the inbox depth: the sum of its slots, a read of
// depthSlots rows whatever the backlog.
const depthSQL = `SELECT COALESCE(SUM(n), 0) FROM inbox_depth`

// moveDepth adds by to the inbox depth, in the caller's transaction (the
// one that queued or completed the deliveries): in the slot of inbox id
// first. Nothing when by is 0.
func moveDepth(ctx context.Context, tx *sql.Tx, first, by int64) error {
	if by == 0 {
		return nil
	}
	slot := first % depthSlots
	if slot < 0 {
		slot += depthSlots
	}
	_, err := tx.ExecContext(ctx, `UPDATE inbox_depth SET n = n + $1 WHERE slot = $2`, by, slot)
	return err
}

// severityRank orders severities for redelivery: a re-trigger whose rank
// rose is triaged again. Unknown severities rank with critical, as the guard
// counts them.
func severityRank(s openrecall.Severity) int {
	switch s {
	case openrecall.SeverityHigh:
		return 4
	case openrecall.SeverityMedium:
		return 3
	case openrecall.SeverityLow:
		return 2
	case openrecall.SeverityInfo:
		return 1
	}
	return 5
}

// episodic reports whether an alert's id names one firing episode, as
// intake's ids for Alertmanager webhooks and Prometheus alerts do (the
// fingerprint and the start time): a new episode gets a new id.
func episodic(a openrecall.Alert) bool {
	return a.Episode || a.Format == "alertmanager" || a.Format == "prometheus"
}

// noticeState is the alert state a delivery asks for.
func noticeState(a openrecall.Alert) string {
	switch {
	case openrecall.Triaged(a.Status):
		return openrecall.AlertFiring
	case a.Status == openrecall.StatusAcknowledged, a.Annotations["event_action"] == "acknowledge":
		return openrecall.AlertAcknowledged
	}
	return openrecall.AlertResolved
}

// redelivery marks d as a duplicate when the alert's stored state already
// covers it, and sets d.State.
func redelivery(ctx context.Context, tx *sql.Tx, d *openrecall.Delivery) error {
	want := noticeState(d.Alert)
	d.State, d.Episode = want, ""
	var status, severity, triageID, lastID, episode string
	err := tx.QueryRowContext(ctx, `SELECT status, severity, triage_analysis_id, last_analysis_id, episode FROM alert_state WHERE alert_id = $1`,
		d.Alert.ID).Scan(&status, &severity, &triageID, &lastID, &episode)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // a new alert: this delivery opens its episode
	}
	if err != nil {
		return translate("enqueue: read alert state", err)
	}
	if episode == "" {
		episode = triageID // a state row older than the episode column
	}
	// A firing after a resolve opens a new episode, unless the id names
	// the episode; anything else continues the alert's.
	if want != openrecall.AlertFiring || status != openrecall.AlertResolved || episodic(d.Alert) {
		d.Episode = episode
	}
	switch want {
	case openrecall.AlertFiring:
		// Only a firing already triaged makes a repeat: an alert first seen
		// acknowledged has never been triaged. After a resolve, a firing is
		// a new episode, unless the id names the episode (Alertmanager's
		// fingerprint and start time): then it is a late redelivery.
		again := status != openrecall.AlertResolved || episodic(d.Alert)
		if again && triageID != "" && severityRank(d.Alert.Severity) <= severityRank(openrecall.Severity(severity)) {
			d.Duplicate, d.AnalysisID, d.State = true, triageID, status
		}
	case openrecall.AlertAcknowledged:
		if status == openrecall.AlertAcknowledged || status == openrecall.AlertResolved {
			d.Duplicate, d.AnalysisID, d.State = true, lastID, status
		}
	case openrecall.AlertResolved:
		if status == openrecall.AlertResolved {
			d.Duplicate, d.AnalysisID, d.State = true, lastID, status
		}
	}
	return nil
}

func insertDelivery(ctx context.Context, tx *sql.Tx, d *openrecall.Delivery, name func(int64) string) error {
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("enqueue: encode delivery: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `INSERT INTO inbox (endpoint, request_id, received_at, alert_id, delivery) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		d.Endpoint, d.RequestID, d.ReceivedAt.UTC().UnixNano(), d.Alert.ID, string(body)).Scan(&d.ID); err != nil {
		return translate("enqueue: insert", err)
	}
	d.AnalysisID = name(d.ID)
	if _, err := tx.ExecContext(ctx, `UPDATE inbox SET analysis_id = $1 WHERE id = $2`, d.AnalysisID, d.ID); err != nil {
		return translate("enqueue: name analysis", err)
	}
	return nil
}

func moveState(ctx context.Context, tx *sql.Tx, d *openrecall.Delivery, now int64) error {
	triageID := ""
	if d.State == openrecall.AlertFiring {
		triageID = d.AnalysisID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO alert_state (alert_id, status, severity, triage_analysis_id, last_analysis_id, updated_at, episode)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (alert_id) DO UPDATE SET status = excluded.status, last_analysis_id = excluded.last_analysis_id,
			updated_at = excluded.updated_at, episode = excluded.episode,
			severity = CASE WHEN excluded.status = 'firing' THEN excluded.severity ELSE alert_state.severity END,
			triage_analysis_id = CASE WHEN excluded.status = 'firing' THEN excluded.triage_analysis_id ELSE alert_state.triage_analysis_id END`,
		d.Alert.ID, d.State, string(d.Alert.Severity), triageID, d.AnalysisID, now, d.EpisodeOf())
	return translate("enqueue: alert state", err)
}

// pendingSQL selects the deliveries waiting above an id (Pending), through
// inbox_pending on SQLite.
func pendingSQL(d dialect) string {
	return `SELECT id, analysis_id, delivery FROM inbox` + d.indexedBy("inbox_pending") + `
		WHERE done_seq IS NULL AND id > $1 ORDER BY id LIMIT $2`
}

// Pending returns up to limit deliveries still waiting in the inbox with an
// id above after, oldest first.
func (s *Inbox) Pending(ctx context.Context, after int64, limit int) ([]openrecall.Delivery, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.pending, after, limit)
	if err != nil {
		return nil, translate("inbox pending", err)
	}
	defer rows.Close()
	var out []openrecall.Delivery
	for rows.Next() {
		var id int64
		var analysisID, body string
		if err := rows.Scan(&id, &analysisID, &body); err != nil {
			return nil, translate("inbox pending: scan", err)
		}
		var d openrecall.Delivery
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			return nil, fmt.Errorf("inbox pending: delivery %d: %w", id, err)
		}
		d.ID, d.AnalysisID = id, analysisID
		out = append(out, d)
	}
	return out, translate("inbox pending", rows.Err())
}

// lastCursor reads the last completion cursor. Its WHERE clause lets SQLite
// read the maximum off the partial index inbox_done instead of scanning the
// whole inbox, which made every completion slower than the last.
const lastCursor = `SELECT COALESCE(MAX(done_seq), 0) FROM inbox WHERE done_seq IS NOT NULL`

// Complete stores the results of inbox deliveries ids (rs[i] is the result
// of ids[i]) and takes them off the inbox in one transaction, giving them
// the next completion cursors in that order. A delivery completed before
// keeps its first result; an unknown id wraps openrecall.ErrNotFound and
// stores nothing. A run does not call it: its Sink completes the
// deliveries of a batch in the batch's own transaction.
func (s *Store) Complete(ctx context.Context, ids []int64, rs []openrecall.Result) error {
	if len(ids) != len(rs) {
		return fmt.Errorf("complete: %d ids, %d results: %w", len(ids), len(rs), openrecall.ErrInvalid)
	}
	var lost []int64
	err := s.inTx(ctx, "complete", func(tx *sql.Tx) error {
		var taken []completing
		var err error
		if taken, lost, err = s.takeTx(ctx, tx, ids, true); err != nil {
			return err
		}
		return s.finishTx(ctx, tx, taken, func(i int) openrecall.Result { return rs[i] }, nil, nil)
	})
	if err != nil {
		return err
	}
	s.settle(ids, lost)
	return nil
}

// completing is a delivery taken off the inbox in a transaction whose
// result is still to be written (finishTx).
type completing struct {
	at  int // its index in the caller's ids
	row servedRow
}

// takeTx takes deliveries ids off the inbox in tx, giving them the next
// completion cursors in order, and returns those taken; a delivery this
// Store claimed is taken only under its claim (owner and attempt): that
// update is the fence. It returns too the claimed ids it found reclaimed
// by another owner or completed already. A delivery this Store found
// reclaimed before is skipped; with known, an id that is not in the inbox
// at all wraps openrecall.ErrNotFound.
func (s *conn) takeTx(ctx context.Context, tx *sql.Tx, ids []int64, known bool) (taken []completing, lost []int64, err error) {
	var seq int64
	if err := tx.QueryRowContext(ctx, lastCursor).Scan(&seq); err != nil {
		return nil, nil, translate("complete: cursor", err)
	}
	now := s.now().UnixNano()
	for i, id := range ids {
		if s.leases.isLost(id) {
			continue
		}
		q, args := `UPDATE inbox SET done_seq = $1, done_at = $2, lease_until = NULL WHERE id = $3 AND done_seq IS NULL`,
			[]any{seq + 1, now, id}
		attempt, claimed := s.leases.claim(id)
		if claimed {
			q += ` AND lease_owner = $4 AND attempt = $5`
			args = append(args, s.leases.owner, attempt)
		}
		var row servedRow
		err := row.scan(tx.QueryRowContext(ctx, q+` RETURNING `+takenColumns, args...))
		if err == nil {
			seq++
			row.attempt = attempt
			taken = append(taken, completing{at: i, row: row})
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, nil, translate(fmt.Sprintf("complete %d", id), err)
		}
		if known {
			var exists int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM inbox WHERE id = $1`, id).Scan(&exists); err != nil {
				return nil, nil, translate(fmt.Sprintf("complete %d", id), err)
			}
		}
		if claimed {
			lost = append(lost, id)
		}
	}
	if len(taken) > 0 {
		if err := moveDepth(ctx, tx, taken[0].row.id, -int64(len(taken))); err != nil {
			return nil, nil, translate("complete: inbox depth", err)
		}
	}
	return taken, lost, nil
}

// finishTx writes the result of each delivery taken (result(c.at) is its
// result, encoded as encoding/json would: docs' document, nil: encoded
// here) and, with a sealer, seals the finished row and chains its seal
// into the audit trail. A waiting row of
// refs that names a row taken reads its result there (checkRefTx).
func (s *conn) finishTx(ctx context.Context, tx *sql.Tx, taken []completing, result func(at int) openrecall.Result, refs map[string]*waitRef, docs *jsonfast.Docs) error {
	var binds []binding
	var body, content []byte
	for _, c := range taken {
		r := result(c.at)
		var err error
		if body, err = docs.Append(body[:0], &r, r.Audit, true); err != nil {
			return fmt.Errorf("complete %d: encode result: %w", c.row.id, err)
		}
		if err := checkRefTx(ctx, tx, refs, c.row.analysisID, body); err != nil {
			return err
		}
		if s.seal == nil {
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET result = $1 WHERE id = $2`, string(body), c.row.id); err != nil {
				return translate(fmt.Sprintf("complete %d", c.row.id), err)
			}
			continue
		}
		content = c.row.content(content[:0], sql.NullString{String: string(body), Valid: true})
		seal := s.seal.Row(openrecall.RowResult, content)
		if _, err := tx.ExecContext(ctx, `UPDATE inbox SET result = $1, seal = $2 WHERE id = $3`, string(body), seal, c.row.id); err != nil {
			return translate(fmt.Sprintf("complete %d", c.row.id), err)
		}
		binds = append(binds, binding{kind: openrecall.RowResult, id: c.row.analysisID, alertID: c.row.alertID, event: "result", seal: seal,
			reason: "result of analysis " + c.row.analysisID + ": " + string(r.Decision), at: fromNanos(c.row.doneAt.Int64)})
	}
	return s.bindTx(ctx, tx, binds)
}

// settle releases the claims of deliveries ids once their transaction has
// committed, counting those of lost as lost.
func (s *conn) settle(ids, lost []int64) {
	for _, id := range ids {
		if slices.Contains(lost, id) {
			s.lost.Add(1)
		}
		s.leases.release(id)
	}
}

// takenColumns are the columns a completion's seal covers, but the result:
// servedColumns without result and seal.
const takenColumns = `id, analysis_id, delivery, done_seq, done_at, pruned_at, endpoint, request_id, received_at, alert_id`

// servedRow is an inbox row as stored (takenColumns), and the attempt a
// completion took it at.
type servedRow struct {
	id                           int64
	analysisID, delivery         string
	seq, doneAt, prunedAt        sql.NullInt64
	endpoint, requestID, alertID string
	receivedAt                   int64
	attempt                      int64
}

func (r *servedRow) scan(sc rowScanner) error {
	return sc.Scan(&r.id, &r.analysisID, &r.delivery, &r.seq, &r.doneAt, &r.prunedAt, &r.endpoint, &r.requestID,
		&r.receivedAt, &r.alertID)
}

// content appends to b the encoding a row's seal covers: every column of
// servedColumns but the seal, in that order, with result as the result.
func (r *servedRow) content(b []byte, result sql.NullString) []byte {
	e := rowEnc{b: b}
	e.int(r.id)
	e.str(r.analysisID)
	e.str(r.delivery)
	e.nullInt(r.seq)
	e.nullInt(r.doneAt)
	e.nullStr(result)
	e.nullInt(r.prunedAt)
	e.str(r.endpoint)
	e.str(r.requestID)
	e.int(r.receivedAt)
	e.str(r.alertID)
	return e.b
}

const servedColumns = `id, analysis_id, delivery, done_seq, done_at, result, pruned_at, endpoint, request_id, received_at, alert_id, seal`

func scanServed(r rowScanner) (openrecall.Served, error) {
	sv, _, err := scanServedSealed(r, nil)
	return sv, err
}

// scanServedSealed scans a row of servedColumns (and extra after them) and
// returns its seal; with content not nil, it also sets *content to the
// encoding the seal covers: every column of servedColumns but the seal, as
// stored.
func scanServedSealed(r rowScanner, content *[]byte, extra ...any) (openrecall.Served, string, error) {
	var sv openrecall.Served
	var row servedRow
	var seal string
	var result sql.NullString
	// servedColumns: takenColumns with the result after done_at, then the seal.
	if err := r.Scan(append([]any{&row.id, &row.analysisID, &row.delivery, &row.seq, &row.doneAt, &result, &row.prunedAt,
		&row.endpoint, &row.requestID, &row.receivedAt, &row.alertID, &seal}, extra...)...); err != nil {
		return sv, "", err
	}
	if content != nil {
		*content = row.content((*content)[:0], result)
	}
	if row.prunedAt.Valid {
		// What a pruned row keeps: its ids, endpoint, request id, times and
		// alert id; no alert document and no result.
		sv.Endpoint, sv.RequestID, sv.ReceivedAt, sv.Alert.ID = row.endpoint, row.requestID, fromNanos(row.receivedAt), row.alertID
		sv.Pruned, sv.PrunedAt = true, fromNanos(row.prunedAt.Int64)
	} else if err := json.Unmarshal([]byte(row.delivery), &sv.Delivery); err != nil {
		sv.ID, sv.AnalysisID = row.id, row.analysisID
		return sv, seal, fmt.Errorf("delivery %d: %w", row.id, err)
	}
	sv.ID, sv.AnalysisID = row.id, row.analysisID
	if row.seq.Valid {
		sv.Done, sv.Cursor, sv.DoneAt = true, row.seq.Int64, fromNanos(row.doneAt.Int64)
		if result.Valid {
			sv.Result = &openrecall.Result{}
			if err := json.Unmarshal([]byte(result.String), sv.Result); err != nil {
				return sv, seal, fmt.Errorf("result of delivery %d: %w", row.id, err)
			}
		}
	}
	return sv, seal, nil
}

// scanServedChecked is scanServed that, with a sealer, checks a finished
// row against its seal: a row that does not match is returned with its
// documents withheld and Integrity "failed", and counted and logged. A row
// whose documents do not even decode is judged by its seal first.
func (s *conn) scanServedChecked(r rowScanner) (openrecall.Served, error) {
	if s.seal == nil {
		return scanServed(r)
	}
	var content []byte
	sv, seal, err := scanServedSealed(r, &content)
	if errors.Is(err, sql.ErrNoRows) || (err != nil && content == nil) {
		return sv, err
	}
	if !sv.Done && err == nil {
		return sv, nil
	}
	if !s.seal.sealed(openrecall.RowResult, content, seal) {
		s.refuse(openrecall.RowResult, sv.AnalysisID, seal)
		return openrecall.Served{Delivery: openrecall.Delivery{ID: sv.ID, AnalysisID: sv.AnalysisID}, Done: true, Cursor: sv.Cursor,
			Integrity: "failed"}, nil
	}
	return sv, err
}

// DefaultPruneBatch is how many inbox rows one pruning transaction takes at
// most when PruneInbox is given no batch size: small enough that serve's
// writers wait a few milliseconds at most.
const DefaultPruneBatch = 1000

// PruneInbox empties the delivery and result documents of up to batch
// finished inbox rows that finished before before (oldest first), in one
// immediate transaction, and returns how many it pruned; fewer than batch
// means none is left. A pruned row keeps its ids, endpoint, request id,
// times and alert id, and nothing outside the inbox changes: decisions,
// alert state, groups, memories, what waits for a person and the audit and
// cost chains stay as they were (a waiting row that named a pruned row
// holds its copy again: the same result under the same seal). Pending rows
// are never pruned. batch <= 0
// means DefaultPruneBatch.
func (s *Inbox) PruneInbox(ctx context.Context, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, translate("prune inbox: begin", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, s.sql.prunable, before.UTC().UnixNano(), batch)
	if err != nil {
		return 0, translate("prune inbox", err)
	}
	var kept [][]any
	for rows.Next() {
		var id, receivedAt, doneSeq, doneAt int64
		var analysisID, endpoint, requestID, alertID string
		if err := rows.Scan(&id, &analysisID, &endpoint, &requestID, &receivedAt, &alertID, &doneSeq, &doneAt); err != nil {
			rows.Close()
			return 0, translate("prune inbox: scan", err)
		}
		kept = append(kept, []any{id, analysisID, endpoint, requestID, receivedAt, alertID, doneSeq, doneAt})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, translate("prune inbox", err)
	}
	// Delete, then insert what the row keeps: an UPDATE that shrinks a
	// row leaves its page as good as empty and never merged with its
	// neighbours, so the inbox would keep a page per old row; a delete
	// rebalances the tree and frees the pages for reuse.
	// A waiting row that reads its result from one of these rows takes its
	// copy back first (waitref.go).
	ids := make([]int64, len(kept))
	for i, k := range kept {
		ids[i] = k[0].(int64)
	}
	if err := takeBackTx(ctx, tx, ids); err != nil {
		return 0, err
	}
	now := s.now().UnixNano()
	for _, k := range kept {
		if _, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE id = $1`, k[0]); err != nil {
			return 0, translate("prune inbox: delete", err)
		}
	}
	for _, k := range kept {
		seal := ""
		if s.seal != nil {
			// The pruned row's own seal: the chain keeps the seal of its
			// result, which audit verify no longer compares it with.
			var e rowEnc
			e.int(k[0].(int64))
			e.str(k[1].(string))
			e.str("")
			e.nullInt(sql.NullInt64{Int64: k[6].(int64), Valid: true})
			e.nullInt(sql.NullInt64{Int64: k[7].(int64), Valid: true})
			e.nullStr(sql.NullString{})
			e.nullInt(sql.NullInt64{Int64: now, Valid: true})
			e.str(k[2].(string))
			e.str(k[3].(string))
			e.int(k[4].(int64))
			e.str(k[5].(string))
			seal = s.seal.Row(openrecall.RowResult, e.b)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inbox (`+prunedColumns+`, delivery, result, pruned_at, seal)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', NULL, $9, $10)`, append(k, now, seal)...); err != nil {
			return 0, translate("prune inbox: keep", err)
		}
	}
	return len(kept), translate("prune inbox: commit", tx.Commit())
}

// prunedColumns are what a pruned inbox row keeps.
const prunedColumns = `id, analysis_id, endpoint, request_id, received_at, alert_id, done_seq, done_at`

// PruneInboxAll prunes in transactions of batch rows (PruneInbox) until no
// finished row older than before keeps its documents, and returns how many
// it pruned. Between transactions other writers take the database, so
// pruning a large backlog never holds the write lock for long.
func (s *Inbox) PruneInboxAll(ctx context.Context, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	total := 0
	for {
		n, err := s.PruneInbox(ctx, before, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// Served returns the delivery analysed as analysisID, with its result once
// done; an unknown id wraps openrecall.ErrNotFound.
func (s *Inbox) Served(ctx context.Context, analysisID string) (openrecall.Served, error) {
	sv, err := s.scanServedChecked(s.db.QueryRowContext(ctx, `SELECT `+servedColumns+` FROM inbox WHERE analysis_id = $1`, analysisID))
	if err != nil {
		return sv, translate("served "+analysisID, err)
	}
	if sv.Integrity != "" {
		return sv, integrityErr("result of analysis", analysisID, "the stored row does not match its seal in the audit chain, so it is not served")
	}
	return sv, nil
}

// ServedSince returns up to limit finished deliveries whose cursor is above
// cursor, in completion order.
func (s *Inbox) ServedSince(ctx context.Context, cursor int64, limit int) ([]openrecall.Served, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.servedSince, cursor, limit)
	if err != nil {
		return nil, translate("served since", err)
	}
	defer rows.Close()
	out := []openrecall.Served{}
	for rows.Next() {
		sv, err := s.scanServedChecked(rows)
		if err != nil {
			return nil, translate("served since: scan", err)
		}
		out = append(out, sv)
	}
	return out, translate("served since", rows.Err())
}

// InboxDepth returns the number of deliveries waiting in the inbox, as the
// counter enqueue and completion maintain holds it (DESIGN §13): no count
// over the inbox.
func (s *Inbox) InboxDepth(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, depthSQL).Scan(&n)
	return n, translate("inbox depth", err)
}

// CountInboxDepth counts the deliveries waiting in the inbox row by row:
// what InboxDepth's counter must equal (P167), for tests and checks, not
// for a request's path.
func (s *Inbox) CountInboxDepth(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM inbox WHERE done_seq IS NULL`).Scan(&n)
	return n, translate("count inbox depth", err)
}

// WriteProbeBytes is the size of the row Writable writes and rolls back:
// 64 KiB, new pages as an enqueue needs them.
const WriteProbeBytes = 64 << 10

// MinFreeBytes is the free space, for the database's user, below which the
// file system holding a SQLite database counts as full: SQLite keeps an
// uncommitted write in memory, so the rolled-back probe cannot meet a full
// disk itself.
const MinFreeBytes = 8 << 20

// Writable checks that the database takes a write now and has room for
// one: it inserts a WriteProbeBytes row into write_probe in a transaction
// it rolls back (new pages, which a database that cannot grow refuses),
// and for a SQLite file it checks the free space of its file system. A
// full database is an error wrapping openrecall.ErrNoSpace: SQLITE_FULL
// (the disk, or max_page_count), PostgreSQL's disk_full (53100), or a
// SQLite file on a file system with less than MinFreeBytes free.
func (s *Inbox) Writable(ctx context.Context) error {
	if !s.pg {
		if free, ok := freeBytes(filepath.Dir(s.path)); ok && free < MinFreeBytes {
			return fmt.Errorf("writable: the file system of %s has %d bytes free, fewer than %d: %w", s.path, free, MinFreeBytes, openrecall.ErrNoSpace)
		}
	}
	pad := make([]byte, WriteProbeBytes)
	_, _ = rand.Read(pad) // random bytes: PostgreSQL cannot compress them away; crypto/rand does not fail on supported platforms
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return translate("writable", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO write_probe (at, pad) VALUES ($1, $2)`, s.now().UnixNano(), pad); err != nil {
		_ = tx.Rollback()
		return translate("writable: probe write", err)
	}
	return translate("writable", tx.Rollback())
}

// prunableSQL selects the finished deliveries done before a time whose
// result is still kept (PruneInbox), through inbox_prunable on SQLite.
func prunableSQL(d dialect) string {
	return `SELECT ` + prunedColumns + ` FROM inbox` + d.indexedBy("inbox_prunable") + `
		WHERE done_seq IS NOT NULL AND pruned_at IS NULL AND done_at < $1 ORDER BY done_at, id LIMIT $2`
}

// servedSinceSQL selects the finished deliveries above a cursor
// (ServedSince), through inbox_done on SQLite.
func servedSinceSQL(d dialect) string {
	return `SELECT ` + servedColumns + ` FROM inbox` + d.indexedBy("inbox_done") + `
		WHERE done_seq > $1 ORDER BY done_seq LIMIT $2`
}
