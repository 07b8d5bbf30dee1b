package property

import (
	"context"
	"fmt"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/openai/fake"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/workflow"
)

// billedCall is one live analysis step that got an answer, with the request
// it answered and the usage the script reported for it.
type billedCall struct {
	step  openrecall.RouteStep
	req   fake.Received
	usage int // index of gen.Usages
}

// billedCalls runs a live run sequentially and pairs each answered live
// analysis step with its request: one worker, so the server's requests
// come in the order of the steps (P36 holds the count).
func billedCalls(ex workflow.Fingerprinter, run gen.LiveRun) ([]billedCall, []openrecall.Result, error) {
	srv := fake.New(scriptResponder(run.Script))
	defer srv.Close()
	out, err := runWorkflowOn(ex, run.Input, 1, liveTiers(srv))
	if err != nil {
		return nil, nil, err
	}
	got := srv.Received()
	var calls []billedCall
	n := 0
	for _, r := range out.results {
		for _, s := range r.Steps {
			if !s.Live {
				continue
			}
			if n >= len(got) {
				return nil, nil, fmt.Errorf("ledger: more live steps than the %d requests the server received", len(got))
			}
			usage := 1 // scriptResponder's default answer
			if len(run.Script) > 0 {
				usage = run.Script[n%len(run.Script)].Usage
			}
			calls = append(calls, billedCall{step: s, req: got[n], usage: usage})
			n++
		}
	}
	return calls, out.results, nil
}

// checkBookedWithinAsked checks P135 against a ceiling worked out from the
// request the server received, not from the router's own arithmetic.
func checkBookedWithinAsked(ex workflow.Fingerprinter, run gen.LiveRun) error {
	calls, _, err := billedCalls(ex, run)
	if err != nil {
		return err
	}
	prices := routing.DefaultPrices()
	for _, c := range calls {
		s, rq := c.step, c.req.Request
		promptCeiling := len(rq.Text("system")) + len(rq.Text("user")) + 16
		maxTok := max(rq.MaxTokens, rq.MaxCompletionTokens)
		ceiling, err := prices.Cost(rq.Model, promptCeiling, maxTok)
		if err != nil {
			return fmt.Errorf("setup: price %s: %v", rq.Model, err)
		}
		what := fmt.Sprintf("%s step (%s reported %q)", s.Tier, rq.Model, gen.Usages()[c.usage])
		switch {
		case s.PromptTokens < 0 || s.PromptTokens > promptCeiling:
			return fmt.Errorf("prompt: %s booked %d prompt tokens, ceiling %d", what, s.PromptTokens, promptCeiling)
		case s.CompletionTokens < 0 || s.CompletionTokens > maxTok:
			return fmt.Errorf("completion: %s booked %d completion tokens, max_tokens %d", what, s.CompletionTokens, maxTok)
		case s.Cost < 0 || s.Cost > ceiling:
			return fmt.Errorf("ceiling: %s booked %d nano-dollars, ceiling %d", what, s.Cost, ceiling)
		}
		honest := gen.HonestUsage(c.usage)
		if !honest && s.UsageAnomaly == "" {
			return fmt.Errorf("anomaly: %s booked without usage_anomaly (%d/%d tokens, model %s)", what, s.PromptTokens, s.CompletionTokens, s.Model)
		}
		if honest && s.UsageAnomaly != "" {
			return fmt.Errorf("liveness: %s is honest yet marked %q", what, s.UsageAnomaly)
		}
	}
	return nil
}

// checkMeanIgnoresAnomalies checks P136: what memory records of a run's
// strong completions (through the sink's own recording) is exactly its
// honest strong steps.
func checkMeanIgnoresAnomalies(ex workflow.Fingerprinter, run gen.LiveRun) error {
	calls, results, err := billedCalls(ex, run)
	if err != nil {
		return err
	}
	var want memory.CompletionStats
	for _, c := range calls {
		s := c.step
		if s.Tier == openrecall.TierStrong && !s.Skipped && gen.HonestUsage(c.usage) && s.CompletionTokens > 0 {
			want.Calls++
			want.CompletionTokens += int64(s.CompletionTokens)
		}
	}
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		if err := ss[0].RecordStrongCompletions(ctx, results); err != nil {
			return fmt.Errorf("record: %v", err)
		}
		got, err := ss[0].StrongCompletions(ctx, "gpt-4o")
		if err != nil {
			return fmt.Errorf("read: %v", err)
		}
		if got != want {
			return fmt.Errorf("mean: memory recorded %d strong calls of %d completion tokens, want the honest ones: %d of %d", got.Calls, got.CompletionTokens, want.Calls, want.CompletionTokens)
		}
		return nil
	})
}

// classifyUsageRun labels a run by the usages its script reports.
func classifyUsageRun(run gen.LiveRun) []string {
	var l []string
	anomalous, honest := false, len(run.Script) == 0
	for _, s := range run.Script {
		if gen.HonestUsage(s.Usage) {
			honest = true
		} else {
			anomalous = true
		}
	}
	if anomalous {
		l = append(l, "an anomalous usage")
	}
	if honest {
		l = append(l, "an honest usage")
	}
	return l
}
