-- 0006 (issue #21, storms): alert groups. The firings of one alert (same
-- identity, canonical Alert DNA, status and, for attacks, entity fields)
-- within a sliding window are grouped under the first, the head; members
-- take the head's decision. Stored with each batch of results, so `serve`
-- keeps its groups across restarts, and decided once by a person.

CREATE TABLE alert_groups (
	id            TEXT    PRIMARY KEY,
	batch         TEXT    NOT NULL,
	-- key_hash: GroupKey.Hash(); key: the GroupKey as JSON.
	key_hash      TEXT    NOT NULL,
	key           TEXT    NOT NULL,
	rule          TEXT    NOT NULL,
	service       TEXT    NOT NULL,
	head_severity TEXT    NOT NULL,
	-- head: the GroupHead members take, as JSON.
	head          TEXT    NOT NULL,
	head_analysis TEXT    NOT NULL,
	size          INTEGER NOT NULL,
	-- first_at, last_at: UTC unix nanoseconds of the firings' times.
	first_at      INTEGER NOT NULL,
	last_at       INTEGER NOT NULL,
	-- decided_at is NULL while no person has decided the group.
	decided_at    INTEGER,
	decision      TEXT,
	memory_id     TEXT,
	analyst       TEXT
);

CREATE INDEX alert_groups_key ON alert_groups (batch, key_hash);
CREATE INDEX alert_groups_open ON alert_groups (batch) WHERE decided_at IS NULL;

CREATE TABLE group_members (
	analysis_id TEXT PRIMARY KEY,
	group_id    TEXT NOT NULL REFERENCES alert_groups (id),
	alert_id    TEXT NOT NULL,
	role        TEXT NOT NULL,
	-- decision: the person's decision of the group, once decided.
	decision    TEXT
);

CREATE INDEX group_members_group ON group_members (group_id);
