package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
)

// performanceDoc is where the measured figures live; its table of savings
// on the bundled queue has a `make run` row that this package's golden
// document of the example run decides.
var performanceDoc = filepath.Join("..", "..", "docs", "performance.md")

// makeRunRowPrefix starts the `make run` row of the savings table.
const makeRunRowPrefix = "| `make run` (after `memory seed`;"

// makeRunRow renders the `make run` row of docs/performance.md's savings
// table from the summary of the example run's golden document: groups and
// grouped firings, bypasses, model calls per tier, cost, baseline and the
// savings split into bypasses with cheap differences and group members.
func makeRunRow(golden []byte) (string, error) {
	var doc struct {
		Summary struct {
			Bypassed   int `json:"bypassed"`
			Grouped    int `json:"grouped"`
			Groups     int `json:"groups"`
			ModelCalls struct {
				Cheap  int `json:"cheap"`
				Strong int `json:"strong"`
			} `json:"model_calls"`
			GroupedSaved openrecall.NanoUSD `json:"grouped_saved_nano_usd"`
			Excepted     int                `json:"excepted"`
			Unanalysed   int                `json:"escalated_without_analysis"`
			Cost         openrecall.NanoUSD `json:"cost_nano_usd"`
			Baseline     openrecall.NanoUSD `json:"baseline_nano_usd"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(golden, &doc); err != nil {
		return "", err
	}
	s := doc.Summary
	if s.Excepted != 0 || s.Unanalysed != 0 {
		return "", fmt.Errorf("the example run now has %d excepted and %d unanalysed alerts: the row has no column for them, extend makeRunRow and the table", s.Excepted, s.Unanalysed)
	}
	saved := s.Baseline - s.Cost
	return fmt.Sprintf("%s %d groups, %d firings grouped) | %d | %d / %d | %s | %s | **%.1f %%** (%s = the %d bypassed baselines and %d cheap differences %s + the %d group members %s) |",
		makeRunRowPrefix, s.Groups, s.Grouped, s.Bypassed, s.ModelCalls.Cheap, s.ModelCalls.Strong, s.Cost, s.Baseline,
		costcurve.SavingsPercent(saved, s.Baseline), saved, s.Bypassed, s.ModelCalls.Cheap, saved-s.GroupedSaved, s.Grouped, s.GroupedSaved), nil
}

// TestPerformanceDocSavings holds the `make run` row of docs/performance.md
// to the golden document of the same run (analyze on the seeded example,
// analyze_example.golden.json): when the golden changes, the published
// figures change with it. -update rewrites the row.
func TestPerformanceDocSavings(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "analyze_example.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := makeRunRow(golden)
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(performanceDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(body), "\n")
	at := -1
	for i, line := range lines {
		if strings.HasPrefix(line, makeRunRowPrefix) {
			if at >= 0 {
				t.Fatalf("%s has two `make run` rows (lines %d and %d)", performanceDoc, at+1, i+1)
			}
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("%s has no row starting %q", performanceDoc, makeRunRowPrefix)
	}
	if lines[at] == want {
		return
	}
	if *update {
		lines[at] = want
		if err := os.WriteFile(performanceDoc, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s:%d is not the example run's golden summary (rerun with -update):\n got  %s\n want %s", performanceDoc, at+1, lines[at], want)
}
