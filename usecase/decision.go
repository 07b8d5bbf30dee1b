package usecase

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
)

// Decisions names the decisions an analyst can retain
// (openrecall.MemoryDecisions), as help texts and errors say them:
// "false_positive, duplicate, known_benign or real".
func Decisions() string {
	names := make([]string, len(openrecall.MemoryDecisions))
	for i, d := range openrecall.MemoryDecisions {
		names[i] = string(d)
	}
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}

// ParseDecision returns s as a decision an analyst can retain (not
// escalated, which is the pipeline's), or an error wrapping
// openrecall.ErrInvalid that lists Decisions.
func ParseDecision(s string) (openrecall.Decision, error) {
	d, err := openrecall.ParseDecision(s)
	if err != nil || !d.Retainable() {
		return "", fmt.Errorf("decision %q: want %s: %w", s, Decisions(), openrecall.ErrInvalid)
	}
	return d, nil
}
