package openrecall

import "time"

// How an analysis was closed without a person (Closure.Kind).
const (
	// ClosedBypass: memory vouched for the alert and the guard let it
	// bypass the model (route step memory-bypass).
	ClosedBypass = "bypass"
	// ClosedGrouped: a member of an alert group whose head memory bypassed
	// took the head's decision (route step grouped).
	ClosedGrouped = "grouped"
	// ClosedException: an exception a person approved matched the alert
	// (route step exception).
	ClosedException = "exception"
)

// ClosedKinds are the kinds of Closure, in the order a person reads them.
var ClosedKinds = []string{ClosedBypass, ClosedGrouped, ClosedException}

// Voter is a memory that vouched for an alert closed without a person, as
// it was when it voted: its id, decision, analyst and note.
type Voter struct {
	ID       string   `json:"id"`
	Decision Decision `json:"decision"`
	Analyst  string   `json:"analyst,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// Closure is the record of one analysis that openrecall closed without a
// person (DESIGN §12a, History): how (Kind), when (At, the store's clock
// when the result was stored), the alert at a glance, the memories that
// vouched for it or the exception that matched, and, once a person said
// the closure was wrong, who, when and why.
type Closure struct {
	AnalysisID string    `json:"analysis_id"`
	Batch      string    `json:"batch"`
	At         time.Time `json:"at"`
	// Kind is ClosedBypass, ClosedGrouped or ClosedException.
	Kind     string   `json:"kind"`
	AlertID  string   `json:"alert_id"`
	Identity Identity `json:"identity"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	Decision Decision `json:"decision"`
	// Voters are the memories that vouched: the supporting memories of a
	// bypass, and of a grouped firing the ones the guard, run again on the
	// member, found supporting its head's decision. Empty for an exception.
	Voters []Voter `json:"voters"`
	// ExceptionID is the exception that matched, for ClosedException.
	ExceptionID string `json:"exception_id,omitempty"`
	// GroupID is the alert group of a grouped firing (and of a bypassed
	// head that opened one).
	GroupID string `json:"group_id,omitempty"`
	// Result is the analysis without its audit entries; filled when one
	// closure is read, not in a list.
	Result *Result `json:"result,omitempty"`

	Wrong       bool      `json:"wrong"`
	WrongAt     time.Time `json:"wrong_at,omitzero"`
	WrongBy     string    `json:"wrong_by,omitempty"`
	WrongReason string    `json:"wrong_reason,omitempty"`
}

// ClosureFilter selects closures, newest first. Empty fields select all.
type ClosureFilter struct {
	// Kind selects one kind exactly.
	Kind string
	// Search matches the title, the rule or the service as a substring,
	// ignoring case.
	Search string
	// After is the cursor of the page before (ClosurePage.Next): the page
	// starts after it.
	After string
	// Limit caps the page (0: no cap).
	Limit int
}

// ClosurePage is one page of closures, newest first; Next is the cursor of
// the page after it, empty on the last page.
type ClosurePage struct {
	Closures []Closure `json:"closures"`
	Next     string    `json:"next,omitempty"`
}
