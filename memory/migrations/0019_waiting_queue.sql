-- 0019 (issue [shift], DESIGN §12a): what the queue orders by, kept
-- beside each waiting row so that listing what waits reads no result
-- document: attack is the alert's attack pattern (Alert DNA, '' for
-- none), a copy of the sealed result's, written with the row; the queue
-- checks the seal of each row it shows. Rows already decided are never
-- listed, so only those that wait are filled from their results.

ALTER TABLE waiting ADD COLUMN attack TEXT NOT NULL DEFAULT '';
UPDATE waiting SET attack = COALESCE(json_extract(result, '$.fingerprint.attack_pattern'), '')
	WHERE decided_at IS NULL AND json_valid(result);
