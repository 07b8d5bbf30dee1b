-- 0002: key the audit chain and chain the cost points (DESIGN §9).
--
-- audit_keying records the keyed boundary: audit entries 1..legacy_through
-- and the legacy_costs cost points already stored were written before the
-- chain was keyed, and are verified as they were written (entries with the
-- unkeyed SHA-256; those cost points carry no hash). key_id names the key
-- (not the key itself, which is kept outside the database) once the first
-- keyed entry is appended, with boundary_mac, the key's HMAC over the
-- boundary, so the boundary cannot be moved afterwards without the key;
-- neither changes afterwards.
CREATE TABLE audit_keying (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	legacy_through INTEGER NOT NULL,
	legacy_costs   INTEGER NOT NULL,
	key_id         TEXT    NOT NULL DEFAULT '',
	boundary_mac   TEXT    NOT NULL DEFAULT ''
);
INSERT INTO audit_keying (id, legacy_through, legacy_costs)
	SELECT 1, seq, (SELECT COUNT(*) FROM cost_points) FROM audit_head WHERE id = 1;

CREATE TRIGGER audit_keying_boundary_fixed BEFORE UPDATE OF legacy_through, legacy_costs ON audit_keying
BEGIN
	SELECT RAISE(ABORT, 'the keyed boundary is recorded once');
END;

CREATE TRIGGER audit_keying_key_once BEFORE UPDATE OF key_id, boundary_mac ON audit_keying
	WHEN OLD.key_id <> ''
BEGIN
	SELECT RAISE(ABORT, 'the audit key is recorded once');
END;

CREATE TRIGGER audit_keying_no_delete BEFORE DELETE ON audit_keying
BEGIN
	SELECT RAISE(ABORT, 'the keyed boundary is recorded once');
END;

-- Cost points get their own keyed chain: seq from 1, prev_hash and hash as
-- in audit_entries; points stored before this migration keep NULLs.
ALTER TABLE cost_points ADD COLUMN seq INTEGER;
ALTER TABLE cost_points ADD COLUMN prev_hash TEXT;
ALTER TABLE cost_points ADD COLUMN hash TEXT;
CREATE UNIQUE INDEX cost_points_seq ON cost_points (seq);

CREATE TABLE cost_head (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	seq  INTEGER NOT NULL,
	hash TEXT    NOT NULL
);
INSERT INTO cost_head (id, seq, hash) VALUES (1, 0, '');

CREATE TRIGGER cost_points_no_update BEFORE UPDATE ON cost_points
BEGIN
	SELECT RAISE(ABORT, 'cost points are append-only');
END;

CREATE TRIGGER cost_points_no_delete BEFORE DELETE ON cost_points
BEGIN
	SELECT RAISE(ABORT, 'cost points are append-only');
END;
