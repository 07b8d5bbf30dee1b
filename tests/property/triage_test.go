package property

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
)

// triageProperties are the rules of triage and the guard (DESIGN §6).
func triageProperties() []pbt.Property {
	cfg := triage.DefaultConfig()
	return []pbt.Property{
		pbt.ForAll("P3_no_strong_memory_escalates",
			"Weak memory escalates: no strong match (related matches never are) → escalated (confidence = best score, or 0); strong matches below the consistency threshold → escalated; an escalated, real or attack proposal, and a benign one for an alert more severe than its supporting memories, requires a person's approval.",
			"TriageCaseGen", gen.TriageCaseGen(), func(c gen.TriageCase) error {
				tr := triage.Triage(c.Fingerprint, c.Severity, c.Matches, cfg)
				o := oracleTriage(c, cfg)
				wantApproval := o.decision == openrecall.DecisionEscalated || o.decision == openrecall.DecisionReal || c.Fingerprint.HasAttack() ||
					isBenign(o.decision) && !severityCovered(c.Severity, o.supportRank, o.allUnknown)
				switch {
				case o.strong == 0 && tr.Decision != openrecall.DecisionEscalated:
					return fmt.Errorf("no strong match: decision %q, want escalated", tr.Decision)
				case o.strong == 0 && tr.Confidence != bestScore(c.Matches):
					return fmt.Errorf("no strong match: confidence %v, want the best score %v", tr.Confidence, bestScore(c.Matches))
				case tr.Decision != o.decision:
					return fmt.Errorf("escalation: decision %q, want %q (%d of %d strong matches agree, threshold %v)", tr.Decision, o.decision, o.consistent, o.strong, cfg.Consistency)
				case tr.RequiresHumanApproval != wantApproval:
					return fmt.Errorf("approval: %q on attack %q requires approval = %v, want %v", tr.Decision, c.Fingerprint.AttackPattern, tr.RequiresHumanApproval, wantApproval)
				}
				if v := triage.Guard(c.Fingerprint, tr, cfg); v.Bypass && o.decision == openrecall.DecisionEscalated {
					return fmt.Errorf("escalation: the guard bypasses an escalated proposal: %s", v.Reason)
				}
				return nil
			},
			pbt.Pin("no matches at all", gen.TriageCase{}),
			pbt.Pin("best score just below the threshold", gen.TriageCase{Matches: []openrecall.Match{{Incident: openrecall.Incident{ID: "inc_00", Decision: openrecall.DecisionKnownBenign}, Score: math.Nextafter(0.85, 0)}}}),
			pbt.Classify(classifyTriage(cfg)),
			pbt.Cover("no matches", 5), pbt.Cover("only weak matches", 5), pbt.Cover("consistency exactly at threshold", 3),
		),
		pbt.ForAll("P4_decision_in_closed_set",
			"The decision is always in the closed set false_positive|duplicate|known_benign|real|escalated, also when a model proposes anything at all: a proposal outside it, or a benign verdict on an attack alert, is refused.",
			"DecisionCaseGen", gen.DecisionCaseGen(), func(c gen.DecisionCase) error {
				fp := c.Case.Fingerprint
				tr := triage.Triage(fp, c.Case.Severity, c.Case.Matches, cfg)
				if !inClosedSet(tr.Decision) {
					return fmt.Errorf("triage: decision %q outside the closed set", tr.Decision)
				}
				if got := c.Proposed.Valid(); got != inClosedSet(c.Proposed) {
					return fmt.Errorf("closed set: Decision(%q).Valid() = %v", c.Proposed, got)
				}
				ok, reason := triage.Vet(fp, c.Proposed)
				want := inClosedSet(c.Proposed) && (!isBenign(c.Proposed) || fp.AttackPattern == "")
				if ok != want {
					return fmt.Errorf("vet: Vet(%s, %q) = %v (%q), want %v", fp, c.Proposed, ok, reason, want)
				}
				if !ok && reason == "" {
					return fmt.Errorf("vet: refused %q without a reason", c.Proposed)
				}
				final := c.Proposed
				if !ok {
					final = openrecall.DecisionEscalated
				}
				if !inClosedSet(final) {
					return fmt.Errorf("vet: accepted %q, outside the closed set", final)
				}
				return nil
			},
			pbt.Pin("upper-case benign", gen.DecisionCase{Proposed: "BENIGN"}),
			pbt.Pin("benign on an attack", gen.DecisionCase{Case: gen.TriageCase{Fingerprint: openrecall.Fingerprint{AttackPattern: "sql_injection"}}, Proposed: openrecall.DecisionKnownBenign}),
			pbt.Classify(func(c gen.DecisionCase) []string {
				switch {
				case !c.Proposed.Valid():
					return []string{"proposal outside the closed set"}
				case c.Proposed.Benign() && c.Case.Fingerprint.HasAttack():
					return []string{"benign proposal on an attack alert"}
				}
				return []string{"valid proposal"}
			}),
			pbt.Cover("proposal outside the closed set", 20), pbt.Cover("benign proposal on an attack alert", 3),
		),
		pbt.ForAll("P5_confidence_formula",
			"Confidence is in [0, 1] and equals the documented formula: best score (or 0) without a strong match, else c·(n+1)/(n+2) with c = n_dominant/n_strong, where the dominant decision has the most strong matches (ties: the higher best score, then the newer, then the smaller name) and Supporting lists its strong matches' ids in match order.",
			"TriageCaseGen", gen.TriageCaseGen(), func(c gen.TriageCase) error {
				tr := triage.Triage(c.Fingerprint, c.Severity, c.Matches, cfg)
				if !(tr.Confidence >= 0 && tr.Confidence <= 1) {
					return fmt.Errorf("range: confidence %v outside [0, 1]", tr.Confidence)
				}
				o := oracleTriage(c, cfg)
				want := bestScore(c.Matches)
				if o.strong > 0 {
					want = float64(o.consistent) / float64(o.strong) * float64(o.strong+1) / float64(o.strong+2)
				}
				if math.Abs(tr.Confidence-want) > 1e-12 {
					return fmt.Errorf("formula: confidence %v, want %v (n=%d, dominant %d)", tr.Confidence, want, o.strong, o.consistent)
				}
				if tr.StrongCount != o.strong || tr.ConsistentCount != o.consistent {
					return fmt.Errorf("counts: strong %d consistent %d, want %d and %d", tr.StrongCount, tr.ConsistentCount, o.strong, o.consistent)
				}
				if tr.BestScore != bestScore(c.Matches) {
					return fmt.Errorf("best score: %v, want %v", tr.BestScore, bestScore(c.Matches))
				}
				if diff := cmp.Diff(o.supporting, tr.Supporting); diff != "" {
					return fmt.Errorf("supporting: not the %s strong matches in match order (-want +got):\n%s", o.dominant, diff)
				}
				return nil
			},
			pbt.Pin("a tie broken by the better score", gen.TriageCase{Matches: []openrecall.Match{
				{Incident: openrecall.Incident{ID: "inc_a", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.9},
				{Incident: openrecall.Incident{ID: "inc_b", Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch()}, Score: 0.95},
			}}),
			pbt.Pin("a tie broken by the newer match", gen.TriageCase{Matches: []openrecall.Match{
				{Incident: openrecall.Incident{ID: "inc_a", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.9},
				{Incident: openrecall.Incident{ID: "inc_b", Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch().Add(time.Minute)}, Score: 0.9},
			}}),
			pbt.Pin("a tie broken by the name", gen.TriageCase{Matches: []openrecall.Match{
				{Incident: openrecall.Incident{ID: "inc_a", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.9},
				{Incident: openrecall.Incident{ID: "inc_b", Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch()}, Score: 0.9},
			}}),
			pbt.Classify(classifyTriage(cfg)),
			pbt.Cover("unanimous strong memory", 15), pbt.Cover("split strong memory", 10), pbt.Cover("a tie between decisions", 3),
		),
		pbt.ForAll("P6_agreeing_match_raises_consistent_count",
			"Adding a strong match that carries the dominant decision raises consistent_decision_count by one and never lowers consistency or confidence.",
			"TriageCaseGen", gen.TriageCaseGen(), func(c gen.TriageCase) error {
				before := triage.Triage(c.Fingerprint, c.Severity, c.Matches, cfg)
				if before.StrongCount == 0 {
					return nil
				}
				d := dominantDecision(c.Matches, cfg, before)
				extra := openrecall.Match{Incident: openrecall.Incident{ID: "inc_added", Decision: d, CreatedAt: gen.Epoch()}, Score: cfg.StrongMatch}
				after := triage.Triage(c.Fingerprint, c.Severity, append(append([]openrecall.Match(nil), c.Matches...), extra), cfg)
				switch {
				case after.ConsistentCount != before.ConsistentCount+1:
					return fmt.Errorf("count: consistent count %d → %d after adding a strong %s match", before.ConsistentCount, after.ConsistentCount, d)
				case after.Consistency < before.Consistency:
					return fmt.Errorf("consistency: fell %v → %v", before.Consistency, after.Consistency)
				case after.Confidence < before.Confidence:
					return fmt.Errorf("confidence: fell %v → %v", before.Confidence, after.Confidence)
				}
				return nil
			},
			pbt.Found("one incident id on two decisions broke this property's own oracle (test bug, fixed in the oracle)", gen.TriageCase{Matches: []openrecall.Match{
				{Incident: openrecall.Incident{ID: "inc_09", Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch()}, Score: 0.85},
				{Incident: openrecall.Incident{ID: "inc_09", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.95},
				{Incident: openrecall.Incident{ID: "inc_01", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.85},
			}}),
			pbt.Found("a related match at a strong score was counted by this property's oracle (test bug, seed 7: the oracle now skips related matches)", gen.TriageCase{Matches: []openrecall.Match{
				{Incident: openrecall.Incident{ID: "inc_04", Decision: openrecall.DecisionFalsePositive, CreatedAt: gen.Epoch()}, Score: 0.85},
				{Incident: openrecall.Incident{ID: "inc_06", Decision: openrecall.DecisionKnownBenign, CreatedAt: gen.Epoch()}, Score: 0.85, Related: true},
				{Incident: openrecall.Incident{ID: "inc_01", Decision: openrecall.DecisionKnownBenign, CreatedAt: gen.Epoch()}, Score: 0.85},
				{Incident: openrecall.Incident{ID: "inc_08", Decision: openrecall.DecisionKnownBenign, CreatedAt: gen.Epoch()}, Score: 0.85},
			}}),
			pbt.Classify(classifyTriage(cfg)),
			pbt.Cover("split strong memory", 10),
		),
		pbt.ForAll("P11_guard_iff_five_clauses",
			"Bypass happens if and only if all five hold: (a) a strong match exists; (b) consistency ≥ threshold; (c) confidence ≥ bypass threshold; (d) attack_pattern is empty and the decision is benign; (e) the alert is not more severe than the most severe supporting memory (an unknown alert counts as critical, an unknown memory as medium; an unknown alert is covered when every supporting memory is unknown). A verdict refused by (e) alone says so and names the clause. The guard rules on memory alone, so memory never bypasses an attack; an exception a person approved is a route step of its own, never a memory bypass (P96).",
			"GuardCaseGen", gen.GuardCaseGen(), func(c gen.GuardCase) error {
				v := triage.Guard(c.Fingerprint, c.Triage, cfg)
				tr := c.Triage
				want := openrecall.GuardVerdict{
					StrongMatch:    tr.StrongCount >= 1,
					Consistent:     tr.Consistency >= cfg.Consistency,
					Confident:      tr.Confidence >= cfg.BypassConfidence,
					BenignNoAttack: c.Fingerprint.AttackPattern == "" && isBenign(tr.Decision),
					SeverityCovered: alertRank(tr.AlertSeverity) <= memoryRank(tr.SupportSeverity) ||
						(!knownSeverity(tr.AlertSeverity) && tr.SupportSeverity == openrecall.SeverityUnknown),
				}
				want.Bypass = want.StrongMatch && want.Consistent && want.Confident && want.BenignNoAttack && want.SeverityCovered
				want.Reason = v.Reason
				if diff := cmp.Diff(want, v); diff != "" {
					return fmt.Errorf("clauses: verdict differs from the five clauses (-want +got):\n%s", diff)
				}
				if v.Reason == "" {
					return fmt.Errorf("reason: verdict without a reason")
				}
				onlyE := want.StrongMatch && want.Consistent && want.Confident && want.BenignNoAttack && !want.SeverityCovered
				if v.RefusedOnlyBySeverity() != onlyE {
					return fmt.Errorf("clause e: RefusedOnlyBySeverity = %v, want %v", v.RefusedOnlyBySeverity(), onlyE)
				}
				if onlyE && !strings.Contains(v.Reason, "severity clause (e)") {
					return fmt.Errorf("clause e: reason %q does not name the severity clause", v.Reason)
				}
				return nil
			},
			pbt.Pin("every threshold met exactly", gen.GuardCase{Triage: openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, StrongCount: 1, Confidence: 0.85, Consistency: 0.9,
				AlertSeverity: openrecall.SeverityHigh, SupportSeverity: openrecall.SeverityHigh}}),
			pbt.Pin("unknown alert, unknown memory", gen.GuardCase{Triage: openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, StrongCount: 9, Confidence: 0.9, Consistency: 1,
				AlertSeverity: openrecall.SeverityUnknown, SupportSeverity: openrecall.SeverityUnknown}}),
			pbt.Pin("confidence a hair below", gen.GuardCase{Triage: openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, StrongCount: 20, Confidence: math.Nextafter(0.85, 0), Consistency: 1}}),
			pbt.Classify(func(c gen.GuardCase) []string {
				var l []string
				if triage.Guard(c.Fingerprint, c.Triage, cfg).Bypass {
					l = append(l, "bypass")
				}
				if c.Triage.Confidence == cfg.BypassConfidence {
					l = append(l, "confidence exactly at threshold")
				}
				if c.Triage.Consistency == cfg.Consistency {
					l = append(l, "consistency exactly at threshold")
				}
				return l
			}),
			pbt.Cover("bypass", 2), pbt.Cover("confidence exactly at threshold", 3), pbt.Cover("consistency exactly at threshold", 3),
		),
		pbt.ForAll("P12_attack_blocks_bypass",
			"Memory never bypasses an attack: whatever memory says, an alert with an attack pattern (a security detection included) is never memory-bypassed; only an exception a person approved routes one past the model (DESIGN §6b; P90–P99).",
			"TriageCaseGen", gen.TriageCaseGen(), func(c gen.TriageCase) error {
				if !c.Fingerprint.HasAttack() {
					return nil
				}
				tr := triage.Triage(c.Fingerprint, c.Severity, c.Matches, cfg)
				if v := triage.Guard(c.Fingerprint, tr, cfg); v.Bypass {
					return fmt.Errorf("attack: %s alert bypassed: %s", c.Fingerprint.AttackPattern, v.Reason)
				}
				if !tr.RequiresHumanApproval {
					return fmt.Errorf("attack: %s alert does not require human approval", c.Fingerprint.AttackPattern)
				}
				strongest := openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, Confidence: 1, Consistency: 1, StrongCount: 20, ConsistentCount: 20, BestScore: 1,
					AlertSeverity: openrecall.SeverityInfo, SupportSeverity: openrecall.SeverityCritical}
				if v := triage.Guard(c.Fingerprint, strongest, cfg); v.Bypass {
					return fmt.Errorf("attack: %s alert bypassed on unanimous benign memory: %s", c.Fingerprint.AttackPattern, v.Reason)
				}
				return nil
			},
			pbt.Pin("brute force with 12 unanimous benign memories", gen.TriageCase{
				Fingerprint: openrecall.Fingerprint{ErrorClass: "auth_failure", AttackPattern: "brute_force", Environment: "prod"},
				Matches:     gen.LivenessCase{Decision: openrecall.DecisionKnownBenign, N: 12}.Matches(),
			}),
			pbt.Classify(func(c gen.TriageCase) []string {
				l := classifyTriage(cfg)(c)
				if c.Fingerprint.HasAttack() {
					l = append(l, "attack")
					tr := triage.Triage(c.Fingerprint, c.Severity, c.Matches, cfg)
					if tr.StrongCount > 0 && tr.ConsistentCount == tr.StrongCount && tr.Decision.Benign() {
						l = append(l, "attack alert with unanimous benign memory")
					}
				}
				return l
			}),
			pbt.Cover("attack", 20), pbt.Cover("attack alert with unanimous benign memory", 3),
		),
		pbt.ForAll("P19_guard_monotone_in_evidence",
			"Monotonicity: if the guard refuses a bypass, it also refuses with weaker evidence (lower scores, fewer agreeing matches, lower confidence).",
			"WeakeningGen", gen.WeakeningGen(), func(w gen.Weakening) error {
				fp, orig := w.Case.Fingerprint, w.Case.Triage
				if triage.Guard(fp, orig, cfg).Bypass {
					return nil
				}
				// The generated weakening, then every weaker value along each
				// dimension on its own (a ladder down to nothing).
				weaker := []openrecall.TriageResult{w.Weaker()}
				for k := orig.StrongCount - 1; k >= 0; k-- {
					tr := orig
					tr.StrongCount = k
					weaker = append(weaker, tr)
				}
				for k := orig.ConsistentCount - 1; k >= 0; k-- {
					tr := orig
					tr.ConsistentCount = k
					weaker = append(weaker, tr)
				}
				for _, x := range []float64{math.Nextafter(orig.Confidence, 0), orig.Confidence - 0.01, cfg.BypassConfidence, 0.5, 0} {
					if x >= 0 && x < orig.Confidence {
						tr := orig
						tr.Confidence = x
						weaker = append(weaker, tr)
					}
				}
				for _, x := range []float64{math.Nextafter(orig.Consistency, 0), orig.Consistency - 0.01, cfg.Consistency, 0.5, 0} {
					if x >= 0 && x < orig.Consistency {
						tr := orig
						tr.Consistency = x
						weaker = append(weaker, tr)
					}
				}
				for _, tr := range weaker {
					if v := triage.Guard(fp, tr, cfg); v.Bypass {
						return fmt.Errorf("monotone: refused %+v but bypassed the weaker %+v: %s", orig, tr, v.Reason)
					}
				}
				return nil
			},
			pbt.Classify(func(w gen.Weakening) []string {
				if triage.Guard(w.Case.Fingerprint, w.Case.Triage, cfg).Bypass {
					return []string{"bypassed before weakening"}
				}
				return []string{"refused before weakening"}
			}),
			pbt.Cover("refused before weakening", 25), pbt.Cover("bypassed before weakening", 25),
		),
		pbt.ForAll("P33_severity_clause_monotone",
			"The severity clause is monotone: raising an alert's known severity (info < low < medium < high < critical) never turns \"no bypass\" into \"bypass\", and an alert more severe than every supporting memory is never bypassed (an unknown alert counts as critical, an unknown memory as medium, except that an unknown alert is covered by supporting memories all of unknown severity).",
			"EscalationGen", gen.EscalationGen(), func(e gen.Escalation) error {
				low := triage.Guard(e.Case.Fingerprint, triage.Triage(e.Case.Fingerprint, e.Case.Severity, e.Case.Matches, cfg), cfg)
				trHigh := triage.Triage(e.Case.Fingerprint, e.Higher, e.Case.Matches, cfg)
				high := triage.Guard(e.Case.Fingerprint, trHigh, cfg)
				_, higherKnown := severityRanks()[e.Higher]
				if high.Bypass && !low.Bypass && higherKnown {
					return fmt.Errorf("monotone: bypassed at %q but not at the lower %q (%s)", e.Higher, e.Case.Severity, low.Reason)
				}
				if o := oracleTriage(gen.TriageCase{Fingerprint: e.Case.Fingerprint, Matches: e.Case.Matches}, cfg); high.Bypass && !severityCovered(e.Higher, o.supportRank, o.allUnknown) {
					return fmt.Errorf("clause e: a %q alert bypassed on memories whose most severe ranks %d", e.Higher, o.supportRank)
				}
				return nil
			},
			pbt.Pin("warning taught, critical fires", gen.Escalation{Case: gen.TriageCase{Severity: openrecall.SeverityMedium,
				Matches: gen.LivenessCase{Decision: openrecall.DecisionKnownBenign, N: 6}.Matches()}, Higher: openrecall.SeverityCritical}),
			pbt.Pin("unknown alert on unknown memories", gen.Escalation{Case: gen.TriageCase{Severity: openrecall.SeverityMedium,
				Matches: gen.LivenessCase{Decision: openrecall.DecisionKnownBenign, N: 6}.Matches()}, Higher: openrecall.SeverityUnknown}),
			pbt.Classify(func(e gen.Escalation) []string {
				low := triage.Guard(e.Case.Fingerprint, triage.Triage(e.Case.Fingerprint, e.Case.Severity, e.Case.Matches, cfg), cfg)
				high := triage.Guard(e.Case.Fingerprint, triage.Triage(e.Case.Fingerprint, e.Higher, e.Case.Matches, cfg), cfg)
				switch {
				case low.Bypass && !high.Bypass:
					return []string{"escalation refused"}
				case low.Bypass:
					return []string{"escalation still covered"}
				}
				return nil
			}),
			pbt.Cover("escalation refused", 1), pbt.Cover("escalation still covered", 2),
		),
		pbt.ForAll("P21_liveness_unanimous_benign_bypasses",
			"Liveness: a non-attack alert with an identity (even with an empty Alert DNA) and enough unanimous benign strong memories of that identity, no less severe than the alert (≥ 5 at the defaults), is bypassed, by triage and the guard and through the whole workflow; a guard that refuses everything fails.",
			"LivenessCaseGen", gen.LivenessCaseGen(), func(c gen.LivenessCase) error {
				tr := triage.Triage(c.Fingerprint, openrecall.SeverityMedium, c.Matches(), cfg)
				if tr.Decision != c.Decision {
					return fmt.Errorf("triage: %d unanimous %s memories proposed %q (%s)", c.N, c.Decision, tr.Decision, tr.EscalationReason)
				}
				if v := triage.Guard(c.Fingerprint, tr, cfg); !v.Bypass {
					return fmt.Errorf("liveness: %d unanimous %s memories, confidence %v, not bypassed: %s", c.N, c.Decision, tr.Confidence, v.Reason)
				}
				return checkWorkflowLiveness(c)
			},
			pbt.Pin("five memories, the least that bypasses", gen.LivenessCase{Fingerprint: openrecall.Fingerprint{ErrorClass: "oomkilled"}, Decision: openrecall.DecisionFalsePositive, N: 5, Scores: []float64{0.85, 0.85, 0.85, 0.85, 0.85}}),
		),
	}
}

// triageOracle is DESIGN §6 written out again, independently of package
// triage: the dominant decision among the strong matches by count, ties to
// the decision whose best strong match scores higher, then is newer, then to
// the smaller name; consistency below the threshold escalates.
type triageOracle struct {
	decision, dominant openrecall.Decision
	strong, consistent int
	supporting         []string
	tie                bool
	// supportRank is the highest memoryRank of the supporting memories, -1
	// without support; allUnknown says that there is support and that every
	// supporting memory's severity is unknown.
	supportRank int
	allUnknown  bool
}

// alertRank and memoryRank are the severity clause's ranks (DESIGN §6 e),
// written out again: info 0 … critical 4; an alert of unknown (or empty,
// or unrecognized) severity counts as critical, such a memory as medium.
func alertRank(s openrecall.Severity) int {
	if r, ok := severityRanks()[s]; ok {
		return r
	}
	return 4
}

func memoryRank(s openrecall.Severity) int {
	if r, ok := severityRanks()[s]; ok {
		return r
	}
	return 2
}

// knownSeverity reports whether s is one of the five ranked severities.
func knownSeverity(s openrecall.Severity) bool {
	_, ok := severityRanks()[s]
	return ok
}

func severityRanks() map[openrecall.Severity]int {
	return map[openrecall.Severity]int{"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
}

// severityCovered is clause (e): the alert is not more severe than the most
// severe supporting memory (a memory of unknown severity as medium when
// there is none), and an alert of unknown severity is covered by supporting
// memories that are all of unknown severity.
func severityCovered(alert openrecall.Severity, supportRank int, allUnknown bool) bool {
	if allUnknown {
		if _, known := severityRanks()[alert]; !known {
			return true
		}
	}
	if supportRank < 0 {
		supportRank = 2
	}
	return alertRank(alert) <= supportRank
}

func oracleTriage(c gen.TriageCase, cfg triage.Config) triageOracle {
	type group struct {
		d     openrecall.Decision
		count int
		best  openrecall.Match
	}
	better := func(a, b openrecall.Match) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Incident.CreatedAt.After(b.Incident.CreatedAt)
	}
	o := triageOracle{supportRank: -1}
	var groups []*group
	byDecision := map[openrecall.Decision]*group{}
	for _, m := range c.Matches {
		if m.Related || m.Score < cfg.StrongMatch {
			continue
		}
		o.strong++
		g := byDecision[m.Incident.Decision]
		if g == nil {
			g = &group{d: m.Incident.Decision, best: m}
			byDecision[m.Incident.Decision] = g
			groups = append(groups, g)
		}
		g.count++
		if better(m, g.best) {
			g.best = m
		}
	}
	o.decision = openrecall.DecisionEscalated
	if o.strong == 0 {
		return o
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		switch {
		case a.count != b.count:
			return a.count > b.count
		case better(a.best, b.best):
			return true
		case better(b.best, a.best):
			return false
		}
		return a.d < b.d
	})
	dom := groups[0]
	o.tie = len(groups) > 1 && groups[1].count == dom.count
	o.dominant, o.consistent = dom.d, dom.count
	known := false
	for _, m := range c.Matches {
		if !m.Related && m.Score >= cfg.StrongMatch && m.Incident.Decision == dom.d {
			o.supporting = append(o.supporting, m.Incident.ID)
			o.supportRank = max(o.supportRank, memoryRank(m.Incident.Severity))
			_, k := severityRanks()[m.Incident.Severity]
			known = known || k
		}
	}
	o.allUnknown = len(o.supporting) > 0 && !known
	if float64(o.consistent)/float64(o.strong) >= cfg.Consistency {
		o.decision = dom.d
	}
	return o
}

// inClosedSet is the closed decision set of DESIGN §6, spelled out here so
// that the oracle does not lean on the Decision.Valid it checks.
func inClosedSet(d openrecall.Decision) bool {
	switch d {
	case "false_positive", "duplicate", "known_benign", "real", "escalated":
		return true
	}
	return false
}

// isBenign is DESIGN §6's benign set, spelled out likewise.
func isBenign(d openrecall.Decision) bool {
	return d == "false_positive" || d == "duplicate" || d == "known_benign"
}

func strongCount(ms []openrecall.Match, cfg triage.Config) int {
	n := 0
	for _, m := range ms {
		if m.Score >= cfg.StrongMatch {
			n++
		}
	}
	return n
}

func bestScore(ms []openrecall.Match) float64 {
	best := 0.0
	for _, m := range ms {
		best = math.Max(best, m.Score)
	}
	return best
}

func dominantCount(ms []openrecall.Match, cfg triage.Config) int {
	counts := map[openrecall.Decision]int{}
	top := 0
	for _, m := range ms {
		if m.Score >= cfg.StrongMatch {
			counts[m.Incident.Decision]++
			top = max(top, counts[m.Incident.Decision])
		}
	}
	return top
}

// dominantDecision is a decision whose strong matches the triage counted as
// consistent: the proposal, or for an escalated split a decision with
// ConsistentCount strong matches (when several tie, adding a match to any of
// them raises the count).
func dominantDecision(ms []openrecall.Match, cfg triage.Config, tr openrecall.TriageResult) openrecall.Decision {
	if tr.Decision != openrecall.DecisionEscalated {
		return tr.Decision
	}
	counts := map[openrecall.Decision]int{}
	for _, m := range ms {
		// A related match never votes, whatever its score (DESIGN §5).
		if m.Score >= cfg.StrongMatch && !m.Related {
			counts[m.Incident.Decision]++
		}
	}
	for _, d := range openrecall.MemoryDecisions {
		if counts[d] == tr.ConsistentCount {
			return d
		}
	}
	return openrecall.DecisionReal
}

func classifyTriage(cfg triage.Config) func(gen.TriageCase) []string {
	return func(c gen.TriageCase) []string {
		n, dom := strongCount(c.Matches, cfg), dominantCount(c.Matches, cfg)
		var l []string
		switch {
		case len(c.Matches) == 0:
			l = append(l, "no matches")
		case n == 0:
			l = append(l, "only weak matches")
		case dom == n:
			l = append(l, "unanimous strong memory")
		default:
			l = append(l, "split strong memory")
		}
		for _, m := range c.Matches {
			if m.Score == cfg.StrongMatch {
				l = append(l, "a score exactly at the strong threshold")
				break
			}
		}
		if n > 0 && float64(dom)/float64(n) == cfg.Consistency {
			l = append(l, "consistency exactly at threshold")
		}
		if oracleTriage(c, cfg).tie {
			l = append(l, "a tie between decisions")
		}
		return l
	}
}
