-- 0020 (issue [shift] #37, DESIGN §12a History): what openrecall closed
-- without a person, as SQLite's 0019 says.

CREATE TABLE history (
	analysis_id  TEXT COLLATE "C" PRIMARY KEY,
	batch        TEXT COLLATE "C" NOT NULL,
	at           BIGINT NOT NULL,
	kind         TEXT COLLATE "C" NOT NULL,
	alert_id     TEXT COLLATE "C" NOT NULL,
	rule         TEXT COLLATE "C" NOT NULL,
	service      TEXT COLLATE "C" NOT NULL,
	title        TEXT COLLATE "C" NOT NULL,
	severity     TEXT COLLATE "C" NOT NULL,
	decision     TEXT COLLATE "C" NOT NULL,
	voters       TEXT COLLATE "C" NOT NULL,
	exception_id TEXT COLLATE "C" NOT NULL,
	group_id     TEXT COLLATE "C" NOT NULL,
	result       TEXT COLLATE "C" NOT NULL,
	wrong_at     BIGINT,
	wrong_by     TEXT COLLATE "C",
	wrong_reason TEXT COLLATE "C"
);

CREATE INDEX history_at ON history (at, analysis_id);
