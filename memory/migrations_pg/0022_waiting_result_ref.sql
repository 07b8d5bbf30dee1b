-- 0022 (issue [perf] #41, DESIGN §12a "What a waiting row holds"): a
-- waiting row whose analysis finished an inbox delivery in the same
-- transaction names that inbox row (result_inbox) instead of copying its
-- result: result is then '' and the row reads the inbox row's result with
-- the value of its "audit" member replaced by null, the same bytes its
-- seal covers. Before an inbox row's result is emptied (retention), the
-- rows that name it take their copy back in the same transaction; the
-- partial index finds them. NULL: the row holds its own copy (every row
-- stored before, every row of analyze).

ALTER TABLE waiting ADD COLUMN result_inbox BIGINT;
CREATE INDEX waiting_result_inbox ON waiting (result_inbox) WHERE result_inbox IS NOT NULL;
