package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// Cockpit sessions (DESIGN §12a) are rows of the sessions table, keyed by
// the hash of their id: every serve process sharing the database knows
// them, a restart keeps them, and RevokeSessions ends them all. Each call
// is one statement.

// CreateSession stores s and deletes the sessions that expired by its
// creation time. A session must have an id hash, an analyst and a later
// expiry than its creation.
func (s *Sessions) CreateSession(ctx context.Context, ss openrecall.Session) error {
	switch {
	case len(ss.IDHash) != 64:
		return fmt.Errorf("create session: the id hash must be 64 hex digits (SHA-256): %w", openrecall.ErrInvalid)
	case strings.TrimSpace(ss.Analyst) == "":
		return fmt.Errorf("create session: no analyst: %w", openrecall.ErrInvalid)
	case !ss.ExpiresAt.After(ss.CreatedAt):
		return fmt.Errorf("create session: it expires at %s, not after its creation: %w", ss.ExpiresAt, openrecall.ErrInvalid)
	}
	for _, sc := range ss.Scopes {
		if sc == "" || strings.Contains(sc, ",") {
			return fmt.Errorf("create session: scope %q: %w", sc, openrecall.ErrInvalid)
		}
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, ss.CreatedAt.UnixNano()); err != nil {
		return translate("create session: forget expired", err)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id_hash, analyst, scopes, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		ss.IDHash, ss.Analyst, strings.Join(ss.Scopes, ","), ss.CreatedAt.UnixNano(), ss.ExpiresAt.UnixNano())
	return translate("create session", err)
}

// Session returns the session whose id hashes to idHash, live at now; a
// session unknown, revoked or expired by now is an error wrapping
// openrecall.ErrNotFound.
func (s *Sessions) Session(ctx context.Context, idHash string, now time.Time) (openrecall.Session, error) {
	ss := openrecall.Session{IDHash: idHash}
	var scopes string
	var created, expires int64
	err := s.db.QueryRowContext(ctx, `SELECT analyst, scopes, created_at, expires_at FROM sessions WHERE id_hash = $1 AND expires_at > $2`,
		idHash, now.UnixNano()).Scan(&ss.Analyst, &scopes, &created, &expires)
	if err != nil {
		return openrecall.Session{}, translate("session", err)
	}
	if scopes != "" {
		ss.Scopes = strings.Split(scopes, ",")
	}
	ss.CreatedAt, ss.ExpiresAt = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
	return ss, nil
}

// DeleteSession ends one session (a logout); an unknown one is no error.
func (s *Sessions) DeleteSession(ctx context.Context, idHash string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = $1`, idHash)
	return translate("delete session", err)
}

// RevokeSessions ends every session and returns how many were live or
// expired but not yet deleted.
func (s *Sessions) RevokeSessions(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions`)
	if err != nil {
		return 0, translate("revoke sessions", err)
	}
	n, err := res.RowsAffected()
	return n, translate("revoke sessions", err)
}
