package audit

import (
	"crypto/hmac"
	"fmt"
	"sort"
	"strings"

	"github.com/openrecall/openrecall"
)

// Problem kinds a Verifier reports.
const (
	// KindEdited: an entry's content does not match its stored hash.
	KindEdited = "edited"
	// KindDeleted: entries are missing from the chain (a sequence gap, a
	// broken PrevHash link, or a chain that does not start at 1).
	KindDeleted = "deleted"
	// KindReordered: an entry appears out of sequence order, or twice.
	KindReordered = "reordered"
	// KindHeadMismatch: the chain's last entry does not match the head
	// record (the tail was cut, or entries were appended around the head).
	KindHeadMismatch = "head-mismatch"
	// KindCheckpoint: the chain does not extend a checkpoint kept elsewhere
	// (it was cut back, or rewritten up to the checkpoint).
	KindCheckpoint = "checkpoint"
	// KindBoundary: the record of where keyed entries begin was changed.
	KindBoundary = "boundary"
	// KindArchive: the archive record the chains start after does not
	// match its signature (forged or changed), or an archived link is
	// stored again.
	KindArchive = "archive"
)

// Problem is one way a stored audit chain differs from what was sealed.
// AnalysisID and Step are empty when the problem concerns entries that are
// gone.
type Problem struct {
	// Chain is ChainAudit (empty) for audit entries, ChainCost for cost
	// points.
	Chain      string
	Sequence   int64
	AnalysisID string
	Step       string
	// Batch and Index name a cost point; they are empty for audit entries.
	Batch  string
	Index  int
	Kind   string
	Detail string
}

// Chains a Problem can concern.
const (
	// ChainAudit is the chain of audit entries.
	ChainAudit = ""
	// ChainCost is the chain of cost points.
	ChainCost = "cost"
)

// String describes the problem for a person, such as "entry 42 (analysis
// b1-000007, step analysis) was edited: stored hash 3fa… does not match its
// content".
func (p Problem) String() string {
	if p.Chain == ChainRow {
		return p.rowString()
	}
	known := p.AnalysisID != "" || p.Step != "" || p.Batch != ""
	what := p.Kind
	switch p.Kind {
	case KindEdited:
		what = "was edited"
	case KindDeleted:
		what = "was deleted"
		if known {
			what = "follows a deletion"
		}
	case KindReordered:
		what = "is out of order"
	case KindHeadMismatch:
		what = "does not match the head record"
	case KindCheckpoint:
		what = "does not match the checkpoint"
	case KindBoundary:
		what = "breaks the keyed boundary"
	case KindArchive:
		what = "breaks the archive record"
	}
	id := ""
	switch {
	case known && p.Chain == ChainCost:
		id = fmt.Sprintf(" (batch %s, index %d)", p.Batch, p.Index)
	case known:
		id = fmt.Sprintf(" (analysis %s, step %s)", p.AnalysisID, p.Step)
	}
	return fmt.Sprintf("%s %d%s %s: %s", nouns[p.Chain].one, p.Sequence, id, what, p.Detail)
}

// rowString describes a problem of a sealed row, such as "memory 3fa…
// was edited: its columns do not match its seal …".
func (p Problem) rowString() string {
	what := map[string]string{KindEdited: "was edited", KindDeleted: "was deleted", KindRolledBack: "was rolled back",
		KindUnsealed: "is not sealed", KindSealing: "breaks the sealing record"}[p.Kind]
	if p.Kind == KindSealing {
		return "row sealing " + what + ": " + p.Detail
	}
	name := map[string]string{openrecall.RowMemory: "memory", openrecall.RowWaiting: "waiting row of analysis",
		openrecall.RowResult: "result of analysis"}[p.Step]
	if name == "" {
		name = p.Step
	}
	return fmt.Sprintf("%s %s %s: %s", name, p.AnalysisID, what, p.Detail)
}

// noun names the links of a chain in messages.
type noun struct{ one, many string }

var nouns = map[string]noun{ChainAudit: {"entry", "entries"}, ChainCost: {"cost point", "cost points"}}

// link is one stored element of a chain: its place, its links, whether its
// content matches its stored hash, and the labels a Problem names it by.
type link struct {
	seq        int64
	prev, hash string
	edited     bool
	label      Problem // Chain and names filled, Kind and Detail empty
}

// Verifier checks a chain streamed to it in stored order, which must be
// sequence order for an untouched chain. It keeps the last links and the
// open sequence gaps, not the chain, so its memory does not grow with the
// length of the chain. It is not safe for concurrent use.
type Verifier struct {
	chain         string
	key           Key   // zero: every entry is checked as unkeyed SHA-256
	legacyThrough int64 // entries up to this sequence are unkeyed
	start         link  // where the stored chain starts after: seq 0, or an archive's end
	count         int64
	pending       *link            // the link added last, judged when the next arrives
	expected      int64            // the next sequence in order
	prev          link             // the last link taken in order
	early         map[int64]string // hashes of links stored before their turn, by sequence
	gaps          []gap            // sequences skipped so far, in order
	max           *link            // the link with the highest sequence
	seen          map[int64]string // hashes of the sequences a checkpoint names
	expect        []checkpointLink
	problems      []Problem
	finished      bool
}

// gap is an inclusive range of sequences not seen yet.
type gap struct{ lo, hi int64 }

// NewVerifier returns a Verifier for an unkeyed chain of audit entries (every
// entry hashed with Hash) that starts at sequence 1 with an empty PrevHash.
func NewVerifier() *Verifier { return newVerifier(ChainAudit, Key{}, 0) }

// NewKeyedVerifier returns a Verifier for a chain of audit entries whose
// entries up to legacyThrough were written before the chain was keyed (and
// are checked with Hash) and whose later entries are keyed with k (checked
// with HashKeyed).
func NewKeyedVerifier(k Key, legacyThrough int64) *Verifier {
	return newVerifier(ChainAudit, k, legacyThrough)
}

// NewCostVerifier returns a Verifier for the chain of cost points keyed with
// k (see CostHash).
func NewCostVerifier(k Key) *Verifier { return newVerifier(ChainCost, k, 0) }

func newVerifier(chain string, k Key, legacyThrough int64) *Verifier {
	return &Verifier{chain: chain, key: k, legacyThrough: legacyThrough, expected: 1,
		early: map[int64]string{}, seen: map[int64]string{}}
}

// Start tells the Verifier that the links up to seq were archived, the
// last with the given hash, so the stored chain starts at seq+1 and links
// to hash. Call it before the first Add and before Expect, only with an
// archive record whose signature was checked.
func (v *Verifier) Start(seq int64, hash string) {
	if seq <= 0 {
		return
	}
	v.start = link{seq: seq, hash: hash}
	v.prev, v.expected = v.start, seq+1
}

// Count returns the number of entries added so far.
func (v *Verifier) Count() int64 { return v.count }

// Add checks the next stored audit entry: its hash against its content, its
// sequence against its neighbours, and its PrevHash against the Hash of the
// entry before it. An entry is judged when the next one arrives (or at
// Finish), so that a swap of two entries reads as one entry out of order,
// not as a deletion.
func (v *Verifier) Add(e openrecall.AuditEntry) {
	want := ""
	if v.key.IsZero() || e.Sequence <= v.legacyThrough {
		want = Hash(e)
	} else {
		want = HashKeyed(v.key, e)
	}
	v.add(link{seq: e.Sequence, prev: e.PrevHash, hash: e.Hash, edited: !hmac.Equal([]byte(want), []byte(e.Hash)),
		label: Problem{Chain: v.chain, AnalysisID: e.AnalysisID, Step: e.Step}})
}

// AddCost checks the next stored cost point of a cost chain, as Add does for
// audit entries: seq, prevHash and hash are its place in the chain.
func (v *Verifier) AddCost(seq int64, prevHash, hash string, p openrecall.CostPoint) {
	want := CostHash(v.key, seq, prevHash, p)
	v.add(link{seq: seq, prev: prevHash, hash: hash, edited: !hmac.Equal([]byte(want), []byte(hash)),
		label: Problem{Chain: v.chain, Batch: p.Batch, Index: p.Index}})
}

func (v *Verifier) add(l link) {
	v.count++
	if l.edited {
		v.report(l, KindEdited, fmt.Sprintf("stored hash %s does not match its content", short(l.hash)))
	}
	if _, ok := v.seen[l.seq]; ok {
		v.seen[l.seq] = l.hash
	}
	if v.max == nil || l.seq > v.max.seq {
		v.max = &l
	}
	if v.pending != nil {
		v.judge(*v.pending, &l)
	}
	v.pending = &l
}

// judge places link p in the chain, knowing the link stored after it (nil
// at the end).
func (v *Verifier) judge(p link, next *link) {
	n := nouns[v.chain]
	switch {
	case p.seq < 1:
		v.report(p, KindReordered, fmt.Sprintf("sequence %d is before the start of the chain at 1", p.seq))
	case p.seq <= v.start.seq:
		v.report(p, KindArchive, fmt.Sprintf("it is stored again, though the archive record says the chain up to %s %d was archived", n.one, v.start.seq))
	case p.seq == v.expected:
		v.inOrder(p)
	case p.seq > v.expected && next != nil && next.seq >= v.expected && next.seq < p.seq:
		// The chain resumes where it was after p: p came early.
		v.early[p.seq] = p.hash
		v.report(p, KindReordered, fmt.Sprintf("it is stored before %s %d", n.one, next.seq))
	case p.seq > v.expected:
		v.skip(v.expected, p.seq-1)
		v.inOrder(p)
	case v.fill(p.seq):
		v.report(p, KindReordered, fmt.Sprintf("it is stored after %s %d", n.one, v.prev.seq))
	default:
		v.report(p, KindReordered, fmt.Sprintf("sequence %d appears again after %s %d", p.seq, n.one, v.prev.seq))
	}
}

// inOrder takes p as the next link of the chain and checks its link.
func (v *Verifier) inOrder(p link) {
	n := nouns[v.chain]
	want, known := "", p.seq == 1
	switch {
	case known:
	case v.prev.seq == p.seq-1 && v.prev.hash != "":
		want, known = v.prev.hash, true
	default:
		want, known = v.early[p.seq-1]
	}
	switch {
	case p.seq == 1 && p.prev != "":
		v.report(p, KindDeleted, fmt.Sprintf("it is the first %s but its prev hash is %s, not empty: the chain's start is missing", n.one, short(p.prev)))
	case known && p.prev != want:
		v.report(p, KindDeleted, fmt.Sprintf("its prev hash %s does not match the hash %s of %s %d: %s between them was deleted or replaced",
			short(p.prev), short(want), n.one, p.seq-1, article(n.one)))
	}
	v.prev = p
	v.expected = p.seq + 1
	for {
		if _, ok := v.early[v.expected]; !ok {
			break
		}
		v.expected++
	}
	for seq := range v.early {
		if seq < v.expected-1 {
			delete(v.early, seq)
		}
	}
}

// article puts "an" or "a" before a noun.
func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// skip records the sequences lo..hi as missing, except links that came
// early.
func (v *Verifier) skip(lo, hi int64) {
	var early []int64
	for seq := range v.early {
		if seq >= lo && seq <= hi {
			early = append(early, seq)
		}
	}
	sort.Slice(early, func(i, j int) bool { return early[i] < early[j] })
	for _, seq := range early {
		if seq > lo {
			v.gaps = append(v.gaps, gap{lo, seq - 1})
		}
		lo = seq + 1
	}
	if lo <= hi {
		v.gaps = append(v.gaps, gap{lo, hi})
	}
}

// fill removes seq from the open gaps and reports whether it was in one.
func (v *Verifier) fill(seq int64) bool {
	for i, g := range v.gaps {
		if seq < g.lo || seq > g.hi {
			continue
		}
		var keep []gap
		if g.lo < seq {
			keep = append(keep, gap{g.lo, seq - 1})
		}
		if seq < g.hi {
			keep = append(keep, gap{seq + 1, g.hi})
		}
		v.gaps = append(v.gaps[:i], append(keep, v.gaps[i+1:]...)...)
		return true
	}
	return false
}

func (v *Verifier) report(l link, kind, detail string) {
	p := l.label
	p.Sequence, p.Kind, p.Detail = l.seq, kind, detail
	v.problems = append(v.problems, p)
}

// Expect asks Finish to check that the chain holds the link seq with the
// given hash, as a checkpoint recorded it (see Checkpoint): a chain cut
// before seq, or whose link seq was re-hashed, is reported. Call Expect
// before the first Add; seq 0 (an empty chain) is always held.
func (v *Verifier) Expect(seq int64, hash string) {
	if seq > 0 {
		v.seen[seq] = ""
		v.expect = append(v.expect, checkpointLink{seq, hash})
	}
}

type checkpointLink struct {
	seq  int64
	hash string
}

// Finish ends the stream and reports every problem found, ordered by
// sequence: edited, deleted and reordered links, a head-mismatch when the
// chain's last link is not the head record's (headSeq, headHash), and a
// checkpoint problem for each Expect the chain does not satisfy. An empty
// chain matches the head (0, ""). Call Finish once, after the last Add.
func (v *Verifier) Finish(headSeq int64, headHash string) []Problem {
	if v.pending != nil && !v.finished {
		v.judge(*v.pending, nil)
	}
	v.finished = true
	n := nouns[v.chain]
	out := append([]Problem(nil), v.problems...)
	for _, g := range v.gaps {
		detail := fmt.Sprintf("%s %d is missing from the chain", n.one, g.lo)
		if g.hi > g.lo {
			detail = fmt.Sprintf("%s %d to %d are missing from the chain", n.many, g.lo, g.hi)
		}
		out = append(out, Problem{Chain: v.chain, Sequence: g.lo, Kind: KindDeleted, Detail: detail})
	}
	switch last := v.max; {
	case last == nil && (headSeq != v.start.seq || headHash != v.start.hash):
		out = append(out, Problem{Chain: v.chain, Sequence: headSeq, Kind: KindHeadMismatch,
			Detail: fmt.Sprintf("the head record names %s %d with hash %s, but the chain is empty: every %s was deleted", n.one, headSeq, short(headHash), n.one)})
	case last == nil:
	case last.seq < headSeq:
		out = append(out, Problem{Chain: v.chain, Sequence: headSeq, Kind: KindHeadMismatch,
			Detail: fmt.Sprintf("the head record names %s %d, but the chain ends at %s %d: the tail was deleted", n.one, headSeq, n.one, last.seq)})
	case last.seq > headSeq:
		p := last.label
		p.Sequence, p.Kind = last.seq, KindHeadMismatch
		p.Detail = fmt.Sprintf("the chain goes on past the head record's %s %d: %s were added without updating the head", n.one, headSeq, n.many)
		out = append(out, p)
	case last.hash != headHash:
		p := last.label
		p.Sequence, p.Kind = last.seq, KindHeadMismatch
		p.Detail = fmt.Sprintf("its hash %s differs from the head record's %s: the last %s was replaced", short(last.hash), short(headHash), n.one)
		out = append(out, p)
	}
	for _, c := range v.expect {
		got := v.seen[c.seq]
		switch {
		case c.seq < v.start.seq:
			// Archived: `audit verify --archive` checks the archive file.
		case c.seq == v.start.seq && !hmac.Equal([]byte(v.start.hash), []byte(c.hash)):
			out = append(out, Problem{Chain: v.chain, Sequence: c.seq, Kind: KindCheckpoint,
				Detail: fmt.Sprintf("the archive record ends at hash %s, the checkpoint's is %s: the chain up to it was rewritten", short(v.start.hash), short(c.hash))})
		case c.seq == v.start.seq:
		case got == "":
			out = append(out, Problem{Chain: v.chain, Sequence: c.seq, Kind: KindCheckpoint,
				Detail: fmt.Sprintf("the checkpoint names %s %d, which the chain no longer holds: it was cut back (truncated, or the head rolled back)", n.one, c.seq)})
		case !hmac.Equal([]byte(got), []byte(c.hash)):
			out = append(out, Problem{Chain: v.chain, Sequence: c.seq, Kind: KindCheckpoint,
				Detail: fmt.Sprintf("its hash %s differs from the checkpoint's %s: the chain up to it was rewritten", short(got), short(c.hash))})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Sequence < out[j].Sequence })
	return out
}

// short abbreviates a hash for display.
func short(h string) string {
	switch {
	case h == "":
		return "(empty)"
	case len(h) > 12:
		return h[:12] + "…"
	}
	return h
}
