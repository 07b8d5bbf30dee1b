package property

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/tests/property/gen"
)

// The expected-steps model of DESIGN §7, written from the design and the
// generated input alone (not from the router): which records give which
// results, which route steps each result has, in which order, and — where
// the input settles it — whether memory bypasses the model, the cheap model
// confirms or the strong model is forced.

// Routes the model predicts for a triaged alert.
const (
	routeAny    = ""       // the input does not settle it
	routeBypass = "bypass" // memory vouches: no model call
	routeCheap  = "cheap"  // consistent benign memory the guard did not bypass
	routeStrong = "strong" // attack, unclassified, weak, absent or real memory
	// routeGrouped: a later firing of an alert already triaged in the run
	// (same identity, DNA, status and severity, within the window):
	// the head's decision, no model call (DESIGN §6a).
	routeGrouped = "grouped"
)

// wantResult is what one result must look like.
type wantResult struct {
	outcome string
	family  int // -1 when the record is not of a generated family
	route   string
}

// steps returns the route step names the result must have, in order.
func (w wantResult) steps() []string {
	switch {
	case w.outcome != openrecall.ResultTriaged:
		return []string{openrecall.StepIntake}
	case w.route == routeBypass:
		return []string{openrecall.StepIntake, openrecall.StepFingerprint, openrecall.StepMemoryBypass}
	case w.route == routeGrouped:
		return []string{openrecall.StepIntake, openrecall.StepFingerprint, openrecall.StepGrouped}
	case w.route == routeAny:
		return []string{openrecall.StepIntake, openrecall.StepFingerprint, openrecall.StepMemoryBypass + "|" + openrecall.StepAnalysis}
	}
	return []string{openrecall.StepIntake, openrecall.StepFingerprint, openrecall.StepAnalysis}
}

// memoryRoute is the route DESIGN §7 gives an alert of family f rendered
// with its labels (asWebhook: as an Alertmanager webhook entry), given the
// memories the run seeded. Only memories of the alert's own identity vote
// (§5), and the generated families have distinct identities (P26), so only
// the family's own seeds count.
func memoryRoute(in gen.WorkflowInput, f int, asWebhook bool) string {
	fam := gen.AlertFamilies()[f]
	if fam.Attack || fam.Anonymous {
		return routeStrong
	}
	if asWebhook && (len(fam.Labels) == 0 || fam.Service != "" || fam.Environment != "") {
		// A webhook carries labels only: the family's other fields are lost.
		return routeAny
	}
	total := 0
	decisions := map[openrecall.Decision]bool{}
	for _, s := range in.AllSeeds() {
		if s.N == 0 || s.Family != f {
			continue
		}
		total += s.N
		d := openrecall.MemoryDecisions[s.Decision%len(openrecall.MemoryDecisions)]
		if s.Dissent < s.N {
			decisions[d] = true
		}
		if s.Dissent > 0 {
			decisions[openrecall.DecisionReal] = true
		}
	}
	if total == 0 {
		return routeStrong
	}
	if len(decisions) != 1 {
		return routeAny
	}
	for d := range decisions {
		switch {
		case !designBenign(string(d)):
			return routeStrong
		case total < 5:
			return routeCheap
		}
	}
	// Clause (e): a webhook entry has no severity (unknown counts as
	// critical); the memories carry the family's.
	memory := designSeverityRank(fam.Severity, 3)
	alert := memory
	if asWebhook {
		alert = 5
	}
	if alert > memory {
		return routeStrong
	}
	return routeBypass
}

// designSeverityRank ranks a source severity as DESIGN §3 and §6 do:
// critical 5, high 4, medium 3, low 2, info 1; unknown ranks as
// unknownRank (critical for an alert, medium for a memory).
func designSeverityRank(source string, unknownRank int) int {
	switch strings.ToLower(source) {
	case "critical":
		return 5
	case "high", "error":
		return 4
	case "medium", "warning":
		return 3
	case "low":
		return 2
	case "info":
		return 1
	}
	return unknownRank
}

// expectedRun lists the results in's queue must give, in input order.
// Grouping is on (DESIGN §6a): the generated families have distinct
// identities (P26) and noise-invariant DNA (P2), each family renders one
// severity, and every alert of a form shares one time (JSON lines: the
// run's clock; webhook entries: their startsAt, hours from it), so the
// firings of one family in one form make one group, and a family without
// identity none; the bare strings are one alert.
func expectedRun(in gen.WorkflowInput) []wantResult {
	var out []wantResult
	headed := map[string]bool{}
	for _, r := range in.AllRecords() {
		f := r.Alert.Family % len(gen.AlertFamilies())
		triaged := func(webhook bool) wantResult {
			key := fmt.Sprint(f, webhook)
			if !gen.AlertFamilies()[f].Anonymous {
				if headed[key] {
					return wantResult{openrecall.ResultTriaged, f, routeGrouped}
				}
				headed[key] = true
			}
			return wantResult{openrecall.ResultTriaged, f, memoryRoute(in, f, webhook)}
		}
		switch gen.RecordKinds()[r.Kind%len(gen.RecordKinds())] {
		case "alert", "re-sent alert":
			out = append(out, triaged(false))
		case "webhook with two alerts":
			out = append(out, triaged(true), triaged(true))
		case "mixed-status webhook":
			out = append(out, triaged(true), wantResult{openrecall.ResultResolved, f, routeAny})
		case "resolved webhook":
			out = append(out, wantResult{openrecall.ResultResolved, f, routeAny})
		case "invalid JSON", "empty object":
			out = append(out, wantResult{openrecall.ResultRejected, -1, routeAny})
		case "bare string":
			route := routeAny
			if headed["bare"] {
				route = routeGrouped
			}
			headed["bare"] = true
			out = append(out, wantResult{openrecall.ResultTriaged, -1, route})
		default:
			panic("expectedRun: unknown record kind")
		}
	}
	return out
}

// checkExpectedSteps compares a run's results with the expected-steps model.
func checkExpectedSteps(in gen.WorkflowInput, results []openrecall.Result) error {
	want := expectedRun(in)
	if len(results) != len(want) {
		return fmt.Errorf("results: %d results for %d records, want %d", len(results), len(in.AllRecords()), len(want))
	}
	for i, r := range results {
		w := want[i]
		if r.Outcome != w.outcome {
			return fmt.Errorf("outcome: result %d (%s) is %s, want %s", i, r.Position, r.Outcome, w.outcome)
		}
		ws := w.steps()
		if len(r.Steps) != len(ws) {
			return fmt.Errorf("steps: %s has %d steps %v, want %v", r.Position, len(r.Steps), stepNames(r.Steps), ws)
		}
		for k, s := range r.Steps {
			if !strings.Contains("|"+ws[k]+"|", "|"+s.Step+"|") {
				return fmt.Errorf("steps: %s step %d is %s, want %s (steps %v)", r.Position, k, s.Step, ws[k], stepNames(r.Steps))
			}
		}
		if w.outcome == openrecall.ResultTriaged && (w.route == routeCheap || w.route == routeStrong) {
			last := r.Steps[len(r.Steps)-1]
			if string(last.Tier) != w.route {
				return fmt.Errorf("tier: %s (family %s) went to the %s model, want %s (%s)", r.Position, gen.AlertFamilies()[w.family].Name, last.Tier, w.route, last.Reason)
			}
		}
	}
	return nil
}

func stepNames(steps []openrecall.RouteStep) []string {
	var n []string
	for _, s := range steps {
		n = append(n, s.Step)
	}
	return n
}
