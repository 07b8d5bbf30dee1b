package triage

import (
	"fmt"
	"math"

	"github.com/openrecall/openrecall"
)

// Default thresholds (DESIGN §6).
const (
	// DefaultStrongMatch is the lowest score of a strong memory match.
	DefaultStrongMatch = 0.85
	// DefaultConsistency is the lowest share of strong matches that must
	// agree on the dominant decision.
	DefaultConsistency = 0.90
	// DefaultBypassConfidence is the lowest confidence that allows a bypass.
	DefaultBypassConfidence = 0.85
	// DefaultRecallLimit is how many matches memory recalls per alert.
	DefaultRecallLimit = 10
	// DefaultGateConfidence is the lowest confidence a model answer needs to
	// pass the quality gate.
	DefaultGateConfidence = 0.60
)

// Config holds the triage and guard thresholds. The zero value is not
// usable; start from DefaultConfig.
type Config struct {
	// StrongMatch is the lowest score of a strong match, in
	// (openrecall.MinStrongThreshold, 1].
	StrongMatch float64
	// Consistency is the lowest share of strong matches carrying the
	// dominant decision for triage to propose it, in [0, 1].
	Consistency float64
	// BypassConfidence is the lowest confidence for a bypass, in [0, 1].
	BypassConfidence float64
	// GateConfidence is the lowest confidence of an accepted model answer,
	// in [0, 1].
	GateConfidence float64
	// RecallLimit is how many matches to recall, 1..1000.
	RecallLimit int
}

// DefaultConfig returns the documented default thresholds.
func DefaultConfig() Config {
	return Config{
		StrongMatch:      DefaultStrongMatch,
		Consistency:      DefaultConsistency,
		BypassConfidence: DefaultBypassConfidence,
		GateConfidence:   DefaultGateConfidence,
		RecallLimit:      DefaultRecallLimit,
	}
}

// Validate reports the first field outside its range. The error names the
// field and wraps openrecall.ErrInvalid.
func (c Config) Validate() error {
	if math.IsNaN(c.StrongMatch) || c.StrongMatch <= openrecall.MinStrongThreshold || c.StrongMatch > 1 {
		return fmt.Errorf("triage config: StrongMatch %v must be above %v and at most 1 (at or below %v a match that differs in a critical field would count as strong): %w",
			c.StrongMatch, openrecall.MinStrongThreshold, openrecall.MinStrongThreshold, openrecall.ErrInvalid)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"Consistency", c.Consistency},
		{"BypassConfidence", c.BypassConfidence},
		{"GateConfidence", c.GateConfidence},
	} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return fmt.Errorf("triage config: %s %v must be between 0 and 1: %w", f.name, f.v, openrecall.ErrInvalid)
		}
	}
	if c.RecallLimit < 1 || c.RecallLimit > 1000 {
		return fmt.Errorf("triage config: RecallLimit %d must be between 1 and 1000: %w", c.RecallLimit, openrecall.ErrInvalid)
	}
	return nil
}
