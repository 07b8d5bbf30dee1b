-- 0016 (issue #33): readiness probes a real write. GET /readyz inserts a
-- row with a 64 KiB blob into write_probe, in a transaction it rolls back,
-- so it needs new pages as an enqueue does: a database that cannot grow
-- (the disk, a quota, max_page_count) fails the probe. The table stays
-- empty.

CREATE TABLE write_probe (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    pad BLOB NOT NULL
);
