-- 0017 (issue [notify], DESIGN §12b): the outbox. Each row is one
-- receiver's notification intent about one stored result, written in the
-- sink's transaction with its result, so neither is stored without the
-- other. A dispatcher claims pending rows under a lease (lease_instance,
-- lease_owner, lease_until, as an inbox row's: UTC unix nanoseconds, the
-- owner its instance name and a session id of this start), counting each
-- claim in attempts; it reports the outcome only while its claim holds
-- (owner and attempts): sent (sent_at, delivery_state: the JSON object the
-- receiver returned, read by the episode's later intents), failed (back to
-- pending, not before next_at, last_error the receiver's answer, capped) or
-- dead (dead_at: a dead letter, kept until a person retries it, which sets
-- since). An episode is (receiver, episode): the receiver's deduplication
-- key; its intents are claimed in id order, never one while an earlier
-- one of its episode is pending. Times are UTC unix nanoseconds.

CREATE TABLE outbox (
	-- AUTOINCREMENT: ids only grow, so they order intents by creation.
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	analysis_id    TEXT    NOT NULL,
	receiver       TEXT    NOT NULL,
	kind           TEXT    NOT NULL,
	episode        TEXT    NOT NULL,
	created_at     INTEGER NOT NULL,
	since          INTEGER NOT NULL,
	state          TEXT    NOT NULL DEFAULT 'pending',
	attempts       INTEGER NOT NULL DEFAULT 0,
	next_at        INTEGER NOT NULL,
	last_error     TEXT    NOT NULL DEFAULT '',
	lease_instance TEXT    NOT NULL DEFAULT '',
	lease_owner    TEXT    NOT NULL DEFAULT '',
	lease_until    INTEGER,
	sent_at        INTEGER,
	dead_at        INTEGER,
	delivery_state TEXT
);

-- The claim (pending, oldest first) and the listings (a state, newest first).
CREATE INDEX outbox_state ON outbox (state, id);
-- An episode's earlier pending intent (the claim's ordering rule) and its
-- latest sent state (Prior).
CREATE INDEX outbox_episode ON outbox (receiver, episode, state, id);
-- A result's intents, each receiver's once per kind (updates may repeat),
-- and the listing of one analysis's.
CREATE UNIQUE INDEX outbox_result ON outbox (analysis_id, receiver, kind) WHERE kind <> 'update';
CREATE INDEX outbox_analysis ON outbox (analysis_id);
-- Pruning the sent intents older than the retention.
CREATE INDEX outbox_sent ON outbox (sent_at) WHERE state = 'sent';
