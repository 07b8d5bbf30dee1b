package openrecall

// TriageResult is the proposal triage makes from a fingerprint and its
// recalled matches.
type TriageResult struct {
	Decision   Decision `json:"decision"`
	Confidence float64  `json:"confidence"`
	// ConsistentCount is the number of strong matches that carry the
	// dominant decision.
	ConsistentCount int `json:"consistent_decision_count"`
	// StrongCount is the number of strong matches.
	StrongCount int `json:"strong_match_count"`
	// Consistency is ConsistentCount / StrongCount, 0 without strong matches.
	Consistency float64 `json:"consistency"`
	// BestScore is the highest match score, 0 without matches.
	BestScore float64 `json:"best_score"`
	// Supporting holds the ids of the strong matches that carry the decision.
	Supporting            []string `json:"supporting_matches,omitempty"`
	RequiresHumanApproval bool     `json:"requires_human_approval"`
	EscalationReason      string   `json:"escalation_reason,omitempty"`
	// AlertSeverity is the triaged alert's severity, as intake gave it.
	AlertSeverity Severity `json:"alert_severity,omitempty"`
	// SupportSeverity is the most severe severity among the supporting
	// memories (MostSevere), empty without support.
	SupportSeverity Severity `json:"support_severity,omitempty"`
}

// GuardVerdict is the guard's ruling on one alert: whether the memory bypass
// may happen, and which of its five clauses held.
type GuardVerdict struct {
	Bypass bool `json:"bypass"`
	// StrongMatch: (a) a strong match exists.
	StrongMatch bool `json:"strong_match"`
	// Consistent: (b) consistency is at or above the threshold.
	Consistent bool `json:"consistent"`
	// Confident: (c) confidence is at or above the bypass threshold.
	Confident bool `json:"confident"`
	// BenignNoAttack: (d) no attack pattern and a benign decision.
	BenignNoAttack bool `json:"benign_no_attack"`
	// SeverityCovered: (e) the alert is not more severe than the most
	// severe supporting memory (MoreSevere).
	SeverityCovered bool   `json:"severity_covered"`
	Reason          string `json:"reason"`
}

// RefusedOnlyBySeverity reports whether clauses (a) to (d) hold and only the
// severity clause (e) refuses the bypass: such an alert goes to the strong
// model and a person approves it (DESIGN §7), never the cheap tier.
func (v GuardVerdict) RefusedOnlyBySeverity() bool {
	return v.StrongMatch && v.Consistent && v.Confident && v.BenignNoAttack && !v.SeverityCovered
}

// Analysis is what a model (or the memory bypass) concluded about an alert.
type Analysis struct {
	Decision    Decision `json:"decision"`
	Confidence  float64  `json:"confidence"`
	Summary     string   `json:"summary,omitempty"`
	Hypotheses  []string `json:"hypotheses,omitempty"`
	Verify      []string `json:"verification_commands,omitempty"`
	NextSteps   []string `json:"next_steps,omitempty"`
	SkipPaths   []string `json:"skip_paths,omitempty"`
	CitedMemory []string `json:"cited_memory_ids,omitempty"`
	Model       string   `json:"model,omitempty"`
	// Live is true only when a real model call produced this analysis.
	Live bool `json:"live"`
}
