package routing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	openrecall "github.com/openrecall/openrecall"
)

// VetFunc is the guard's check of a model's proposed decision for an alert
// with fingerprint fp: ok false with a reason refuses it. The workflow wires
// triage.Vet in.
type VetFunc func(fp openrecall.Fingerprint, proposed openrecall.Decision) (ok bool, reason string)

// errNotObject marks an answer that is not one JSON object.
var errNotObject = errors.New("not one JSON object")

// verdict is the quality gate's ruling on one model answer.
type verdict struct {
	// analysis is the parsed answer, nil when it did not parse.
	analysis *openrecall.Analysis
	proposed openrecall.Decision
	outcome  string
	reason   string
}

// ParseAnalysis decodes a model answer strictly: exactly one JSON object with
// the root Analysis fields only, decision and confidence present.
func ParseAnalysis(text string) (openrecall.Analysis, error) {
	if a, ok := decodeAnswer(text); ok {
		return a, nil
	}
	return ParseAnalysisTwoPass(text)
}

// ParseAnalysisTwoPass is ParseAnalysis as two decodes, the keys first for
// their presence, then strictly: the reference ParseAnalysis must equal,
// answer and error alike (property P44), and what it falls back on.
func ParseAnalysisTwoPass(text string) (openrecall.Analysis, error) {
	var keys map[string]json.RawMessage
	if err := decodeOne(text, &keys, false); err != nil {
		return openrecall.Analysis{}, err
	}
	for _, k := range []string{"decision", "confidence"} {
		if _, ok := keys[k]; !ok {
			return openrecall.Analysis{}, fmt.Errorf("answer lacks the %q field: %w", k, openrecall.ErrInvalid)
		}
	}
	var a openrecall.Analysis
	if err := decodeOne(text, &a, true); err != nil {
		return openrecall.Analysis{}, err
	}
	return a, nil
}

func decodeOne(text string, v any, strict bool) error {
	dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(text)))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("answer is %w: %w", errNotObject, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("answer is %w: data after the object", errNotObject)
	}
	if strict {
		return nil
	}
	if !bytes.HasPrefix(bytes.TrimSpace([]byte(text)), []byte("{")) {
		return fmt.Errorf("answer is %w", errNotObject)
	}
	return nil
}

// gate applies the quality gate to one model answer.
func (r *Router) gate(in Input, text string) verdict {
	a, err := ParseAnalysis(text)
	if err != nil {
		return verdict{outcome: openrecall.OutcomeGateFailed, reason: "invalid answer: " + err.Error()}
	}
	v := verdict{analysis: &a, proposed: a.Decision}
	if !a.Decision.Valid() {
		v.outcome, v.reason = openrecall.OutcomeRefused, fmt.Sprintf("decision %q is outside the closed set", a.Decision)
		return v
	}
	if a.Decision.Benign() && in.Fingerprint.HasAttack() {
		v.outcome, v.reason = openrecall.OutcomeRefused, fmt.Sprintf("benign decision %s on an alert with attack pattern %s", a.Decision, in.Fingerprint.AttackPattern)
		return v
	}
	if ok, why := r.cfg.Vet(in.Fingerprint, a.Decision); !ok {
		if why == "" {
			why = "the guard refused the proposal"
		}
		v.outcome, v.reason = openrecall.OutcomeRefused, "guard: "+why
		return v
	}
	known := make(map[string]bool, len(in.Matches))
	for _, m := range in.Matches {
		known[m.Incident.ID] = true
	}
	for _, id := range a.CitedMemory {
		if !known[id] {
			v.outcome, v.reason = openrecall.OutcomeGateFailed, fmt.Sprintf("cited memory %q is not among the recalled memories", id)
			return v
		}
	}
	if math.IsNaN(a.Confidence) || a.Confidence < 0 || a.Confidence > 1 {
		v.outcome, v.reason = openrecall.OutcomeGateFailed, fmt.Sprintf("confidence %v is outside [0, 1]", a.Confidence)
		return v
	}
	if a.Confidence < r.cfg.GateConfidence {
		v.outcome, v.reason = openrecall.OutcomeGateFailed, fmt.Sprintf("confidence %.2f is below the gate %.2f", a.Confidence, r.cfg.GateConfidence)
		return v
	}
	v.outcome = openrecall.OutcomeAccepted
	return v
}
