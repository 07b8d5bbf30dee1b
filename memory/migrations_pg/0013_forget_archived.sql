-- 0013 (issue #25): serve forgets what an archive took. With
-- server.archive_dir and a retention, each pruning pass archives the audit
-- and cost chains older than the retention to a file and then deletes the
-- rows that only served those analyses: pruned inbox rows, what waited for
-- a person, alert groups and alert state not touched since the cut. These
-- indexes let each deletion batch read its rows off an index instead of
-- scanning the table.
--
-- alert_groups.touched_at: when (UTC unix nanoseconds, the store's clock)
-- the group was opened or last grew. first_at and last_at are the sender's
-- times of its firings, which can lie years in the past or the future.
-- Groups stored before this migration count as touched when it ran.

ALTER TABLE alert_groups ADD COLUMN touched_at BIGINT NOT NULL DEFAULT 0;
UPDATE alert_groups SET touched_at = (EXTRACT(EPOCH FROM now()) * 1000000000)::BIGINT;

CREATE INDEX alert_groups_touched ON alert_groups (touched_at);
CREATE INDEX alert_state_updated ON alert_state (updated_at);
CREATE INDEX waiting_since ON waiting (since);
CREATE INDEX inbox_forgettable ON inbox (done_at) WHERE pruned_at IS NOT NULL;
