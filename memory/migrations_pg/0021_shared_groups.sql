-- 0021 (issue [ship] #39, DESIGN §13 "Shared state is shared"): alert
-- group claims and the maintained inbox depth, as SQLite's 0021 says.

CREATE TABLE group_claims (
	seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	group_id      TEXT COLLATE "C" NOT NULL UNIQUE,
	batch         TEXT COLLATE "C" NOT NULL,
	key_hash      TEXT COLLATE "C" NOT NULL,
	owner         TEXT COLLATE "C" NOT NULL,
	head_severity TEXT COLLATE "C" NOT NULL,
	at            BIGINT NOT NULL
);

CREATE INDEX group_claims_key ON group_claims (batch, key_hash, seq);

CREATE TABLE inbox_depth (
	slot BIGINT PRIMARY KEY,
	n    BIGINT NOT NULL
);

INSERT INTO inbox_depth (slot, n) VALUES (0, (SELECT COUNT(*) FROM inbox WHERE done_seq IS NULL)),
	(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0),
	(8, 0), (9, 0), (10, 0), (11, 0), (12, 0), (13, 0), (14, 0), (15, 0);
