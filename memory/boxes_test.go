package memory

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestBoxesEqualPlainBoxing holds boxes.of to its plain twin, any(v): over
// sequences that repeat values, cycle through more distinct values than a
// box remembers, and mix in the zero value, every value handed out equals
// the value boxed afresh.
func TestBoxesEqualPlainBoxing(t *testing.T) {
	tests := []struct {
		name string
		vals []string
	}{
		{"one value", []string{"a", "a", "a"}},
		{"empty and not", []string{"", "a", "", "a", ""}},
		{"same length, different bytes", []string{"ab", "ba", "ab", "bb", "ba"}},
		{"more than remembered", func() []string {
			var out []string
			for i := range 40 {
				out = append(out, fmt.Sprintf("v%d", i%11), fmt.Sprintf("v%d", i%3), strings.Repeat("x", i%13))
			}
			return out
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b boxes[string]
			var n boxes[int64]
			for i, v := range tt.vals {
				if got := b.of(v); got != any(v) {
					t.Fatalf("value %d: of(%q) = %#v", i, v, got)
				}
				w := int64(len(v))<<20 + int64(i%5)
				if got := n.of(w); got != any(w) {
					t.Fatalf("value %d: of(%d) = %#v", i, w, got)
				}
			}
		})
	}
}

// plainAuditArgs is auditArgs as it was written before boxes: each value
// boxed where it is bound. The twin of TestAuditArgsEqualPlain.
func plainAuditArgs(sealed []openrecall.AuditEntry) []any {
	var args []any
	for _, e := range sealed {
		var ts any
		if !e.Time.IsZero() {
			ts = e.Time.UTC().UnixNano()
		}
		args = append(args, e.Sequence, e.AnalysisID, e.Batch, e.AlertID, int64(e.StepIndex), e.Step,
			e.Model, string(e.Tier), e.Reason, e.Outcome, int64(e.MemoryHits), string(e.ProposedDecision),
			e.EscalationReason, boolInt(e.Live), boolInt(e.Skipped), int64(e.Cost), int64(e.Baseline), int64(e.Savings),
			int64(e.Latency), ts, e.PrevHash, e.Hash)
	}
	return args
}

// TestAuditArgsEqualPlain holds the values auditArgs binds, boxed once
// where they repeat, to the plain ones, row for row, over a trail whose
// columns repeat some values and run through more distinct ones than a box
// remembers.
func TestAuditArgsEqualPlain(t *testing.T) {
	steps := []string{"intake", "fingerprint", "recall", "analysis", "waiting"}
	base := time.Date(2026, 12, 7, 10, 0, 0, 0, time.FixedZone("x", 3600))
	var sealed []openrecall.AuditEntry
	prev := "head"
	for i := range 60 {
		alert := i / 4
		e := openrecall.AuditEntry{
			Sequence:         int64(100 + i),
			AnalysisID:       fmt.Sprintf("run-%06d", alert),
			Batch:            fmt.Sprintf("batch-%d", i/25),
			AlertID:          fmt.Sprintf("a-%d", alert%9),
			StepIndex:        i % 4,
			Step:             steps[i%len(steps)],
			Model:            []string{"", "gpt-4o", "gpt-4o-mini"}[i%3],
			Tier:             openrecall.Tier([]string{"", "cheap", "strong"}[i%3]),
			Reason:           fmt.Sprintf("reason %d", i%13),
			Outcome:          []string{"ok", "gate-failed", ""}[i%3],
			MemoryHits:       i % 2,
			ProposedDecision: openrecall.Decision([]string{"", "escalated", "real"}[i%3]),
			EscalationReason: fmt.Sprintf("esc %d", i%10),
			Live:             i%2 == 0,
			Skipped:          i%3 == 0,
			Cost:             openrecall.NanoUSD(2695000 + 500*(i%10)),
			Baseline:         openrecall.NanoUSD(2695000 + 500*(i%7)),
			Savings:          openrecall.NanoUSD(500 * (i % 3)),
			Latency:          time.Duration(1000 * (i % 12)),
			PrevHash:         prev,
			Hash:             fmt.Sprintf("h%d", i),
		}
		if i%7 != 0 {
			e.Time = base.Add(time.Duration(i/9) * time.Second)
		}
		prev = e.Hash
		sealed = append(sealed, e)
	}
	want := plainAuditArgs(sealed)
	out, got, err := auditArgs(append([]openrecall.AuditEntry(nil), sealed...), 99)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != len(sealed)*auditWidth {
		t.Fatalf("%d values, want %d (%d rows of %d)", len(got), len(want), len(sealed), auditWidth)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d column %d: %#v, plain %#v", i/auditWidth, i%auditWidth, got[i], want[i])
		}
	}
	for i, e := range out {
		if !e.Time.IsZero() && e.Time.Location() != time.UTC {
			t.Errorf("entry %d: stored time %v, want UTC", i, e.Time)
		}
	}
	if _, _, err := auditArgs(sealed[1:], 99); err == nil {
		t.Error("entries numbered from 101 after head 99: no error")
	}
}
