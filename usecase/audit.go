package usecase

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall/audit"
)

// Verified is the outcome of verifying the audit trail, as `audit verify
// -o json` prints it and GET /api/v1/audit/verify answers it.
type Verified struct {
	Intact           bool  `json:"intact"`
	Entries          int64 `json:"entries"`
	CostPoints       int64 `json:"cost_points"`
	LegacyCostPoints int64 `json:"legacy_cost_points"`
	HeadSequence     int64 `json:"head_sequence"`
	// HeadHash is the hash of the head audit entry.
	HeadHash string `json:"head_hash"`
	// UnkeyedThrough is the last entry written before the trail was keyed.
	UnkeyedThrough int64  `json:"unkeyed_through"`
	KeyID          string `json:"key_id,omitempty"`
	// ExtendsCheckpoint is true when the trail was checked against a
	// checkpoint and extends it.
	ExtendsCheckpoint bool `json:"extends_checkpoint"`
	// Problems is empty for an intact trail, never null.
	Problems []Problem `json:"problems"`
}

// Problem is one problem of a tampered trail.
type Problem struct {
	// Chain is "audit" or "cost".
	Chain      string `json:"chain"`
	Sequence   int64  `json:"sequence"`
	AnalysisID string `json:"analysis_id,omitempty"`
	Step       string `json:"step,omitempty"`
	Batch      string `json:"batch,omitempty"`
	Index      int    `json:"index,omitempty"`
	Kind       string `json:"kind"`
	// Problem describes it in a sentence.
	Problem string `json:"problem"`
}

// NewVerified returns the verification report r as Verified.
func NewVerified(r audit.Report) Verified {
	d := Verified{
		Intact: len(r.Problems) == 0, Entries: r.Entries, CostPoints: r.Costs, LegacyCostPoints: r.LegacyCosts,
		HeadSequence: r.State.HeadSeq, HeadHash: r.State.HeadHash, UnkeyedThrough: r.State.LegacyThrough,
		KeyID: r.State.KeyID, ExtendsCheckpoint: r.Checkpoint && len(r.Problems) == 0,
		Problems: []Problem{},
	}
	for _, p := range r.Problems {
		chain := p.Chain
		if chain == "" {
			chain = "audit"
		}
		d.Problems = append(d.Problems, Problem{Chain: chain, Sequence: p.Sequence, AnalysisID: p.AnalysisID,
			Step: p.Step, Batch: p.Batch, Index: p.Index, Kind: p.Kind, Problem: p.String()})
	}
	return d
}

// DescribeTrail sums up an intact trail on one line.
func DescribeTrail(r audit.Report) string {
	s := r.State
	var b strings.Builder
	head := s.HeadHash
	if head == "" {
		head = "-"
	}
	fmt.Fprintf(&b, "%d entries, head %d %s", r.Entries, s.HeadSeq, head)
	if s.LegacyThrough > 0 {
		fmt.Fprintf(&b, " (entries 1-%d written before keying, unkeyed SHA-256)", s.LegacyThrough)
	}
	fmt.Fprintf(&b, "; %d cost points chained", r.Costs)
	if r.LegacyCosts > 0 {
		fmt.Fprintf(&b, " (%d stored before chaining, not covered)", r.LegacyCosts)
	}
	if s.KeyID != "" {
		fmt.Fprintf(&b, "; key %s", s.KeyID)
	}
	if r.Checkpoint {
		b.WriteString("; extends the checkpoint")
	}
	return b.String()
}
