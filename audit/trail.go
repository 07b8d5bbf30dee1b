package audit

import (
	"crypto/hmac"
	"fmt"
	"sort"

	"github.com/openrecall/openrecall"
)

// Report is the outcome of verifying a whole trail.
type Report struct {
	State State
	// Entries and Costs count the audit entries and chained cost points
	// read; LegacyCosts the cost points stored before cost points were
	// chained (not covered by a chain).
	Entries, Costs, LegacyCosts int64
	// Rows counts the sealed rows checked (memories, what waits for a
	// person, finished deliveries) and those the chain binds but the
	// tables lack.
	Rows int64
	// Checkpoint is true when the trail was checked against a checkpoint.
	Checkpoint bool
	// Problems lists every way the trail differs from what was sealed,
	// audit entries first, then cost points, each by sequence.
	Problems []Problem
}

// TrailVerifier verifies a whole trail read in one snapshot: the audit
// chain (unkeyed up to the keyed boundary, keyed after it), the cost chain,
// the head records, the boundary record and, optionally, a checkpoint. It
// is not safe for concurrent use.
type TrailVerifier struct {
	state   State
	entries *Verifier
	costs   *Verifier
	cp      *Checkpoint
	legacy  int64
	key     Key
	// forged is true when the state names an archive record whose
	// signature does not match: the chains are then checked from 1.
	forged bool
	rows   rowCheck
}

// NewTrailVerifier prepares to verify a trail whose records read s, with
// key k (the zero Key when none was found) and an optional checkpoint cp.
// It returns an error wrapping ErrNoKey when the trail (or cp) needs a key
// and k is zero, ErrWrongKey when k is not the trail's (or cp's) key, and
// ErrBadCheckpoint when cp's signature does not match: none of these is a
// finding about the trail.
func NewTrailVerifier(k Key, s State, cp *Checkpoint) (*TrailVerifier, error) {
	if err := keyFits(k, s, cp); err != nil {
		return nil, err
	}
	t := &TrailVerifier{state: s, cp: cp, key: k, entries: NewKeyedVerifier(k, s.LegacyThrough), costs: NewCostVerifier(k),
		rows: rowCheck{sealer: NewSealer(k), on: !s.Sealing.IsZero() || s.Adoptions > 0}}
	if a := s.Archive; !a.IsZero() {
		if t.forged = !ArchiveSigned(k, a); !t.forged {
			t.entries.Start(a.Through, a.ThroughHash)
			t.costs.Start(a.CostThrough, a.CostThroughHash)
		}
	}
	if cp != nil {
		t.entries.Expect(cp.HeadSeq, cp.HeadHash)
		t.costs.Expect(cp.CostHeadSeq, cp.CostHeadHash)
	}
	return t, nil
}

// Entry checks the next audit entry, in stored order.
func (t *TrailVerifier) Entry(e openrecall.AuditEntry) { t.entries.Add(e) }

// Cost checks the next cost point, in stored order: chained points first
// by sequence; a point with sequence 0 was stored before the chain.
func (t *TrailVerifier) Cost(seq int64, prevHash, hash string, p openrecall.CostPoint) {
	if seq == 0 && prevHash == "" && hash == "" {
		t.legacy++
		return
	}
	t.costs.AddCost(seq, prevHash, hash, p)
}

// Finish ends the stream and reports.
func (t *TrailVerifier) Finish() Report {
	s := t.state
	r := Report{State: s, Entries: t.entries.Count(), Costs: t.costs.Count(), LegacyCosts: t.legacy, Checkpoint: t.cp != nil, Rows: t.rows.count}
	r.Problems = append(r.Problems, t.entries.Finish(s.HeadSeq, s.HeadHash)...)
	var boundary []Problem
	switch {
	case s.KeyID == "" && s.Keyed():
		boundary = append(boundary, Problem{Sequence: s.LegacyThrough + 1, Kind: KindBoundary,
			Detail: "keyed entries or cost points exist, but the boundary record names no key: it was cleared"})
	case s.KeyID != "" && !hmac.Equal([]byte(s.BoundaryMAC), []byte(BoundaryMAC(t.key, s.LegacyThrough, s.LegacyCosts))):
		boundary = append(boundary, Problem{Sequence: s.LegacyThrough, Kind: KindBoundary,
			Detail: fmt.Sprintf("the boundary record (keyed after entry %d and %d cost points) does not match its signature: the boundary was moved",
				s.LegacyThrough, s.LegacyCosts)})
	}
	if t.legacy != s.LegacyCosts {
		boundary = append(boundary, Problem{Chain: ChainCost, Kind: KindBoundary,
			Detail: fmt.Sprintf("%d cost points are outside the chain, the boundary record says %d were stored before it", t.legacy, s.LegacyCosts)})
	}
	if cp := t.cp; cp != nil && (cp.LegacyThrough != s.LegacyThrough || cp.LegacyCosts != s.LegacyCosts) {
		boundary = append(boundary, Problem{Sequence: s.LegacyThrough, Kind: KindBoundary,
			Detail: fmt.Sprintf("the keyed boundary is after entry %d and %d cost points, the checkpoint says after entry %d and %d cost points: the boundary was moved",
				s.LegacyThrough, s.LegacyCosts, cp.LegacyThrough, cp.LegacyCosts)})
	}
	if t.forged {
		boundary = append(boundary, Problem{Sequence: s.Archive.Through, Kind: KindArchive,
			Detail: fmt.Sprintf("the latest archive record (entries up to %d and cost points up to %d archived, key %s) does not match its signature: it was forged or changed, so the chains are checked from their first link",
				s.Archive.Through, s.Archive.CostThrough, s.Archive.KeyID)})
	}
	r.Problems = append(r.Problems, boundary...)
	sort.SliceStable(r.Problems, func(i, j int) bool {
		if r.Problems[i].Chain != r.Problems[j].Chain {
			return r.Problems[i].Chain == ChainAudit
		}
		return r.Problems[i].Sequence < r.Problems[j].Sequence
	})
	r.Problems = append(r.Problems, t.costs.Finish(s.CostHeadSeq, s.CostHeadHash)...)
	r.Problems = append(r.Problems, t.finishRows()...)
	return r
}

// keyFits says whether k can verify a trail in state s (and check cp when
// it is not nil): an error wrapping ErrNoKey, ErrWrongKey or
// ErrBadCheckpoint when it cannot.
func keyFits(k Key, s State, cp *Checkpoint) error {
	if k.IsZero() && (s.Keyed() || cp != nil) {
		what := "the trail is keyed"
		if s.KeyID != "" {
			what += " with key " + s.KeyID
		}
		if !s.Keyed() {
			what = "checking a checkpoint needs the key that signed it"
		}
		return fmt.Errorf("%s, but no key was found: %w", what, ErrNoKey)
	}
	if !k.IsZero() && s.KeyID != "" && s.KeyID != k.ID() {
		return fmt.Errorf("the trail is keyed with key %s, the key at hand is %s: %w", s.KeyID, k.ID(), ErrWrongKey)
	}
	if cp != nil {
		if err := cp.Check(k); err != nil {
			return err
		}
	}
	return nil
}
