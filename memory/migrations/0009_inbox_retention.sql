-- 0009 (serve retention): serve prunes the delivery and result documents of
-- finished inbox rows older than server.retention. A pruned row keeps its
-- ids, endpoint, request id, times and alert id; delivery becomes '' and
-- result NULL, and pruned_at says when. Decisions, alert state, groups,
-- memories and the audit and cost chains live in other tables and stay.

ALTER TABLE inbox ADD COLUMN pruned_at INTEGER;

-- inbox_prunable: finished rows not yet pruned, oldest finish first, so one
-- pruning batch reads the rows it prunes off the index.
CREATE INDEX inbox_prunable ON inbox (done_at, id) WHERE done_seq IS NOT NULL AND pruned_at IS NULL;
