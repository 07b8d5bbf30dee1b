-- 0021 (issue [ship] #39, DESIGN §13 "Shared state is shared"): what
-- several serve processes sharing one database need to behave as one.
--
-- group_claims: every alert group a run opens, claimed under the lock of
-- its group key before its head is triaged, so a firing received by
-- another process finds the group (pending until the head's result
-- stores its alert_groups row) and joins it instead of opening its own.
-- seq orders the claims (a run reads those made since it started);
-- owner names the run that claimed; head_severity and at (UTC unix
-- nanoseconds, the head's time) are what a firing needs to know whether
-- it may join before the group is stored. A run deletes the claims of a
-- key more than a day of windows behind the firing it groups.
--
-- inbox_depth: the number of deliveries waiting in the inbox, kept in
-- slots that enqueue adds to and completion takes from in their own
-- transactions: the receivers' 503 reads SUM(n), never COUNT(*) over the
-- inbox. Slots spread the updates of concurrent transactions; a slot may
-- be negative, their sum is the depth.

CREATE TABLE group_claims (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	group_id      TEXT    NOT NULL UNIQUE,
	batch         TEXT    NOT NULL,
	key_hash      TEXT    NOT NULL,
	owner         TEXT    NOT NULL,
	head_severity TEXT    NOT NULL,
	at            INTEGER NOT NULL
);

CREATE INDEX group_claims_key ON group_claims (batch, key_hash, seq);

CREATE TABLE inbox_depth (
	slot INTEGER PRIMARY KEY,
	n    INTEGER NOT NULL
);

INSERT INTO inbox_depth (slot, n) VALUES (0, (SELECT COUNT(*) FROM inbox WHERE done_seq IS NULL)),
	(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0),
	(8, 0), (9, 0), (10, 0), (11, 0), (12, 0), (13, 0), (14, 0), (15, 0);
