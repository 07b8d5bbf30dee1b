package audit

import (
	"fmt"
	"sort"

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
)

// Problem is one way a stored audit chain differs from what was sealed.
// AnalysisID and Step are empty when the problem concerns entries that are
// gone.
type Problem struct {
	Sequence   int64
	AnalysisID string
	Step       string
	Kind       string
	Detail     string
}

// String describes the problem for a person, such as "entry 42 (analysis
// b1-000007, step analysis) was edited: stored hash 3fa… does not match its
// content".
func (p Problem) String() string {
	known := p.AnalysisID != "" || p.Step != ""
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
	}
	id := ""
	if known {
		id = fmt.Sprintf(" (analysis %s, step %s)", p.AnalysisID, p.Step)
	}
	return fmt.Sprintf("entry %d%s %s: %s", p.Sequence, id, what, p.Detail)
}

// Verifier checks an audit chain streamed to it in stored order, which
// must be sequence order for an untouched chain. It keeps the last entries
// and the open sequence gaps, not the chain, so its memory does not grow
// with the length of the chain. It is not safe for concurrent use.
type Verifier struct {
	count    int64
	pending  *openrecall.AuditEntry // the entry added last, judged when the next arrives
	expected int64                  // the next sequence in order
	prev     openrecall.AuditEntry  // the last entry taken in order
	early    map[int64]string       // hashes of entries stored before their turn, by sequence
	gaps     []gap                  // sequences skipped so far, in order
	max      *openrecall.AuditEntry // the entry with the highest sequence
	problems []Problem
	finished bool
}

// gap is an inclusive range of sequences not seen yet.
type gap struct{ lo, hi int64 }

// NewVerifier returns a Verifier for a chain that starts at sequence 1 with
// an empty PrevHash.
func NewVerifier() *Verifier { return &Verifier{expected: 1, early: map[int64]string{}} }

// Count returns the number of entries added so far.
func (v *Verifier) Count() int64 { return v.count }

// Add checks the next stored entry: its hash against its content, its
// sequence against its neighbours, and its PrevHash against the Hash of the
// entry before it. An entry is judged when the next one arrives (or at
// Finish), so that a swap of two entries reads as one entry out of order,
// not as a deletion.
func (v *Verifier) Add(e openrecall.AuditEntry) {
	v.count++
	if h := Hash(e); h != e.Hash {
		v.report(e, KindEdited, fmt.Sprintf("stored hash %s does not match its content", short(e.Hash)))
	}
	if v.max == nil || e.Sequence > v.max.Sequence {
		v.max = &e
	}
	if v.pending != nil {
		v.judge(*v.pending, &e)
	}
	v.pending = &e
}

// judge places entry p in the chain, knowing the entry stored after it
// (nil at the end).
func (v *Verifier) judge(p openrecall.AuditEntry, next *openrecall.AuditEntry) {
	switch {
	case p.Sequence < 1:
		v.report(p, KindReordered, fmt.Sprintf("sequence %d is before the start of the chain at 1", p.Sequence))
	case p.Sequence == v.expected:
		v.inOrder(p)
	case p.Sequence > v.expected && next != nil && next.Sequence >= v.expected && next.Sequence < p.Sequence:
		// The chain resumes where it was after p: p came early.
		v.early[p.Sequence] = p.Hash
		v.report(p, KindReordered, fmt.Sprintf("it is stored before entry %d", next.Sequence))
	case p.Sequence > v.expected:
		v.skip(v.expected, p.Sequence-1)
		v.inOrder(p)
	case v.fill(p.Sequence):
		v.report(p, KindReordered, fmt.Sprintf("it is stored after entry %d", v.prev.Sequence))
	default:
		v.report(p, KindReordered, fmt.Sprintf("sequence %d appears again after entry %d", p.Sequence, v.prev.Sequence))
	}
}

// inOrder takes p as the next entry of the chain and checks its link.
func (v *Verifier) inOrder(p openrecall.AuditEntry) {
	want, known := "", p.Sequence == 1
	switch {
	case known:
	case v.prev.Sequence == p.Sequence-1 && v.prev.Hash != "":
		want, known = v.prev.Hash, true
	default:
		want, known = v.early[p.Sequence-1]
	}
	switch {
	case p.Sequence == 1 && p.PrevHash != "":
		v.report(p, KindDeleted, fmt.Sprintf("it is the first entry but its prev hash is %s, not empty: the chain's start is missing", short(p.PrevHash)))
	case known && p.PrevHash != want:
		v.report(p, KindDeleted, fmt.Sprintf("its prev hash %s does not match the hash %s of entry %d: an entry between them was deleted or replaced",
			short(p.PrevHash), short(want), p.Sequence-1))
	}
	v.prev = p
	v.expected = p.Sequence + 1
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

// skip records the sequences lo..hi as missing, except entries that came
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

func (v *Verifier) report(e openrecall.AuditEntry, kind, detail string) {
	v.problems = append(v.problems, Problem{Sequence: e.Sequence, AnalysisID: e.AnalysisID, Step: e.Step, Kind: kind, Detail: detail})
}

// Finish ends the stream and reports every problem found, ordered by
// sequence: edited, deleted and reordered entries, and a head-mismatch when
// the chain's last entry is not the head record's (headSeq, headHash). An
// empty chain matches the head (0, ""). Call Finish once, after the last
// Add.
func (v *Verifier) Finish(headSeq int64, headHash string) []Problem {
	if v.pending != nil && !v.finished {
		v.judge(*v.pending, nil)
	}
	v.finished = true
	out := append([]Problem(nil), v.problems...)
	for _, g := range v.gaps {
		detail := fmt.Sprintf("entry %d is missing from the chain", g.lo)
		if g.hi > g.lo {
			detail = fmt.Sprintf("entries %d to %d are missing from the chain", g.lo, g.hi)
		}
		out = append(out, Problem{Sequence: g.lo, Kind: KindDeleted, Detail: detail})
	}
	switch last := v.max; {
	case last == nil && (headSeq != 0 || headHash != ""):
		out = append(out, Problem{Sequence: headSeq, Kind: KindHeadMismatch,
			Detail: fmt.Sprintf("the head record names entry %d with hash %s, but the chain is empty: every entry was deleted", headSeq, short(headHash))})
	case last == nil:
	case last.Sequence < headSeq:
		out = append(out, Problem{Sequence: headSeq, Kind: KindHeadMismatch,
			Detail: fmt.Sprintf("the head record names entry %d, but the chain ends at entry %d: the tail was deleted", headSeq, last.Sequence)})
	case last.Sequence > headSeq:
		out = append(out, Problem{Sequence: last.Sequence, AnalysisID: last.AnalysisID, Step: last.Step, Kind: KindHeadMismatch,
			Detail: fmt.Sprintf("the chain goes on past the head record's entry %d: entries were added without updating the head", headSeq)})
	case last.Hash != headHash:
		out = append(out, Problem{Sequence: last.Sequence, AnalysisID: last.AnalysisID, Step: last.Step, Kind: KindHeadMismatch,
			Detail: fmt.Sprintf("its hash %s differs from the head record's %s: the last entry was replaced", short(last.Hash), short(headHash))})
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
