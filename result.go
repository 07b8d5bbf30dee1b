package openrecall

import (
	"fmt"
	"time"
)

// Result outcomes.
const (
	ResultTriaged  = "triaged"  // the alert went through triage
	ResultRejected = "rejected" // intake refused the record
	ResultResolved = "resolved" // a resolved or acknowledged alert, or a sender's notice: recorded, not triaged
)

// Mode is the pair of backends a run used. It shows in every output and never
// lies: a deterministic run reports Model "deterministic" and no live call.
type Mode struct {
	Memory string `json:"memory"`
	Model  string `json:"model"`
}

// String returns the mode as "memory=sqlite model=deterministic".
func (m Mode) String() string { return "memory=" + m.Memory + " model=" + m.Model }

// Result is everything openrecall concluded about one input record.
type Result struct {
	Position   Position `json:"position"`
	Outcome    string   `json:"outcome"`
	AnalysisID string   `json:"analysis_id"`
	Batch      string   `json:"batch"`
	Mode       Mode     `json:"mode"`
	// Error is the reason intake rejected the record, for ResultRejected.
	Error       string      `json:"error,omitempty"`
	Alert       Alert       `json:"alert"`
	Fingerprint Fingerprint `json:"fingerprint"`
	// FingerprintID is Fingerprint.ID(), kept for display.
	FingerprintID string `json:"fingerprint_id,omitempty"`
	// Identity says which alert it is: the rule that fired and its service
	// (DESIGN §4); zero when the alert has none.
	Identity Identity     `json:"identity"`
	Matches  []Match      `json:"matches,omitempty"`
	Triage   TriageResult `json:"triage"`
	Guard    GuardVerdict `json:"guard"`
	// Decision is the final decision: the bypassed memory decision, the
	// accepted model decision, or escalated.
	Decision Decision `json:"decision,omitempty"`
	Bypassed bool     `json:"bypassed"`
	// EscalatedWithoutAnalysis is true when no model answered for a triaged
	// alert (the run budget was spent, or the model was unavailable): it
	// was escalated to a person unanalysed, and it saves nothing.
	EscalatedWithoutAnalysis bool          `json:"escalated_without_analysis"`
	Analysis                 *Analysis     `json:"analysis,omitempty"`
	Steps                    []RouteStep   `json:"steps"`
	Audit                    []AuditEntry  `json:"audit"`
	Cost                     NanoUSD       `json:"cost_nano_usd"`
	Baseline                 NanoUSD       `json:"baseline_nano_usd"`
	Latency                  time.Duration `json:"latency_ns"`
}

// Equivalent reports whether two results mean the same thing: equal
// positions, outcomes, alert ids, rejection reasons, fingerprints, identities, triage
// proposals, guard verdicts, matches (memory, score, related), decisions,
// analyses, route steps, audit entries and costs, exactly. It ignores
// latencies, timestamps, analysis ids, batch names, audit sequence numbers
// and hashes, which differ between runs by design. It returns nil when they
// are equivalent, or an error naming the first difference. It is the
// product's equivalence predicate: a concurrent run must be Equivalent to the
// sequential one, result by result.
func Equivalent(a, b Result) error {
	diff := func(what string, x, y any) error {
		return fmt.Errorf("%s: %s differs: %v != %v", a.Position, what, x, y)
	}
	switch {
	case a.Position != b.Position:
		return diff("position", a.Position, b.Position)
	case a.Outcome != b.Outcome:
		return diff("outcome", a.Outcome, b.Outcome)
	case a.Alert.ID != b.Alert.ID:
		return diff("alert id", a.Alert.ID, b.Alert.ID)
	case a.Error != b.Error:
		return diff("rejection reason", a.Error, b.Error)
	case a.Mode != b.Mode:
		return diff("mode", a.Mode, b.Mode)
	case a.Fingerprint != b.Fingerprint:
		return diff("fingerprint", a.Fingerprint, b.Fingerprint)
	case a.Identity != b.Identity:
		return diff("identity", a.Identity, b.Identity)
	case a.Decision != b.Decision:
		return diff("decision", a.Decision, b.Decision)
	case a.Bypassed != b.Bypassed:
		return diff("bypassed", a.Bypassed, b.Bypassed)
	case a.EscalatedWithoutAnalysis != b.EscalatedWithoutAnalysis:
		return diff("escalated without analysis", a.EscalatedWithoutAnalysis, b.EscalatedWithoutAnalysis)
	case a.Cost != b.Cost:
		return diff("cost", a.Cost, b.Cost)
	case a.Baseline != b.Baseline:
		return diff("baseline", a.Baseline, b.Baseline)
	case a.Guard != b.Guard:
		return diff("guard verdict", a.Guard, b.Guard)
	}
	if err := equalTriage(a.Triage, b.Triage); err != nil {
		return fmt.Errorf("%s: %w", a.Position, err)
	}
	if len(a.Matches) != len(b.Matches) {
		return diff("match count", len(a.Matches), len(b.Matches))
	}
	for i := range a.Matches {
		x, y := a.Matches[i], b.Matches[i]
		if x.Incident.ID != y.Incident.ID || x.Score != y.Score || x.Related != y.Related {
			return diff(fmt.Sprintf("match %d", i), fmt.Sprintf("%s score %v related %t", x.Incident.ID, x.Score, x.Related),
				fmt.Sprintf("%s score %v related %t", y.Incident.ID, y.Score, y.Related))
		}
	}
	if (a.Analysis == nil) != (b.Analysis == nil) {
		return diff("analysis presence", a.Analysis != nil, b.Analysis != nil)
	}
	if a.Analysis != nil && fmt.Sprintf("%#v", *a.Analysis) != fmt.Sprintf("%#v", *b.Analysis) {
		return diff("analysis", *a.Analysis, *b.Analysis)
	}
	if len(a.Steps) != len(b.Steps) {
		return diff("step count", len(a.Steps), len(b.Steps))
	}
	for i := range a.Steps {
		x, y := a.Steps[i], b.Steps[i]
		x.Latency, y.Latency = 0, 0
		if x != y {
			return diff(fmt.Sprintf("step %d", i), x, y)
		}
	}
	if len(a.Audit) != len(b.Audit) {
		return diff("audit entry count", len(a.Audit), len(b.Audit))
	}
	for i := range a.Audit {
		x, y := normalizeAudit(a.Audit[i]), normalizeAudit(b.Audit[i])
		if x != y {
			return diff(fmt.Sprintf("audit entry %d", i), x, y)
		}
	}
	return nil
}

func equalTriage(a, b TriageResult) error {
	if a.Decision != b.Decision || a.Confidence != b.Confidence || a.ConsistentCount != b.ConsistentCount ||
		a.StrongCount != b.StrongCount || a.Consistency != b.Consistency || a.BestScore != b.BestScore ||
		a.RequiresHumanApproval != b.RequiresHumanApproval || a.EscalationReason != b.EscalationReason ||
		a.AlertSeverity != b.AlertSeverity || a.SupportSeverity != b.SupportSeverity ||
		fmt.Sprint(a.Supporting) != fmt.Sprint(b.Supporting) {
		return fmt.Errorf("triage differs: %+v != %+v", a, b)
	}
	return nil
}

func normalizeAudit(e AuditEntry) AuditEntry {
	e.Sequence, e.AnalysisID, e.Batch, e.Latency, e.Time, e.PrevHash, e.Hash = 0, "", "", 0, time.Time{}, "", ""
	return e
}

// EquivalentRuns compares two runs result by result with Equivalent.
func EquivalentRuns(a, b []Result) error {
	if len(a) != len(b) {
		return fmt.Errorf("result count differs: %d != %d", len(a), len(b))
	}
	for i := range a {
		if err := Equivalent(a[i], b[i]); err != nil {
			return fmt.Errorf("result %d: %w", i, err)
		}
	}
	return nil
}
