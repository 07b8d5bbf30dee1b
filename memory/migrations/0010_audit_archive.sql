-- 0010 (audit archive): `openrecall audit archive` moves a verified prefix
-- of the audit and cost chains to a file (DESIGN §9). audit_archives
-- records, per archive, where the archived prefix ends in each chain (the
-- last sequence and its hash; 0 and '' when that chain had nothing to
-- archive yet), the cut (before_ns: everything archived was older), when it
-- ran, the file's SHA-256 and the key id, with mac, the key's HMAC over all
-- of that: a record cannot be forged or changed without the key, and
-- `audit verify` starts each chain after the latest record once its MAC
-- checks. Records only move forward and are never changed or deleted.
CREATE TABLE audit_archives (
	id                INTEGER PRIMARY KEY,
	through           INTEGER NOT NULL,
	through_hash      TEXT    NOT NULL,
	cost_through      INTEGER NOT NULL,
	cost_through_hash TEXT    NOT NULL,
	before_ns         INTEGER NOT NULL,
	archived_at       INTEGER NOT NULL,
	file_sha256       TEXT    NOT NULL,
	key_id            TEXT    NOT NULL,
	mac               TEXT    NOT NULL
);

CREATE TRIGGER audit_archives_forward BEFORE INSERT ON audit_archives
	WHEN NEW.through < (SELECT COALESCE(MAX(through), 0) FROM audit_archives)
	  OR NEW.cost_through < (SELECT COALESCE(MAX(cost_through), 0) FROM audit_archives)
BEGIN
	SELECT RAISE(ABORT, 'an archive record cannot end before the previous one');
END;

CREATE TRIGGER audit_archives_no_update BEFORE UPDATE ON audit_archives
BEGIN
	SELECT RAISE(ABORT, 'archive records are append-only');
END;

CREATE TRIGGER audit_archives_no_delete BEFORE DELETE ON audit_archives
BEGIN
	SELECT RAISE(ABORT, 'archive records are append-only');
END;

-- The append-only triggers of 0001 and 0003 refused every delete; now a
-- delete is allowed only of what an archive record covers (the archive's
-- own transaction inserts the record, then deletes its prefix). A prefix
-- deleted by hand without a record is still refused, and one deleted with
-- the triggers dropped is still reported by `audit verify`. Cost points
-- stored before cost points were chained (seq NULL) are never archived.
DROP TRIGGER audit_entries_no_delete;
CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries
	WHEN OLD.sequence > (SELECT COALESCE(MAX(through), 0) FROM audit_archives)
BEGIN
	SELECT RAISE(ABORT, 'audit entries are append-only');
END;

DROP TRIGGER cost_points_no_delete;
CREATE TRIGGER cost_points_no_delete BEFORE DELETE ON cost_points
	WHEN OLD.seq IS NULL OR OLD.seq > (SELECT COALESCE(MAX(cost_through), 0) FROM audit_archives)
BEGIN
	SELECT RAISE(ABORT, 'cost points are append-only');
END;

-- appended_at: when a cost point was appended (Unix nanoseconds), which
-- says whether it is older than an archive's cut; NULL for points stored
-- before this migration, which take their batch's registration time.
ALTER TABLE cost_points ADD COLUMN appended_at INTEGER;
