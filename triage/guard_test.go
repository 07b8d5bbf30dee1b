package triage

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// atThresholds is a triage result with every clause exactly at its default
// threshold.
func atThresholds(d openrecall.Decision) openrecall.TriageResult {
	return openrecall.TriageResult{Decision: d, StrongCount: 1, ConsistentCount: 1, Consistency: 0.90, Confidence: 0.85, BestScore: 0.85}
}

func below(x float64) float64 { return math.Nextafter(x, 0) }

func TestGuard(t *testing.T) {
	tests := []struct {
		name string
		fp   openrecall.Fingerprint
		tr   func(*openrecall.TriageResult)
		want openrecall.GuardVerdict
	}{
		{
			name: "every clause exactly at its threshold bypasses",
			fp:   plain,
			want: openrecall.GuardVerdict{Bypass: true, StrongMatch: true, Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "bypass: 1 strong match, 90% known_benign, confidence 0.850 ≥ 0.85"},
		},
		{
			name: "false_positive bypasses",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = fpos },
			want: openrecall.GuardVerdict{Bypass: true, StrongMatch: true, Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "bypass: 1 strong match, 90% false_positive, confidence 0.850 ≥ 0.85"},
		},
		{
			name: "duplicate bypasses",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = dup },
			want: openrecall.GuardVerdict{Bypass: true, StrongMatch: true, Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "bypass: 1 strong match, 90% duplicate, confidence 0.850 ≥ 0.85"},
		},
		{
			name: "(a) no strong match blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.StrongCount = 0; tr.BestScore = 0.8 },
			want: openrecall.GuardVerdict{Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "no strong memory match (best score 0.80 < 0.85) blocks bypass"},
		},
		{
			name: "(a) no match at all blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { *tr = openrecall.TriageResult{Decision: esc} },
			want: openrecall.GuardVerdict{Reason: "no strong memory match blocks bypass"},
		},
		{
			name: "(b) consistency just below the threshold blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Consistency = below(0.90) },
			want: openrecall.GuardVerdict{StrongMatch: true, Confident: true, BenignNoAttack: true,
				Reason: "consistency 89.99999999999999% < 90% blocks bypass (1 of 1 strong match agree)"},
		},
		{
			name: "(b) a clear split blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.StrongCount, tr.ConsistentCount, tr.Consistency = 3, 2, 2.0/3.0 },
			want: openrecall.GuardVerdict{StrongMatch: true, Confident: true, BenignNoAttack: true,
				Reason: "consistency 67% < 90% blocks bypass (2 of 3 strong matches agree)"},
		},
		{
			name: "(c) confidence just below the threshold blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Confidence = below(0.85) },
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, BenignNoAttack: true,
				Reason: "confidence 0.8499999999999999 < 0.85 blocks bypass (1 strong match)"},
		},
		{
			name: "(c) four unanimous matches are not confident enough",
			fp:   plain,
			tr: func(tr *openrecall.TriageResult) {
				tr.StrongCount, tr.ConsistentCount, tr.Consistency, tr.Confidence = 4, 4, 1, formula(4, 4)
			},
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, BenignNoAttack: true,
				Reason: "confidence 0.833 < 0.85 blocks bypass (4 strong matches)"},
		},
		{
			name: "(d) an attack pattern blocks",
			fp:   attack,
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, Confident: true,
				Reason: "attack pattern brute_force blocks bypass"},
		},
		{
			name: "(d) an attack pattern blocks even with perfect memory",
			fp:   attack,
			tr: func(tr *openrecall.TriageResult) {
				tr.StrongCount, tr.ConsistentCount, tr.Consistency, tr.Confidence, tr.BestScore = 1000, 1000, 1, 1, 1
			},
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, Confident: true,
				Reason: "attack pattern brute_force blocks bypass"},
		},
		{
			name: "(d) a real decision blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = real },
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, Confident: true,
				Reason: "decision real blocks bypass (only false_positive, duplicate or known_benign may bypass)"},
		},
		{
			name: "(d) an escalated decision blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = esc },
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, Confident: true,
				Reason: "decision escalated blocks bypass (only false_positive, duplicate or known_benign may bypass)"},
		},
		{
			name: "(d) a decision outside the closed set blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = "ignore" },
			want: openrecall.GuardVerdict{StrongMatch: true, Consistent: true, Confident: true,
				Reason: `decision "ignore" blocks bypass (only false_positive, duplicate or known_benign may bypass)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := atThresholds(kb)
			if tt.tr != nil {
				tt.tr(&tr)
			}
			got := Guard(tt.fp, tr, DefaultConfig())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Guard() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuardFromTriage runs the guard on what Triage proposes, end to end.
func TestGuardFromTriage(t *testing.T) {
	tests := []struct {
		name    string
		fp      openrecall.Fingerprint
		matches []openrecall.Match
		bypass  bool
		reason  string
	}{
		{"six unanimous benign bypass", plain, many("k", 6, kb, 1), true, "bypass: 6 strong matches, 100% known_benign, confidence 0.875 ≥ 0.85"},
		{"five unanimous benign bypass", plain, many("k", 5, kb, 1), true, "bypass: 5 strong matches, 100% known_benign, confidence 0.857 ≥ 0.85"},
		{"four unanimous benign do not", plain, many("k", 4, kb, 1), false, "confidence 0.833 < 0.85 blocks bypass (4 strong matches)"},
		{"attack with six unanimous benign does not", attack, many("k", 6, kb, 1), false, "attack pattern brute_force blocks bypass"},
		{"no memory does not", plain, nil, false, "no strong memory match blocks bypass"},
		{"a split does not", plain, cat(many("k", 5, kb, 1), many("r", 1, real, 1)), false, "consistency 83% < 90% blocks bypass (5 of 6 strong matches agree)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			v := Guard(tt.fp, Triage(tt.fp, tt.matches, cfg), cfg)
			if v.Bypass != tt.bypass || v.Reason != tt.reason {
				t.Errorf("Guard() = %v %q, want %v %q", v.Bypass, v.Reason, tt.bypass, tt.reason)
			}
		})
	}
}

// TestGuardIffAllClauses checks every combination of the four clauses: the
// bypass happens exactly when all four hold, and each flag reports its own
// clause.
func TestGuardIffAllClauses(t *testing.T) {
	cfg := DefaultConfig()
	for mask := 0; mask < 16; mask++ {
		a, b, c, d := mask&1 != 0, mask&2 != 0, mask&4 != 0, mask&8 != 0
		t.Run(fmt.Sprintf("a=%v_b=%v_c=%v_d=%v", a, b, c, d), func(t *testing.T) {
			tr := atThresholds(kb)
			fp := plain
			if !a {
				tr.StrongCount = 0
			}
			if !b {
				tr.Consistency = below(cfg.Consistency)
			}
			if !c {
				tr.Confidence = below(cfg.BypassConfidence)
			}
			if !d {
				fp = attack
			}
			v := Guard(fp, tr, cfg)
			want := openrecall.GuardVerdict{Bypass: a && b && c && d, StrongMatch: a, Consistent: b, Confident: c, BenignNoAttack: d}
			v.Reason = ""
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("Guard() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVet(t *testing.T) {
	tests := []struct {
		name     string
		fp       openrecall.Fingerprint
		proposed openrecall.Decision
		ok       bool
		reason   string
	}{
		{"benign on a plain alert", plain, kb, true, ""},
		{"false_positive on a plain alert", plain, fpos, true, ""},
		{"duplicate on a plain alert", plain, dup, true, ""},
		{"real on a plain alert", plain, real, true, ""},
		{"escalated on a plain alert", plain, esc, true, ""},
		{"real on an attack alert", attack, real, true, ""},
		{"escalated on an attack alert", attack, esc, true, ""},
		{"known_benign on an attack alert", openrecall.Fingerprint{AttackPattern: "sql_injection"}, kb, false, "benign verdict refused on sql_injection alert"},
		{"false_positive on an attack alert", attack, fpos, false, "benign verdict refused on brute_force alert"},
		{"duplicate on an attack alert", attack, dup, false, "benign verdict refused on brute_force alert"},
		{"outside the closed set", plain, "maybe", false, `model proposed "maybe", not a decision`},
		{"empty", plain, "", false, `model proposed "", not a decision`},
		{"wrong case", plain, "Known_Benign", false, `model proposed "Known_Benign", not a decision`},
		{"outside the closed set on an attack alert", attack, "close", false, `model proposed "close", not a decision`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason := Vet(tt.fp, tt.proposed)
			if ok != tt.ok || reason != tt.reason {
				t.Errorf("Vet() = %v %q, want %v %q", ok, reason, tt.ok, tt.reason)
			}
		})
	}
}

func BenchmarkTriage(b *testing.B) {
	matches := cat(many("k", 9, kb, 1), many("r", 1, real, 0.9))
	cfg := DefaultConfig()
	for b.Loop() {
		Guard(plain, Triage(plain, matches, cfg), cfg)
	}
}
