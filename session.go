package openrecall

import "time"

// Session is one login to the cockpit (DESIGN §12a): a named token
// exchanged for a cookie. The store keeps it so that every serve process
// sharing the database knows it, a restart keeps it, and one command
// revokes every session at once. The cookie's value, the session id, is
// never stored: IDHash is its SHA-256 (hex), so a copy of the database
// opens no session.
type Session struct {
	IDHash  string
	Analyst string
	// Scopes are the scopes of the token that logged in (read, retain).
	Scopes    []string
	CreatedAt time.Time
	// ExpiresAt is when the session ends; the store answers an expired
	// session as not found.
	ExpiresAt time.Time
}
