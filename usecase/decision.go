package usecase

import (
	"fmt"

	"github.com/openrecall/openrecall"
)

// Decisions lists the decisions an analyst can retain, as help texts and
// errors name them.
const Decisions = "false_positive, duplicate, known_benign or real"

// ParseDecision returns s as a decision an analyst can retain (not
// escalated, which is the pipeline's), or an error wrapping
// openrecall.ErrInvalid that lists Decisions.
func ParseDecision(s string) (openrecall.Decision, error) {
	d, err := openrecall.ParseDecision(s)
	if err != nil || !d.Retainable() {
		return "", fmt.Errorf("decision %q: want %s: %w", s, Decisions, openrecall.ErrInvalid)
	}
	return d, nil
}
