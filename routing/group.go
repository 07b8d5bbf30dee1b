package routing

import (
	openrecall "github.com/openrecall/openrecall"
)

// Grouped returns the route of a member of an alert group (DESIGN §6a, §7):
// one grouped step, no model call, cost 0, and the head's decision and
// escalation, never anything the head did not have: a benign decision
// closes members only when memory vouched for the head (a bypass, which
// the member re-checked); a member of a head a model answered benign is
// escalated to the person who decides the group. Its baseline is the
// strong analysis of in at the expected completion, all of it saved,
// except for a member of a head escalated without analysis: that one is
// escalated without analysis too, at baseline = cost = 0, never a saving.
// why says why the member took the head's outcome. The step names no
// analysis or group id, which differ between runs (the result's Group
// does).
func (r *Router) Grouped(in Input, head openrecall.GroupHead, why string) Output {
	start := r.cfg.Now()
	step := openrecall.RouteStep{
		Step: openrecall.StepGrouped, Model: "group", Skipped: true, Outcome: openrecall.OutcomeOK,
		Proposed: head.Decision, MemoryHits: len(in.Matches),
		Reason: "member of an alert group: takes the decision " + string(head.Decision) + " of its head, alert " + head.AlertID + why,
	}
	out := Output{Decision: head.Decision}
	if head.ModelBenign {
		step.EscalationReason = "its head's benign decision is a model's answer about that firing, not memory vouching for the alert: escalated to the person who decides the group"
		out.Decision = openrecall.DecisionEscalated
	}
	if head.Unanalysed {
		step.EscalationReason = "its head was escalated without analysis; escalated without analysis"
		out.Decision, out.Unanalysed = openrecall.DecisionEscalated, true
		step.Proposed = openrecall.DecisionEscalated
	} else {
		expected, err := r.cfg.Prices.Cost(r.strongPriced, EstimatePromptTokens(BuildPrompt(in)), r.ExpectedCompletionTokens())
		if err == nil {
			step.Baseline = expected
		}
	}
	step.Latency = r.cfg.Now().Sub(start)
	step.Budget = r.cfg.Budget.State()
	out.Steps = []openrecall.RouteStep{step}
	out.Baseline = step.Baseline
	return out
}
