package openrecall

import (
	"fmt"
	"time"
)

// Severity is a normalized alert severity.
type Severity string

// Normalized severities, most urgent first.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
	SeverityInfo     Severity = "info"
	// SeverityUnknown is a missing or unrecognized severity, kept distinct
	// and never guessed (DESIGN §3).
	SeverityUnknown Severity = "unknown"
)

// Severities lists the normalized severities, most urgent first, then
// unknown. Callers must not modify it.
var Severities = []Severity{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo, SeverityUnknown}

// Alert statuses.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

// Position says where a record was in its input: a 1-based line for line
// formats, a 0-based index into a JSON array or an Alertmanager alerts[]
// list, or both (a webhook on line 3, its alerts[1]).
type Position struct {
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
	Index  int    `json:"index"`
	// HasIndex tells an index of 0 from no index.
	HasIndex bool `json:"has_index,omitempty"`
}

// String returns the position as a person reads it, such as "line 3" or
// "line 1, alerts[2]" or "index 4".
func (p Position) String() string {
	s := ""
	switch {
	case p.Line > 0 && p.HasIndex:
		s = fmt.Sprintf("line %d, item %d", p.Line, p.Index)
	case p.Line > 0:
		s = fmt.Sprintf("line %d", p.Line)
	case p.HasIndex:
		s = fmt.Sprintf("index %d", p.Index)
	default:
		s = "input"
	}
	if p.Source != "" {
		s = p.Source + ": " + s
	}
	return s
}

// Alert is one normalized alert, whatever its source format.
type Alert struct {
	// ID is stable: the source's own id, fingerprint or dedup key when it has
	// one, else a hash of the normalized content, so a re-sent alert is
	// recognised.
	ID          string            `json:"id"`
	Format      string            `json:"format"`
	Title       string            `json:"title,omitempty"`
	Text        string            `json:"text,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Severity    Severity          `json:"severity,omitempty"`
	Service     string            `json:"service,omitempty"`
	// Environment is prod, staging, dev or empty.
	Environment string    `json:"environment,omitempty"`
	Source      string    `json:"source,omitempty"`
	Status      string    `json:"status,omitempty"`
	Timestamp   time.Time `json:"timestamp,omitzero"`
	Position    Position  `json:"position"`
}
