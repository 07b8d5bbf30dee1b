package openrecall

import (
	"fmt"
	"strings"
)

// Decision is a triage decision in the closed set below.
type Decision string

// The closed decision set. Analysts retain the first four; Escalated means a
// person must look.
const (
	DecisionFalsePositive Decision = "false_positive"
	DecisionDuplicate     Decision = "duplicate"
	DecisionKnownBenign   Decision = "known_benign"
	DecisionReal          Decision = "real"
	DecisionEscalated     Decision = "escalated"
)

// Decisions lists the closed set in a fixed order. Callers must not modify it.
var Decisions = []Decision{DecisionFalsePositive, DecisionDuplicate, DecisionKnownBenign, DecisionReal, DecisionEscalated}

// MemoryDecisions lists the decisions an analyst can retain. Callers must not
// modify it.
var MemoryDecisions = []Decision{DecisionFalsePositive, DecisionDuplicate, DecisionKnownBenign, DecisionReal}

// Valid reports whether d is in the closed set.
func (d Decision) Valid() bool {
	for _, x := range Decisions {
		if d == x {
			return true
		}
	}
	return false
}

// Retainable reports whether d may be stored in memory.
func (d Decision) Retainable() bool { return d.Valid() && d != DecisionEscalated }

// Benign reports whether d says the alert needs no action: false_positive,
// duplicate or known_benign.
func (d Decision) Benign() bool {
	return d == DecisionFalsePositive || d == DecisionDuplicate || d == DecisionKnownBenign
}

// ParseDecision returns s as a Decision, or an error wrapping ErrInvalid.
func ParseDecision(s string) (Decision, error) {
	d := Decision(s)
	if !d.Valid() {
		return "", fmt.Errorf("decision %q is not one of %s: %w", s, decisionNames(Decisions), ErrInvalid)
	}
	return d, nil
}

// decisionNames lists ds for an error message: "false_positive, duplicate".
func decisionNames(ds []Decision) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}
