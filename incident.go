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
}

// Validate reports the first rule the incident breaks: a fingerprint that is
// not canonical, a decision outside the retainable set, a negative impact.
func (inc Incident) Validate() error {
	if err := inc.Fingerprint.Validate(); err != nil {
		return err
	}
	if !inc.Decision.Retainable() {
		return fmt.Errorf("incident decision %q is not one of false_positive, duplicate, known_benign, real: %w", inc.Decision, ErrInvalid)
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
	return inc
}

// Match is an incident recalled for a fingerprint with its score in [0, 1].
type Match struct {
	Incident Incident `json:"incident"`
	Score    float64  `json:"score"`
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
