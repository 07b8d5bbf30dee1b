package memory

import (
	"context"
	"crypto/hmac"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// RowSealer binds what is served and what is trusted to the keyed audit
// chain (DESIGN §9): each memory, each row of what waits for a person and
// each finished delivery carries a seal, the audit key's MAC over the
// columns its readers use, and each write of one appends an audit entry of
// batch openrecall.SealBatch holding the same seal. audit.Sealer provides
// the functions; memory only encodes columns.
type RowSealer struct {
	// KeyID names the key; Seal chains the binding entries; Row seals a
	// row's content (audit.Sealer.RowSeal); Sealing signs the record of
	// the rows' adoption (audit.Sealer.SealingMAC).
	KeyID   string
	Seal    SealFunc
	Row     func(kind string, content []byte) string
	Sealing func(openrecall.RowSealing) string
}

// rowSealing is the Store's sealer once SealRows installed it.
type rowSealing struct {
	RowSealer
	// refused counts the memories recall refused and the results and
	// waiting rows read back that did not match their seal.
	refused atomic.Int64
}

// sealed reports whether content's seal is seal under the Store's key.
func (r *rowSealing) sealed(kind string, content []byte, seal string) bool {
	return seal != "" && hmac.Equal([]byte(r.Row(kind, content)), []byte(seal))
}

// SealRows makes the Store seal every memory, waiting row and finished
// delivery it writes and bind each write to the audit chain, and check the
// seal of what recall, Served and WaitingFor read. The first time a
// database is sealed, the rows stored before (with no seal) are adopted:
// sealed in one transaction recorded by one audit entry and the row_sealing
// record. Call it before the Store is used concurrently. A database sealed
// under another key is refused (audit.ErrWrongKey is the caller's to
// word).
func (s *Trail) SealRows(ctx context.Context, rs RowSealer) error {
	if rs.KeyID == "" || rs.Seal == nil || rs.Row == nil || rs.Sealing == nil {
		return fmt.Errorf("seal rows: incomplete sealer: %w", openrecall.ErrInvalid)
	}
	r := &rowSealing{RowSealer: rs}
	err := s.inTx(ctx, "seal rows", func(tx *sql.Tx) error {
		var seq int64
		// Serialises adoptions of several processes (PostgreSQL).
		if err := tx.QueryRowContext(ctx, `SELECT seq FROM audit_head WHERE id = 1`+s.d.forUpdate()).Scan(&seq); err != nil {
			return translate("seal rows: head", err)
		}
		rec, err := readSealing(ctx, tx)
		if err != nil {
			return err
		}
		if !rec.IsZero() {
			if rec.KeyID != rs.KeyID {
				return fmt.Errorf("seal rows: the rows are sealed with key %s, the key at hand is %s: %w", rec.KeyID, rs.KeyID, errWrongRowKey)
			}
			return nil
		}
		n, err := s.adoptTx(ctx, tx, r)
		if err != nil {
			return err
		}
		at := s.now().UTC()
		e, err := s.appendAuditTx(ctx, tx, []openrecall.AuditEntry{{Batch: openrecall.SealBatch, AnalysisID: "adopt", Step: "adopt",
			Outcome: strconv.FormatInt(n, 10), Reason: fmt.Sprintf("%d rows stored before rows were sealed are sealed with key %s", n, rs.KeyID), Time: at}}, rs.Seal)
		if err != nil {
			return err
		}
		rec = openrecall.RowSealing{At: at, EntrySeq: e[0].Sequence, Rows: n, KeyID: rs.KeyID}
		rec.MAC = rs.Sealing(rec)
		_, err = tx.ExecContext(ctx, `INSERT INTO row_sealing (id, adopted_at, entry_seq, rows, key_id, mac) VALUES (1, $1, $2, $3, $4, $5)`,
			at.UnixNano(), rec.EntrySeq, rec.Rows, rec.KeyID, rec.MAC)
		return translate("seal rows: record", err)
	})
	if err != nil {
		return err
	}
	s.seal = r
	return nil
}

// errWrongRowKey marks rows sealed with another key.
var errWrongRowKey = errors.New("rows sealed with another key")

// RefusedRows returns how many memories, results and waiting rows this
// Store refused to believe because they did not match their seal.
func (s *Trail) RefusedRows() int64 {
	if s.seal == nil {
		return 0
	}
	return s.seal.refused.Load()
}

func readSealing(ctx context.Context, q rowQuerier) (openrecall.RowSealing, error) {
	var r openrecall.RowSealing
	var at int64
	err := q.QueryRowContext(ctx, `SELECT adopted_at, entry_seq, rows, key_id, mac FROM row_sealing WHERE id = 1`).Scan(&at, &r.EntrySeq, &r.Rows, &r.KeyID, &r.MAC)
	if errors.Is(err, sql.ErrNoRows) {
		return openrecall.RowSealing{}, nil
	}
	if err != nil {
		return r, translate("row sealing", err)
	}
	r.At = fromNanos(at)
	return r, nil
}

// adoptTx seals every row stored without a seal and returns how many.
func (s *conn) adoptTx(ctx context.Context, tx *sql.Tx, r *rowSealing) (int64, error) {
	var n int64
	type sealed struct {
		key  any
		seal string
	}
	for _, k := range []struct {
		kind, query, update string
		scan                func(*sql.Rows) (any, []byte, error)
	}{
		{openrecall.RowMemory, `SELECT ` + incidentColumns + ` FROM incidents WHERE seal = ''`, `UPDATE incidents SET seal = $1 WHERE id = $2`,
			func(rows *sql.Rows) (any, []byte, error) {
				var c []byte
				inc, _, err := scanIncidentSealed(rows, &c)
				return inc.ID, c, err
			}},
		{openrecall.RowWaiting, `SELECT ` + waitingSealColumns + ` FROM waiting WHERE seal = ''`, `UPDATE waiting SET seal = $1 WHERE analysis_id = $2`,
			func(rows *sql.Rows) (any, []byte, error) {
				id, c, _, err := scanWaitingContent(rows)
				return id, c, err
			}},
		{openrecall.RowResult, `SELECT ` + servedColumns + ` FROM inbox WHERE seal = '' AND done_seq IS NOT NULL`, `UPDATE inbox SET seal = $1 WHERE id = $2`,
			func(rows *sql.Rows) (any, []byte, error) {
				var c []byte
				sv, _, err := scanServedSealed(rows, &c)
				return sv.ID, c, err
			}},
	} {
		rows, err := tx.QueryContext(ctx, k.query)
		if err != nil {
			return 0, translate("adopt "+k.kind+" rows", err)
		}
		var todo []sealed
		for rows.Next() {
			key, c, err := k.scan(rows)
			if err != nil {
				rows.Close()
				return 0, translate("adopt "+k.kind+" rows: scan", err)
			}
			todo = append(todo, sealed{key, r.Row(k.kind, c)})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, translate("adopt "+k.kind+" rows", err)
		}
		for _, t := range todo {
			if _, err := tx.ExecContext(ctx, k.update, t.seal, t.key); err != nil {
				return 0, translate("adopt "+k.kind+" rows", err)
			}
		}
		n += int64(len(todo))
	}
	return n, nil
}

// binding is one write of a sealed row, to be recorded in the chain.
type binding struct {
	kind, id, alertID, event, seal, reason string
	at                                     time.Time
}

// entry is b's audit entry, before sealing.
func (b binding) entry() openrecall.AuditEntry {
	return openrecall.AuditEntry{Batch: openrecall.SealBatch, AnalysisID: b.kind + "-" + b.id, AlertID: b.alertID,
		Step: b.event, Outcome: b.seal, Reason: b.reason, Time: b.at}
}

// bindTx appends the audit entries of bs (none without a sealer).
func (s *conn) bindTx(ctx context.Context, tx *sql.Tx, bs []binding) error {
	if s.seal == nil || len(bs) == 0 {
		return nil
	}
	es := make([]openrecall.AuditEntry, len(bs))
	for i, b := range bs {
		es[i] = b.entry()
	}
	_, err := s.appendAuditTx(ctx, tx, es, s.seal.Seal)
	return err
}

// rowEnc encodes a row's columns for its seal: strings and byte strings as
// a uvarint length and the bytes, integers as 8 big-endian bytes, a NULL
// as the byte 0 and a present nullable value as 1 and the value.
type rowEnc struct{ b []byte }

func (e *rowEnc) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *rowEnc) int(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }

func (e *rowEnc) nullInt(v sql.NullInt64) {
	if !v.Valid {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.int(v.Int64)
}

func (e *rowEnc) nullStr(v sql.NullString) {
	if !v.Valid {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.str(v.String)
}

// IntegrityError is the error of reading a row that does not match its
// seal; it wraps openrecall.ErrIntegrity.
func integrityErr(kind, id, why string) error {
	return fmt.Errorf("%s %s: %s: %w", kind, id, why, openrecall.ErrIntegrity)
}

// refuse counts and logs a row that does not match its seal.
func (s *conn) refuse(kind, id, seal string) {
	s.seal.refused.Add(1)
	s.log.Warn("row does not match its seal: refused", zap.String("kind", kind), zap.String("id", id),
		zap.Bool("unsealed", seal == ""))
}

// readSealedRows streams every sealed row to fn in the snapshot of conn,
// with the latest seal the chain holds for it, then the rows the chain
// binds that the tables lack (see openrecall.SealedRow): a waiting row or
// a finished delivery whose first binding is older than the archive's cut
// before was forgotten with the archive (ForgetArchived), not deleted.
func readSealedRows(ctx context.Context, conn *sql.Conn, what string, before time.Time, fn func(openrecall.SealedRow) error) error {
	latest := func(prefix, key string) string {
		return `COALESCE((SELECT e.outcome FROM audit_entries e WHERE e.analysis_id = '` + prefix + `-' || ` + key +
			` AND e.batch = '` + openrecall.SealBatch + `' ORDER BY e.sequence DESC LIMIT 1), ''),
			COALESCE((SELECT MAX(e.sequence) FROM audit_entries e WHERE e.analysis_id = '` + prefix + `-' || ` + key +
			` AND e.batch = '` + openrecall.SealBatch + `'), 0)`
	}
	var cut int64
	if !before.IsZero() {
		cut = before.UnixNano()
	}
	kinds := []struct {
		kind, rows, first, table, key string
		scan                          func(*sql.Rows, *openrecall.SealedRow) error
	}{
		{openrecall.RowMemory, `SELECT ` + incidentColumns + `, ` + latest("memory", "t.id") + ` FROM incidents t ORDER BY t.id`,
			"memory-retain", "incidents", "id",
			func(rows *sql.Rows, r *openrecall.SealedRow) error {
				var c []byte
				inc, seal, err := scanIncidentSealed(rows, &c, &r.Chained, &r.ChainedSeq)
				r.ID, r.Content, r.Seal = inc.ID, c, seal
				return err
			}},
		{openrecall.RowWaiting, `SELECT ` + waitingSealColumns + `, ` + latest("waiting", "waiting.analysis_id") + ` FROM waiting ORDER BY waiting.analysis_id`,
			"waiting", "waiting", "analysis_id",
			func(rows *sql.Rows, r *openrecall.SealedRow) error {
				id, c, seal, err := scanWaitingContent(rows, &r.Chained, &r.ChainedSeq)
				r.ID, r.Content, r.Seal = id, c, seal
				return err
			}},
		{openrecall.RowResult, `SELECT ` + servedColumns + `, ` + latest("result", "t.analysis_id") + ` FROM inbox t WHERE t.done_seq IS NOT NULL ORDER BY t.id`,
			"result", "inbox", "analysis_id",
			func(rows *sql.Rows, r *openrecall.SealedRow) error {
				var c []byte
				sv, seal, err := scanServedSealed(rows, &c, &r.Chained, &r.ChainedSeq)
				r.ID, r.Content, r.Seal, r.Pruned = sv.AnalysisID, c, seal, sv.Pruned
				return err
			}},
	}
	for _, k := range kinds {
		if err := eachRow(ctx, conn, what+": "+k.kind+" rows", k.rows, nil, func(rows *sql.Rows) error {
			r := openrecall.SealedRow{Kind: k.kind}
			if err := k.scan(rows, &r); err != nil {
				return translate(what+": scan "+k.kind+" row", err)
			}
			return fn(r)
		}); err != nil {
			return err
		}
		start := len(k.kind) + 2 // after "<kind>-", 1-based
		q := `SELECT e.sequence, substr(e.analysis_id, ` + strconv.Itoa(start) + `), e.time_ns FROM audit_entries e
			WHERE e.batch = '` + openrecall.SealBatch + `' AND e.step = $1 AND NOT EXISTS (SELECT 1 FROM ` + k.table + ` t WHERE t.` + k.key +
			` = substr(e.analysis_id, ` + strconv.Itoa(start) + `))`
		args := []any{k.first}
		if k.kind != openrecall.RowMemory && cut != 0 {
			// Forgotten with an archive (ForgetArchived never passes its cut).
			q += ` AND e.time_ns >= $2`
			args = append(args, cut)
		}
		if err := eachRow(ctx, conn, what+": "+k.kind+" rows bound", q+` ORDER BY e.sequence`, args, func(rows *sql.Rows) error {
			r := openrecall.SealedRow{Kind: k.kind, Missing: true}
			var at sql.NullInt64
			if err := rows.Scan(&r.ChainedSeq, &r.ID, &at); err != nil {
				return translate(what+": scan "+k.kind+" binding", err)
			}
			if at.Valid {
				r.BoundAt = fromNanos(at.Int64)
			}
			return fn(r)
		}); err != nil {
			return err
		}
	}
	return nil
}
