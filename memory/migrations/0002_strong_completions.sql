-- strong_completions keeps, per model the strong tier is priced as, how many
-- strong analysis calls this memory has recorded and the completion tokens
-- they returned in total. Their mean is the strong model's expected
-- completion, which prices the baseline of alerts the strong model did not
-- analyse (DESIGN §7). The audit trail cannot give it: its entries carry
-- costs, not token counts.
CREATE TABLE strong_completions (
	model             TEXT    PRIMARY KEY,
	calls             INTEGER NOT NULL CHECK (calls >= 0),
	completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0)
);
