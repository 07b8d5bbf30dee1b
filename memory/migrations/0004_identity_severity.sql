-- 0002 (issue #7): a memory records the identity (rule, service) and the
-- severity of the alert it was about, may expire, and may be forgotten.
-- Memories from before identity existed keep rule '' and become related
-- knowledge only: the v1 schema kept no alert body to derive an identity
-- from. Retaining the same decision again with an identity (re-seeding,
-- re-importing) fills it in and restores their vote.

ALTER TABLE incidents ADD COLUMN rule TEXT NOT NULL DEFAULT '';
ALTER TABLE incidents ADD COLUMN service TEXT NOT NULL DEFAULT '';
ALTER TABLE incidents ADD COLUMN severity TEXT NOT NULL DEFAULT 'unknown';
-- ifp, ik4: the identity hashed together with the whole fingerprint and
-- with its four critical values; 0 when the memory has no identity.
ALTER TABLE incidents ADD COLUMN ifp INTEGER NOT NULL DEFAULT 0;
ALTER TABLE incidents ADD COLUMN ik4 INTEGER NOT NULL DEFAULT 0;
-- expires_at, forgotten_at: UTC unix nanoseconds, NULL when not set.
ALTER TABLE incidents ADD COLUMN expires_at INTEGER;
ALTER TABLE incidents ADD COLUMN forgotten_at INTEGER;

CREATE INDEX incidents_ifp ON incidents (ifp, created_at DESC, id);
CREATE INDEX incidents_ik4_dep ON incidents (ik4, dependency_pattern, created_at DESC, id);
CREATE INDEX incidents_ik4_shape ON incidents (ik4, signal_shape, created_at DESC, id);
CREATE INDEX incidents_ik4 ON incidents (ik4, created_at DESC, id);
CREATE INDEX incidents_identity ON incidents (rule, service);
