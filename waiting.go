package openrecall

import "time"

// Why an analysis waits for a person.
const (
	// WaitEscalated: the pipeline escalated the alert to a person.
	WaitEscalated = "escalated"
	// WaitApproval: memory proposed a decision the guard would not take
	// alone (a real incident, an attack, an alert more severe than its
	// support); a person approves it or decides otherwise.
	WaitApproval = "approval_required"
	// WaitGroup: an open alert group (DESIGN §6a) waits for one decision
	// of a person for all its firings.
	WaitGroup = "group"
	// WaitWrong: openrecall closed the analysis without a person and a
	// person said that was wrong (History, "this was wrong"): it waits for
	// a person's decision.
	WaitWrong = "wrong"
)

// Waiting is what waits for a person about one analysis (DESIGN §12a): the
// alert at a glance, why it waits and since when, and, once a person
// decided, who, when and what. An open alert group waits as one item
// (Reason WaitGroup, Group set): AnalysisID and AlertID are its head's,
// Since is the time of its first firing.
type Waiting struct {
	AnalysisID string    `json:"analysis_id"`
	Batch      string    `json:"batch"`
	Since      time.Time `json:"since"`
	// Reason is WaitEscalated, WaitApproval, WaitGroup or WaitWrong; Why
	// says it in a sentence.
	Reason   string   `json:"reason"`
	Why      string   `json:"why"`
	Severity Severity `json:"severity"`
	Identity Identity `json:"identity"`
	Title    string   `json:"title"`
	AlertID  string   `json:"alert_id"`
	// Proposed is the decision memory or the model proposed, empty when
	// nothing was proposed.
	Proposed Decision `json:"proposed,omitempty"`
	// Result is the analysis without its audit entries; filled when one
	// analysis is read, not in a list.
	Result *Result `json:"result,omitempty"`

	Decided   bool      `json:"decided"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	DecidedBy string    `json:"decided_by,omitempty"`
	Decision  Decision  `json:"decision,omitempty"`
	// MemoryID is the memory the decision was retained as; empty when an
	// approved exception settled the analysis.
	MemoryID string `json:"memory_id,omitempty"`
	// Group is the open alert group that waits, for Reason WaitGroup only:
	// its size, key and head.
	Group *Group `json:"group,omitempty"`
}

// WaitingFilter selects what waits for a person. Empty fields select all.
type WaitingFilter struct {
	Severity Severity
	// Rule and Service select the identity's fields, exactly.
	Rule    string
	Service string
	// Limit caps the answer (0: no cap).
	Limit int
}

// IncidentFilter selects memories to list (the cockpit's memory search).
// Empty fields select all.
type IncidentFilter struct {
	// Rule and Service match the identity's fields as substrings, ignoring
	// case.
	Rule    string
	Service string
	// Decision matches exactly.
	Decision Decision
	// Forgotten includes memories taken back.
	Forgotten bool
	// Limit caps the answer (0: no cap).
	Limit int
}
