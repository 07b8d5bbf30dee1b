-- 0020 (issue [shift] #37, DESIGN §12a History): what openrecall closed
-- without a person, one row per analysis, written in the sink's
-- transaction with its result (so inbox retention does not take it):
-- kind is bypass, grouped or exception; at is the store's clock when the
-- result was stored (UTC unix nanoseconds); voters is the JSON array of
-- the memories that vouched ({id, decision, analyst, note}, as they were);
-- exception_id the exception that matched; group_id the alert group;
-- result the analysis without its audit entries, which a person's "this
-- was wrong" puts back in the queue. wrong_at, wrong_by and wrong_reason
-- say who said memory was wrong to close it, when and why. Rows go with
-- what waited for a person (ForgetArchived), by at.

CREATE TABLE history (
	analysis_id  TEXT    PRIMARY KEY,
	batch        TEXT    NOT NULL,
	at           INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	alert_id     TEXT    NOT NULL,
	rule         TEXT    NOT NULL,
	service      TEXT    NOT NULL,
	title        TEXT    NOT NULL,
	severity     TEXT    NOT NULL,
	decision     TEXT    NOT NULL,
	voters       TEXT    NOT NULL,
	exception_id TEXT    NOT NULL,
	group_id     TEXT    NOT NULL,
	result       TEXT    NOT NULL,
	wrong_at     INTEGER,
	wrong_by     TEXT,
	wrong_reason TEXT
);

-- The listing, newest first, and forgetting by age.
CREATE INDEX history_at ON history (at, analysis_id);
