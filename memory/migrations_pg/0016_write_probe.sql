-- 0016 (issue #33): readiness probes a real write. GET /readyz inserts a
-- row with a 64 KiB value into write_probe, in a transaction it rolls
-- back, so it writes as an enqueue does: a database that refuses writes
-- (a full disk, a read-only server) fails the probe. The table stays empty.

CREATE TABLE write_probe (
    id BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
    pad BYTEA NOT NULL
);

-- Stored as written, out of line: a probe of zeros compressed to a few
-- bytes would not write what it says.
ALTER TABLE write_probe ALTER COLUMN pad SET STORAGE EXTERNAL;
