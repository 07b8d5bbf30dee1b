package gen

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// GateShapes are the shapes an adversarial model answer takes: a clean
// object, a huge one (a completion far past the token cap), and ways of not
// being one object of the schema.
func GateShapes() []string {
	return []string{"clean", "huge", "invalid JSON", "data after the object", "unknown field", "no confidence", "not an object", "confidence as text"}
}

// GateDecisions are proposed decisions: the closed set and values outside it.
func GateDecisions() []string {
	return []string{"known_benign", "false_positive", "duplicate", "real", "escalated", "", "benign", "KNOWN_BENIGN", "close", "known_benign "}
}

// GateConfidences are confidences around the quality gate (0.60) and the
// edges of [0, 1].
func GateConfidences() []float64 {
	return []float64{0.9, math.Nextafter(0.6, 0), 0.6, math.Nextafter(0.6, 1), 0, 1, 0.59, 0.61, math.Nextafter(1, 2), -0.01}
}

// GateCitations are the memory ids an answer cites: none, recalled ones,
// and ids memory never returned.
func GateCitations() [][]string {
	return [][]string{nil, {"inc_0"}, {"inc_0", "inc_1"}, {"inc_404"}, {"inc_0", "inc_999"}, {""}}
}

// GateCase is one alert routed to a model whose answer is adversarial:
// Memories unanimous benign strong memories (0 for none) of the alert's
// fingerprint, an attack pattern or none, and the answer both models give.
type GateCase struct {
	Memories   int
	Attack     bool
	Shape      int
	Decision   int
	Confidence int
	Cite       int
}

// Answer renders the model's answer text.
func (c GateCase) Answer() string {
	d := GateDecisions()[c.Decision]
	conf := GateConfidences()[c.Confidence]
	cites := GateCitations()[c.Cite]
	obj := fmt.Sprintf(`{"decision":%q,"confidence":%v,"summary":"checked","cited_memory_ids":[%s]}`, d, conf, quoteAll(cites))
	switch GateShapes()[c.Shape] {
	case "huge":
		obj = fmt.Sprintf(`{"decision":%q,"confidence":%v,"summary":%q,"cited_memory_ids":[%s]}`, d, conf, strings.Repeat("the pool is exhausted again ", 3000), quoteAll(cites))
	case "invalid JSON":
		obj = obj[:len(obj)-1]
	case "data after the object":
		obj += ` {"decision":"real"}`
	case "unknown field":
		obj = obj[:len(obj)-1] + `,"bypass":true}`
	case "no confidence":
		obj = fmt.Sprintf(`{"decision":%q,"summary":"checked"}`, d)
	case "not an object":
		obj = fmt.Sprintf(`[%q, %v]`, d, conf)
	case "confidence as text":
		obj = fmt.Sprintf(`{"decision":%q,"confidence":"%v"}`, d, conf)
	}
	return obj
}

func quoteAll(ss []string) string {
	var q []string
	for _, s := range ss {
		q = append(q, fmt.Sprintf("%q", s))
	}
	return strings.Join(q, ",")
}

// GateCaseGen generates adversarial model answers (invalid JSON, decisions
// outside the closed set, benign verdicts on attacks, citations of ids
// memory never returned, confidence just under, at and over the gate, huge
// completions) for alerts with 0 to 4 unanimous benign memories (the cheap
// tier confirms 1 to 4) and with or without an attack pattern.
func GateCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(GateCase{}), map[string]gopter.Gen{
		"Memories":   Of([]int{3, 0, 1, 4}, 0.5),
		"Attack":     gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Shape":      Index(len(GateShapes()), 0.55),
		"Decision":   Index(len(GateDecisions()), 0.5),
		"Confidence": Index(len(GateConfidences()), 0.5),
		"Cite":       Index(len(GateCitations()), 0.5),
	})
}

// ValidGateCase checks the indexes of c.
func ValidGateCase(c GateCase) error {
	if c.Memories < 0 || c.Memories > 4 {
		return fmt.Errorf("memories %d", c.Memories)
	}
	for _, x := range []struct{ i, n int }{{c.Shape, len(GateShapes())}, {c.Decision, len(GateDecisions())}, {c.Confidence, len(GateConfidences())}, {c.Cite, len(GateCitations())}} {
		if x.i < 0 || x.i >= x.n {
			return fmt.Errorf("index %d out of [0, %d)", x.i, x.n)
		}
	}
	return nil
}

// ThresholdCase is N unanimous memories of one decision, plus Dissent
// memories decided real, all scoring Score against the alert, whose
// fingerprint has an attack pattern when Attack.
type ThresholdCase struct {
	N, Dissent, Decision, Score int
	Attack                      bool
	// AlertSeverity and MemorySeverity index ThresholdSeverities: the
	// alert's and every memory's (clause e).
	AlertSeverity, MemorySeverity int
}

// ThresholdSeverities are the normalized severities, medium first.
func ThresholdSeverities() []string {
	return []string{"medium", "critical", "high", "low", "info", "unknown", ""}
}

// ThresholdScores are match scores at and beside the strong threshold 0.85.
func ThresholdScores() []float64 {
	return []float64{1, 0.85, math.Nextafter(0.85, 0), 89.0 / 98, 0.9}
}

// ThresholdCaseGen draws every count from 0 to 20 (uniform, so each count
// appears), dissent 0 to 3, every memory decision and scores at the
// strong threshold.
func ThresholdCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ThresholdCase{}), map[string]gopter.Gen{
		"N":        IntUpTo(20),
		"Dissent":  Of([]int{0, 1, 2, 3}, 0.6),
		"Decision": Index(len(openrecall.MemoryDecisions), 0),
		"Score":    Index(len(ThresholdScores()), 0.5),
		"Attack":   gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		// Equal severities most often: the count is the subject.
		"AlertSeverity":  Index(len(ThresholdSeverities()), 0.7),
		"MemorySeverity": Index(len(ThresholdSeverities()), 0.7),
	})
}

// AuditSplice is a trail of N entries sealed with a key, and a second trail
// sealed with the same key whose entry From (and so every hash after it)
// differs; entry I of the first is replaced by the second's entry of the
// same sequence.
type AuditSplice struct {
	N, From, I int
}

// AuditSpliceGen generates splices of trails of 2 to 6 entries.
func AuditSpliceGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(AuditSplice{}), map[string]gopter.Gen{
		"N":    Of([]int{3, 2, 4, 6}, 0.3),
		"From": IntUpTo(5),
		"I":    IntUpTo(5),
	})
}

// Trails returns the two trails' unsealed entries.
func (a AuditSplice) Trails() (mine, other []openrecall.AuditEntry) {
	for i := 0; i < a.N; i++ {
		e := openrecall.AuditEntry{AnalysisID: fmt.Sprintf("pbt-%06d", i/3), Batch: "pbt", AlertID: fmt.Sprintf("a-%d", i/3), StepIndex: i % 3,
			Step: openrecall.StepAnalysis, Model: "gpt-4o", Tier: openrecall.TierStrong, Reason: fmt.Sprintf("step %d", i), Outcome: openrecall.OutcomeOK,
			Cost: openrecall.NanoUSD(1000 * i), Baseline: openrecall.NanoUSD(2000 * i), Savings: openrecall.NanoUSD(1000 * i), Time: Times()[i%len(Times())]}
		mine = append(mine, e)
		if i == a.From%a.N {
			e.Reason += " (another database)"
		}
		other = append(other, e)
	}
	return mine, other
}
