-- 0011 (issue #24, several serve processes): leased claims of inbox rows.
-- A process claims pending rows by setting lease_owner (its instance name
-- and a session id of this start), lease_until (UTC unix nanoseconds) and
-- attempt (incremented on every claim); it persists and completes a row
-- only while the row still carries its owner and attempt, so a process
-- whose lease expired (and another reclaimed the row) writes nothing.
-- 0010 is reserved for the audit archive.

ALTER TABLE inbox ADD COLUMN lease_instance TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN lease_until INTEGER;
ALTER TABLE inbox ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
