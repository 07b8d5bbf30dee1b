package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/openrecall/openrecall"
)

const archiveColumns = `through, through_hash, cost_through, cost_through_hash, before_ns, archived_at, file_sha256, key_id, mac`

// rowQuerier is a connection or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// latestArchive reads the archive record added last, the zero TrailArchive
// when there is none.
func latestArchive(ctx context.Context, q rowQuerier) (openrecall.TrailArchive, error) {
	a, err := scanArchive(q.QueryRowContext(ctx, `SELECT `+archiveColumns+` FROM audit_archives ORDER BY id DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return openrecall.TrailArchive{}, nil
	}
	return a, err
}

func scanArchive(r rowScanner) (openrecall.TrailArchive, error) {
	var a openrecall.TrailArchive
	var before, at int64
	if err := r.Scan(&a.Through, &a.ThroughHash, &a.CostThrough, &a.CostThroughHash, &before, &at, &a.FileSHA256, &a.KeyID, &a.MAC); err != nil {
		return openrecall.TrailArchive{}, err
	}
	a.Before, a.At = fromNanos(before), fromNanos(at)
	return a, nil
}

// ReadTrailPrefix reads, in one read transaction as ReadTrail does, the
// trail's state and the prefix of each chain that an archive cut at before
// takes: the audit entries before the first one not strictly older than
// before (an entry without a time is never older), and the chained cost
// points before the first one appended at or after before (a point stored
// before migration 0010 counts as appended when its batch was registered).
// Cost points stored before cost points were chained are never read: no
// archive takes them. Entries and points at or below the latest archive
// record are gone already, so each prefix starts right after it.
func (s *Trail) ReadTrailPrefix(ctx context.Context, before time.Time, r TrailReader) error {
	cut, err := nanos(before.UTC())
	if err != nil {
		return fmt.Errorf("read trail prefix: %w", err)
	}
	return s.readTrail(ctx, "read trail prefix", r,
		`SELECT `+auditColumns+` FROM audit_entries WHERE sequence < COALESCE(
			(SELECT MIN(sequence) FROM audit_entries WHERE time_ns IS NULL OR time_ns >= $1), $2) ORDER BY sequence`,
		[]any{cut, int64(math.MaxInt64)},
		`SELECT `+costColumns+`, seq, prev_hash, hash FROM cost_points WHERE seq IS NOT NULL AND seq < COALESCE(
			(SELECT MIN(c.seq) FROM cost_points c JOIN batches b ON b.name = c.batch
				WHERE c.seq IS NOT NULL AND COALESCE(c.appended_at, b.created_at) >= $1), $2) ORDER BY seq`,
		[]any{cut, int64(math.MaxInt64)})
}

// ErrArchiveMoved marks an archive whose start is no longer the trail's
// latest archive record (another archive ran meanwhile) or whose end is not
// the stored entry or cost point it names: nothing was recorded or deleted.
var ErrArchiveMoved = errors.New("the trail changed since the archive was read")

// RecordArchive records a (signed by the caller) and deletes the prefix it
// covers, in one immediate transaction: the audit entries up to a.Through
// and the chained cost points up to a.CostThrough. from is the latest
// archive record the archive file was read after (the zero TrailArchive
// for none); when the trail's latest record is not from, or the entry or
// cost point a ends at is not stored with a's hash, nothing changes and the
// error wraps ErrArchiveMoved. It returns how many entries and cost points
// it deleted. Call it only once the archive file is safely written: the
// prefix is gone from the database when it returns.
func (s *Trail) RecordArchive(ctx context.Context, a, from openrecall.TrailArchive) (entries, costs int64, err error) {
	before, err := nanos(a.Before.UTC())
	if err != nil {
		return 0, 0, fmt.Errorf("record archive: %w", err)
	}
	at, err := nanos(a.At.UTC())
	if err != nil {
		return 0, 0, fmt.Errorf("record archive: %w", err)
	}
	err = s.inTx(ctx, "record archive", func(tx *sql.Tx) error {
		latest, err := latestArchive(ctx, tx)
		if err != nil {
			return translate("record archive: latest record", err)
		}
		if latest.Through != from.Through || latest.ThroughHash != from.ThroughHash ||
			latest.CostThrough != from.CostThrough || latest.CostThroughHash != from.CostThroughHash {
			return fmt.Errorf("record archive: the latest archive record ends at entry %d and cost point %d, the archive was read after entry %d and cost point %d: %w",
				latest.Through, latest.CostThrough, from.Through, from.CostThrough, ErrArchiveMoved)
		}
		for _, end := range []struct {
			what, query string
			seq, from   int64
			hash        string
		}{
			{"entry", `SELECT hash FROM audit_entries WHERE sequence = $1`, a.Through, from.Through, a.ThroughHash},
			{"cost point", `SELECT hash FROM cost_points WHERE seq = $1`, a.CostThrough, from.CostThrough, a.CostThroughHash},
		} {
			if end.seq == end.from {
				continue
			}
			var hash string
			err := tx.QueryRowContext(ctx, end.query, end.seq).Scan(&hash)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return translate("record archive: read the last "+end.what, err)
			}
			if err != nil || hash != end.hash {
				return fmt.Errorf("record archive: %s %d is not stored with the archived hash: %w", end.what, end.seq, ErrArchiveMoved)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_archives (`+archiveColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			a.Through, a.ThroughHash, a.CostThrough, a.CostThroughHash, before, at, a.FileSHA256, a.KeyID, a.MAC); err != nil {
			return translate("record archive: insert the record", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_entries WHERE sequence <= $1`, a.Through)
		if err != nil {
			return translate("record archive: delete entries", err)
		}
		if entries, err = res.RowsAffected(); err != nil {
			return translate("record archive: delete entries", err)
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM cost_points WHERE seq IS NOT NULL AND seq <= $1`, a.CostThrough)
		if err != nil {
			return translate("record archive: delete cost points", err)
		}
		costs, err = res.RowsAffected()
		return translate("record archive: delete cost points", err)
	})
	if err != nil {
		return 0, 0, err
	}
	return entries, costs, nil
}

// Archives returns every archive record, oldest first.
func (s *Trail) Archives(ctx context.Context) ([]openrecall.TrailArchive, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+archiveColumns+` FROM audit_archives ORDER BY id`)
	if err != nil {
		return nil, translate("archives", err)
	}
	defer rows.Close()
	out := []openrecall.TrailArchive{}
	for rows.Next() {
		a, err := scanArchive(rows)
		if err != nil {
			return nil, translate("archives: scan", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("archives", err)
	}
	return out, nil
}
