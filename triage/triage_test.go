package triage

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// m builds a match with a distinct id, decision, score and age in minutes.
func m(id string, d openrecall.Decision, score float64, minutes int) openrecall.Match {
	return openrecall.Match{
		Incident: openrecall.Incident{ID: id, Decision: d, CreatedAt: t0.Add(time.Duration(minutes) * time.Minute)},
		Score:    score,
	}
}

// many builds n matches of one decision and score, ids prefix1..prefixN.
func many(prefix string, n int, d openrecall.Decision, score float64) []openrecall.Match {
	out := make([]openrecall.Match, n)
	for i := range out {
		out[i] = m(fmt.Sprintf("%s%d", prefix, i+1), d, score, i)
	}
	return out
}

// formula is the documented confidence c·(n+1)/(n+2) with c = dom/n,
// evaluated at run time in float64 as Triage does.
func formula(dom, n int) float64 {
	c := float64(dom) / float64(n)
	return c * float64(n+1) / float64(n+2)
}

func cat(parts ...[]openrecall.Match) []openrecall.Match {
	var out []openrecall.Match
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

const (
	kb   = openrecall.DecisionKnownBenign
	fpos = openrecall.DecisionFalsePositive
	dup  = openrecall.DecisionDuplicate
	real = openrecall.DecisionReal
	esc  = openrecall.DecisionEscalated
)

var (
	plain  = openrecall.Fingerprint{ErrorClass: "http_5xx", ServiceRole: "api_edge", Environment: "prod"}
	attack = openrecall.Fingerprint{ErrorClass: "auth_failure", ServiceRole: "auth_service", AttackPattern: "brute_force", Environment: "prod"}
)

func TestTriage(t *testing.T) {
	tests := []struct {
		name    string
		fp      openrecall.Fingerprint
		matches []openrecall.Match
		cfg     func(*Config)
		want    openrecall.TriageResult
	}{
		{
			name: "no matches escalates with confidence 0",
			fp:   plain,
			want: openrecall.TriageResult{Decision: esc, RequiresHumanApproval: true, EscalationReason: "no memory matches"},
		},
		{
			name:    "only weak matches escalate with the best score as confidence",
			fp:      plain,
			matches: []openrecall.Match{m("a", kb, 0.5, 0), m("b", kb, 0.8, 1), m("c", real, 0.7, 2)},
			want: openrecall.TriageResult{Decision: esc, Confidence: formula(3, 3), BestScore: 0.8, RequiresHumanApproval: true,
				EscalationReason: "no strong memory match (best score 0.80 < 0.85)"},
		},
		{
			name:    "a score just below the strong threshold is weak and reads below it",
			fp:      plain,
			matches: []openrecall.Match{m("a", kb, 0.8499, 0)},
			want: openrecall.TriageResult{Decision: esc, Confidence: 0.8499, BestScore: 0.8499, RequiresHumanApproval: true,
				EscalationReason: "no strong memory match (best score 0.8499 < 0.85)"},
		},
		{
			name:    "a score exactly at the strong threshold is strong",
			fp:      plain,
			matches: []openrecall.Match{m("a", kb, 0.85, 0)},
			want: openrecall.TriageResult{Decision: kb, Confidence: formula(1, 1), ConsistentCount: 1, StrongCount: 1, Consistency: 1,
				BestScore: 0.85, Supporting: []string{"a"}},
		},
		{
			name:    "six unanimous benign matches give confidence 7/8",
			fp:      plain,
			matches: many("k", 6, kb, 1),
			want: openrecall.TriageResult{Decision: kb, Confidence: formula(6, 6), ConsistentCount: 6, StrongCount: 6, Consistency: 1,
				BestScore: 1, Supporting: []string{"k1", "k2", "k3", "k4", "k5", "k6"}},
		},
		{
			name:    "weak matches neither count nor dilute",
			fp:      plain,
			matches: cat(many("r", 3, real, 0.7), many("k", 5, kb, 0.9)),
			want: openrecall.TriageResult{Decision: kb, Confidence: formula(5, 5), ConsistentCount: 5, StrongCount: 5, Consistency: 1,
				BestScore: 0.9, Supporting: []string{"k1", "k2", "k3", "k4", "k5"}},
		},
		{
			name:    "a split below consistency escalates and names the split",
			fp:      plain,
			matches: cat(many("r", 2, real, 1), many("k", 3, kb, 0.9)),
			want: openrecall.TriageResult{Decision: esc, Confidence: formula(3, 5), ConsistentCount: 3, StrongCount: 5, Consistency: 0.6,
				BestScore: 1, Supporting: []string{"k1", "k2", "k3"}, RequiresHumanApproval: true,
				EscalationReason: "memory split: 3 known_benign, 2 real"},
		},
		{
			name:    "consistency exactly at the threshold proposes the decision",
			fp:      plain,
			matches: cat(many("k", 9, kb, 1), many("r", 1, real, 1)),
			want: openrecall.TriageResult{Decision: kb, Confidence: formula(9, 10), ConsistentCount: 9, StrongCount: 10, Consistency: 0.9,
				BestScore: 1, Supporting: []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}},
		},
		{
			name:    "consistency just below the threshold escalates",
			fp:      plain,
			matches: cat(many("k", 8, kb, 1), many("r", 1, real, 1)),
			cfg:     func(c *Config) { c.Consistency = math.Nextafter(8.0/9.0, 1) },
			want: openrecall.TriageResult{Decision: esc, Confidence: formula(8, 9), ConsistentCount: 8, StrongCount: 9, Consistency: 8.0 / 9.0,
				BestScore: 1, Supporting: []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}, RequiresHumanApproval: true,
				EscalationReason: "memory split: 8 known_benign, 1 real"},
		},
		{
			name:    "a count tie goes to the decision with the higher best score",
			fp:      plain,
			matches: []openrecall.Match{m("k1", kb, 0.9, 9), m("f1", fpos, 0.95, 0), m("k2", kb, 0.9, 9), m("f2", fpos, 0.86, 0)},
			cfg:     func(c *Config) { c.Consistency = 0.5 },
			want: openrecall.TriageResult{Decision: fpos, Confidence: formula(2, 4), ConsistentCount: 2, StrongCount: 4, Consistency: 0.5,
				BestScore: 0.95, Supporting: []string{"f1", "f2"}},
		},
		{
			name:    "a count and score tie goes to the newer best match",
			fp:      plain,
			matches: []openrecall.Match{m("f1", fpos, 0.9, 1), m("k1", kb, 0.9, 2)},
			cfg:     func(c *Config) { c.Consistency = 0.5 },
			want: openrecall.TriageResult{Decision: kb, Confidence: formula(1, 2), ConsistentCount: 1, StrongCount: 2, Consistency: 0.5,
				BestScore: 0.9, Supporting: []string{"k1"}},
		},
		{
			name:    "a full tie goes to the smaller decision name",
			fp:      plain,
			matches: []openrecall.Match{m("k1", kb, 0.9, 1), m("d1", dup, 0.9, 1)},
			want: openrecall.TriageResult{Decision: esc, Confidence: formula(1, 2), ConsistentCount: 1, StrongCount: 2, Consistency: 0.5,
				BestScore: 0.9, Supporting: []string{"d1"}, RequiresHumanApproval: true,
				EscalationReason: "memory split: 1 duplicate, 1 known_benign"},
		},
		{
			name:    "unanimous real needs a person",
			fp:      plain,
			matches: many("r", 3, real, 1),
			want: openrecall.TriageResult{Decision: real, Confidence: formula(3, 3), ConsistentCount: 3, StrongCount: 3, Consistency: 1,
				BestScore: 1, Supporting: []string{"r1", "r2", "r3"}, RequiresHumanApproval: true},
		},
		{
			name:    "an attack pattern needs a person even with unanimous benign memory",
			fp:      attack,
			matches: many("k", 6, kb, 1),
			want: openrecall.TriageResult{Decision: kb, Confidence: formula(6, 6), ConsistentCount: 6, StrongCount: 6, Consistency: 1,
				BestScore: 1, Supporting: []string{"k1", "k2", "k3", "k4", "k5", "k6"}, RequiresHumanApproval: true},
		},
		{
			name:    "a strong match with an unusable decision dilutes but never wins",
			fp:      plain,
			matches: cat(many("x", 3, "maybe", 1), many("k", 2, kb, 1)),
			want: openrecall.TriageResult{Decision: esc, Confidence: formula(2, 5), ConsistentCount: 2, StrongCount: 5, Consistency: 0.4,
				BestScore: 1, Supporting: []string{"k1", "k2"}, RequiresHumanApproval: true,
				EscalationReason: `memory split: 3 "maybe", 2 known_benign`},
		},
		{
			name:    "only unusable decisions escalate",
			fp:      plain,
			matches: cat(many("e", 2, esc, 1)),
			want: openrecall.TriageResult{Decision: esc, StrongCount: 2, BestScore: 1, RequiresHumanApproval: true,
				EscalationReason: "strong memory matches carry no usable decision: 2 escalated"},
		},
		{
			name:    "NaN scores are ignored",
			fp:      plain,
			matches: []openrecall.Match{m("n", kb, math.NaN(), 0), m("a", kb, 0.3, 0)},
			want: openrecall.TriageResult{Decision: esc, Confidence: 0.3, BestScore: 0.3, RequiresHumanApproval: true,
				EscalationReason: "no strong memory match (best score 0.30 < 0.85)"},
		},
		{
			name:    "a negative best score gives confidence 0",
			fp:      plain,
			matches: []openrecall.Match{m("a", kb, -0.5, 0)},
			want: openrecall.TriageResult{Decision: esc, BestScore: -0.5, RequiresHumanApproval: true,
				EscalationReason: "no strong memory match (best score -0.50 < 0.85)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			got := Triage(tt.fp, openrecall.SeverityMedium, tt.matches, cfg)
			tt.want.AlertSeverity = openrecall.SeverityMedium
			if len(tt.want.Supporting) > 0 && tt.want.SupportSeverity == "" {
				// These cases' memories carry no severity: the support is
				// "unknown", which clause (e) counts as medium.
				tt.want.SupportSeverity = openrecall.SeverityUnknown
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Triage() mismatch (-want +got):\n%s", diff)
			}
			if got.Confidence < 0 || got.Confidence > 1 {
				t.Errorf("Confidence %v outside [0, 1]", got.Confidence)
			}
			if !got.Decision.Valid() {
				t.Errorf("Decision %q outside the closed set", got.Decision)
			}
		})
	}
}

func TestTriageDoesNotModifyInputs(t *testing.T) {
	matches := []openrecall.Match{m("b", real, 0.9, 1), m("a", kb, 1, 2), m("c", kb, 0.95, 3)}
	matches[0].Incident.DeadEnds = []string{"restarted the pod"}
	before := cat(matches)
	before[0].Incident.DeadEnds = []string{"restarted the pod"}
	fp := plain
	Triage(fp, openrecall.SeverityMedium, matches, DefaultConfig())
	if diff := cmp.Diff(before, matches); diff != "" {
		t.Errorf("Triage modified its matches (-before +after):\n%s", diff)
	}
	if fp != plain {
		t.Errorf("Triage modified its fingerprint")
	}
}

// TestTriageConfidenceFormula checks the documented formula and its range for
// every split of up to 12 strong matches.
func TestTriageConfidenceFormula(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for dom := (n + 1) / 2; dom <= n; dom++ {
			t.Run(fmt.Sprintf("%d_of_%d", dom, n), func(t *testing.T) {
				matches := cat(many("k", dom, kb, 1), many("r", n-dom, real, 0.9))
				got := Triage(plain, openrecall.SeverityMedium, matches, DefaultConfig())
				c := float64(dom) / float64(n)
				want := c * float64(n+1) / float64(n+2)
				if got.Confidence != want || got.Confidence < 0 || got.Confidence >= 1 {
					t.Errorf("Confidence = %v, want %v in [0, 1)", got.Confidence, want)
				}
				if got.ConsistentCount != dom || got.StrongCount != n {
					t.Errorf("counts = %d/%d, want %d/%d", got.ConsistentCount, got.StrongCount, dom, n)
				}
			})
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		field string // "" when valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"strong match at 1", func(c *Config) { c.StrongMatch = 1 }, ""},
		{"strong match just above the floor", func(c *Config) { c.StrongMatch = math.Nextafter(openrecall.MinStrongThreshold, 1) }, ""},
		{"strong match at the floor", func(c *Config) { c.StrongMatch = openrecall.MinStrongThreshold }, "StrongMatch"},
		{"strong match above 1", func(c *Config) { c.StrongMatch = 1.01 }, "StrongMatch"},
		{"strong match NaN", func(c *Config) { c.StrongMatch = math.NaN() }, "StrongMatch"},
		{"consistency 0 and 1", func(c *Config) { c.Consistency = 0; c.BypassConfidence = 1 }, ""},
		{"consistency negative", func(c *Config) { c.Consistency = -0.1 }, "Consistency"},
		{"bypass confidence above 1", func(c *Config) { c.BypassConfidence = 1.5 }, "BypassConfidence"},
		{"gate confidence NaN", func(c *Config) { c.GateConfidence = math.NaN() }, "GateConfidence"},
		{"recall limit 1", func(c *Config) { c.RecallLimit = 1 }, ""},
		{"recall limit 1000", func(c *Config) { c.RecallLimit = 1000 }, ""},
		{"recall limit 0", func(c *Config) { c.RecallLimit = 0 }, "RecallLimit"},
		{"recall limit 1001", func(c *Config) { c.RecallLimit = 1001 }, "RecallLimit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.field != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error naming %s", tt.field)
			case tt.field != "":
				if !errors.Is(err, openrecall.ErrInvalid) {
					t.Errorf("Validate() = %v, does not wrap ErrInvalid", err)
				}
				if want := "triage config: " + tt.field + " "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
					t.Errorf("Validate() = %q, want it to start with %q", err, want)
				}
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	want := Config{StrongMatch: 0.85, Consistency: 0.90, BypassConfidence: 0.85, GateConfidence: 0.60, RecallLimit: 10}
	if diff := cmp.Diff(want, DefaultConfig()); diff != "" {
		t.Errorf("DefaultConfig() mismatch (-want +got):\n%s", diff)
	}
}
