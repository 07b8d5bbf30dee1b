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

	// Attack is the alert's attack pattern (Alert DNA), empty for none:
	// the queue puts attacks first.
	Attack string `json:"attack,omitempty"`
	// Labels are the alert's labels, which the queue's search reads.
	Labels map[string]string `json:"labels,omitempty"`
	// ResolvedAt is when the sender said the alert resolved while it
	// waited (its recovery of the same firing); zero while it fires.
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
}

// Resolved reports whether the alert resolved while it waited.
func (w Waiting) Resolved() bool { return !w.ResolvedAt.IsZero() }

// WaitingFilter selects what waits for a person. Empty fields select all.
type WaitingFilter struct {
	Severity Severity
	// Rule and Service select the identity's fields: exactly in
	// memory's Awaiting, as case-insensitive substrings in the queue
	// (usecase.App.QueuePage).
	Rule    string
	Service string
	// Search selects, ignoring case, the items whose title, identity,
	// service or labels (key=value) contain it (the queue only).
	Search string
	// State selects firing or resolved items (QueueFiring,
	// QueueResolved); empty selects both (the queue only).
	State string
	// Sort orders the queue: QueueUrgency, QueueOldest (empty) or
	// QueueNewest (the queue only).
	Sort string
	// After is a cursor: the queue's items after the one it names, in
	// Sort's order (the queue only).
	After string
	// Limit caps the answer (0: no cap).
	Limit int
}

// The queue's states and sort orders (WaitingFilter.State and Sort).
const (
	QueueFiring   = "firing"
	QueueResolved = "resolved"
	// QueueUrgency puts attacks first, then what still fires before what
	// resolved, then severity (unknown as critical), then the newest: a
	// new critical alert lands on top of the criticals a person has
	// already seen.
	QueueUrgency = "urgency"
	QueueOldest  = "oldest"
	QueueNewest  = "newest"
)

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
