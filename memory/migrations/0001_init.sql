-- 0001: incidents with precomputed recall keys, the append-only audit
-- trail with its head row, and cost curve points.

CREATE TABLE incidents (
	id                 TEXT    NOT NULL UNIQUE,
	dedupe_key         TEXT    NOT NULL UNIQUE,
	-- fp: first 8 bytes of SHA-256 of the canonical fingerprint string.
	fp                 INTEGER NOT NULL,
	-- k4: first 8 bytes of SHA-256 of the four critical values.
	k4                 INTEGER NOT NULL,
	error_class        TEXT    NOT NULL,
	service_role       TEXT    NOT NULL,
	dependency_pattern TEXT    NOT NULL,
	signal_shape       TEXT    NOT NULL,
	attack_pattern     TEXT    NOT NULL,
	environment        TEXT    NOT NULL,
	decision           TEXT    NOT NULL,
	note               TEXT    NOT NULL,
	dead_ends          TEXT    NOT NULL DEFAULT '[]',
	analyst            TEXT    NOT NULL,
	impact_minutes     INTEGER NOT NULL CHECK (impact_minutes >= 0),
	source_alert_id    TEXT    NOT NULL,
	created_at         INTEGER NOT NULL
);

CREATE INDEX incidents_fp ON incidents (fp, created_at DESC, id);
CREATE INDEX incidents_k4_dep ON incidents (k4, dependency_pattern, created_at DESC, id);
CREATE INDEX incidents_k4_shape ON incidents (k4, signal_shape, created_at DESC, id);
CREATE INDEX incidents_k4 ON incidents (k4, created_at DESC, id);

CREATE TABLE audit_entries (
	sequence          INTEGER PRIMARY KEY,
	analysis_id       TEXT    NOT NULL,
	batch             TEXT    NOT NULL,
	alert_id          TEXT    NOT NULL,
	step_index        INTEGER NOT NULL,
	step              TEXT    NOT NULL,
	model             TEXT    NOT NULL,
	tier              TEXT    NOT NULL,
	reason            TEXT    NOT NULL,
	outcome           TEXT    NOT NULL,
	memory_hits       INTEGER NOT NULL,
	proposed_decision TEXT    NOT NULL,
	escalation_reason TEXT    NOT NULL,
	live              INTEGER NOT NULL,
	skipped           INTEGER NOT NULL,
	cost              INTEGER NOT NULL,
	baseline          INTEGER NOT NULL,
	savings           INTEGER NOT NULL,
	latency_ns        INTEGER NOT NULL,
	-- time_ns: UTC unix nanoseconds, NULL for the zero time.
	time_ns           INTEGER,
	prev_hash         TEXT    NOT NULL,
	hash              TEXT    NOT NULL
);

CREATE INDEX audit_entries_analysis ON audit_entries (analysis_id, sequence);

-- audit_head is updated in the same transaction as every append, so a
-- deleted tail is visible as a head that points past the last entry.
CREATE TABLE audit_head (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	seq  INTEGER NOT NULL,
	hash TEXT    NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');

CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries
BEGIN
	SELECT RAISE(ABORT, 'audit entries are append-only');
END;

CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries
BEGIN
	SELECT RAISE(ABORT, 'audit entries are append-only');
END;

CREATE TABLE batches (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

CREATE TABLE cost_points (
	batch               TEXT    NOT NULL REFERENCES batches (name),
	idx                 INTEGER NOT NULL,
	alert_id            TEXT    NOT NULL,
	tier                TEXT    NOT NULL,
	bypassed            INTEGER NOT NULL,
	cost                INTEGER NOT NULL,
	baseline            INTEGER NOT NULL,
	cumulative_cost     INTEGER NOT NULL,
	cumulative_baseline INTEGER NOT NULL,
	PRIMARY KEY (batch, idx)
);
