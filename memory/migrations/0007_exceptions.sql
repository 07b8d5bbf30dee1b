-- 0007 (issue #22, exceptions): memory proposes, a person approves
-- (DESIGN §6b). Each memory keeps the sender's entity fields of the alert
-- it was about (what acted), so a proposal can name the ones every
-- supporting memory shares. Proposals are stored once per content;
-- exceptions only by a person's action (approve, add, import).

-- entities: the alert's entity fields as a JSON object, '{}' for none (and
-- for memories retained before this migration).
ALTER TABLE incidents ADD COLUMN entities TEXT NOT NULL DEFAULT '{}';

CREATE TABLE exception_proposals (
	id           TEXT    PRIMARY KEY,
	rule         TEXT    NOT NULL,
	service      TEXT    NOT NULL,
	-- dna: the critical Alert DNA as canonical text; match: the entity
	-- fields as a JSON object.
	dna          TEXT    NOT NULL,
	match        TEXT    NOT NULL,
	decision     TEXT    NOT NULL,
	max_severity TEXT    NOT NULL,
	expiry_ns    INTEGER NOT NULL,
	-- supporting: the memory ids that vouched, as a JSON array.
	supporting   TEXT    NOT NULL,
	alert_id     TEXT    NOT NULL,
	batch        TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	-- approved_as: the exception it became, NULL until approved.
	approved_as  TEXT
);

CREATE TABLE exceptions (
	id            TEXT    PRIMARY KEY,
	rule          TEXT    NOT NULL,
	service       TEXT    NOT NULL,
	dna           TEXT    NOT NULL,
	match         TEXT    NOT NULL,
	decision      TEXT    NOT NULL,
	max_severity  TEXT    NOT NULL,
	-- expires_at, created_at, revoked_at: UTC unix nanoseconds.
	expires_at    INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	analyst       TEXT    NOT NULL CHECK (analyst <> ''),
	note          TEXT    NOT NULL,
	proposal_id   TEXT    NOT NULL,
	revoked_at    INTEGER,
	revoked_by    TEXT    NOT NULL DEFAULT '',
	revoke_reason TEXT    NOT NULL DEFAULT '',
	-- expiry_recorded: 1 once the audit trail recorded the expiry.
	expiry_recorded INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX exceptions_identity ON exceptions (rule, service);
