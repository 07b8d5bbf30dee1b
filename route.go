package openrecall

import "time"

// Route step names, in the order they can occur.
const (
	StepIntake       = "intake"
	StepFingerprint  = "fingerprint"
	StepMemoryBypass = "memory-bypass"
	StepAnalysis     = "analysis"
)

// Tier is the model tier of an analysis step.
type Tier string

// Model tiers; TierNone marks deterministic steps.
const (
	TierNone   Tier = ""
	TierCheap  Tier = "cheap"
	TierStrong Tier = "strong"
)

// Step outcomes.
const (
	OutcomeOK             = "ok"              // the step did its job
	OutcomeRejected       = "rejected"        // intake refused the record
	OutcomeRecorded       = "recorded"        // a resolved alert, recorded and not triaged
	OutcomeAccepted       = "accepted"        // a model answer passed the quality gate
	OutcomeGateFailed     = "gate-failed"     // a model answer failed the quality gate
	OutcomeRefused        = "refused"         // the guard refused the model's proposal
	OutcomeModelError     = "model-error"     // the model call failed
	OutcomeBudgetExceeded = "budget-exceeded" // no call was made: it would pass the run budget
)

// Outcomes of live model calls.
const (
	// OutcomeRetried marks one attempt of a live call that failed and was
	// retried; the next step is the next attempt.
	OutcomeRetried = "retried"
	// OutcomeUnavailable marks a call the provider could not answer (outage,
	// exhausted retries, no quota): the alert is escalated to a person
	// without analysis.
	OutcomeUnavailable = "model-unavailable"
)

// BudgetState is the run budget as a step left it. Limit 0 means no budget.
type BudgetState struct {
	Limit     NanoUSD `json:"limit"`
	Spent     NanoUSD `json:"spent"`
	Exhausted bool    `json:"exhausted,omitempty"`
}

// RouteStep is one step an alert took through the pipeline. Every step has
// exactly one audit entry.
type RouteStep struct {
	Step             string   `json:"step"`
	Model            string   `json:"model,omitempty"`
	Tier             Tier     `json:"tier,omitempty"`
	Live             bool     `json:"live"`
	Skipped          bool     `json:"skipped,omitempty"`
	Reason           string   `json:"reason"`
	Outcome          string   `json:"outcome"`
	MemoryHits       int      `json:"memory_hits,omitempty"`
	Proposed         Decision `json:"proposed_decision,omitempty"`
	EscalationReason string   `json:"escalation_reason,omitempty"`
	PromptTokens     int      `json:"prompt_tokens,omitempty"`
	CompletionTokens int      `json:"completion_tokens,omitempty"`
	// UsageAnomaly says why the usage a live provider reported for this
	// call was not believed as sent (more prompt tokens than the prompt can
	// hold, a completion past the call's max_tokens, a negative count, a
	// reported model priced above the call's ceiling); PromptTokens,
	// CompletionTokens and Cost are then the clamped figures. Empty for a
	// usage within bounds.
	UsageAnomaly string        `json:"usage_anomaly,omitempty"`
	Cost         NanoUSD       `json:"cost_nano_usd"`
	Baseline     NanoUSD       `json:"baseline_nano_usd"`
	Latency      time.Duration `json:"latency_ns"`
	Budget       BudgetState   `json:"budget"`
}

// AuditEntry is one persisted, hash-chained record of one route step.
type AuditEntry struct {
	Sequence         int64         `json:"sequence"`
	AnalysisID       string        `json:"analysis_id"`
	Batch            string        `json:"batch"`
	AlertID          string        `json:"alert_id"`
	StepIndex        int           `json:"step_index"`
	Step             string        `json:"step"`
	Model            string        `json:"model,omitempty"`
	Tier             Tier          `json:"tier,omitempty"`
	Reason           string        `json:"reason"`
	Outcome          string        `json:"outcome"`
	MemoryHits       int           `json:"memory_hits"`
	ProposedDecision Decision      `json:"proposed_decision,omitempty"`
	EscalationReason string        `json:"escalation_reason,omitempty"`
	Live             bool          `json:"live"`
	Skipped          bool          `json:"skipped"`
	Cost             NanoUSD       `json:"cost_nano_usd"`
	Baseline         NanoUSD       `json:"baseline_nano_usd"`
	Savings          NanoUSD       `json:"savings_nano_usd"`
	Latency          time.Duration `json:"latency_ns"`
	Time             time.Time     `json:"time"`
	PrevHash         string        `json:"prev_hash"`
	Hash             string        `json:"hash"`
}

// CostPoint is one analysed alert on the cost curve of a batch (a run).
type CostPoint struct {
	Index              int     `json:"index"`
	Batch              string  `json:"batch"`
	AlertID            string  `json:"alert_id"`
	Tier               Tier    `json:"tier,omitempty"`
	Bypassed           bool    `json:"bypassed"`
	Cost               NanoUSD `json:"cost_nano_usd"`
	Baseline           NanoUSD `json:"baseline_nano_usd"`
	CumulativeCost     NanoUSD `json:"cumulative_cost_nano_usd"`
	CumulativeBaseline NanoUSD `json:"cumulative_baseline_nano_usd"`
}

// Savings returns the savings band at this point: cumulative baseline minus
// cumulative cost.
func (p CostPoint) Savings() NanoUSD { return p.CumulativeBaseline - p.CumulativeCost }

// TrailState is what an audit trail's own records say about it, read in
// the same snapshot as its entries: the head of the audit chain and of the
// cost chain, and the keyed boundary (DESIGN §9). memory reads it; audit
// verifies and signs it.
type TrailState struct {
	// HeadSeq and HeadHash name the last audit entry (0, "" when empty).
	HeadSeq  int64
	HeadHash string
	// CostHeadSeq and CostHeadHash name the last chained cost point.
	CostHeadSeq  int64
	CostHeadHash string
	// LegacyThrough is the last audit entry written before the chain was
	// keyed: entries 1..LegacyThrough carry unkeyed hashes.
	LegacyThrough int64
	// LegacyCosts is how many cost points were stored before cost points
	// were chained; they carry no hash.
	LegacyCosts int64
	// KeyID is the ID of the key the trail is keyed with, "" until the
	// first keyed append.
	KeyID string
	// BoundaryMAC signs (LegacyThrough, LegacyCosts) with the key, recorded
	// with KeyID; a checkpoint does not carry it.
	BoundaryMAC string
	// Archive is the latest archive record (the zero TrailArchive when no
	// prefix was ever archived): the chains start after it.
	Archive TrailArchive
	// Sealing is the record of the rows' adoption (the zero RowSealing
	// while rows are not sealed); Adoptions counts the adoption entries
	// left in the audit chain (one, or none once archived).
	Sealing   RowSealing
	Adoptions int64
}

// RowSealing records when a database's served and trusted rows (memories,
// what waits for a person, finished deliveries) were first sealed under
// the audit key (DESIGN §9): when, the audit entry that records it, how
// many rows were sealed then, the key, and the key's MAC over all of it.
// From then on every such row carries a seal, and one without was written
// outside the chain.
type RowSealing struct {
	At       time.Time
	EntrySeq int64
	Rows     int64
	KeyID    string
	MAC      string
}

// IsZero reports whether r records no adoption.
func (r RowSealing) IsZero() bool { return r == RowSealing{} }

// Kinds of sealed rows (SealedRow.Kind): each is bound to the audit chain
// by entries of batch SealBatch whose analysis id is the kind, "-" and the
// row's key.
const (
	RowMemory  = "memory"
	RowWaiting = "waiting"
	RowResult  = "result"
	// SealBatch is the batch of the audit entries that bind rows.
	SealBatch = "seals"
)

// SealedRow is one row of what is served or trusted, as audit verify reads
// it beside the chain: its kind and key, the canonical encoding of the
// columns its readers use (Content, see memory's seal.go) and its stored
// Seal; the latest seal the chain holds for it (Chained, at ChainedSeq;
// empty when no binding entry is left in the chain, as after an archive).
// Missing is set for a row the chain binds (its first binding entry, at
// ChainedSeq and BoundAt, is still in the chain) that the table lacks; Content and
// Seal are then empty. Pruned marks a finished delivery whose documents
// were pruned: its seal is checked, not compared with the chain's.
type SealedRow struct {
	Kind, ID   string
	Content    []byte
	Seal       string
	Chained    string
	ChainedSeq int64
	BoundAt    time.Time
	Missing    bool
	Pruned     bool
}

// TrailArchive records where a prefix of the trail moved to an archive file
// ends (DESIGN §9): the last archived audit entry and chained cost point
// with their hashes, the cut (everything archived was older than Before),
// when it was archived, the file's SHA-256 and the key whose MAC signs all
// of it. The chains left in the database start right after it.
type TrailArchive struct {
	Through         int64
	ThroughHash     string
	CostThrough     int64
	CostThroughHash string
	Before          time.Time
	At              time.Time
	FileSHA256      string
	KeyID           string
	MAC             string
}

// IsZero reports whether a is no archive record at all.
func (a TrailArchive) IsZero() bool { return a == TrailArchive{} }

// Keyed reports whether s describes a trail that needs a key to verify:
// it names a key, holds keyed entries or chained cost points, or records an
// archive (signed with the key).
func (s TrailState) Keyed() bool {
	return s.KeyID != "" || s.HeadSeq > s.LegacyThrough || s.CostHeadSeq > 0 || !s.Archive.IsZero()
}
