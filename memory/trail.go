package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/openrecall/openrecall"
)

// TrailReader receives a trail read by ReadTrail: the state first, then
// every audit entry in sequence order, then every cost point, those stored
// before cost points were chained first (with sequence 0 and empty hashes),
// then the chain by sequence. An error it returns stops the reading and is
// returned unwrapped.
type TrailReader struct {
	State func(openrecall.TrailState) error
	Entry func(openrecall.AuditEntry) error
	Cost  func(seq int64, prevHash, hash string, p openrecall.CostPoint) error
	// Row receives each sealed row after the cost points (see
	// openrecall.SealedRow); nil skips them.
	Row func(openrecall.SealedRow) error
}

// ReadTrail reads the whole trail in one read transaction, so it sees one
// consistent snapshot while other connections and processes append: the
// head records always match the entries read. It does not take the write
// lock. The callbacks run while the Store's connection is held: they must
// not use the Store. A nil callback skips its part.
func (s *Trail) ReadTrail(ctx context.Context, r TrailReader) error {
	return s.readTrail(ctx, "read trail", r,
		`SELECT `+auditColumns+` FROM audit_entries ORDER BY sequence`, nil,
		`SELECT `+costColumns+`, seq, prev_hash, hash FROM cost_points ORDER BY seq, rowid`, nil)
}

// readTrail is ReadTrail with the queries of the entries and the cost
// points (and their arguments) given; what names the operation in errors.
func (s *conn) readTrail(ctx context.Context, what string, r TrailReader, entries string, entryArgs []any, costs string, costArgs []any) (err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return translate(what, err)
	}
	defer func() {
		if cerr := conn.Close(); cerr != nil && err == nil {
			err = translate(what+": release connection", cerr)
		}
	}()
	// One snapshot for every read (dialect.beginSnapshot). On SQLite a
	// deferred transaction takes no lock; in WAL mode its first read fixes
	// the snapshot every later read in it sees. (The DSN's
	// _txlock=immediate applies only to BeginTx, which would take the
	// write lock.)
	if _, err := conn.ExecContext(ctx, s.d.beginSnapshot()); err != nil {
		return translate(what+": begin", err)
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && err == nil {
			err = translate(what+": end", rerr)
		}
	}()
	st, err := readHeads(ctx, conn, what)
	if err != nil {
		return err
	}
	if st.Sealing, err = readSealing(ctx, conn); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_entries WHERE batch = $1 AND step = 'adopt'`, openrecall.SealBatch).Scan(&st.Adoptions); err != nil {
		return translate(what+": adoptions", err)
	}
	if r.State != nil {
		if err := r.State(st); err != nil {
			return err
		}
	}
	if r.Entry != nil {
		if err := eachRow(ctx, conn, what, entries, entryArgs, func(rows *sql.Rows) error {
			e, err := scanAudit(rows)
			if err != nil {
				return translate(what+": scan entry", err)
			}
			return r.Entry(e)
		}); err != nil {
			return err
		}
	}
	if r.Cost != nil {
		if err := eachRow(ctx, conn, what, costs, costArgs, func(rows *sql.Rows) error {
			var seq sql.NullInt64
			var prev, hash sql.NullString
			p, err := scanCost(rows, &seq, &prev, &hash)
			if err != nil {
				return translate(what+": scan cost point", err)
			}
			return r.Cost(seq.Int64, prev.String, hash.String, p)
		}); err != nil {
			return err
		}
	}
	if r.Row != nil {
		return readSealedRows(ctx, conn, what, st.Archive.Before, r.Row)
	}
	return nil
}

// readHeads reads the head records, the keyed boundary and the latest
// archive record: the trail's state but its sealing and adoptions.
func readHeads(ctx context.Context, conn *sql.Conn, what string) (openrecall.TrailState, error) {
	var st openrecall.TrailState
	if err := conn.QueryRowContext(ctx, `SELECT h.seq, h.hash, c.seq, c.hash, k.legacy_through, k.legacy_costs, k.key_id, k.boundary_mac
		FROM audit_head h, cost_head c, audit_keying k WHERE h.id = 1 AND c.id = 1 AND k.id = 1`).Scan(
		&st.HeadSeq, &st.HeadHash, &st.CostHeadSeq, &st.CostHeadHash, &st.LegacyThrough, &st.LegacyCosts, &st.KeyID, &st.BoundaryMAC); err != nil {
		return st, translate(what+": heads", err)
	}
	var err error
	if st.Archive, err = latestArchive(ctx, conn); err != nil {
		return st, translate(what+": archive record", err)
	}
	return st, nil
}

// AnalysisLinks reads, in one snapshot, what checking an analysis's audit
// entries in place needs (audit.VerifyLinks): the trail's head records,
// keyed boundary and latest archive record (not its sealing), and the
// analysis's entries with the entry before each, in sequence order. It
// reads through the analysis's index and the sequence key: never the
// whole trail.
func (s *Trail) AnalysisLinks(ctx context.Context, analysisID string) (st openrecall.TrailState, entries []openrecall.AuditEntry, err error) {
	const what = "analysis links"
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return st, nil, translate(what, err)
	}
	defer func() {
		if cerr := conn.Close(); cerr != nil && err == nil {
			err = translate(what+": release connection", cerr)
		}
	}()
	if _, err := conn.ExecContext(ctx, s.d.beginSnapshot()); err != nil {
		return st, nil, translate(what+": begin", err)
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && err == nil {
			err = translate(what+": end", rerr)
		}
	}()
	if st, err = readHeads(ctx, conn, what); err != nil {
		return st, nil, err
	}
	entries = []openrecall.AuditEntry{}
	err = eachRow(ctx, conn, what, `SELECT `+auditColumns+` FROM audit_entries WHERE analysis_id = $1
		UNION SELECT `+auditColumns+` FROM audit_entries WHERE sequence IN (SELECT sequence - 1 FROM audit_entries WHERE analysis_id = $1)
		ORDER BY sequence`, []any{analysisID}, func(rows *sql.Rows) error {
		e, err := scanAudit(rows)
		if err != nil {
			return translate(what+": scan entry", err)
		}
		entries = append(entries, e)
		return nil
	})
	return st, entries, err
}

// eachRow runs query with args on conn and calls fn for every row; what
// names the operation in errors.
func eachRow(ctx context.Context, conn *sql.Conn, what, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return translate(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return translate(what, err)
	}
	return nil
}

// BindAuditKey records keyID as the trail's key when none is recorded yet,
// with sign(legacyThrough, legacyCosts) as the boundary's MAC, and returns
// the key ID recorded (keyID, or another one when the trail was keyed before
// with another key: the caller must not append then).
func (s *Trail) BindAuditKey(ctx context.Context, keyID string, sign func(legacyThrough, legacyCosts int64) string) (string, error) {
	if keyID == "" {
		return "", fmt.Errorf("bind audit key: empty key id: %w", openrecall.ErrInvalid)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", translate("bind audit key: begin", err)
	}
	defer tx.Rollback()
	var bound string
	var legacy, legacyCosts int64
	if err := tx.QueryRowContext(ctx, `SELECT key_id, legacy_through, legacy_costs FROM audit_keying WHERE id = 1`).Scan(&bound, &legacy, &legacyCosts); err != nil {
		return "", translate("bind audit key", err)
	}
	if bound != "" {
		return bound, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE audit_keying SET key_id = $1, boundary_mac = $2 WHERE id = 1`, keyID, sign(legacy, legacyCosts)); err != nil {
		return "", translate("bind audit key", err)
	}
	if err := tx.Commit(); err != nil {
		return "", translate("bind audit key: commit", err)
	}
	return keyID, nil
}

// AuditKeyID returns the ID of the key the trail is keyed with, "" when no
// keyed entry was appended yet.
func (s *Trail) AuditKeyID(ctx context.Context) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT key_id FROM audit_keying WHERE id = 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, translate("audit key id", err)
}
