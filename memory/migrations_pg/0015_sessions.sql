-- 0015 (issue #33, item 9): cockpit sessions live in the database, so
-- every serve process sharing it knows a login, a restart keeps it, and
-- `openrecall serve revoke-sessions` ends them all at once. id_hash is the
-- SHA-256 (hex) of the session id; the id itself, the cookie's value, is
-- never stored. scopes is a comma-separated list; created_at and
-- expires_at are UTC unix nanoseconds by the server's clock.

CREATE TABLE sessions (
	id_hash    TEXT COLLATE "C" PRIMARY KEY,
	analyst    TEXT    NOT NULL,
	scopes     TEXT    NOT NULL,
	created_at BIGINT  NOT NULL,
	expires_at BIGINT  NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);
