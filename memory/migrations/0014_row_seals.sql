-- 0014 (issue #33, item 6): what is served and what is trusted is bound to
-- the keyed chain. Each memory, each row of what waits for a person and
-- each finished inbox row carries seal, the audit key's HMAC over the
-- columns its readers use (memory/seal.go names them); every write of such
-- a row appends a `seals` audit entry whose outcome is the same seal, so
-- `audit verify` tells an edited row (the seal does not match the columns),
-- a row rolled back to an earlier sealed state (the seal is not the latest
-- chained one) and a deleted row (the chain binds it, the table lacks it).
-- '' is "not sealed": rows written before this migration, until a process
-- with the key adopts them (seals them all once and records it here).
ALTER TABLE incidents ADD COLUMN seal TEXT NOT NULL DEFAULT '';
ALTER TABLE waiting ADD COLUMN seal TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN seal TEXT NOT NULL DEFAULT '';

-- row_sealing: one row, written once when the rows were adopted (sealed
-- for the first time) under key_id: the audit sequence of the adoption's
-- entry, how many rows it sealed, and mac, the key's HMAC over all of it.
-- From then on a row without a seal was written outside the chain.
CREATE TABLE row_sealing (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	adopted_at INTEGER NOT NULL,
	entry_seq  INTEGER NOT NULL,
	rows       INTEGER NOT NULL,
	key_id     TEXT    NOT NULL,
	mac        TEXT    NOT NULL
);

CREATE TRIGGER row_sealing_no_update BEFORE UPDATE ON row_sealing
BEGIN
	SELECT RAISE(ABORT, 'row sealing is recorded once');
END;

CREATE TRIGGER row_sealing_no_delete BEFORE DELETE ON row_sealing
BEGIN
	SELECT RAISE(ABORT, 'row sealing is recorded once');
END;
