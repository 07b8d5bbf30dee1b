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
	return openrecall.TriageResult{Decision: d, StrongCount: 1, ConsistentCount: 1, Consistency: 0.90, Confidence: 0.85, BestScore: 0.85,
		AlertSeverity: openrecall.SeverityMedium, SupportSeverity: openrecall.SeverityMedium}
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
			want: openrecall.GuardVerdict{SeverityCovered: true, Bypass: true, StrongMatch: true, Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "bypass: 1 strong match, 90% known_benign, confidence 0.850 ≥ 0.85"},
		},
		{
			name: "false_positive bypasses",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = fpos },
			want: openrecall.GuardVerdict{SeverityCovered: true, Bypass: true, StrongMatch: true, Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "bypass: 1 strong match, 90% false_positive, confidence 0.850 ≥ 0.85"},
		},
		{
			name: "duplicate bypasses",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = dup },
			want: openrecall.GuardVerdict{SeverityCovered: true, Bypass: true, StrongMatch: true, Consistent: true, Confident: true, BenignNoAttack: true,
				Reason: "bypass: 1 strong match, 90% duplicate, confidence 0.850 ≥ 0.85"},
		},
		{
			name: "(a) no strong match blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.StrongCount = 0; tr.BestScore = 0.8 },
			want: openrecall.GuardVerdict{SeverityCovered: true, Consistent: true, Confident: true, BenignNoAttack: true,
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
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Confident: true, BenignNoAttack: true,
				Reason: "consistency 89.99999999999999% < 90% blocks bypass (1 of 1 strong match agree)"},
		},
		{
			name: "(b) a clear split blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.StrongCount, tr.ConsistentCount, tr.Consistency = 3, 2, 2.0/3.0 },
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Confident: true, BenignNoAttack: true,
				Reason: "consistency 67% < 90% blocks bypass (2 of 3 strong matches agree)"},
		},
		{
			name: "(c) confidence just below the threshold blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Confidence = below(0.85) },
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, BenignNoAttack: true,
				Reason: "confidence 0.8499999999999999 < 0.85 blocks bypass (1 strong match)"},
		},
		{
			name: "(c) four unanimous matches are not confident enough",
			fp:   plain,
			tr: func(tr *openrecall.TriageResult) {
				tr.StrongCount, tr.ConsistentCount, tr.Consistency, tr.Confidence = 4, 4, 1, formula(4, 4)
			},
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, BenignNoAttack: true,
				Reason: "confidence 0.833 < 0.85 blocks bypass (4 strong matches)"},
		},
		{
			name: "(d) an attack pattern blocks",
			fp:   attack,
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, Confident: true,
				Reason: "attack pattern brute_force blocks bypass"},
		},
		{
			name: "(d) an attack pattern blocks even with perfect memory",
			fp:   attack,
			tr: func(tr *openrecall.TriageResult) {
				tr.StrongCount, tr.ConsistentCount, tr.Consistency, tr.Confidence, tr.BestScore = 1000, 1000, 1, 1, 1
			},
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, Confident: true,
				Reason: "attack pattern brute_force blocks bypass"},
		},
		{
			name: "(d) a real decision blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = real },
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, Confident: true,
				Reason: "decision real blocks bypass (only false_positive, duplicate or known_benign may bypass)"},
		},
		{
			name: "(d) an escalated decision blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = esc },
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, Confident: true,
				Reason: "decision escalated blocks bypass (only false_positive, duplicate or known_benign may bypass)"},
		},
		{
			name: "(d) a decision outside the closed set blocks",
			fp:   plain,
			tr:   func(tr *openrecall.TriageResult) { tr.Decision = "ignore" },
			want: openrecall.GuardVerdict{SeverityCovered: true, StrongMatch: true, Consistent: true, Confident: true,
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
			v := Guard(tt.fp, Triage(tt.fp, openrecall.SeverityMedium, tt.matches, cfg), cfg)
			if v.Bypass != tt.bypass || v.Reason != tt.reason {
				t.Errorf("Guard() = %v %q, want %v %q", v.Bypass, v.Reason, tt.bypass, tt.reason)
			}
		})
	}
}

// TestGuardIffAllClauses checks every combination of the five clauses: the
// bypass happens exactly when all five hold, and each flag reports its own
// clause.
func TestGuardIffAllClauses(t *testing.T) {
	cfg := DefaultConfig()
	for mask := 0; mask < 32; mask++ {
		a, b, c, d, e := mask&1 != 0, mask&2 != 0, mask&4 != 0, mask&8 != 0, mask&16 != 0
		t.Run(fmt.Sprintf("a=%v_b=%v_c=%v_d=%v_e=%v", a, b, c, d, e), func(t *testing.T) {
			tr := atThresholds(kb)
			tr.AlertSeverity, tr.SupportSeverity = openrecall.SeverityHigh, openrecall.SeverityHigh
			if !e {
				tr.AlertSeverity = openrecall.SeverityCritical
			}
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
			want := openrecall.GuardVerdict{Bypass: a && b && c && d && e, StrongMatch: a, Consistent: b, Confident: c,
				BenignNoAttack: d, SeverityCovered: e}
			v.Reason = ""
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("Guard() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuardSeverityClause pins clause (e): an alert more severe than every
// supporting memory is not bypassed; an unknown alert counts as critical, an
// unknown memory as medium; the reason names the clause, and only then does
// the verdict say "refused only by severity".
func TestGuardSeverityClause(t *testing.T) {
	crit, high, med, low, unk := openrecall.SeverityCritical, openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityLow, openrecall.SeverityUnknown
	tests := []struct {
		name        string
		alert       openrecall.Severity
		memories    []openrecall.Severity
		bypass      bool
		reason      string
		onlySeverty bool
	}{
		{"same severity", med, []openrecall.Severity{med, med, med, med, med}, true, "", false},
		{"less severe alert", low, []openrecall.Severity{med, med, med, med, med}, true, "", false},
		{"one memory as severe suffices", crit, []openrecall.Severity{low, low, crit, low, low}, true, "", false},
		{"warning taught, critical fires", crit, []openrecall.Severity{med, med, med, med, med}, false,
			"severity clause (e) blocks bypass: the alert (critical) is more severe than every supporting memory (most severe medium); strong model, a person approves", true},
		{"unknown alert counts as critical", unk, []openrecall.Severity{high, high, high, high, high}, false,
			"severity clause (e) blocks bypass: the alert (unknown, counted as critical) is more severe than every supporting memory (most severe high); strong model, a person approves", true},
		{"empty alert severity counts as critical", "", []openrecall.Severity{crit, crit, crit, crit, crit}, true, "", false},
		{"unknown memory counts as medium", high, []openrecall.Severity{unk, unk, unk, unk, unk}, false,
			"severity clause (e) blocks bypass: the alert (high) is more severe than every supporting memory (most severe unknown, counted as medium); strong model, a person approves", true},
		{"unknown memory covers a medium alert", med, []openrecall.Severity{unk, unk, unk, unk, unk}, true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var matches []openrecall.Match
			for i, sev := range tt.memories {
				mm := m(fmt.Sprintf("k%d", i), kb, 1, i)
				mm.Incident.Severity = sev
				matches = append(matches, mm)
			}
			cfg := DefaultConfig()
			tr := Triage(plain, tt.alert, matches, cfg)
			v := Guard(plain, tr, cfg)
			if v.Bypass != tt.bypass || (!tt.bypass && v.Reason != tt.reason) {
				t.Errorf("Guard() = %v %q, want %v %q", v.Bypass, v.Reason, tt.bypass, tt.reason)
			}
			if v.RefusedOnlyBySeverity() != tt.onlySeverty {
				t.Errorf("RefusedOnlyBySeverity = %v, want %v", v.RefusedOnlyBySeverity(), tt.onlySeverty)
			}
			if tt.onlySeverty && !tr.RequiresHumanApproval {
				t.Errorf("an alert refused only by the severity clause must require a person's approval")
			}
		})
	}
}

// TestRelatedMatchNeverVotes: a related match scored at 1 (a bug in a
// recaller) still is not strong.
func TestRelatedMatchNeverVotes(t *testing.T) {
	matches := many("k", 6, kb, 1)
	for i := range matches {
		matches[i].Related = true
	}
	cfg := DefaultConfig()
	tr := Triage(plain, openrecall.SeverityMedium, matches, cfg)
	if tr.StrongCount != 0 || Guard(plain, tr, cfg).Bypass {
		t.Errorf("related matches counted as strong: %+v", tr)
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
		Guard(plain, Triage(plain, openrecall.SeverityMedium, matches, cfg), cfg)
	}
}
