-- 0002 (serve): the durable inbox of `openrecall serve` and the state of
-- each alert it has seen, for redelivery idempotence.

CREATE TABLE inbox (
	-- AUTOINCREMENT: an id is never reused, so analysis ids stay unique.
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	analysis_id TEXT    UNIQUE,
	endpoint    TEXT    NOT NULL,
	request_id  TEXT    NOT NULL,
	received_at INTEGER NOT NULL,
	alert_id    TEXT    NOT NULL,
	-- delivery: JSON of the accepted record (normalized alert or rejection).
	delivery    TEXT    NOT NULL,
	-- done_seq: completion order (the results?since= cursor); NULL while pending.
	done_seq    INTEGER,
	done_at     INTEGER,
	result      TEXT
);

CREATE INDEX inbox_pending ON inbox (id) WHERE done_seq IS NULL;
CREATE UNIQUE INDEX inbox_done ON inbox (done_seq) WHERE done_seq IS NOT NULL;

CREATE TABLE alert_state (
	alert_id           TEXT    PRIMARY KEY,
	status             TEXT    NOT NULL,
	severity           TEXT    NOT NULL,
	-- triage_analysis_id: the analysis that triaged the current firing.
	triage_analysis_id TEXT    NOT NULL,
	last_analysis_id   TEXT    NOT NULL,
	updated_at         INTEGER NOT NULL
);
