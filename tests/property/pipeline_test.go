package property

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/workflow"
)

// pipelineProperties are the rules of extraction, routing, cost, audit and
// the whole workflow.
func pipelineProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P2_fingerprint_deterministic_noise_invariant",
			"Extraction is deterministic and ignores label order and high-cardinality noise (pod hashes, IPs, numbers, timestamps): two alerts of one family that differ only there get the same fingerprint; attack_pattern comes only from explicit security signals.",
			"RawAlertGen", gen.RawAlertGen(), func(r gen.RawAlert) error {
				a, b := r.First(), r.Second()
				fa, fb := ex.Extract(a), ex.Extract(b)
				if again := ex.Extract(a); again != fa {
					return fmt.Errorf("determinism: one alert, two fingerprints %s and %s", fa, again)
				}
				if fa != fb {
					return fmt.Errorf("noise: %s and %s for two alerts of family %s that differ only in noise:\n  %q\n  %q",
						fa, fb, gen.AlertFamilies()[r.Family].Name, a.Title+" | "+a.Text, b.Title+" | "+b.Text)
				}
				if err := fa.Validate(); err != nil {
					return fmt.Errorf("canonical: %v", err)
				}
				if fam := gen.AlertFamilies()[r.Family]; fam.Attack != fa.HasAttack() {
					return fmt.Errorf("attack: family %s (security signals: %v) extracted attack_pattern %q", fam.Name, fam.Attack, fa.AttackPattern)
				}
				return nil
			},
			pbt.Found("a duration written as {n}m gave \"5mm\": a generator artifact, fixed with a {dur} placeholder", gen.RawAlert{Family: 3, B: gen.Noise{N: 8}}),
			pbt.Classify(func(r gen.RawAlert) []string { return []string{"family " + gen.AlertFamilies()[r.Family].Name} }),
			pbt.Cover("family bruteforce", 3), pbt.Cover("family crashloop", 3), pbt.Cover("family metadata4", 2), pbt.Cover("family sqliannotation", 2),
		),
		pbt.ForAll("P8_cumulative_cost_never_decreases",
			"Cumulative cost never decreases along the cost curve, and each point's cumulative sums are the running totals.",
			"CostCurveGen", gen.CostCurveGen(), func(steps []gen.CostStep) error {
				points := curve(steps)
				var prev openrecall.NanoUSD
				for i, p := range points {
					if p.CumulativeCost < prev {
						return fmt.Errorf("monotone: cumulative cost fell at point %d: %d → %d", i, prev, p.CumulativeCost)
					}
					if p.CumulativeCost != prev+steps[i].Cost || p.Index != i {
						return fmt.Errorf("sums: point %d has index %d cumulative %d, want %d", i, p.Index, p.CumulativeCost, prev+steps[i].Cost)
					}
					prev = p.CumulativeCost
				}
				if err := costcurve.Validate(points); err != nil {
					return fmt.Errorf("validate: a valid curve is refused: %v", err)
				}
				return nil
			},
			pbt.Pin("a thousand dollars then nothing", []gen.CostStep{{Cost: 1_000_000_000_000}, {}}),
		),
		pbt.ForAll("P9_bypass_costs_zero_keeps_baseline",
			"A memory-bypass step records cost 0, calls no model, and keeps a baseline greater than 0 (what the strong model would have cost at its expected completion), so the saving is visible.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				for _, r := range out.results {
					bypassSteps := 0
					for _, s := range r.Steps {
						if s.Step != openrecall.StepMemoryBypass {
							continue
						}
						bypassSteps++
						if s.Cost != 0 || s.Baseline <= 0 || s.Live || s.PromptTokens+s.CompletionTokens != 0 {
							return fmt.Errorf("bypass step: %s: cost %d baseline %d live %v tokens %d+%d", r.Position, s.Cost, s.Baseline, s.Live, s.PromptTokens, s.CompletionTokens)
						}
					}
					switch {
					case r.Bypassed && bypassSteps != 1:
						return fmt.Errorf("bypass step: %s bypassed with %d memory-bypass steps", r.Position, bypassSteps)
					case !r.Bypassed && bypassSteps != 0:
						return fmt.Errorf("bypass step: %s not bypassed but has a memory-bypass step", r.Position)
					case r.Bypassed && (r.Cost != 0 || r.Baseline <= 0):
						return fmt.Errorf("bypass result: %s bypassed at cost %d with baseline %d", r.Position, r.Cost, r.Baseline)
					case r.Bypassed && (!r.Guard.Bypass || r.Fingerprint.HasAttack() || !r.Decision.Benign()):
						return fmt.Errorf("bypass result: %s bypassed without the guard's consent (%s) or on %q / %q", r.Position, r.Guard.Reason, r.Fingerprint.AttackPattern, r.Decision)
					}
				}
				return nil
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("some alert bypassed", 20),
		),
		pbt.ForAll("P14_savings_band_never_decreases",
			"The savings band (cumulative baseline − cumulative cost) never decreases, and the summary's savings are the last point's band.",
			"CostCurveGen", gen.CostCurveGen(), func(steps []gen.CostStep) error {
				points := curve(steps)
				var prev openrecall.NanoUSD
				for i, p := range points {
					if p.Savings() < prev {
						return fmt.Errorf("monotone: savings band fell at point %d: %d → %d", i, prev, p.Savings())
					}
					prev = p.Savings()
				}
				if sum := costcurve.Summarize(points); len(points) > 0 && sum.Savings != prev {
					return fmt.Errorf("summary: savings %d, last band %d", sum.Savings, prev)
				}
				return nil
			},
		),
		pbt.ForAll("P15_one_audit_entry_per_route_step",
			"len(audit trace) == len(route trace), in the same order, for every result — rejected and resolved records included — and the route steps are those of DESIGN §7 by an expected-steps model written from the input: intake alone for rejected and resolved records (a resolved alert inside a firing webhook too), else intake, fingerprint, then the memory bypass or one analysis, on the strong model for attack, unclassified, weak or real memory and the cheap one for consistent benign memory the guard does not bypass — or, for a later firing of an alert already triaged in the run (grouping on, DESIGN §6a), one grouped step.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				if err := checkExpectedSteps(in, out.results); err != nil {
					return err
				}
				for _, r := range out.results {
					if err := auditParity(r); err != nil {
						return err
					}
				}
				return nil
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("a rejected record", 20), pbt.Cover("a resolved record", 10), pbt.Cover("a mixed-status webhook", 5),
			pbt.Cover("an attack alert with unanimous benign memory", 5), pbt.Cover("an alert without identity", 4), pbt.Cover("a cheap confirmation", 10),
		),
		pbt.ForAll("P16_workers_equivalent_to_sequential",
			"AnalyzeQueue with several workers is equivalent to the sequential run, by the product's equivalence predicate openrecall.EquivalentRuns, with the same summary and cost curve.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				seq, err := runWorkflow(ex, in, 1)
				if err != nil {
					return err
				}
				par, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				if err := openrecall.EquivalentRuns(seq.results, par.results); err != nil {
					return fmt.Errorf("equivalence: %d workers vs 1: %v", in.Workers, err)
				}
				if diff := cmp.Diff(seq.summary, par.summary); diff != "" {
					return fmt.Errorf("summary: %d workers vs 1 (-seq +par):\n%s", in.Workers, diff)
				}
				if diff := cmp.Diff(seq.points, par.points); diff != "" {
					return fmt.Errorf("cost curve: %d workers vs 1 (-seq +par):\n%s", in.Workers, diff)
				}
				return nil
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("a run budget", 20), pbt.Cover("some alert bypassed", 10),
		),
		pbt.ForAll("P18_cost_conservation",
			"Conservation: per alert, cost ≤ baseline (the strong model analysing it at its expected completion, or the cost itself when no strong call was spared); per run, spend ≤ budget, for any budget; the persisted cost curve is consistent. Every call is priced by a hand-written price table (not the product's price function) and the route steps are those of the expected-steps model of DESIGN §7.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				if err := checkExpectedSteps(in, out.results); err != nil {
					return err
				}
				var spent openrecall.NanoUSD
				for _, r := range out.results {
					for _, s := range r.Steps {
						if err := checkHandPrice(r.Position.String(), s); err != nil {
							return err
						}
					}
					if r.Cost > r.Baseline || r.Cost < 0 {
						return fmt.Errorf("per alert: %s cost %d > baseline %d", r.Position, r.Cost, r.Baseline)
					}
					for _, s := range r.Steps {
						if s.Cost < 0 {
							return fmt.Errorf("per step: %s negative cost %d", r.Position, s.Cost)
						}
						if in.Budget > 0 && s.Budget.Spent > s.Budget.Limit {
							return fmt.Errorf("per step: %s budget state spent %d over limit %d", r.Position, s.Budget.Spent, s.Budget.Limit)
						}
					}
					spent += r.Cost
				}
				if in.Budget > 0 && spent > in.Budget {
					return fmt.Errorf("per run: spent %d over the budget %d", spent, in.Budget)
				}
				if out.summary.Cost != spent {
					return fmt.Errorf("summary: cost %d, results add up to %d", out.summary.Cost, spent)
				}
				if err := costcurve.Validate(out.points); err != nil {
					return fmt.Errorf("cost curve: %v", err)
				}
				return nil
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("a run budget", 20), pbt.Cover("budget exhausted", 5), pbt.Cover("a model call", 30),
		),
		pbt.ForAll("P25_only_spared_strong_calls_save",
			"Honest savings: a bypass saves its whole baseline (the strong analysis prompt at the expected completion, never the cap), a cheap answer that passes the gate saves the difference, and nothing else saves: a strong answer, a failed cheap answer (escalated, no strong call after it) and an alert escalated without analysis have baseline = cost. A group member saves its whole baseline, counted apart. The run's savings are exactly that sum, its savings percentage is over the analysed alerts' baseline, and without a recalled memory nothing but group members saves.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				return checkHonestSavings(out)
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("some alert bypassed", 10), pbt.Cover("a model call", 30), pbt.Cover("budget exhausted", 5),
		),
		pbt.ForAll("P22_result_json_round_trip",
			"A result serialized to the documented JSON (--output json/jsonl) and read back is equivalent to the original; the results are those of the expected-steps model of DESIGN §7 (so an equivalence that ignores a missing step cannot pass).",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				if err := checkExpectedSteps(in, out.results); err != nil {
					return err
				}
				for _, r := range out.results {
					b, err := json.Marshal(r)
					if err != nil {
						return fmt.Errorf("marshal: %s: %v", r.Position, err)
					}
					var back openrecall.Result
					if err := json.Unmarshal(b, &back); err != nil {
						return fmt.Errorf("unmarshal: %s: %v", r.Position, err)
					}
					if err := openrecall.Equivalent(r, back); err != nil {
						return fmt.Errorf("round trip: %v\n  json: %s", err, b)
					}
				}
				return nil
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("a rejected record", 20),
		),
	}
}

// Hand-written list prices in nano-dollars per token, the oracle of P25
// (independent of routing's price function): gpt-4o $2.50 and $10 per
// million prompt and completion tokens, gpt-4o-mini $0.15 and $0.60.
var perToken = map[string][2]openrecall.NanoUSD{"gpt-4o": {2500, 10000}, "gpt-4o-mini": {150, 600}}

// expectedCompletion is the default expected completion of the strong model
// (config models.strong_expected_completion_tokens), which the property's
// router keeps: its memory is fresh.
const expectedCompletion = 220

func checkHonestSavings(out runOut) error {
	var saved, analysed, grouped openrecall.NanoUSD
	recalled := false
	for _, r := range out.results {
		if r.Outcome != openrecall.ResultTriaged {
			continue
		}
		recalled = recalled || len(r.Matches) > 0
		prompt := openrecall.NanoUSD(routing.EstimatePromptTokens(routing.BuildPrompt(routing.Input{
			Alert: r.Alert, Fingerprint: r.Fingerprint, Matches: r.Matches, Triage: r.Triage, Guard: r.Guard})))
		expected := prompt*perToken["gpt-4o"][0] + expectedCompletion*perToken["gpt-4o"][1]
		var calls []openrecall.RouteStep
		for _, s := range r.Steps {
			if s.Step != openrecall.StepAnalysis || s.Skipped {
				continue
			}
			if err := checkHandPrice(r.Position.String(), s); err != nil {
				return err
			}
			if s.Outcome == openrecall.OutcomeRetried {
				continue // an attempt of a live call that was retried: part of the next step's call
			}
			calls = append(calls, s)
		}
		if len(calls) > 1 {
			return fmt.Errorf("confirmer: %s made %d model calls; the strong model never follows the cheap one", r.Position, len(calls))
		}
		cheapPass := len(calls) == 1 && calls[0].Tier == openrecall.TierCheap && calls[0].Outcome == openrecall.OutcomeAccepted
		switch {
		case r.Grouped() && !r.EscalatedWithoutAnalysis:
			// A group member makes no call: its whole baseline is saved
			// (DESIGN §6a), counted apart from bypasses.
			if len(calls) != 0 || r.Cost != 0 || r.Baseline != expected {
				return fmt.Errorf("grouped: %s with %d calls, cost %d, baseline %d, want none, 0 and %d", r.Position, len(calls), r.Cost, r.Baseline, expected)
			}
			saved += expected
			grouped += expected
		case r.Bypassed:
			if r.Cost != 0 || r.Baseline != expected {
				return fmt.Errorf("bypass: %s cost %d baseline %d, want 0 and %d (%d prompt tokens, %d expected completion)", r.Position, r.Cost, r.Baseline, expected, prompt, expectedCompletion)
			}
			saved += expected
		case cheapPass:
			if r.Baseline != expected {
				return fmt.Errorf("cheap pass: %s baseline %d, want %d", r.Position, r.Baseline, expected)
			}
			saved += expected - r.Cost
		case r.EscalatedWithoutAnalysis:
			// No call made (budget), or a call no model answered (a live
			// model unavailable or failing): nothing billed, nothing saved.
			for _, c := range calls {
				if c.Cost != 0 || (c.Outcome != openrecall.OutcomeUnavailable && c.Outcome != openrecall.OutcomeModelError) {
					return fmt.Errorf("unanalysed: %s has a %s call with outcome %s costing %d", r.Position, c.Tier, c.Outcome, c.Cost)
				}
			}
			if r.Cost != 0 || r.Baseline != 0 || r.Decision != openrecall.DecisionEscalated {
				return fmt.Errorf("unanalysed: %s with %d calls, cost %d, baseline %d, decision %s", r.Position, len(calls), r.Cost, r.Baseline, r.Decision)
			}
			continue
		default:
			if r.Baseline != r.Cost {
				return fmt.Errorf("no saving: %s (%d calls, decision %s) has baseline %d, cost %d: a strong or failed answer must not look like a saving", r.Position, len(calls), r.Decision, r.Baseline, r.Cost)
			}
		}
		analysed += r.Baseline
	}
	if got := out.summary.Savings(); got != saved {
		return fmt.Errorf("sum: summary savings %d, want bypassed baselines plus cheap differences %d", got, saved)
	}
	want := 0.0
	if analysed > 0 {
		want = 100 * float64(saved) / float64(analysed)
	}
	if got := out.summary.SavingsPercent(); math.Abs(got-want) > 1e-9 {
		return fmt.Errorf("percent: summary savings %.6f%%, want %.6f%% (%d of the analysed baseline %d)", got, want, saved, analysed)
	}
	if !recalled && saved != grouped {
		return fmt.Errorf("empty memory: no alert recalled a memory, yet %d saved beyond the %d group members saved", saved-grouped, grouped)
	}
	if out.summary.GroupedSaved != grouped {
		return fmt.Errorf("grouped: summary counts %d saved by group members, want %d", out.summary.GroupedSaved, grouped)
	}
	return nil
}

// checkHandPrice checks a model call's cost against the hand-written price
// table: prompt tokens at the input price plus completion tokens at the
// output price, and nothing for a step that made no call.
func checkHandPrice(position string, s openrecall.RouteStep) error {
	if s.Step != openrecall.StepAnalysis || s.Skipped {
		if s.Cost != 0 {
			return fmt.Errorf("price: %s %s step made no call but costs %d", position, s.Step, s.Cost)
		}
		return nil
	}
	p := perToken[s.Model]
	if want := openrecall.NanoUSD(s.PromptTokens)*p[0] + openrecall.NanoUSD(s.CompletionTokens)*p[1]; s.Cost != want || p[0] == 0 {
		return fmt.Errorf("price: %s %s call (%s, %d+%d tokens) costs %d, want %d", position, s.Tier, s.Model, s.PromptTokens, s.CompletionTokens, s.Cost, want)
	}
	return nil
}

func newExtractor() *fingerprint.Extractor {
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		panic(fmt.Sprintf("fingerprint rules: %v", err))
	}
	ex, err := fingerprint.New(rules)
	if err != nil {
		panic(fmt.Sprintf("fingerprint extractor: %v", err))
	}
	return ex
}

func curve(steps []gen.CostStep) []openrecall.CostPoint {
	c := costcurve.New("pbt")
	var points []openrecall.CostPoint
	for i, s := range steps {
		points = append(points, c.Add(fmt.Sprintf("a%d", i), s.Tier, s.Bypassed, s.Cost, s.Baseline()))
	}
	return points
}

// runOut is what one workflow run produced.
type runOut struct {
	results []openrecall.Result
	points  []openrecall.CostPoint
	summary workflow.Summary
}

// recordingSink keeps the cost points a run persists.
type recordingSink struct {
	mu     sync.Mutex
	points []openrecall.CostPoint
}

func (s *recordingSink) Persist(_ context.Context, r openrecall.Result, p *openrecall.CostPoint) ([]openrecall.AuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p != nil {
		s.points = append(s.points, *p)
	}
	return r.Audit, nil
}

// fixedClock is the pipeline's clock: every run sees the same time, so two
// runs differ only where the product lets them.
func fixedClock() time.Time { return time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC) }

// pipelineFor wires the product's pipeline as the command line does, over a
// fresh store seeded with in's memories.
func runWorkflow(ex workflow.Fingerprinter, in gen.WorkflowInput, workers int) (runOut, error) {
	return runWorkflowOn(ex, in, workers, nil)
}

// tiers returns a run's cheap and strong models and the run's mode; nil
// means the local analyst.
type tiers func() (cheap, strong routing.Model, mode openrecall.Mode, err error)

// runWorkflowOn is runWorkflow on the given model tiers.
func runWorkflowOn(ex workflow.Fingerprinter, in gen.WorkflowInput, workers int, models tiers) (runOut, error) {
	var out runOut
	err := withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		st := ss[0]
		for k, s := range in.AllSeeds() {
			seed := s.SeedAlert()
			fp := ex.Extract(seed)
			for _, inc := range s.Incidents(k, ex.Identify(seed), fp, intake.NormalizeSeverity(string(seed.Severity))) {
				if _, _, err := st.Retain(ctx, inc); err != nil {
					return fmt.Errorf("setup: seed: %v", err)
				}
			}
		}
		before, err := incidentCount(ctx, st)
		if err != nil {
			return err
		}
		var budget *routing.Budget
		if in.Budget > 0 {
			budget = routing.NewBudget(in.Budget)
		}
		wf, sink, err := newWorkflowOn(ex, st, budget, models)
		if err != nil {
			return err
		}
		src := workflow.Records(intake.NewReader(strings.NewReader(in.Queue()), intake.Options{Format: intake.FormatJSONL, Source: "queue.jsonl"}))
		out.summary, err = wf.AnalyzeQueue(ctx, src, workflow.QueueOptions{Workers: workers}, func(r openrecall.Result) error {
			out.results = append(out.results, r)
			return nil
		})
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("analyze queue error: %v", err)
		}
		out.points = sink.points
		after, err := incidentCount(ctx, st)
		if err != nil {
			return err
		}
		if after != before {
			return fmt.Errorf("self-reinforcement: memory grew from %d to %d records during analysis; only retain may add memories", before, after)
		}
		return nil
	})
	return out, err
}

func newWorkflow(ex workflow.Fingerprinter, st *memory.Store, budget *routing.Budget) (*workflow.Workflow, *recordingSink, error) {
	return newWorkflowOn(ex, st, budget, nil)
}

func newWorkflowOn(ex workflow.Fingerprinter, st *memory.Store, budget *routing.Budget, models tiers) (*workflow.Workflow, *recordingSink, error) {
	var cheap, strong routing.Model = local.NewCheap(), local.NewStrong()
	mode := openrecall.Mode{Memory: "sqlite", Model: "deterministic"}
	if models != nil {
		var err error
		if cheap, strong, mode, err = models(); err != nil {
			return nil, nil, fmt.Errorf("setup: models: %v", err)
		}
	}
	r, err := routing.New(routing.Config{Cheap: cheap, Strong: strong, Vet: triage.Vet, Budget: budget, Now: fixedClock})
	if err != nil {
		return nil, nil, fmt.Errorf("setup: router: %v", err)
	}
	sink := &recordingSink{}
	root, err := productRoot(st, ex, fixedClock, compose.Batch("pbt"), compose.OrderedRouting(budget != nil), compose.NoExceptions())
	if err != nil {
		return nil, nil, err
	}
	wf, err := root.Pipeline(r, mode, sink)
	if err != nil {
		return nil, nil, fmt.Errorf("setup: workflow: %v", err)
	}
	return wf, sink, nil
}

// auditParity checks that r has one audit entry per route step, in the same
// order, each mirroring its step.
func auditParity(r openrecall.Result) error {
	if len(r.Steps) == 0 {
		return fmt.Errorf("steps: %s (%s) has no route step", r.Position, r.Outcome)
	}
	if len(r.Audit) != len(r.Steps) {
		return fmt.Errorf("count: %s (%s): %d audit entries for %d steps", r.Position, r.Outcome, len(r.Audit), len(r.Steps))
	}
	for i, s := range r.Steps {
		e := r.Audit[i]
		want := openrecall.AuditEntry{Step: s.Step, StepIndex: i, Model: s.Model, Tier: s.Tier, Outcome: s.Outcome, Reason: s.Reason,
			Live: s.Live, Skipped: s.Skipped, Cost: s.Cost, Baseline: s.Baseline, Savings: s.Baseline - s.Cost,
			AlertID: r.Alert.ID, AnalysisID: r.AnalysisID, ProposedDecision: s.Proposed, EscalationReason: s.EscalationReason}
		got := openrecall.AuditEntry{Step: e.Step, StepIndex: e.StepIndex, Model: e.Model, Tier: e.Tier, Outcome: e.Outcome, Reason: e.Reason,
			Live: e.Live, Skipped: e.Skipped, Cost: e.Cost, Baseline: e.Baseline, Savings: e.Savings,
			AlertID: e.AlertID, AnalysisID: e.AnalysisID, ProposedDecision: e.ProposedDecision, EscalationReason: e.EscalationReason}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("order: %s step %d and its audit entry differ (-step +audit):\n%s", r.Position, i, diff)
		}
	}
	return nil
}

// classifyRun labels a workflow input by what its run contains; it reads the
// input only (the label must not depend on the code under test).
func classifyRun(in gen.WorkflowInput) []string {
	var l []string
	kinds := map[string]bool{}
	for _, r := range in.AllRecords() {
		kinds[gen.RecordKinds()[r.Kind%len(gen.RecordKinds())]] = true
	}
	if kinds["invalid JSON"] || kinds["empty object"] {
		l = append(l, "a rejected record")
	}
	if kinds["resolved webhook"] {
		l = append(l, "a resolved record")
	}
	if in.Budget > 0 {
		l = append(l, "a run budget")
		if in.Budget < 10_000_000 && len(in.AllRecords()) > 0 {
			l = append(l, "budget exhausted")
		}
	}
	// A family is vouched for when its seeds add up to at least 5 memories
	// (10 are recalled) that all carry one benign decision.
	total, decisions := map[int]int{}, map[int]map[openrecall.Decision]bool{}
	for _, s := range in.AllSeeds() {
		if s.N == 0 {
			continue
		}
		if decisions[s.Family] == nil {
			decisions[s.Family] = map[openrecall.Decision]bool{}
		}
		total[s.Family] += s.N
		d := openrecall.MemoryDecisions[s.Decision%len(openrecall.MemoryDecisions)]
		decisions[s.Family][d] = true
		if s.Dissent > 0 {
			decisions[s.Family][openrecall.DecisionReal] = true
		}
	}
	seeded := map[int]bool{}
	for f, n := range total {
		if n >= 5 && len(decisions[f]) == 1 {
			for d := range decisions[f] {
				seeded[f] = d.Benign() && !gen.AlertFamilies()[f].Attack
			}
		}
	}
	for _, r := range in.AllRecords() {
		k := gen.RecordKinds()[r.Kind%len(gen.RecordKinds())]
		if (k == "alert" || k == "re-sent alert" || k == "webhook with two alerts") && seeded[r.Alert.Family] {
			l = append(l, "some alert bypassed")
			break
		}
	}
	for _, r := range in.AllRecords() {
		k := gen.RecordKinds()[r.Kind%len(gen.RecordKinds())]
		if (k == "alert" || k == "re-sent alert" || k == "webhook with two alerts") && !seeded[r.Alert.Family] {
			l = append(l, "a model call")
			break
		}
	}
	return append(l, classifyBlindSpots(in)...)
}

// classifyBlindSpots labels the classes the suite once never generated.
func classifyBlindSpots(in gen.WorkflowInput) []string {
	seen := map[string]bool{}
	fams := gen.AlertFamilies()
	for _, r := range in.AllRecords() {
		k := gen.RecordKinds()[r.Kind%len(gen.RecordKinds())]
		f := r.Alert.Family % len(fams)
		if k == "mixed-status webhook" {
			seen["a mixed-status webhook"] = true
		}
		if k == "invalid JSON" || k == "empty object" || k == "resolved webhook" || k == "bare string" {
			continue
		}
		if fams[f].Anonymous {
			seen["an alert without identity"] = true
		}
		route := memoryRoute(in, f, false)
		if route == routeCheap {
			seen["a cheap confirmation"] = true
		}
		benignMemory := route == routeCheap || route == routeBypass
		if fams[f].Attack {
			// memoryRoute says strong for attacks; ask what memory holds.
			for _, s := range in.AllSeeds() {
				if s.Family == f && s.N >= 5 && s.Dissent == 0 && openrecall.MemoryDecisions[s.Decision%len(openrecall.MemoryDecisions)].Benign() {
					seen["an attack alert with unanimous benign memory"] = true
					benignMemory = true
				}
			}
		}
		if benignMemory && in.Budget > 0 && in.Budget <= 1_000_000 && route != routeBypass {
			seen["a budget skip of an alert memory calls benign"] = true
		}
	}
	var l []string
	for k := range seen {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

// fixedFingerprinter gives every alert one fingerprint.
type fixedFingerprinter openrecall.Fingerprint

func (f fixedFingerprinter) Extract(openrecall.Alert) openrecall.Fingerprint {
	return openrecall.Fingerprint(f)
}

// Identify gives every alert the liveness case's identity.
func (f fixedFingerprinter) Identify(openrecall.Alert) openrecall.Identity {
	return gen.LivenessIdentity()
}

// checkWorkflowLiveness runs the liveness case through the whole pipeline:
// memory holds the N unanimous benign decisions, and the alert is bypassed.
func checkWorkflowLiveness(c gen.LivenessCase) error {
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		for _, m := range c.Matches() {
			inc := m.Incident
			inc.SourceAlertID = "src-" + inc.ID
			if _, _, err := ss[0].Retain(ctx, inc); err != nil {
				return fmt.Errorf("setup: retain: %v", err)
			}
		}
		wf, _, err := newWorkflow(fixedFingerprinter(c.Fingerprint), ss[0], nil)
		if err != nil {
			return err
		}
		r := wf.Analyze(ctx, openrecall.Alert{ID: "live-1", Format: "jsonl", Title: "a known benign repeat", Status: openrecall.StatusFiring,
			Severity: openrecall.SeverityMedium})
		if !r.Bypassed || r.Decision != c.Decision || r.Cost != 0 {
			return fmt.Errorf("liveness: workflow with %d unanimous %s memories: bypassed %v, decision %q, cost %d (%s)", c.N, c.Decision, r.Bypassed, r.Decision, r.Cost, r.Guard.Reason)
		}
		return nil
	})
}
