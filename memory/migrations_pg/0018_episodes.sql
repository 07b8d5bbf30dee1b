-- 0018 (issue [notify], DESIGN §12b): an alert's firing episode. episode
-- is the analysis id of the delivery that opened the alert's current
-- firing episode: set when a firing finds no state, or (for an alert whose
-- id does not name its episode) finds it resolved; kept by every later
-- delivery of the episode (a repeat, a severity rise, an acknowledgement,
-- its recovery). Each delivery carries it, and the notifications of an
-- episode share the key made from it, so a receiver hears one alert per
-- episode: its trigger, updates and resolve. '' for the state rows of
-- databases older than this migration: their triage analysis names the
-- episode.

ALTER TABLE alert_state ADD COLUMN episode TEXT NOT NULL DEFAULT '';
