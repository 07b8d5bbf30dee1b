package openrecall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Incident is one analyst decision kept in memory.
type Incident struct {
	ID            string      `json:"id"`
	Fingerprint   Fingerprint `json:"fingerprint"`
	Decision      Decision    `json:"decision"`
	Note          string      `json:"note,omitempty"`
	DeadEnds      []string    `json:"dead_ends,omitempty"`
	Analyst       string      `json:"analyst,omitempty"`
	ImpactMinutes int         `json:"business_impact_minutes,omitempty"`
	SourceAlertID string      `json:"source_alert_id,omitempty"`
	CreatedAt     time.Time   `json:"created_at"`
	DedupeKey     string      `json:"dedupe_key"`
	// Identity is the identity of the alert the decision was about (DESIGN
	// §4, §5). A memory without one is related knowledge only: it never
	// votes for a bypass.
	Identity Identity `json:"identity,omitzero"`
	// Severity is the severity of the alert the decision was about; empty
	// or unknown counts as medium in the guard's severity clause.
	Severity Severity `json:"severity,omitempty"`
	// ExpiresAt, when set, is when the memory stops voting; after it the
	// memory is recalled as related knowledge only.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// ForgottenAt, when set, is when the decision was taken back (memory
	// forget, or a superseding retain); a forgotten memory is never
	// recalled.
	ForgottenAt time.Time `json:"forgotten_at,omitzero"`
}

// Votes reports whether the memory may vote for a bypass of an alert of
// identity id at time now: the alert has an identity, the memory has the
// same one, and the memory is neither forgotten nor expired. Whether the
// DNA agrees is a separate question (SameCritical).
func (inc Incident) Votes(id Identity, now time.Time) bool {
	return !id.IsZero() && inc.Identity == id && inc.ForgottenAt.IsZero() &&
		(inc.ExpiresAt.IsZero() || now.Before(inc.ExpiresAt))
}

// ScoreMatch scores a memory for an alert of identity id and fingerprint
// fp at time now (DESIGN §5): a memory that votes (Votes) and agrees on the
// four critical fields scores Similarity, 1 when identical; any other
// memory is a related match scored RelatedScore, at most
// MinStrongThreshold, below every allowed strong-match threshold.
func ScoreMatch(id Identity, fp Fingerprint, inc Incident, now time.Time) Match {
	if inc.Votes(id, now) && SameCritical(fp, inc.Fingerprint) {
		return Match{Incident: inc, Score: Similarity(fp, inc.Fingerprint)}
	}
	return Match{Incident: inc, Score: RelatedScore(fp, inc.Fingerprint), Related: true}
}

// Validate reports the first rule the incident breaks: a fingerprint that is
// not canonical, a decision outside the retainable set, a negative impact.
func (inc Incident) Validate() error {
	if err := inc.Fingerprint.Validate(); err != nil {
		return err
	}
	if !inc.Decision.Retainable() {
		return fmt.Errorf("incident decision %q is not one of %s: %w", inc.Decision, decisionNames(MemoryDecisions), ErrInvalid)
	}
	if inc.Severity != "" && !inc.Severity.Valid() {
		return fmt.Errorf("incident severity %q is not one of critical, high, medium, low, info, unknown: %w", inc.Severity, ErrInvalid)
	}
	if inc.Identity.IsZero() && inc.Identity.Service != "" {
		return fmt.Errorf("incident identity has service %q but no rule: %w", inc.Identity.Service, ErrInvalid)
	}
	if inc.ImpactMinutes < 0 {
		return fmt.Errorf("incident business impact %d minutes is negative: %w", inc.ImpactMinutes, ErrInvalid)
	}
	return nil
}

// Normalized returns a copy of inc with its dedupe key and id derived from its
// content (see DedupeKey); the id is stable, so the same decision retained
// twice, in any order, by any process, has one id.
func (inc Incident) Normalized() Incident {
	inc.DedupeKey = DedupeKey(inc.Fingerprint, inc.Decision, inc.Note, inc.SourceAlertID)
	inc.ID = "inc_" + inc.DedupeKey[:16]
	if inc.Severity == "" {
		inc.Severity = SeverityUnknown
	}
	return inc
}

// Match is an incident recalled for a fingerprint with its score in [0, 1].
// A related match (another identity, no identity, or a memory that no longer
// votes) is shown for its notes and dead ends and never votes for a bypass;
// its score is at most MinStrongThreshold.
type Match struct {
	Incident Incident `json:"incident"`
	Score    float64  `json:"score"`
	Related  bool     `json:"related,omitempty"`
}

// DedupeKey returns the hex SHA-256 of the canonical fingerprint, the
// decision and the content, where content is the analyst's note together with
// the source alert's identity, normalized by CanonicalText. Equivalent input
// (notes that differ only in case, Unicode compatibility forms or whitespace)
// gives one key; decisions on two different alerts of one family give two.
func DedupeKey(fp Fingerprint, d Decision, note, sourceAlertID string) string {
	h := sha256.New()
	h.Write([]byte(fp.String()))
	h.Write([]byte{0})
	h.Write([]byte(d))
	h.Write([]byte{0})
	h.Write([]byte(CanonicalText(note)))
	h.Write([]byte{0})
	h.Write([]byte(CanonicalText(sourceAlertID)))
	return hex.EncodeToString(h.Sum(nil))
}

// invisible are format characters that carry no meaning in a note and are
// dropped by CanonicalText.
func invisible(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069':
		return true
	}
	return false
}

// CanonicalText normalizes free text for comparison: Unicode compatibility
// normalization (NFKC), full case folding, invisible format characters
// (zero-width spaces and joiners, direction marks, soft hyphens) removed, and
// every run of Unicode white space collapsed to one ASCII space with none at
// either end. It is idempotent: CanonicalText(CanonicalText(s)) ==
// CanonicalText(s). Invalid UTF-8 bytes become U+FFFD.
func CanonicalText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for i := 0; i < 4; i++ {
		next := canonicalTextStep(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

func canonicalTextStep(s string) string {
	s = norm.NFKC.String(s)
	s = cases.Fold().String(s)
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
