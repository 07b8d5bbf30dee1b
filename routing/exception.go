package routing

import (
	"fmt"

	openrecall "github.com/openrecall/openrecall"
)

// Excepted returns the route of an alert that matched exception e, which a
// person approved (DESIGN §6b, §7): one exception step, no model call, cost
// 0, the exception's decision. Its baseline is the strong analysis of in at
// the expected completion, all of it saved.
func (r *Router) Excepted(in Input, e openrecall.Exception) Output {
	start := r.cfg.Now()
	step := openrecall.RouteStep{
		Step: openrecall.StepException, Model: "exception", Skipped: true, Outcome: openrecall.OutcomeOK,
		Proposed: e.Decision, MemoryHits: len(in.Matches),
		Reason: fmt.Sprintf("matches %s: identity, critical DNA and match fields %s equal, severity %s within ceiling %s; no model call",
			e.Describe(), matchText(e.Match), severityText(in.Alert.Severity), e.MaxSeverity),
	}
	if expected, err := r.cfg.Prices.Cost(r.strongPriced, EstimatePromptTokens(BuildPrompt(in)), r.ExpectedCompletionTokens()); err == nil {
		step.Baseline = expected
	}
	step.Latency = r.cfg.Now().Sub(start)
	step.Budget = r.cfg.Budget.State()
	return Output{Decision: e.Decision, Steps: []openrecall.RouteStep{step}, Baseline: step.Baseline}
}

func matchText(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	return openrecall.MatchString(m)
}

func severityText(s openrecall.Severity) string {
	if s == "" || s == openrecall.SeverityUnknown {
		return "unknown (counted as critical)"
	}
	return string(s)
}
