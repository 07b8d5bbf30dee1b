package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

func intp(i int) *int { return &i }

// sample returns a small truth table and results that pass every check: a
// bypassed benign repeat, a strong-model attack, a resolved notification.
func sample() ([]truthEntry, []openrecall.Result) {
	truth := []truthEntry{
		{Line: 1, Item: intp(0), ID: "am-1", Truth: truthBenign, Kind: kindRepeat, Family: "batch-oom"},
		{Line: 2, ID: "ssh-1", Truth: truthAttack, Kind: "attack", Family: "ssh-brute-force"},
		{Line: 3, Item: intp(0), ID: "am-2", Truth: truthBenign, Kind: "resolved", Family: "batch-oom"},
	}
	mode := openrecall.Mode{Memory: "sqlite", Model: "deterministic"}
	steps := func(ss ...openrecall.RouteStep) ([]openrecall.RouteStep, []openrecall.AuditEntry) {
		var audit []openrecall.AuditEntry
		for i, s := range ss {
			audit = append(audit, openrecall.AuditEntry{StepIndex: i, Step: s.Step, AnalysisID: "", Hash: "h"})
		}
		return ss, audit
	}
	bypassSteps, bypassAudit := steps(
		openrecall.RouteStep{Step: openrecall.StepIntake},
		openrecall.RouteStep{Step: openrecall.StepFingerprint},
		openrecall.RouteStep{Step: openrecall.StepMemoryBypass, Skipped: true, Baseline: 1700},
	)
	strongSteps, strongAudit := steps(
		openrecall.RouteStep{Step: openrecall.StepIntake},
		openrecall.RouteStep{Step: openrecall.StepFingerprint},
		openrecall.RouteStep{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Cost: 300, Baseline: 300},
	)
	resolvedSteps, resolvedAudit := steps(openrecall.RouteStep{Step: openrecall.StepIntake, Outcome: openrecall.OutcomeRecorded})
	results := []openrecall.Result{
		{Position: openrecall.Position{Source: "q", Line: 1, HasIndex: true}, Outcome: openrecall.ResultTriaged, AnalysisID: "b-0", Mode: mode,
			Alert: openrecall.Alert{ID: "am-1"}, Fingerprint: openrecall.Fingerprint{ErrorClass: "oomkilled"},
			Decision: openrecall.DecisionKnownBenign, Bypassed: true, Steps: bypassSteps, Audit: bypassAudit, Baseline: 1700},
		{Position: openrecall.Position{Source: "q", Line: 2}, Outcome: openrecall.ResultTriaged, AnalysisID: "b-1", Mode: mode,
			Alert: openrecall.Alert{ID: "ssh-1"}, Fingerprint: openrecall.Fingerprint{AttackPattern: "brute_force"},
			Decision: openrecall.DecisionReal, Steps: strongSteps, Audit: strongAudit, Cost: 300, Baseline: 300},
		{Position: openrecall.Position{Source: "q", Line: 3, HasIndex: true}, Outcome: openrecall.ResultResolved, AnalysisID: "b-2", Mode: mode,
			Alert: openrecall.Alert{ID: "am-2"}, Steps: resolvedSteps, Audit: resolvedAudit},
	}
	for i := range results {
		// Each result's audit entries must carry its analysis id; copy the
		// slices so that cases can edit one result without touching others.
		results[i].Steps = append([]openrecall.RouteStep(nil), results[i].Steps...)
		audit := append([]openrecall.AuditEntry(nil), results[i].Audit...)
		for j := range audit {
			audit[j].AnalysisID = results[i].AnalysisID
		}
		results[i].Audit = audit
	}
	return truth, results
}

func TestCheckResultsPasses(t *testing.T) {
	truth, results := sample()
	f, fails := checkResults(truth, results)
	if len(fails) > 0 {
		t.Fatalf("a valid run failed:\n%s", strings.Join(fails, "\n"))
	}
	want := figures{Results: 3, Triaged: 2, Resolved: 1, BypassSteps: 1, Strong: 1, Cost: 300, Baseline: 2000, Saved: 1700,
		BypassByFamily: map[string]int{"batch-oom": 1}}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if got := f.String(); !strings.Contains(got, "bypass_steps=1 grouped_closed=0 results=3") || !strings.Contains(got, "savings=85.0%") {
		t.Errorf("figures line %q lacks the bypass, result and savings figures", got)
	}
}

func TestCheckResultsFails(t *testing.T) {
	tests := []struct {
		name string
		edit func(truth []truthEntry, rs []openrecall.Result) []openrecall.Result
		want string // a substring of one failure
	}{
		{"bypassed attack", func(truth []truthEntry, rs []openrecall.Result) []openrecall.Result {
			truth[0].Truth, truth[0].Kind = truthAttack, "disguised"
			return rs
		}, "memory bypassed an alert whose truth is attack (disguised, family batch-oom)"},
		{"bypassed real incident", func(truth []truthEntry, rs []openrecall.Result) []openrecall.Result {
			truth[0].Truth, truth[0].Kind = truthReal, "novel"
			return rs
		}, "memory bypassed an alert whose truth is real"},
		{"bypassed one-off", func(truth []truthEntry, rs []openrecall.Result) []openrecall.Result {
			truth[0].Kind = "one-off"
			return rs
		}, "only benign family repeats may be bypassed"},
		{"bypass with attack pattern", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[0].Fingerprint.AttackPattern = "malware"
			return rs
		}, "bypassed an alert with attack pattern malware"},
		{"attack closed as benign by a model", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Decision = openrecall.DecisionFalsePositive
			return rs
		}, "benign decision false_positive on an alert with attack pattern brute_force"},
		{"missing result", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			return rs[:2]
		}, "printed 2 results, want one per alert of the queue: 3"},
		{"out of order", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[0], rs[1] = rs[1], rs[0]
			return rs
		}, "out of input order"},
		{"audit shorter than route", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Audit = rs[1].Audit[:2]
			return rs
		}, "3 route steps but 2 audit entries"},
		{"audit of another analysis", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Audit[2].AnalysisID = "b-9"
			return rs
		}, `belongs to analysis "b-9"`},
		{"cost above baseline", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Cost = 1001
			return rs
		}, "cost $0.000001 (1001 nano-USD) is above its baseline $0.000000 (300 nano-USD)"},
		{"a strong answer counted as a saving", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Baseline = 1000
			return rs
		}, "no strong call was spared, yet baseline $0.000001 (1000 nano-USD) differs from cost $0.000000 (300 nano-USD)"},
		{"bypass that costs", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[0].Cost = 5
			return rs
		}, "a memory bypass cost"},
		{"no bypass at all", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[0].Bypassed = false
			rs[0].Steps[2] = openrecall.RouteStep{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong}
			rs[0].Audit[2].Step = openrecall.StepAnalysis
			return rs
		}, "no memory bypass at all"},
		{"bypass flag without step", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Bypassed = true
			return rs
		}, "bypassed=true but 0 memory-bypass steps"},
		{"resolved triaged", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[2].Outcome = openrecall.ResultTriaged
			rs[2].Baseline = 10
			return rs
		}, "a resolved notification must be recorded"},
		{"live call in deterministic mode", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Steps[2].Live = true
			return rs
		}, "reports a live model call in a deterministic run"},
		{"wrong alert id", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Alert.ID = "ssh-2"
			return rs
		}, `alert id "ssh-2", want "ssh-1"`},
		{"rejected record", func(_ []truthEntry, rs []openrecall.Result) []openrecall.Result {
			rs[1].Outcome, rs[1].Error = openrecall.ResultRejected, "invalid JSON"
			return rs
		}, "rejected (invalid JSON)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			truth, results := sample()
			results = tt.edit(truth, results)
			_, fails := checkResults(truth, results)
			for _, f := range fails {
				if strings.Contains(f, tt.want) {
					return
				}
			}
			t.Errorf("no failure contains %q; got:\n%s", tt.want, strings.Join(fails, "\n"))
		})
	}
}

func TestCheckExampleTargets(t *testing.T) {
	tests := []struct {
		name string
		f    figures
		want []string
	}{
		{"met", figures{BypassSteps: 30, Cheap: 1, Strong: 1, Baseline: 100, Cost: 50}, nil},
		{"too few bypasses", figures{BypassSteps: 29, Cheap: 1, Strong: 1, Baseline: 100, Cost: 50}, []string{"example: 29 memory bypasses and 0 firings closed through a bypassed head's group, want at least 30 together"}},
		{"no tiers", figures{BypassSteps: 40, Baseline: 100, Cost: 50}, []string{"example: the cheap model tier was never used", "example: the strong model tier was never used"}},
		{"savings below half", figures{BypassSteps: 40, Cheap: 1, Strong: 1, Baseline: 100, Cost: 51}, []string{"example: savings 49.0%, want at least 50%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, checkExampleTargets(tt.f)); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckCostPoints(t *testing.T) {
	good := []openrecall.CostPoint{
		{Index: 0, AlertID: "a", Cost: 0, Baseline: 10, CumulativeCost: 0, CumulativeBaseline: 10},
		{Index: 1, AlertID: "b", Cost: 4, Baseline: 10, CumulativeCost: 4, CumulativeBaseline: 20},
	}
	tests := []struct {
		name string
		edit func([]openrecall.CostPoint) []openrecall.CostPoint
		want string
	}{
		{"valid", func(p []openrecall.CostPoint) []openrecall.CostPoint { return p }, ""},
		{"cost above baseline", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[1].Cost, p[1].CumulativeCost = 11, 11
			return p
		}, "cost point 1 (alert b): cost $0.000000 (11 nano-USD), baseline $0.000000 (10 nano-USD)"},
		{"cumulative inconsistent", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[1].CumulativeBaseline = 25
			return p
		}, "cost point 1: cumulative cost"},
		{"missing point", func(p []openrecall.CostPoint) []openrecall.CostPoint { return p[:1] }, "cost curve has 1 points, want one per triaged alert: 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.edit(append([]openrecall.CostPoint(nil), good...))
			fails := checkCostPoints(p, 2, 4, 20)
			if tt.want == "" {
				if len(fails) > 0 {
					t.Fatalf("valid curve failed: %v", fails)
				}
				return
			}
			for _, f := range fails {
				if strings.Contains(f, tt.want) {
					return
				}
			}
			t.Errorf("no failure contains %q; got %v", tt.want, fails)
		})
	}
}

func TestLoadTruth(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body, wantErr string
	}{
		{"valid", `{"alerts":[{"line":1,"truth":"benign","kind":"repeat","family":"f"}]}`, ""},
		{"unknown truth", `{"alerts":[{"line":1,"truth":"maybe","kind":"repeat","family":"f"}]}`, `truth "maybe" is not benign, real or attack`},
		{"no family", `{"alerts":[{"line":1,"truth":"real","kind":"novel"}]}`, "line, kind and family are required"},
		{"empty", `{"alerts":[]}`, "no alerts"},
		{"not json", `{`, "unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadTruth(path)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("loadTruth: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("loadTruth error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestBundledTruth checks that the repository's truth file loads and covers
// every kind the smoke test reasons about.
func TestBundledTruth(t *testing.T) {
	truth, err := loadTruth(filepath.Join("..", "..", "examples", "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range truth {
		kinds[e.Truth+"/"+e.Kind]++
	}
	for _, k := range []string{"benign/repeat", "benign/one-off", "benign/resolved", "real/novel", "attack/attack", "attack/disguised", "attack/injection"} {
		if kinds[k] == 0 {
			t.Errorf("examples/truth.json has no %s alert", k)
		}
	}
}
