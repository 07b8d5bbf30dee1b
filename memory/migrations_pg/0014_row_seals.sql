-- 0014 (PostgreSQL; SQLite's 0014 says what and why): the seal of each
-- memory, waiting row and finished inbox row, and the record of their
-- adoption.
ALTER TABLE incidents ADD COLUMN seal TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE waiting ADD COLUMN seal TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN seal TEXT COLLATE "C" NOT NULL DEFAULT '';

CREATE TABLE row_sealing (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	adopted_at BIGINT  NOT NULL,
	entry_seq  BIGINT  NOT NULL,
	rows       BIGINT  NOT NULL,
	key_id     TEXT COLLATE "C" NOT NULL,
	mac        TEXT COLLATE "C" NOT NULL
);

CREATE TRIGGER row_sealing_no_update BEFORE UPDATE ON row_sealing
	FOR EACH ROW EXECUTE FUNCTION openrecall_append_only('row sealing is recorded once');
CREATE TRIGGER row_sealing_no_delete BEFORE DELETE ON row_sealing
	FOR EACH ROW EXECUTE FUNCTION openrecall_append_only('row sealing is recorded once');
