package usecase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// Verified is the outcome of verifying the audit trail, as `audit verify
// -o json` prints it and GET /api/v1/audit/verify answers it.
type Verified struct {
	Intact     bool  `json:"intact"`
	Entries    int64 `json:"entries"`
	CostPoints int64 `json:"cost_points"`
	// Rows counts the sealed rows checked (memories, what waits for a
	// person, finished deliveries), 0 while rows are not sealed.
	Rows             int64 `json:"rows,omitempty"`
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
		Intact: len(r.Problems) == 0, Entries: r.Entries, CostPoints: r.Costs, Rows: r.Rows, LegacyCostPoints: r.LegacyCosts,
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
	if a := s.Archive; !a.IsZero() {
		fmt.Fprintf(&b, "; archived before them: entries up to %d, cost points up to %d (record signed, archived %s)",
			a.Through, a.CostThrough, a.At.UTC().Format(time.RFC3339))
	}
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

// TrailReader receives the audit trail read in one snapshot: its state
// first, then every audit entry, then every cost point (memory.TrailReader
// converts to it). An error a callback returns stops the reading.
type TrailReader struct {
	State func(openrecall.TrailState) error
	Entry func(openrecall.AuditEntry) error
	Cost  func(seq int64, prevHash, hash string, p openrecall.CostPoint) error
	// Row receives each sealed row after the cost points (see
	// openrecall.SealedRow); nil skips them.
	Row func(openrecall.SealedRow) error
}

// AuditKeys finds the key the audit trail is verified, and a checkpoint
// signed, with. The command line's reads $OPENRECALL_AUDIT_KEY or the key
// file.
type AuditKeys interface {
	// Key returns the key for a trail in state s, the zero Key when there
	// is none. create asks for a key to be made when there is none and the
	// trail is not keyed yet (audit head signs with it).
	Key(s openrecall.TrailState, create bool) (audit.Key, error)
	// Explain rewords the error of a missing key or of a key other than
	// the trail's (audit.ErrNoKey, audit.ErrWrongKey) to say where the key
	// was looked for.
	Explain(err error) error
}

// VerifyTrail verifies the whole trail in one snapshot with the key at
// hand, against cp when it is not nil. It needs ReadTrail and Keys.
func (a *App) VerifyTrail(ctx context.Context, cp *audit.Checkpoint) (audit.Report, error) {
	rep, _, err := a.verifyTrail(ctx, cp, false)
	return rep, err
}

// verifyTrail verifies the trail and returns the key it used; create
// makes a key when there is none and the trail needs no particular one.
func (a *App) verifyTrail(ctx context.Context, cp *audit.Checkpoint, create bool) (audit.Report, audit.Key, error) {
	if a.ReadTrail == nil || a.Keys == nil {
		return audit.Report{}, audit.Key{}, errors.New("usecase: no audit trail to verify")
	}
	var (
		k  audit.Key
		tv *audit.TrailVerifier
	)
	err := a.ReadTrail(ctx, TrailReader{
		State: func(s openrecall.TrailState) error {
			var err error
			if k, err = a.Keys.Key(s, create); err != nil {
				return err
			}
			tv, err = audit.NewTrailVerifier(k, s, cp)
			if errors.Is(err, audit.ErrNoKey) || errors.Is(err, audit.ErrWrongKey) {
				return a.Keys.Explain(err)
			}
			return err
		},
		Entry: func(e openrecall.AuditEntry) error { tv.Entry(e); return nil },
		Cost: func(seq int64, prev, hash string, p openrecall.CostPoint) error {
			tv.Cost(seq, prev, hash, p)
			return nil
		},
		Row: func(r openrecall.SealedRow) error { tv.Row(r); return nil },
	})
	if err != nil {
		return audit.Report{}, k, err
	}
	return tv.Finish(), k, nil
}

// VerifyAudit verifies the trail against checkpoint, when it is not empty
// (a value `audit head` printed, never a file name: a request does not
// read the server's files), and answers as `audit verify -o json` prints.
// A checkpoint that is malformed or not signed with the trail's key is an
// error wrapping openrecall.ErrInvalid.
func (a *App) VerifyAudit(ctx context.Context, checkpoint string) (Verified, error) {
	var cp *audit.Checkpoint
	if checkpoint != "" {
		c, err := audit.ParseCheckpoint(checkpoint)
		if err != nil {
			return Verified{}, fmt.Errorf("checkpoint: %w (%w)", err, openrecall.ErrInvalid)
		}
		cp = &c
	}
	rep, err := a.VerifyTrail(ctx, cp)
	if cp != nil && (errors.Is(err, audit.ErrBadCheckpoint) || errors.Is(err, audit.ErrWrongKey)) {
		return Verified{}, fmt.Errorf("checkpoint: %w (%w)", err, openrecall.ErrInvalid)
	}
	if err != nil {
		return Verified{}, err
	}
	return NewVerified(rep), nil
}

// Links is the outcome of checking one analysis's audit entries where
// they sit in the chain (VerifyAnalysisLinks).
type Links struct {
	// Entries counts the analysis's audit entries checked.
	Entries int  `json:"entries"`
	Intact  bool `json:"intact"`
	// Problems is empty when Intact, never null.
	Problems []Problem `json:"problems"`
}

// VerifyAnalysisLinks checks the audit entries of one analysis in place:
// each against its content and against the hash of the entry before it
// (audit.VerifyLinks), reading those entries and the trail's records, not
// the whole trail. It is what a page about one analysis can afford on
// every view; VerifyAudit, which `audit verify` runs, checks every link,
// the cost chain and the sealed rows. It needs AnalysisLinks and Keys.
func (a *App) VerifyAnalysisLinks(ctx context.Context, analysisID string) (Links, error) {
	if a.AnalysisLinks == nil || a.Keys == nil {
		return Links{}, errors.New("usecase: no audit trail to verify")
	}
	st, entries, err := a.AnalysisLinks(ctx, analysisID)
	if err != nil {
		return Links{}, err
	}
	k, err := a.Keys.Key(st, false)
	if err != nil {
		return Links{}, err
	}
	ps, err := audit.VerifyLinks(k, st, entries, analysisID)
	if errors.Is(err, audit.ErrNoKey) || errors.Is(err, audit.ErrWrongKey) {
		return Links{}, a.Keys.Explain(err)
	}
	if err != nil {
		return Links{}, err
	}
	l := Links{Intact: len(ps) == 0, Problems: []Problem{}}
	for _, e := range entries {
		if e.AnalysisID == analysisID {
			l.Entries++
		}
	}
	for _, p := range ps {
		l.Problems = append(l.Problems, Problem{Chain: "audit", Sequence: p.Sequence, AnalysisID: p.AnalysisID, Step: p.Step,
			Kind: p.Kind, Problem: p.String()})
	}
	return l, nil
}

// Head is the outcome of `audit head`: the verification and, for an intact
// trail, the signed checkpoint of its head.
type Head struct {
	Report audit.Report
	// Checkpoint is nil when the trail has problems.
	Checkpoint *audit.Checkpoint
}

// AuditHead verifies the trail and signs a checkpoint of its head with the
// trail's key, creating a key when there is none and the trail is not
// keyed yet.
func (a *App) AuditHead(ctx context.Context) (Head, error) {
	rep, k, err := a.verifyTrail(ctx, nil, true)
	if err != nil {
		return Head{}, err
	}
	h := Head{Report: rep}
	if len(rep.Problems) == 0 {
		cp := audit.NewCheckpoint(k, rep.State)
		h.Checkpoint = &cp
	}
	return h, nil
}
