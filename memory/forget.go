package memory

import (
	"context"
	"database/sql"
	"fmt"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// Forget takes a decision back (DESIGN §5): the memory with the given id is
// marked forgotten at the Store's clock and is never recalled again; the
// record stays, so re-importing an old export cannot bring its vote back. It
// returns the memory as stored and whether this call forgot it (false when
// it already was). An unknown id is an error wrapping openrecall.ErrNotFound.
func (s *Memories) Forget(ctx context.Context, id string) (openrecall.Incident, bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return openrecall.Incident{}, false, translate("forget: begin", err)
	}
	defer tx.Rollback()
	inc, changed, err := s.forgetTx(ctx, tx, id)
	if err != nil {
		return openrecall.Incident{}, false, err
	}
	if err := tx.Commit(); err != nil {
		return openrecall.Incident{}, false, translate("forget: commit", err)
	}
	s.incidentWrites.Add(1)
	s.log.Debug("forget", zap.String("id", id), zap.Bool("changed", changed))
	return inc, changed, nil
}

func (s *conn) forgetTx(ctx context.Context, tx *sql.Tx, id string) (openrecall.Incident, bool, error) {
	at, err := nanos(s.now())
	if err != nil {
		return openrecall.Incident{}, false, fmt.Errorf("forget: %w", err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE incidents SET forgotten_at = $1 WHERE id = $2 AND forgotten_at IS NULL`, at, id)
	if err != nil {
		return openrecall.Incident{}, false, translate("forget", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return openrecall.Incident{}, false, translate("forget: rows affected", err)
	}
	inc, err := s.resealIncidentTx(ctx, tx, `id = $1`, id, "memory-forget")
	if err != nil {
		return openrecall.Incident{}, false, translate(fmt.Sprintf("forget incident %q", id), err)
	}
	return inc, n == 1, nil
}

// Supersede retains inc in place of the memory with id old, in one
// transaction: old is forgotten (as by Forget) and inc stored (as by
// Retain). It refuses, storing nothing, when old does not exist
// (ErrNotFound), is already forgotten, or is the very record inc would be.
// It returns inc as stored, whether it was created, and old as forgotten.
func (s *Memories) Supersede(ctx context.Context, old string, inc openrecall.Incident) (stored, forgotten openrecall.Incident, created bool, err error) {
	inc, args, err := s.prepare(inc)
	if err != nil {
		return stored, forgotten, false, fmt.Errorf("supersede: %w", err)
	}
	if inc.ID == old {
		return stored, forgotten, false, fmt.Errorf("supersede %s: the new decision is the same memory (same decision, note and alert): %w", old, openrecall.ErrInvalid)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return stored, forgotten, false, translate("supersede: begin", err)
	}
	defer tx.Rollback()
	forgotten, changed, err := s.forgetTx(ctx, tx, old)
	if err != nil {
		return stored, forgotten, false, err
	}
	if !changed {
		return stored, forgotten, false, fmt.Errorf("supersede %s: it was already taken back: %w", old, openrecall.ErrInvalid)
	}
	stored, created, err = s.retainTx(ctx, tx, args, inc)
	if err != nil {
		return stored, forgotten, false, err
	}
	if err := tx.Commit(); err != nil {
		return stored, forgotten, false, translate("supersede: commit", err)
	}
	s.incidentWrites.Add(1)
	s.indexWrote(stored)
	return stored, forgotten, created, nil
}
