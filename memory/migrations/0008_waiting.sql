-- 0008 (cockpit): what waits for a person, per analysis (DESIGN §12a). A
-- row is written with the analysis's audit entries when the workflow
-- escalates an alert or memory proposes a decision that needs approval, and
-- marked decided by the retain that settles it. 0006 is alert groups, 0007
-- is reserved for exceptions.

CREATE TABLE waiting (
	analysis_id TEXT    PRIMARY KEY,
	batch       TEXT    NOT NULL,
	since       INTEGER NOT NULL,
	reason      TEXT    NOT NULL,
	why         TEXT    NOT NULL,
	severity    TEXT    NOT NULL,
	rule        TEXT    NOT NULL,
	service     TEXT    NOT NULL,
	title       TEXT    NOT NULL,
	alert_id    TEXT    NOT NULL,
	proposed    TEXT    NOT NULL,
	-- result: JSON of the analysis without its audit entries.
	result      TEXT    NOT NULL,
	decided_at  INTEGER,
	decided_by  TEXT,
	decision    TEXT,
	memory_id   TEXT
);

CREATE INDEX waiting_open ON waiting (since, analysis_id) WHERE decided_at IS NULL;
