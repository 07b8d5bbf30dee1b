-- 0012 (issue #24): serve's daily model budget, kept in the database so
-- every serve process sharing it (and a restart on the same day) spends
-- from one budget. reserved is what calls in flight set aside; spent what
-- finished calls cost, in nano-dollars.

CREATE TABLE budget_days (
	day      TEXT COLLATE "C" PRIMARY KEY,
	spent    BIGINT  NOT NULL DEFAULT 0 CHECK (spent >= 0),
	reserved BIGINT  NOT NULL DEFAULT 0 CHECK (reserved >= 0)
);
