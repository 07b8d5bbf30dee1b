package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/openrecall/openrecall"
)

// figures are the system-level numbers of one analysed queue.
type figures struct {
	Results, Triaged, Resolved, Rejected int
	// BypassSteps counts memory-bypass route steps.
	BypassSteps int
	// GroupedClosed counts alert-group members closed benign under a head
	// memory bypassed (DESIGN §6a): no model call either.
	GroupedClosed int
	// Cheap and Strong count analysis steps per model tier.
	Cheap, Strong  int
	Cost, Baseline openrecall.NanoUSD
	// Saved is what the results say was saved, alert by alert: the
	// bypassed baselines, the group members' baselines and the cheap-answer
	// differences.
	Saved openrecall.NanoUSD
	// Unanalysed counts alerts escalated without analysis, and
	// UnanalysedBaseline is their baseline (their cost).
	Unanalysed         int
	UnanalysedBaseline openrecall.NanoUSD
	// BypassByFamily counts bypasses per ground-truth family.
	BypassByFamily map[string]int
}

// Savings returns Baseline minus Cost.
func (f figures) Savings() openrecall.NanoUSD { return f.Baseline - f.Cost }

// SavingsPercent returns the savings as a percentage of the baseline of the
// analysed alerts (those escalated without analysis left out).
func (f figures) SavingsPercent() float64 {
	analysed := f.Baseline - f.UnanalysedBaseline
	if analysed == 0 {
		return 0
	}
	return 100 * float64(f.Savings()) / float64(analysed)
}

// String returns the figures line the smoke test prints on success.
func (f figures) String() string {
	fams := make([]string, 0, len(f.BypassByFamily))
	for k, v := range f.BypassByFamily {
		fams = append(fams, fmt.Sprintf("%s:%d", k, v))
	}
	sort.Strings(fams)
	return fmt.Sprintf("bypass_steps=%d grouped_closed=%d results=%d triaged=%d resolved=%d cheap_calls=%d strong_calls=%d cost=%s baseline=%s savings=%.1f%% bypass_by_family=%s",
		f.BypassSteps, f.GroupedClosed, f.Results, f.Triaged, f.Resolved, f.Cheap, f.Strong, f.Cost, f.Baseline, f.SavingsPercent(), strings.Join(fams, ","))
}

// exact formats an amount for a failure message: dollars, and the exact
// nano-dollars that the six-decimal display rounds away.
func exact(n openrecall.NanoUSD) string { return fmt.Sprintf("%s (%d nano-USD)", n, int64(n)) }

// Example targets: what `make run` on the bundled example must show.
const (
	minExampleBypasses = 30
	// minExampleSavingsPercent is the least honest saving of the seeded
	// example: 48 of 93 alerts bypassed and 11 confirmed by the cheap model
	// save 66.3% of the strong-model baseline; below half, something stopped
	// bypassing.
	minExampleSavingsPercent = 50.0
)

// checkResults checks the results of analysing the example queue against its
// ground truth, one result per truth entry in the same order. It returns the
// figures and every failed assertion.
func checkResults(truth []truthEntry, results []openrecall.Result) (figures, []string) {
	f := figures{Results: len(results), BypassByFamily: map[string]int{}}
	var fails []string
	fail := func(format string, a ...any) { fails = append(fails, fmt.Sprintf(format, a...)) }

	if len(results) != len(truth) {
		fail("analyze printed %d results, want one per alert of the queue: %d", len(results), len(truth))
	}
	for i, r := range results {
		pos := r.Position
		pos.Source = ""
		where := fmt.Sprintf("result %d (%s, alert %s)", i, pos, r.Alert.ID)
		switch r.Outcome {
		case openrecall.ResultTriaged:
			f.Triaged++
		case openrecall.ResultResolved:
			f.Resolved++
		case openrecall.ResultRejected:
			f.Rejected++
			fail("%s: rejected (%s), but the example queue has no malformed records", where, r.Error)
		default:
			fail("%s: unknown outcome %q", where, r.Outcome)
		}

		var t *truthEntry
		if i < len(truth) {
			t = &truth[i]
			if want := t.Position(); pos != want {
				fail("%s: out of input order: want the result for %s here", where, want)
			}
			if t.ID != "" && r.Alert.ID != t.ID {
				fail("%s: alert id %q, want %q", where, r.Alert.ID, t.ID)
			}
			if t.Kind == "resolved" && r.Outcome != openrecall.ResultResolved {
				fail("%s: a resolved notification must be recorded, not triaged; outcome %q", where, r.Outcome)
			}
			if t.Kind != "resolved" && r.Outcome == openrecall.ResultResolved {
				fail("%s: a firing alert was recorded as resolved", where)
			}
		}

		if len(r.Steps) == 0 {
			fail("%s: no route steps", where)
		}
		if len(r.Steps) != len(r.Audit) {
			fail("%s: %d route steps but %d audit entries", where, len(r.Steps), len(r.Audit))
		}
		for j := 0; j < len(r.Steps) && j < len(r.Audit); j++ {
			if r.Audit[j].Step != r.Steps[j].Step || r.Audit[j].StepIndex != j {
				fail("%s: audit entry %d is for step %d %q, route step %d is %q", where, j, r.Audit[j].StepIndex, r.Audit[j].Step, j, r.Steps[j].Step)
			}
			if r.Audit[j].AnalysisID != r.AnalysisID {
				fail("%s: audit entry %d belongs to analysis %q, want %q", where, j, r.Audit[j].AnalysisID, r.AnalysisID)
			}
		}

		if r.Cost < 0 {
			fail("%s: negative cost %s", where, exact(r.Cost))
		}
		if r.Cost > r.Baseline {
			fail("%s: cost %s is above its baseline %s", where, exact(r.Cost), exact(r.Baseline))
		}
		if r.Outcome == openrecall.ResultTriaged && r.Baseline <= 0 && !r.EscalatedWithoutAnalysis {
			fail("%s: an analysed alert has baseline %s, want > 0", where, exact(r.Baseline))
		}
		f.Cost += r.Cost
		f.Baseline += r.Baseline
		// Honest savings (DESIGN §7): only a bypass, a group member
		// (§6a) or a passing cheap answer saves; every other alert's
		// baseline is its cost.
		switch {
		case r.Outcome != openrecall.ResultTriaged:
		case r.Bypassed:
			f.Saved += r.Baseline - r.Cost
		case r.Grouped():
			for _, s := range r.Steps {
				if s.Step == openrecall.StepAnalysis {
					fail("%s: a group member has an analysis step", where)
				}
			}
			f.Saved += r.Baseline - r.Cost
			if r.Decision.Benign() {
				f.GroupedClosed++
				if t != nil && !t.MayBypass() {
					fail("%s: closed through its alert group an alert whose truth is %s (%s, family %s)", where, t.Truth, t.Kind, t.Family)
				}
			}
		case cheapPassed(r):
			f.Saved += r.Baseline - r.Cost
		case r.Baseline != r.Cost:
			fail("%s: no strong call was spared, yet baseline %s differs from cost %s", where, exact(r.Baseline), exact(r.Cost))
		}
		if r.EscalatedWithoutAnalysis {
			f.Unanalysed++
			f.UnanalysedBaseline += r.Baseline
		}

		bypassSteps := 0
		for _, s := range r.Steps {
			if s.Live && r.Mode.Model == "deterministic" {
				fail("%s: step %s reports a live model call in a deterministic run", where, s.Step)
			}
			switch {
			case s.Step == openrecall.StepMemoryBypass:
				bypassSteps++
			case s.Step == openrecall.StepAnalysis && s.Tier == openrecall.TierCheap && !s.Skipped:
				f.Cheap++
			case s.Step == openrecall.StepAnalysis && s.Tier == openrecall.TierStrong && !s.Skipped:
				f.Strong++
			}
		}
		f.BypassSteps += bypassSteps
		if r.Bypassed != (bypassSteps > 0) {
			fail("%s: bypassed=%t but %d memory-bypass steps", where, r.Bypassed, bypassSteps)
		}
		if r.Bypassed {
			if r.Cost != 0 {
				fail("%s: a memory bypass cost %s, want 0", where, exact(r.Cost))
			}
			if r.Fingerprint.HasAttack() {
				fail("%s: bypassed an alert with attack pattern %s", where, r.Fingerprint.AttackPattern)
			}
			if t != nil {
				if !t.MayBypass() {
					fail("%s: memory bypassed an alert whose truth is %s (%s, family %s); only benign family repeats may be bypassed", where, t.Truth, t.Kind, t.Family)
				}
				f.BypassByFamily[t.Family]++
			}
		}
		if r.Decision.Benign() && r.Fingerprint.HasAttack() {
			fail("%s: benign decision %s on an alert with attack pattern %s", where, r.Decision, r.Fingerprint.AttackPattern)
		}
		if t != nil && t.Truth == truthAttack && r.Decision.Benign() {
			fail("%s: an attack (%s) was closed as %s", where, t.Family, r.Decision)
		}
	}
	if f.BypassSteps == 0 {
		fail("no memory bypass at all: seeded benign families should be bypassed")
	}
	if f.Savings() <= 0 {
		fail("no savings: cost %s, baseline %s", exact(f.Cost), exact(f.Baseline))
	}
	if f.Savings() != f.Saved {
		fail("savings %s are not the bypassed and grouped baselines plus the cheap differences %s", exact(f.Savings()), exact(f.Saved))
	}
	return f, fails
}

// cheapPassed reports whether a result's one model call was a cheap answer
// that passed the gate.
func cheapPassed(r openrecall.Result) bool {
	var calls []openrecall.RouteStep
	for _, s := range r.Steps {
		if s.Step == openrecall.StepAnalysis && !s.Skipped {
			calls = append(calls, s)
		}
	}
	return len(calls) == 1 && calls[0].Tier == openrecall.TierCheap && calls[0].Outcome == openrecall.OutcomeAccepted
}

// checkExampleTargets checks what the bundled example is built to show.
func checkExampleTargets(f figures) []string {
	var fails []string
	if f.BypassSteps+f.GroupedClosed < minExampleBypasses {
		fails = append(fails, fmt.Sprintf("example: %d memory bypasses and %d firings closed through a bypassed head's group, want at least %d together",
			f.BypassSteps, f.GroupedClosed, minExampleBypasses))
	}
	if f.Cheap == 0 {
		fails = append(fails, "example: the cheap model tier was never used")
	}
	if f.SavingsPercent() < minExampleSavingsPercent {
		fails = append(fails, fmt.Sprintf("example: savings %.1f%%, want at least %.0f%%", f.SavingsPercent(), minExampleSavingsPercent))
	}
	if f.Strong == 0 {
		fails = append(fails, "example: the strong model tier was never used")
	}
	return fails
}

// checkCostPoints checks a run's persisted cost curve: one point per triaged
// result, cost ≤ baseline at every point, cumulative sums consistent and
// non-decreasing, and the savings band non-decreasing.
func checkCostPoints(points []openrecall.CostPoint, triaged int, cost, baseline openrecall.NanoUSD) []string {
	var fails []string
	fail := func(format string, a ...any) { fails = append(fails, fmt.Sprintf(format, a...)) }
	if len(points) != triaged {
		fail("cost curve has %d points, want one per triaged alert: %d", len(points), triaged)
	}
	var cc, cb openrecall.NanoUSD
	for i, p := range points {
		if p.Index != i {
			fail("cost point %d has index %d", i, p.Index)
		}
		if p.Cost < 0 || p.Cost > p.Baseline {
			fail("cost point %d (alert %s): cost %s, baseline %s: want 0 ≤ cost ≤ baseline", i, p.AlertID, exact(p.Cost), exact(p.Baseline))
		}
		prevSavings := cb - cc
		cc += p.Cost
		cb += p.Baseline
		if p.CumulativeCost != cc || p.CumulativeBaseline != cb {
			fail("cost point %d: cumulative cost %s / baseline %s, want %s / %s", i, exact(p.CumulativeCost), exact(p.CumulativeBaseline), exact(cc), exact(cb))
		}
		if p.Savings() < prevSavings {
			fail("cost point %d: the savings band shrank from %s to %s", i, exact(prevSavings), exact(p.Savings()))
		}
	}
	if len(points) > 0 && (cc != cost || cb != baseline) {
		fail("cost curve totals %s / %s, results total %s / %s", exact(cc), exact(cb), exact(cost), exact(baseline))
	}
	return fails
}
