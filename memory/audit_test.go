package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

// testSeal chains entries the way an audit package would.
func testSeal(prev string, next int64, entries []openrecall.AuditEntry) []openrecall.AuditEntry {
	out := make([]openrecall.AuditEntry, len(entries))
	for i, e := range entries {
		e.Sequence = next + int64(i)
		e.PrevHash = prev
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%s|%s|%d", prev, e.Sequence, e.AnalysisID, e.Step, e.Cost)))
		e.Hash = hex.EncodeToString(sum[:])
		prev = e.Hash
		out[i] = e
	}
	return out
}

func TestAuditAppendWalkHead(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	seq, hash, err := s.AuditHead(ctx)
	if err != nil || seq != 0 || hash != "" {
		t.Fatalf("empty head = %d %q %v, want 0 \"\"", seq, hash, err)
	}
	when := time.Date(2026, 6, 1, 10, 0, 0, 7, time.FixedZone("CET", 3600))
	first := []openrecall.AuditEntry{
		{AnalysisID: "an1", Batch: "b", AlertID: "x", StepIndex: 0, Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK, Time: when},
		{AnalysisID: "an1", Batch: "b", AlertID: "x", StepIndex: 1, Step: openrecall.StepAnalysis, Model: "gpt", Tier: openrecall.TierStrong,
			Reason: "attack", Outcome: openrecall.OutcomeAccepted, MemoryHits: 3, ProposedDecision: openrecall.DecisionReal,
			EscalationReason: "attack pattern", Live: true, Skipped: false, Cost: 1200, Baseline: 1500, Savings: 300,
			Latency: 42 * time.Millisecond},
	}
	stored1, err := s.AppendAudit(ctx, first, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	if stored1[0].Time != when.UTC() || stored1[1].Time.IsZero() {
		t.Errorf("times = %v, %v; want the given time in UTC and the clock for a zero time", stored1[0].Time, stored1[1].Time)
	}
	if !first[1].Time.IsZero() {
		t.Errorf("AppendAudit modified the caller's slice")
	}
	stored2, err := s.AppendAudit(ctx, []openrecall.AuditEntry{{AnalysisID: "an2", Step: openrecall.StepMemoryBypass, Skipped: true}}, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	if stored2[0].Sequence != 3 || stored2[0].PrevHash != stored1[1].Hash {
		t.Errorf("second append: sequence %d prev %q, want 3 chained to %q", stored2[0].Sequence, stored2[0].PrevHash, stored1[1].Hash)
	}
	all := append(append([]openrecall.AuditEntry{}, stored1...), stored2...)

	var walked []openrecall.AuditEntry
	if err := s.WalkAudit(ctx, func(e openrecall.AuditEntry) error {
		walked = append(walked, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, walked); diff != "" {
		t.Errorf("WalkAudit (-appended +walked):\n%s", diff)
	}
	byAn, err := s.AuditByAnalysis(ctx, "an1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored1, byAn); diff != "" {
		t.Errorf("AuditByAnalysis (-want +got):\n%s", diff)
	}
	none, err := s.AuditByAnalysis(ctx, "nope")
	if err != nil || len(none) != 0 {
		t.Errorf("AuditByAnalysis(unknown) = %v, %v; want empty", none, err)
	}
	seq, hash, err = s.AuditHead(ctx)
	if err != nil || seq != 3 || hash != stored2[0].Hash {
		t.Errorf("head = %d %q %v, want 3 %q", seq, hash, err, stored2[0].Hash)
	}
}

func TestAuditAppendOnly(t *testing.T) {
	s := openTemp(t)
	if _, err := s.AppendAudit(context.Background(), []openrecall.AuditEntry{{Step: "intake"}, {Step: "fingerprint"}}, testSeal); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE audit_entries SET reason = 'edited' WHERE sequence = 1`, `DELETE FROM audit_entries WHERE sequence = 2`} {
		if _, err := s.db.Exec(q); err == nil {
			t.Errorf("%s: succeeded, want refused", q)
		}
	}
}

func TestAuditWalkPagesAndStops(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	entries := make([]openrecall.AuditEntry, walkPage*2+3)
	for i := range entries {
		entries[i] = openrecall.AuditEntry{AnalysisID: fmt.Sprint(i), Step: "intake"}
	}
	if _, err := s.AppendAudit(ctx, entries, testSeal); err != nil {
		t.Fatal(err)
	}
	var last int64
	n := 0
	err := s.WalkAudit(ctx, func(e openrecall.AuditEntry) error {
		if e.Sequence != last+1 {
			return fmt.Errorf("sequence %d after %d", e.Sequence, last)
		}
		last = e.Sequence
		n++
		// The callback may use the store.
		if _, _, err := s.AuditHead(ctx); err != nil {
			return err
		}
		return nil
	})
	if err != nil || n != len(entries) {
		t.Fatalf("walked %d of %d: %v", n, len(entries), err)
	}
	stop := errors.New("stop")
	n = 0
	err = s.WalkAudit(ctx, func(openrecall.AuditEntry) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("WalkAudit after stop: n=%d err=%v, want 5 and the callback's error", n, err)
	}
}

func TestAuditBadSeal(t *testing.T) {
	tests := []struct {
		name string
		seal SealFunc
	}{
		{"nil seal", nil},
		{"drops an entry", func(p string, n int64, es []openrecall.AuditEntry) []openrecall.AuditEntry {
			return testSeal(p, n, es)[:1]
		}},
		{"wrong numbering", func(p string, n int64, es []openrecall.AuditEntry) []openrecall.AuditEntry {
			return testSeal(p, n+1, es)
		}},
		{"no numbering", func(p string, n int64, es []openrecall.AuditEntry) []openrecall.AuditEntry { return es }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t)
			_, err := s.AppendAudit(context.Background(), []openrecall.AuditEntry{{Step: "intake"}, {Step: "fingerprint"}}, tt.seal)
			if !errors.Is(err, openrecall.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
			st, err := s.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			seq, _, _ := s.AuditHead(context.Background())
			if st.AuditEntries != 0 || seq != 0 {
				t.Errorf("after a refused append: %d entries, head %d; want nothing stored", st.AuditEntries, seq)
			}
		})
	}
}

// TestAuditAppendSplitsInOrder appends batches whose sizes straddle the
// multi-row insert's statement sizes (one statement of up to 128 rows, then
// the binary digits of the rest) and checks that every entry and cost
// point is stored, once, in order.
func TestAuditAppendSplitsInOrder(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	var want []string
	idx := 0
	for _, n := range []int{1, 3, 127, 128, 129, 255, 300, 1000} {
		entries := make([]openrecall.AuditEntry, n)
		points := make([]openrecall.CostPoint, n)
		for i := range entries {
			id := fmt.Sprintf("an-%d-%d", n, i)
			entries[i] = openrecall.AuditEntry{AnalysisID: id, Batch: "b", AlertID: id, Step: openrecall.StepIntake, Cost: openrecall.NanoUSD(i)}
			points[i] = openrecall.CostPoint{Batch: "b", Index: idx, AlertID: id, Cost: 1, Baseline: 2,
				CumulativeCost: openrecall.NanoUSD(idx + 1), CumulativeBaseline: openrecall.NanoUSD(2 * (idx + 1))}
			idx++
			want = append(want, id)
		}
		if _, err := s.AppendAudit(ctx, entries, testSeal); err != nil {
			t.Fatalf("append %d entries: %v", n, err)
		}
		if err := s.AppendCostPoints(ctx, points, testCostSeal); err != nil {
			t.Fatalf("append %d cost points: %v", n, err)
		}
	}
	var got []string
	seq := int64(0)
	if err := s.WalkAudit(ctx, func(e openrecall.AuditEntry) error {
		seq++
		if e.Sequence != seq {
			return fmt.Errorf("entry %s has sequence %d, want %d", e.AnalysisID, e.Sequence, seq)
		}
		got = append(got, e.AnalysisID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("stored entries differ from those appended, in order (-want +got):\n%s", diff)
	}
	points, err := s.CostPoints(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for i, p := range points {
		if p.Index != i {
			t.Fatalf("cost point %d has index %d", i, p.Index)
		}
		got = append(got, p.AlertID)
	}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("stored cost points differ from those appended, in order (-want +got):\n%s", diff)
	}
}
