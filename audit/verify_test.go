package audit

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// chain seals n entries of several analyses into a fresh chain.
func chain(n int) []openrecall.AuditEntry {
	steps := []string{openrecall.StepIntake, openrecall.StepFingerprint, openrecall.StepAnalysis}
	var entries []openrecall.AuditEntry
	for i := 0; len(entries) < n; i++ {
		r := openrecall.Result{AnalysisID: fmt.Sprintf("b1-%06d", i+1), Batch: "b1", Alert: openrecall.Alert{ID: fmt.Sprintf("alert-%d", i)}}
		for _, s := range steps {
			r.Steps = append(r.Steps, openrecall.RouteStep{Step: s, Reason: "because", Outcome: openrecall.OutcomeOK, Cost: 10, Baseline: 30})
		}
		entries = append(entries, Entries(r, now.Add(time.Duration(i)*time.Second))...)
	}
	return Seal("", 1, entries[:n])
}

func verify(entries []openrecall.AuditEntry, headSeq int64, headHash string) []Problem {
	v := NewVerifier()
	for _, e := range entries {
		v.Add(e)
	}
	return v.Finish(headSeq, headHash)
}

// head is the head record of an untouched chain.
func head(c []openrecall.AuditEntry) (int64, string) {
	if len(c) == 0 {
		return 0, ""
	}
	return c[len(c)-1].Sequence, c[len(c)-1].Hash
}

func TestVerifyClean(t *testing.T) {
	for _, n := range []int{0, 1, 2, 9, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := chain(n)
			seq, h := head(c)
			if got := verify(c, seq, h); len(got) != 0 {
				t.Errorf("clean chain of %d: problems %v", n, got)
			}
		})
	}
}

func TestVerifyCount(t *testing.T) {
	v := NewVerifier()
	for _, e := range chain(7) {
		v.Add(e)
	}
	if v.Count() != 7 {
		t.Errorf("Count() = %d, want 7", v.Count())
	}
}

// TestVerifyEditedField edits one field of entry 5 per case; exactly one
// problem, "edited", must name entry 5.
func TestVerifyEditedField(t *testing.T) {
	edits := []struct {
		name string
		edit func(*openrecall.AuditEntry)
	}{
		{"string: reason", func(e *openrecall.AuditEntry) { e.Reason = "nothing to see" }},
		{"string: analysis id", func(e *openrecall.AuditEntry) { e.AnalysisID = "b1-999999" }},
		{"decision", func(e *openrecall.AuditEntry) { e.ProposedDecision = openrecall.DecisionFalsePositive }},
		{"tier", func(e *openrecall.AuditEntry) { e.Tier = openrecall.TierCheap }},
		{"money: cost", func(e *openrecall.AuditEntry) { e.Cost = 0 }},
		{"money: savings", func(e *openrecall.AuditEntry) { e.Savings = 1 << 40 }},
		{"integer: memory hits", func(e *openrecall.AuditEntry) { e.MemoryHits = 9 }},
		{"boolean: live", func(e *openrecall.AuditEntry) { e.Live = true }},
		{"boolean: skipped", func(e *openrecall.AuditEntry) { e.Skipped = true }},
		{"duration: latency", func(e *openrecall.AuditEntry) { e.Latency = time.Hour }},
		{"time", func(e *openrecall.AuditEntry) { e.Time = e.Time.Add(-time.Hour) }},
		{"stored hash", func(e *openrecall.AuditEntry) { e.Hash = Hash(openrecall.AuditEntry{}) }},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			c := chain(9)
			seq, h := head(c)
			tt.edit(&c[4])
			got := verify(c, seq, h)
			problems := kinds(got)
			if tt.name == "stored hash" {
				// The next entry's link breaks too: both are reported.
				if diff := cmp.Diff([]string{"5 edited", "6 deleted"}, problems); diff != "" {
					t.Errorf("problems (-want +got):\n%s\n%v", diff, got)
				}
				return
			}
			if diff := cmp.Diff([]string{"5 edited"}, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, got)
			}
		})
	}
}

func kinds(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%d %s", p.Sequence, p.Kind)
	}
	return out
}

func without(c []openrecall.AuditEntry, idx ...int) []openrecall.AuditEntry {
	drop := map[int]bool{}
	for _, i := range idx {
		drop[i] = true
	}
	var out []openrecall.AuditEntry
	for i, e := range c {
		if !drop[i] {
			out = append(out, e)
		}
	}
	return out
}

func TestVerifyTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(c []openrecall.AuditEntry) []openrecall.AuditEntry
		want   []Problem
	}{
		{
			name:   "middle entry deleted",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return without(c, 4) },
			want:   []Problem{{Sequence: 5, Kind: KindDeleted, Detail: "entry 5 is missing from the chain"}},
		},
		{
			name:   "three middle entries deleted",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return without(c, 3, 4, 5) },
			want:   []Problem{{Sequence: 4, Kind: KindDeleted, Detail: "entries 4 to 6 are missing from the chain"}},
		},
		{
			name:   "first entry deleted",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return without(c, 0) },
			want:   []Problem{{Sequence: 1, Kind: KindDeleted, Detail: "entry 1 is missing from the chain"}},
		},
		{
			name:   "last entry deleted",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return without(c, 8) },
			want: []Problem{{Sequence: 9, Kind: KindHeadMismatch,
				Detail: "the head record names entry 9, but the chain ends at entry 8: the tail was deleted"}},
		},
		{
			name:   "every entry deleted",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return nil },
			want: []Problem{{Sequence: 9, Kind: KindHeadMismatch,
				Detail: "the head record names entry 9 with hash " + short(chain(9)[8].Hash) + ", but the chain is empty: every entry was deleted"}},
		},
		{
			name: "two entries swapped",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				c[3], c[4] = c[4], c[3]
				return c
			},
			want: []Problem{{Sequence: 5, AnalysisID: "b1-000002", Step: "fingerprint", Kind: KindReordered, Detail: "it is stored before entry 4"}},
		},
		{
			name: "first and last swapped",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				c[0], c[8] = c[8], c[0]
				return c
			},
			want: []Problem{
				{Sequence: 1, AnalysisID: "b1-000001", Step: "intake", Kind: KindReordered, Detail: "it is stored after entry 8"},
				{Sequence: 9, AnalysisID: "b1-000003", Step: "analysis", Kind: KindReordered, Detail: "it is stored before entry 2"},
			},
		},
		{
			name: "an entry stored late",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				late := c[2]
				return append(append(without(c, 2)[:6:6], late), c[7:]...)
			},
			want: []Problem{{Sequence: 3, AnalysisID: "b1-000001", Step: "analysis", Kind: KindReordered, Detail: "it is stored after entry 7"}},
		},
		{
			name:   "two entries deleted around a kept one",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return without(c, 2, 4) },
			want: []Problem{
				{Sequence: 3, Kind: KindDeleted, Detail: "entry 3 is missing from the chain"},
				{Sequence: 5, Kind: KindDeleted, Detail: "entry 5 is missing from the chain"},
			},
		},
		{
			name: "a sequence number edited",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				c[4].Sequence = 0
				return c
			},
			want: []Problem{
				{Sequence: 0, AnalysisID: "b1-000002", Step: "fingerprint", Kind: KindEdited, Detail: "stored hash " + short(chain(9)[4].Hash) + " does not match its content"},
				{Sequence: 0, AnalysisID: "b1-000002", Step: "fingerprint", Kind: KindReordered, Detail: "sequence 0 is before the start of the chain at 1"},
				{Sequence: 5, Kind: KindDeleted, Detail: "entry 5 is missing from the chain"},
			},
		},
		{
			name: "entry duplicated",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				return append(c[:5:5], append([]openrecall.AuditEntry{c[4]}, c[5:]...)...)
			},
			want: []Problem{{Sequence: 5, AnalysisID: "b1-000002", Step: "fingerprint", Kind: KindReordered, Detail: "sequence 5 appears again after entry 5"}},
		},
		{
			name: "entry replaced by a forged, rehashed one",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				c[4].Reason = "forged"
				c[4].Hash = Hash(c[4])
				return c
			},
			want: []Problem{{Sequence: 6, AnalysisID: "b1-000002", Step: "analysis", Kind: KindDeleted,
				Detail: "its prev hash " + short(chain(9)[4].Hash) + " does not match the hash " + short(forged(chain(9)[4]).Hash) + " of entry 5: an entry between them was deleted or replaced"}},
		},
		{
			name: "last entry replaced by a forged, rehashed one",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				c[8] = forged(c[8])
				return c
			},
			want: []Problem{{Sequence: 9, AnalysisID: "b1-000003", Step: "analysis", Kind: KindHeadMismatch,
				Detail: "its hash " + short(forged(chain(9)[8]).Hash) + " differs from the head record's " + short(chain(9)[8].Hash) + ": the last entry was replaced"}},
		},
		{
			name: "entries appended without the head",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				return append(c, Seal(c[8].Hash, 10, []openrecall.AuditEntry{{AnalysisID: "x", Step: "intake"}})...)
			},
			want: []Problem{{Sequence: 10, AnalysisID: "x", Step: "intake", Kind: KindHeadMismatch,
				Detail: "the chain goes on past the head record's entry 9: entries were added without updating the head"}},
		},
		{
			name: "chain rebuilt from entry 3 on after deleting entries 1 and 2",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				return Seal("", 3, strip(c[2:]))
			},
			want: []Problem{{Sequence: 1, Kind: KindDeleted, Detail: "entries 1 to 2 are missing from the chain"}},
		},
		{
			name: "genesis entry with a prev hash",
			tamper: func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
				return Seal(c[0].Hash, 1, strip(c[1:]))
			},
			want: []Problem{{Sequence: 1, AnalysisID: "b1-000001", Step: "fingerprint", Kind: KindDeleted,
				Detail: "it is the first entry but its prev hash is " + short(chain(9)[0].Hash) + ", not empty: the chain's start is missing"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chain(9)
			seq, h := head(c)
			if tt.name == "genesis entry with a prev hash" || tt.name == "chain rebuilt from entry 3 on after deleting entries 1 and 2" {
				seq, h = head(tt.tamper(chain(9)))
			}
			got := verify(tt.tamper(c), seq, h)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func forged(e openrecall.AuditEntry) openrecall.AuditEntry {
	e.Reason = "forged"
	e.Hash = Hash(e)
	return e
}

// strip removes the chain fields so entries can be sealed again.
func strip(c []openrecall.AuditEntry) []openrecall.AuditEntry {
	out := append([]openrecall.AuditEntry(nil), c...)
	for i := range out {
		out[i].Sequence, out[i].PrevHash, out[i].Hash = 0, "", ""
	}
	return out
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Sequence: 42, AnalysisID: "b1-000007", Step: "analysis", Kind: KindEdited, Detail: "stored hash 3fa… does not match its content"},
			"entry 42 (analysis b1-000007, step analysis) was edited: stored hash 3fa… does not match its content"},
		{Problem{Sequence: 5, Kind: KindDeleted, Detail: "entry 5 is missing from the chain"},
			"entry 5 was deleted: entry 5 is missing from the chain"},
		{Problem{Sequence: 6, AnalysisID: "a", Step: "intake", Kind: KindDeleted, Detail: "its prev hash …"},
			"entry 6 (analysis a, step intake) follows a deletion: its prev hash …"},
		{Problem{Sequence: 4, AnalysisID: "a", Step: "intake", Kind: KindReordered, Detail: "it is stored after entry 5"},
			"entry 4 (analysis a, step intake) is out of order: it is stored after entry 5"},
		{Problem{Sequence: 9, Kind: KindHeadMismatch, Detail: "the tail was deleted"},
			"entry 9 does not match the head record: the tail was deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.p.Kind, func(t *testing.T) {
			if got := tt.p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerifyEditedMessage(t *testing.T) {
	c := chain(3)
	seq, h := head(c)
	c[1].Reason = "edited"
	got := verify(c, seq, h)
	want := "entry 2 (analysis b1-000001, step fingerprint) was edited: stored hash " + c[1].Hash[:12] + "… does not match its content"
	if len(got) != 1 || got[0].String() != want {
		t.Errorf("problems = %v, want [%s]", got, want)
	}
}

func BenchmarkVerify(b *testing.B) {
	c := chain(1000)
	seq, h := head(c)
	for b.Loop() {
		if len(verify(c, seq, h)) != 0 {
			b.Fatal("clean chain reported problems")
		}
	}
}

// TestVerifyEveryPosition deletes, swaps and edits at every position of a
// chain: each tampering is reported as exactly one problem of its kind.
func TestVerifyEveryPosition(t *testing.T) {
	const n = 12
	seq, h := head(chain(n))
	for i := 0; i < n; i++ {
		t.Run(fmt.Sprintf("delete_%d", i+1), func(t *testing.T) {
			want := KindDeleted
			if i == n-1 {
				want = KindHeadMismatch
			}
			got := verify(without(chain(n), i), seq, h)
			if len(got) != 1 || got[0].Kind != want || got[0].Sequence != int64(i+1) {
				t.Errorf("problems = %v, want one %s at entry %d", got, want, i+1)
			}
		})
		t.Run(fmt.Sprintf("edit_%d", i+1), func(t *testing.T) {
			c := chain(n)
			c[i].Cost++
			got := verify(c, seq, h)
			if len(got) != 1 || got[0].Kind != KindEdited || got[0].Sequence != int64(i+1) {
				t.Errorf("problems = %v, want one edited at entry %d", got, i+1)
			}
		})
		if i == n-1 {
			continue
		}
		t.Run(fmt.Sprintf("swap_%d_%d", i+1, i+2), func(t *testing.T) {
			c := chain(n)
			c[i], c[i+1] = c[i+1], c[i]
			got := verify(c, seq, h)
			if len(got) != 1 || got[0].Kind != KindReordered {
				t.Errorf("problems = %v, want one reordered", got)
			}
		})
	}
}
