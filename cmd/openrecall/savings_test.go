package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// analyzeJSON is the --output json document of analyze.
type analyzeJSON struct {
	Results []openrecall.Result `json:"results"`
	Summary struct {
		Triaged            int                `json:"triaged"`
		Bypassed           int                `json:"bypassed"`
		Unanalysed         int                `json:"escalated_without_analysis"`
		UnanalysedBaseline openrecall.NanoUSD `json:"escalated_without_analysis_baseline_nano_usd"`
		Cost               openrecall.NanoUSD `json:"cost_nano_usd"`
		Baseline           openrecall.NanoUSD `json:"baseline_nano_usd"`
	} `json:"summary"`
}

// honest is what the savings of a run are by DESIGN §7, recomputed from its
// results with hand-written prices (gpt-4o: 2500 and 10000 nano-dollars a
// prompt and a completion token; gpt-4o-mini: 150 and 600), independent of
// the production price function.
type honest struct {
	saved, analysedBaseline openrecall.NanoUSD
	unanalysed              int
}

func checkHonest(t *testing.T, doc analyzeJSON) honest {
	t.Helper()
	perToken := map[string][2]openrecall.NanoUSD{"gpt-4o": {2500, 10000}, "gpt-4o-mini": {150, 600}}
	var h honest
	var cost, baseline openrecall.NanoUSD
	for _, r := range doc.Results {
		if r.Outcome != openrecall.ResultTriaged {
			continue
		}
		cost += r.Cost
		baseline += r.Baseline
		var calls []openrecall.RouteStep
		for _, s := range r.Steps {
			if s.Step == openrecall.StepAnalysis && !s.Skipped {
				calls = append(calls, s)
				p, ok := perToken[s.Model]
				if !ok {
					t.Fatalf("%s: step priced as %q, not a model of this test's table", r.Position, s.Model)
				}
				if want := openrecall.NanoUSD(s.PromptTokens)*p[0] + openrecall.NanoUSD(s.CompletionTokens)*p[1]; s.Cost != want {
					t.Errorf("%s: %s step cost %d, want %d·%d + %d·%d = %d", r.Position, s.Tier, s.Cost, s.PromptTokens, p[0], s.CompletionTokens, p[1], want)
				}
			}
		}
		cheapPass := len(calls) == 1 && calls[0].Tier == openrecall.TierCheap && calls[0].Outcome == openrecall.OutcomeAccepted
		switch {
		case len(calls) > 1:
			t.Errorf("%s: %d model calls; the strong model never follows the cheap one", r.Position, len(calls))
		case r.EscalatedWithoutAnalysis:
			h.unanalysed++
			if r.Baseline != r.Cost || r.Decision != openrecall.DecisionEscalated {
				t.Errorf("%s: escalated without analysis, yet baseline %d, cost %d, decision %s", r.Position, r.Baseline, r.Cost, r.Decision)
			}
			continue
		case r.Bypassed:
			if r.Cost != 0 || r.Baseline <= 0 {
				t.Errorf("%s: bypass cost %d baseline %d", r.Position, r.Cost, r.Baseline)
			}
			h.saved += r.Baseline
		case r.Grouped():
			// A group member makes no call: its whole baseline is saved,
			// counted apart from bypasses (DESIGN §6a).
			if len(calls) != 0 || r.Cost != 0 || r.Baseline <= 0 {
				t.Errorf("%s: group member with %d calls, cost %d, baseline %d", r.Position, len(calls), r.Cost, r.Baseline)
			}
			h.saved += r.Baseline
		case cheapPass:
			if r.Cost > r.Baseline {
				t.Errorf("%s: cheap answer cost %d above its baseline %d", r.Position, r.Cost, r.Baseline)
			}
			h.saved += r.Baseline - r.Cost
		default:
			if r.Baseline != r.Cost {
				t.Errorf("%s: no strong call spared (route %s), yet baseline %d != cost %d", r.Position, routeName(r), r.Baseline, r.Cost)
			}
		}
		h.analysedBaseline += r.Baseline
	}
	if cost != doc.Summary.Cost || baseline != doc.Summary.Baseline {
		t.Errorf("summary cost %d baseline %d, results total %d and %d", doc.Summary.Cost, doc.Summary.Baseline, cost, baseline)
	}
	if got := doc.Summary.Baseline - doc.Summary.Cost; got != h.saved {
		t.Errorf("summary savings %d, want bypassed baselines plus cheap differences %d", got, h.saved)
	}
	if doc.Summary.Unanalysed != h.unanalysed || doc.Summary.Baseline-doc.Summary.UnanalysedBaseline != h.analysedBaseline {
		t.Errorf("summary: %d escalated without analysis, analysed baseline %d; results: %d, %d",
			doc.Summary.Unanalysed, doc.Summary.Baseline-doc.Summary.UnanalysedBaseline, h.unanalysed, h.analysedBaseline)
	}
	return h
}

func (h honest) percent() string {
	if h.analysedBaseline == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(h.saved)/float64(h.analysedBaseline))
}

func analyzeDoc(t *testing.T, wantCode int, args ...string) (analyzeJSON, string) {
	t.Helper()
	r := runCLI(t, "", append([]string{"analyze", "--output", "json"}, args...)...)
	if r.code != wantCode {
		t.Fatalf("analyze %v: exit %d, want %d\n%s", args, r.code, wantCode, r.stderr)
	}
	var doc analyzeJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("decode --output json: %v", err)
	}
	return doc, r.stderr
}

// TestAnalyzeEmptyMemorySavesNothing: with an empty memory only group
// members save (DESIGN §6a, §7): without grouping nothing is saved, and
// with it the savings are exactly the members' baselines.
func TestAnalyzeEmptyMemorySavesNothing(t *testing.T) {
	doc, stderr := analyzeDoc(t, exitOK, "--db", filepath.Join(t.TempDir(), "fresh.db"), "--no-grouping", "../../examples/queue.jsonl")
	h := checkHonest(t, doc)
	if h.saved != 0 || doc.Summary.Bypassed != 0 || doc.Summary.Cost != doc.Summary.Baseline || doc.Summary.Cost <= 0 {
		t.Errorf("empty memory: saved %d, %d bypasses, cost %d, baseline %d; want nothing saved on a priced run", h.saved, doc.Summary.Bypassed, doc.Summary.Cost, doc.Summary.Baseline)
	}
	if !strings.Contains(stderr, "= 0.0% of the baseline") {
		t.Errorf("summary does not state 0.0%% savings:\n%s", stderr)
	}
	doc, _ = analyzeDoc(t, exitOK, "--db", filepath.Join(t.TempDir(), "fresh.db"), "../../examples/queue.jsonl")
	h = checkHonest(t, doc)
	var members openrecall.NanoUSD
	for _, r := range doc.Results {
		if r.Grouped() {
			members += r.Baseline
		}
	}
	if doc.Summary.Bypassed != 0 || members == 0 || h.saved != members {
		t.Errorf("empty memory with groups: saved %d, %d bypasses; want exactly the group members' baselines %d", h.saved, doc.Summary.Bypassed, members)
	}
}

func TestAnalyzeSeededSavingsAreBypassesPlusCheapDifferences(t *testing.T) {
	doc, stderr := analyzeDoc(t, exitOK, "--db", seededDB(t), "../../examples/queue.jsonl")
	h := checkHonest(t, doc)
	if h.saved <= 0 || doc.Summary.Bypassed == 0 {
		t.Fatalf("seeded memory: saved %d with %d bypasses, want a positive saving", h.saved, doc.Summary.Bypassed)
	}
	if want := "= " + h.percent() + " of the baseline of the " + fmt.Sprint(doc.Summary.Triaged) + " analysed alerts"; !strings.Contains(stderr, want) {
		t.Errorf("summary lacks %q:\n%s", want, stderr)
	}
}

func TestAnalyzeBudgetEscalatesWithoutAnalysisAndExits6(t *testing.T) {
	doc, stderr := analyzeDoc(t, exitUnanalysed, "--db", seededDB(t), "--budget-usd", "0.01", "../../examples/queue.jsonl")
	h := checkHonest(t, doc)
	if h.unanalysed == 0 {
		t.Fatal("a one-cent budget left every alert analysed; the test no longer exercises the budget")
	}
	analysed := doc.Summary.Triaged - h.unanalysed
	for _, want := range []string{
		fmt.Sprintf("escalated without analysis  %d alerts", h.unanalysed),
		"= " + h.percent() + " of the baseline of the " + fmt.Sprint(analysed) + " analysed alerts",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
}

func TestAnalyzePeerStyleQueueEmptyMemorySavesNothing(t *testing.T) {
	// Regression: free-text alerts on an empty memory once reported 72%
	// savings (the baseline priced the strong completion at its cap and a
	// classification call no pipeline makes).
	db := filepath.Join(t.TempDir(), "fresh.db")
	doc, stderr := analyzeDoc(t, exitOK, "--db", db, "--format", "text", "testdata/peer_queue.txt")
	h := checkHonest(t, doc)
	if doc.Summary.Triaged != 12 || h.saved != 0 || doc.Summary.Baseline != doc.Summary.Cost {
		t.Errorf("%d triaged, saved %d (cost %d, baseline %d): want 12 and nothing saved", doc.Summary.Triaged, h.saved, doc.Summary.Cost, doc.Summary.Baseline)
	}
	if !strings.Contains(stderr, "= 0.0% of the baseline") {
		t.Errorf("summary does not state 0.0%% savings:\n%s", stderr)
	}
}

func TestAnalyzeWorkersCostIdentical(t *testing.T) {
	// The expected completion is frozen at the start of a run: a memory
	// that has recorded strong completions prices the run the same under
	// one worker and four.
	var docs []analyzeJSON
	for _, workers := range []string{"1", "4"} {
		db := seededDB(t)
		analyzeDoc(t, exitOK, "--db", db, "../../examples/queue.jsonl") // records strong completions
		doc, _ := analyzeDoc(t, exitOK, "--db", db, "--workers", workers, "../../examples/queue.jsonl")
		checkHonest(t, doc)
		docs = append(docs, doc)
	}
	if docs[0].Summary != docs[1].Summary {
		t.Errorf("summary under 1 worker %+v, under 4 %+v", docs[0].Summary, docs[1].Summary)
	}
	for i := range docs[0].Results {
		a, b := docs[0].Results[i], docs[1].Results[i]
		if a.Cost != b.Cost || a.Baseline != b.Baseline {
			t.Errorf("%s: cost/baseline %d/%d under 1 worker, %d/%d under 4", a.Position, a.Cost, a.Baseline, b.Cost, b.Baseline)
		}
	}
}

func TestCostAgreesWithAnalyzeAndSaysEstimated(t *testing.T) {
	db := seededDB(t)
	doc, _ := analyzeDoc(t, exitUnanalysed, "--db", db, "--budget-usd", "0.05", "../../examples/queue.jsonl")
	h := checkHonest(t, doc)
	svg := filepath.Join(t.TempDir(), "curve.svg")
	r := runCLI(t, "", "--db", db, "cost", "--svg", svg)
	if r.code != exitOK {
		t.Fatalf("cost: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		fmt.Sprintf("%d escalated without analysis", h.unanalysed),
		"costs estimated, not billed",
		"= " + h.percent() + " of the baseline of the " + fmt.Sprint(doc.Summary.Triaged-h.unanalysed) + " analysed alerts",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("cost output lacks %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(b), "costs estimated, not billed") {
		t.Errorf("the SVG does not say the costs are estimated (%v)", err)
	}
	j := runCLI(t, "", "--db", db, "cost", "--output", "json")
	var sum struct {
		Savings    openrecall.NanoUSD `json:"savings_nano_usd"`
		Unanalysed int                `json:"escalated_without_analysis"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Savings != h.saved || sum.Unanalysed != h.unanalysed {
		t.Errorf("cost: saved %d, %d unanalysed; analyze results: %d, %d", sum.Savings, sum.Unanalysed, h.saved, h.unanalysed)
	}
}

func TestAnalyzeBaselineUsesTheRecordedMeanCompletion(t *testing.T) {
	// A memory that has seen the strong model answer prices the next run's
	// bypasses with the mean of those answers instead of the configured
	// 220 tokens: each bypass baseline moves by (mean − 220) completion
	// tokens at 10000 nano-dollars each.
	fresh := seededDB(t)
	plain, _ := analyzeDoc(t, exitOK, "--db", fresh, "../../examples/queue.jsonl")

	seen := filepath.Join(t.TempDir(), "seen.db")
	first, _ := analyzeDoc(t, exitOK, "--db", seen, "../../examples/queue.jsonl") // empty memory: every alert strong
	var calls, tokens int
	for _, r := range first.Results {
		for _, s := range r.Steps {
			if s.Tier == openrecall.TierStrong && !s.Skipped && s.CompletionTokens > 0 {
				calls++
				tokens += s.CompletionTokens
			}
		}
	}
	if calls == 0 {
		t.Fatal("no strong call on an empty memory")
	}
	mean := (tokens + calls/2) / calls
	if r := runCLI(t, "", "--db", seen, "memory", "seed"); r.code != exitOK {
		t.Fatalf("memory seed: exit %d\n%s", r.code, r.stderr)
	}
	second, _ := analyzeDoc(t, exitOK, "--db", seen, "../../examples/queue.jsonl")
	bypasses := 0
	for i, r := range second.Results {
		if !r.Bypassed {
			continue
		}
		bypasses++
		if want := plain.Results[i].Baseline + openrecall.NanoUSD(mean-220)*10000; r.Baseline != want {
			t.Errorf("%s: bypass baseline %d, want %d (mean completion %d tokens instead of 220)", r.Position, r.Baseline, want, mean)
		}
	}
	if bypasses == 0 {
		t.Fatal("no bypass after memory seed")
	}
}

func TestAnalyzeRejectedWinsOverUnanalysed(t *testing.T) {
	// DESIGN §11: exit 3 (some records rejected) comes before 6 (some
	// alerts escalated without analysis).
	db := filepath.Join(t.TempDir(), "m.db")
	r := runCLI(t, "not json\n{\"title\":\"checkout 5xx spike\"}\n", "--db", db, "analyze", "--format", "jsonl", "--budget-usd", "0.000001", "--output", "jsonl", "-")
	if r.code != exitPartial {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitPartial, r.stderr)
	}
	if !strings.Contains(r.stderr, "escalated without analysis  1 alerts") {
		t.Errorf("summary does not count the alert escalated without analysis:\n%s", r.stderr)
	}
	rs := decodeResults(t, r.stdout)
	if len(rs) != 2 || !rs[1].EscalatedWithoutAnalysis || rs[1].Cost != 0 || rs[1].Baseline != 0 {
		t.Errorf("results %+v: want the alert escalated without analysis, at no cost and no baseline", rs)
	}
}
