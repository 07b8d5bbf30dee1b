package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

func sessionHash(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:])
}

// TestSessionsAreSharedKeptAndRevocable (issue 33, item 9): a cockpit
// session one Store creates is known to another Store on the same
// database (another serve process) and after a reopen (a restart), until
// it expires; a logout ends one; RevokeSessions ends every one at once.
// Only the hash of a session id is stored.
func TestSessionsAreSharedKeptAndRevocable(t *testing.T) {
	ctx := context.Background()
	a := openTemp(t)
	b := openAt(t, a.location())
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	alice := openrecall.Session{IDHash: sessionHash("alice-cookie"), Analyst: "alice", Scopes: []string{"read", "retain"}, CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}
	rita := openrecall.Session{IDHash: sessionHash("rita-cookie"), Analyst: "rita", Scopes: []string{"read"}, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	for _, s := range []openrecall.Session{alice, rita} {
		if err := a.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Session(ctx, alice.IDHash, t0.Add(time.Minute))
	if err != nil || got.Analyst != "alice" || len(got.Scopes) != 2 || got.Scopes[1] != "retain" || !got.ExpiresAt.Equal(alice.ExpiresAt) {
		t.Fatalf("alice's session from the other store: %+v, %v", got, err)
	}
	// Expired by the reader's clock: not found.
	if _, err := b.Session(ctx, rita.IDHash, t0.Add(time.Hour)); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("rita's session at its expiry: %v, want ErrNotFound", err)
	}
	// The cookie's value itself is nowhere in the table.
	var n int
	if err := a.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE id_hash = $1 OR analyst = $2`, "alice-cookie", "alice-cookie").Scan(&n); err != nil || n != 0 {
		t.Errorf("a session id stored in clear: %d, %v", n, err)
	}
	// A restart keeps it.
	loc := a.location()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c := openAt(t, loc)
	if _, err := c.Session(ctx, alice.IDHash, t0.Add(2*time.Hour)); err != nil {
		t.Fatalf("alice's session after a reopen: %v", err)
	}
	// A later login forgets expired sessions.
	bob := openrecall.Session{IDHash: sessionHash("bob-cookie"), Analyst: "bob", Scopes: []string{"retain"}, CreatedAt: t0.Add(2 * time.Hour), ExpiresAt: t0.Add(3 * time.Hour)}
	if err := c.CreateSession(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if err := c.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&n); err != nil || n != 2 {
		t.Errorf("sessions after rita's expired: %d, %v; want 2", n, err)
	}
	// A logout ends one; revocation ends every other.
	if err := c.DeleteSession(ctx, bob.IDHash); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Session(ctx, bob.IDHash, t0.Add(2*time.Hour)); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("bob's session after logout: %v", err)
	}
	if n, err := b.RevokeSessions(ctx); err != nil || n != 1 {
		t.Errorf("revoked %d, %v; want 1", n, err)
	}
	if _, err := c.Session(ctx, alice.IDHash, t0.Add(2*time.Hour)); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("alice's session after revocation: %v", err)
	}
	// Bad sessions are refused.
	for _, bad := range []openrecall.Session{
		{IDHash: "short", Analyst: "x", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{IDHash: sessionHash("x"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{IDHash: sessionHash("x"), Analyst: "x", CreatedAt: t0, ExpiresAt: t0},
		{IDHash: sessionHash("x"), Analyst: "x", Scopes: []string{"read,retain"}, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
	} {
		if err := c.CreateSession(ctx, bad); !errors.Is(err, openrecall.ErrInvalid) {
			t.Errorf("CreateSession(%+v): %v, want ErrInvalid", bad, err)
		}
	}
}
