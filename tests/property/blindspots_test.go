package property

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
)

// Literals of DESIGN, written here rather than read from the product's
// configuration, so that a changed default is caught (§6 and §7).
const (
	designStrongMatch      = 0.85
	designConsistency      = 0.90
	designBypassConfidence = 0.85
	designGateConfidence   = 0.60
	designCheapMaxTokens   = 400
	designStrongMaxTokens  = 800
)

// designDecisions is the closed set of DESIGN §6, spelled out.
var designDecisions = map[string]bool{"false_positive": true, "duplicate": true, "known_benign": true, "real": true, "escalated": true}

func designBenign(d string) bool {
	return d == "false_positive" || d == "duplicate" || d == "known_benign"
}

// blindSpotProperties are the rules the suite had no property for: the
// quality gate, budget refusal, the savings percentage and the bypass threshold at every count.
func blindSpotProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P37_quality_gate",
			"Quality gate (DESIGN §7): a model answer is accepted only when it is one JSON object of the analysis schema, its decision is in the closed set, the guard accepts it (no benign verdict on an attack), every cited memory was recalled and its confidence is in [0.60, 1]; every other answer escalates the alert to a person, with no second model call; a call never costs more than its worst case (the completion capped at 400 cheap or 800 strong tokens), priced by the price table.",
			"GateCaseGen", gen.GateCaseGen(), checkGate,
			pbt.Pin("a confidence just under the gate", gen.GateCase{Memories: 3, Confidence: 1}),
			pbt.Pin("a citation of a memory that was never recalled", gen.GateCase{Memories: 3, Cite: 3}),
			pbt.Pin("a benign verdict on an attack", gen.GateCase{Memories: 3, Attack: true}),
			pbt.Classify(func(c gen.GateCase) []string {
				l := []string{"shape " + gen.GateShapes()[c.Shape]}
				if gateWants(c) {
					l = append(l, "an answer that passes")
				}
				if !c.Attack && c.Memories > 0 {
					l = append(l, "cheap tier")
				}
				if c.Attack && designBenign(gen.GateDecisions()[c.Decision]) {
					l = append(l, "benign verdict on an attack")
				}
				return l
			}),
			pbt.Cover("an answer that passes", 5), pbt.Cover("cheap tier", 30), pbt.Cover("shape huge", 2),
			pbt.Cover("shape invalid JSON", 2), pbt.Cover("shape unknown field", 2), pbt.Cover("benign verdict on an attack", 3),
		),
		pbt.ForAll("P38_budget_refusal_escalates",
			"Budget (DESIGN §7): an alert whose model call was not made for the run budget ends escalated to a person without analysis: no benign decision (even when memory proposed one), no bypass, cost 0 and baseline 0, so it never counts as a saving; with a budget of one nano-dollar every model call is refused.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				for _, r := range out.results {
					for _, s := range r.Steps {
						if s.Step != openrecall.StepAnalysis {
							continue
						}
						if in.Budget == 1 && s.Outcome != openrecall.OutcomeBudgetExceeded {
							return fmt.Errorf("liveness: %s: a model call (%s, outcome %s) under a one nano-dollar budget", r.Position, s.Tier, s.Outcome)
						}
						if s.Outcome != openrecall.OutcomeBudgetExceeded {
							continue
						}
						switch {
						case !s.Skipped || s.Cost != 0 || s.Live:
							return fmt.Errorf("step: %s budget step made a call: skipped %v cost %d live %v", r.Position, s.Skipped, s.Cost, s.Live)
						case r.Decision != openrecall.DecisionEscalated || r.Bypassed || !r.EscalatedWithoutAnalysis:
							return fmt.Errorf("escalation: %s skipped for budget ends %q (bypassed %v, without analysis %v); memory proposed %q", r.Position, r.Decision, r.Bypassed, r.EscalatedWithoutAnalysis, r.Triage.Decision)
						case r.Cost != 0 || r.Baseline != 0:
							return fmt.Errorf("saving: %s skipped for budget has cost %d and baseline %d, want 0 and 0", r.Position, r.Cost, r.Baseline)
						}
					}
				}
				return nil
			},
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("budget exhausted", 5), pbt.Cover("a budget skip of an alert memory calls benign", 3),
		),
		pbt.ForAll("P39_savings_percent",
			"Savings percentage (DESIGN §7, §8): the cost curve's summary states savings as exactly 100 × (Σ baseline − Σ cost) / Σ analysed baseline, 0 when nothing was analysed.",
			"CostCurveGen", gen.CostCurveGen(), func(steps []gen.CostStep) error {
				points := curve(steps)
				var cost, baseline, analysed openrecall.NanoUSD
				for _, s := range steps {
					cost += s.Cost
					baseline += s.Baseline()
					if s.Tier != costcurve.TierUnanalysed {
						analysed += s.Baseline()
					}
				}
				want := 0.0
				if analysed != 0 {
					want = 100 * float64(baseline-cost) / float64(analysed)
				}
				sum := costcurve.Summarize(points)
				if sum.Savings != baseline-cost || math.Abs(sum.SavingsPercent-want) > 1e-9*math.Max(1, math.Abs(want)) {
					return fmt.Errorf("percent: summary saves %d (%.12f%%), want %d (%.12f%%) of the analysed baseline %d", sum.Savings, sum.SavingsPercent, baseline-cost, want, analysed)
				}
				return nil
			},
			pbt.Pin("one third saved", []gen.CostStep{{Cost: 2, Extra: 1}}),
		),
		pbt.ForAll("P41_audit_splice_detected",
			"Audit (DESIGN §9): an entry replaced by the entry of the same sequence from another trail sealed with the same key (a copy from another database sharing the key file: its own hash is valid) fails verify; the other trail alone verifies.",
			"AuditSpliceGen", gen.AuditSpliceGen(), checkAuditSplice,
			pbt.Pin("a middle entry spliced from a trail that differs from its start", gen.AuditSplice{N: 3, From: 0, I: 1}),
			pbt.Classify(func(a gen.AuditSplice) []string {
				switch i, from := a.I%a.N, a.From%a.N; {
				case i < from:
					return []string{"identical entry spliced"}
				case i == a.N-1:
					return []string{"last entry spliced"}
				default:
					return []string{"inner entry spliced"}
				}
			}),
			pbt.Cover("inner entry spliced", 10),
		),
		pbt.ForAll("P40_bypass_threshold_every_count",
			"Threshold liveness and safety at every count (DESIGN §6, thresholds as literals 0.85/0.90/0.85): n unanimous benign strong memories of the alert's severity bypass a non-attack alert if and only if n ≥ 5 (so n−1 = 4 never does); with dissent, scores at the strong threshold, attack patterns and every alert and memory severity, the guard agrees with a reference guard written from DESIGN (clause e: unknown alert as critical, unknown memory as medium, an unknown alert covered by memories all of unknown severity).",
			"ThresholdCaseGen", gen.ThresholdCaseGen(), checkThreshold,
			pbt.Pin("four unanimous memories, one short", gen.ThresholdCase{N: 4, Decision: 2}),
			pbt.Pin("five unanimous memories, the least that bypasses", gen.ThresholdCase{N: 5, Decision: 2}),
			pbt.Pin("eighteen against two: exactly 90% consistent", gen.ThresholdCase{N: 18, Dissent: 2, Decision: 0}),
			pbt.PinFunc("every count from 0 to 20, each memory decision, unanimous at score 1", func() error {
				for n := 0; n <= 20; n++ {
					for d := range openrecall.MemoryDecisions {
						if err := checkThreshold(gen.ThresholdCase{N: n, Decision: d}); err != nil {
							return err
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(c gen.ThresholdCase) []string {
				if c.Dissent == 0 && !c.Attack && gen.ThresholdScores()[c.Score] >= designStrongMatch && c.AlertSeverity == c.MemorySeverity {
					return []string{"unanimous strong"}
				}
				return nil
			}),
			pbt.Cover("unanimous strong", 10),
		),
	}
}

// gateWants is the gate's expected ruling, from the case alone.
func gateWants(c gen.GateCase) bool {
	shape := gen.GateShapes()[c.Shape]
	d := gen.GateDecisions()[c.Decision]
	conf := gen.GateConfidences()[c.Confidence]
	if shape != "clean" && shape != "huge" {
		return false
	}
	if !designDecisions[d] || c.Attack && designBenign(d) {
		return false
	}
	for _, id := range gen.GateCitations()[c.Cite] {
		if !strings.HasPrefix(id, "inc_") || id == "inc_404" || id == "inc_999" {
			return false
		}
		var k int
		if _, err := fmt.Sscanf(id, "inc_%d", &k); err != nil || k >= c.Memories {
			return false
		}
	}
	return conf >= designGateConfidence && conf <= 1
}

// answeringModel is an adversarial model: it answers every prompt with one
// fixed text (as a live provider could), priced as name.
type answeringModel struct{ name, text string }

func (m answeringModel) Name() string { return m.name }
func (m answeringModel) Complete(context.Context, routing.Request) (routing.Response, error) {
	return routing.Response{Text: m.text}, nil
}

func checkGate(c gen.GateCase) error {
	fp := openrecall.Fingerprint{ErrorClass: "crashloopbackoff", ServiceRole: "api_edge", DependencyPattern: "configmap", Environment: "prod"}
	if c.Attack {
		fp.AttackPattern = "ssrf"
	}
	text := c.Answer()
	out, err := routeOnBenignMemory(routing.Config{Cheap: answeringModel{"gpt-4o-mini", text}, Strong: answeringModel{"gpt-4o", text}},
		fp, c.Memories, "gate-1")
	if err != nil {
		return err
	}
	if len(out.Steps) != 1 || out.Steps[0].Step != openrecall.StepAnalysis || out.Steps[0].Skipped {
		return fmt.Errorf("calls: want exactly one model call, got steps %+v", out.Steps)
	}
	s := out.Steps[0]
	wantTier, maxTok := openrecall.TierStrong, designStrongMaxTokens
	if !c.Attack && c.Memories > 0 {
		wantTier, maxTok = openrecall.TierCheap, designCheapMaxTokens
	}
	if s.Tier != wantTier {
		return fmt.Errorf("tier: %s model answered, want %s (attack %v, %d benign memories)", s.Tier, wantTier, c.Attack, c.Memories)
	}
	if err := checkHandPrice("gate-1", s); err != nil {
		return err
	}
	if s.CompletionTokens > maxTok {
		return fmt.Errorf("cap: %s call billed %d completion tokens, over the cap %d", s.Model, s.CompletionTokens, maxTok)
	}
	p := perToken[s.Model]
	if worst := openrecall.NanoUSD(s.PromptTokens)*p[0] + openrecall.NanoUSD(maxTok)*p[1]; s.Cost > worst {
		return fmt.Errorf("worst case: call costs %d, more than its worst case %d", s.Cost, worst)
	}
	want := gateWants(c)
	accepted := s.Outcome == openrecall.OutcomeAccepted
	switch {
	case want != accepted:
		return fmt.Errorf("gate: answer %.120q ruled %s (%s), want accepted=%v", text, s.Outcome, s.EscalationReason, want)
	case accepted && string(out.Decision) != gen.GateDecisions()[c.Decision]:
		return fmt.Errorf("accepted: decision %q, the model proposed %q", out.Decision, gen.GateDecisions()[c.Decision])
	case !accepted && (out.Decision != openrecall.DecisionEscalated || s.EscalationReason == "" || out.Bypassed):
		return fmt.Errorf("rejected: %q ended %q (reason %q), want escalated to a person", text[:min(len(text), 120)], out.Decision, s.EscalationReason)
	case !accepted && out.Analysis != nil && out.Analysis.Decision != openrecall.DecisionEscalated:
		return fmt.Errorf("rejected: the attached analysis still says %q", out.Analysis.Decision)
	case out.Cost > out.Baseline:
		return fmt.Errorf("conservation: cost %d > baseline %d", out.Cost, out.Baseline)
	}
	return nil
}

func checkAuditSplice(a gen.AuditSplice) error {
	mine, other := a.Trails()
	sealer := audit.NewSealer(trailKey)
	trail, foreign := sealer.Seal("", 1, mine), sealer.Seal("", 1, other)
	verify := func(entries []openrecall.AuditEntry, head openrecall.AuditEntry) []audit.Problem {
		v := audit.NewKeyedVerifier(trailKey, 0)
		for _, e := range entries {
			v.Add(e)
		}
		return v.Finish(head.Sequence, head.Hash)
	}
	if p := verify(foreign, foreign[len(foreign)-1]); len(p) > 0 {
		return fmt.Errorf("untouched: the other trail fails verify: %v", p)
	}
	i := a.I % a.N
	spliced := append([]openrecall.AuditEntry(nil), trail...)
	spliced[i] = foreign[i]
	p := verify(spliced, trail[len(trail)-1])
	if i < a.From%a.N {
		// The two trails agree up to From: nothing was changed.
		if len(p) > 0 {
			return fmt.Errorf("identical splice: entry %d is the same in both trails, yet verify reports %v", i+1, p)
		}
		return nil
	}
	if len(p) == 0 {
		return fmt.Errorf("undetected: entry %d spliced from another trail sealed with the same key passes verify", i+1)
	}
	return nil
}

func checkThreshold(c gen.ThresholdCase) error {
	fp := openrecall.Fingerprint{ErrorClass: "http_5xx", ServiceRole: "api_edge", Environment: "prod"}
	if c.Attack {
		fp.AttackPattern = "brute_force"
	}
	d := openrecall.MemoryDecisions[c.Decision]
	score := gen.ThresholdScores()[c.Score]
	var matches []openrecall.Match
	for i := 0; i < c.N+c.Dissent; i++ {
		di := d
		if i >= c.N {
			di = openrecall.DecisionReal
		}
		matches = append(matches, openrecall.Match{Score: score, Incident: openrecall.Incident{
			ID: fmt.Sprintf("inc_%02d", i), Fingerprint: fp, Decision: di, Severity: openrecall.Severity(gen.ThresholdSeverities()[c.MemorySeverity]),
			CreatedAt: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).Add(-time.Duration(i) * time.Minute)}})
	}
	alertSev := gen.ThresholdSeverities()[c.AlertSeverity]
	// The reference guard of DESIGN §6 with its thresholds as literals.
	want := false
	if score >= designStrongMatch && len(matches) > 0 {
		n := float64(len(matches))
		dom, domN := string(d), c.N
		if c.Dissent > c.N {
			dom, domN = "real", c.Dissent
		}
		consistency := float64(domN) / n
		confidence := consistency * (n + 1) / (n + 2)
		// Clause (e): the supporting memories all carry MemorySeverity.
		// An unknown alert is not more severe than memories all of unknown
		// severity.
		memSev := gen.ThresholdSeverities()[c.MemorySeverity]
		bothUnknown := designSeverityRank(alertSev, 0) == 0 && designSeverityRank(memSev, 0) == 0
		covered := bothUnknown || designSeverityRank(alertSev, 5) <= designSeverityRank(memSev, 3)
		want = c.N != c.Dissent && consistency >= designConsistency && confidence >= designBypassConfidence && designBenign(dom) && !c.Attack && covered
	}
	cfg := triage.DefaultConfig()
	tr := triage.Triage(fp, openrecall.Severity(alertSev), matches, cfg)
	v := triage.Guard(fp, tr, cfg)
	if v.Bypass != want {
		return fmt.Errorf("threshold: %d %s and %d real memories at score %v (attack %v, alert %q, memories %q): bypass %v, the reference guard says %v (%s)",
			c.N, d, c.Dissent, score, c.Attack, alertSev, gen.ThresholdSeverities()[c.MemorySeverity], v.Bypass, want, v.Reason)
	}
	if c.Dissent == 0 && !c.Attack && score >= designStrongMatch && d.Benign() && c.AlertSeverity == c.MemorySeverity && alertSev != "unknown" && v.Bypass != (c.N >= 5) {
		return fmt.Errorf("threshold: %d unanimous %s memories: bypass %v, want %v (n ≥ 5)", c.N, d, v.Bypass, c.N >= 5)
	}
	return nil
}

// routeOnBenignMemory routes one medium alert of fingerprint fp, with n
// unanimous known_benign strong memories that the guard did not bypass,
// through a router of cfg (the guard's Vet and the fixed clock added).
func routeOnBenignMemory(cfg routing.Config, fp openrecall.Fingerprint, n int, alertID string) (routing.Output, error) {
	var matches []openrecall.Match
	for i := 0; i < n; i++ {
		matches = append(matches, openrecall.Match{Score: 1, Incident: openrecall.Incident{
			ID: fmt.Sprintf("inc_%d", i), Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Severity: openrecall.SeverityMedium,
			CreatedAt: gen.Times()[i%len(gen.Times())]}})
	}
	cfg.Vet, cfg.Now = triage.Vet, fixedClock
	r, err := routing.New(cfg)
	if err != nil {
		return routing.Output{}, fmt.Errorf("setup: %v", err)
	}
	tr := triage.Triage(fp, openrecall.SeverityMedium, matches, triage.DefaultConfig())
	alert := openrecall.Alert{ID: alertID, Format: "jsonl", Title: "checkout-api crash looping", Severity: openrecall.SeverityMedium, Status: openrecall.StatusFiring}
	return r.Route(context.Background(), routing.Input{Alert: alert, Fingerprint: fp, Matches: matches, Triage: tr,
		Guard: openrecall.GuardVerdict{Reason: "pbt: not bypassed"}}), nil
}
