package memory

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
)

// CompletionStats is what a memory has recorded of one model's strong
// analysis calls: how many, and the completion tokens they returned.
type CompletionStats struct {
	Calls            int64
	CompletionTokens int64
}

// Mean returns the mean completion in tokens, rounded to the nearest, and
// false when no call is recorded.
func (c CompletionStats) Mean() (int, bool) {
	if c.Calls <= 0 {
		return 0, false
	}
	return int((c.CompletionTokens + c.Calls/2) / c.Calls), true
}

// StrongCompletions returns the recorded strong completions of model (the
// name the strong tier is priced as), its dated snapshots included: a live
// provider reports "gpt-4o-2024-08-06" for "gpt-4o". An unknown model gives
// zero stats.
func (s *Trail) StrongCompletions(ctx context.Context, model string) (CompletionStats, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.strongCompletions, model, likeEscape(model)+"-%")
	if err != nil {
		return CompletionStats{}, translate("strong completions", err)
	}
	defer rows.Close()
	var total CompletionStats
	for rows.Next() {
		var (
			name string
			c    CompletionStats
		)
		if err := rows.Scan(&name, &c.Calls, &c.CompletionTokens); err != nil {
			return CompletionStats{}, translate("strong completions: scan", err)
		}
		if rest, dated := strings.CutPrefix(name, model+"-"); name != model && (!dated || rest == "" || rest[0] < '0' || rest[0] > '9') {
			continue // another model that shares the prefix, such as gpt-4o-mini
		}
		total.Calls += c.Calls
		total.CompletionTokens += c.CompletionTokens
	}
	if err := rows.Err(); err != nil {
		return CompletionStats{}, translate("strong completions", err)
	}
	return total, nil
}

// strongCompletionsSQL selects a model's completions and its dated
// snapshots' (StrongCompletions), by a LIKE that ignores case.
func strongCompletionsSQL(d dialect) string {
	return `SELECT model, calls, completion_tokens FROM strong_completions WHERE model = $1 OR model` + d.like() + `$2 ESCAPE '\'`
}

// likeEscape escapes the LIKE wildcards of s with a backslash.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// RecordStrongCompletions adds the strong analysis calls of results to the
// per-model totals, in one transaction: every strong analysis step that
// was made and reported a completion within bounds. A step whose reported
// usage was a provider anomaly (RouteStep.UsageAnomaly) is left out, so a
// lying provider never moves the strong model's running mean and with it
// the baseline of later runs (DESIGN §7).
func (s *Trail) RecordStrongCompletions(ctx context.Context, results []openrecall.Result) error {
	return s.inTx(ctx, "record strong completions", func(tx *sql.Tx) error {
		return recordStrongCompletionsTx(ctx, tx, results)
	})
}

// recordStrongCompletionsTx is RecordStrongCompletions inside the caller's
// transaction (nothing is written when no result made a strong call).
func recordStrongCompletionsTx(ctx context.Context, tx *sql.Tx, results []openrecall.Result) error {
	add := map[string]CompletionStats{}
	var order []string
	for _, r := range results {
		for _, st := range r.Steps {
			if st.Step != openrecall.StepAnalysis || st.Tier != openrecall.TierStrong || st.Skipped || st.CompletionTokens <= 0 || st.UsageAnomaly != "" {
				continue
			}
			c, seen := add[st.Model]
			if !seen {
				order = append(order, st.Model)
			}
			c.Calls++
			c.CompletionTokens += int64(st.CompletionTokens)
			add[st.Model] = c
		}
	}
	for _, m := range order {
		c := add[m]
		if _, err := tx.ExecContext(ctx, `INSERT INTO strong_completions (model, calls, completion_tokens) VALUES ($1, $2, $3)
			ON CONFLICT (model) DO UPDATE SET calls = strong_completions.calls + excluded.calls, completion_tokens = strong_completions.completion_tokens + excluded.completion_tokens`,
			m, c.Calls, c.CompletionTokens); err != nil {
			return translate(fmt.Sprintf("record strong completions of %s", m), err)
		}
	}
	return nil
}

// BatchLive reports whether any step of the batch made a live model call,
// so that its costs were billed rather than estimated.
func (s *Trail) BatchLive(ctx context.Context, batch string) (bool, error) {
	var live bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM audit_entries WHERE batch = $1 AND live = 1)`, batch).Scan(&live); err != nil {
		return false, translate("batch live", err)
	}
	return live, nil
}
