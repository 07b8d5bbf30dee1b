package openrecall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// StepException is the route step of an alert that matched an active
// exception a person approved (DESIGN §6b, §7): no model call, cost 0, its
// baseline saved, the exception's decision taken.
const StepException = "exception"

// Audit steps of the exceptions' lifecycle; each entry's reason names its
// actor (the analyst, or system for an expiry).
const (
	StepExceptionApprove = "exception-approve"
	StepExceptionAdd     = "exception-add"
	StepExceptionRevoke  = "exception-revoke"
	StepExceptionExpire  = "exception-expire"
	StepExceptionImport  = "exception-import"
)

// DefaultProposalExpiry is the expiry a proposed exception suggests.
const DefaultProposalExpiry = 30 * 24 * time.Hour

// DefaultMaxExceptionExpiry caps how far ahead an exception may expire
// (exceptions.max_expiry).
const DefaultMaxExceptionExpiry = 90 * 24 * time.Hour

// Exception states, as `exception list` shows them.
const (
	ExceptionActive  = "active"
	ExceptionExpired = "expired"
	ExceptionRevoked = "revoked"
)

// Exception is a narrow, expiring rule a person approved (DESIGN §6b): an
// alert of Identity whose critical Alert DNA equals DNA's, whose entity
// fields equal every Match field, and which is not more severe than
// MaxSeverity, takes Decision without a model call while the exception is
// active. Memory alone never creates one: Analyst is the person who
// approved or wrote it.
type Exception struct {
	ID       string   `json:"id"`
	Identity Identity `json:"identity"`
	// DNA holds the critical Alert DNA the exception was made for (error
	// class, service role, attack pattern, environment); its other fields
	// are empty.
	DNA Fingerprint `json:"dna"`
	// Match is the entity fields an alert must carry with equal values.
	Match       map[string]string `json:"match,omitempty"`
	Decision    Decision          `json:"decision"`
	MaxSeverity Severity          `json:"max_severity"`
	ExpiresAt   time.Time         `json:"expires_at"`
	CreatedAt   time.Time         `json:"created_at"`
	Analyst     string            `json:"analyst"`
	Note        string            `json:"note,omitempty"`
	// ProposalID names the proposal the exception approved; empty for one
	// written directly (a silence, a maintenance window).
	ProposalID   string    `json:"proposal_id,omitempty"`
	RevokedAt    time.Time `json:"revoked_at,omitzero"`
	RevokedBy    string    `json:"revoked_by,omitempty"`
	RevokeReason string    `json:"revoke_reason,omitempty"`
}

// CriticalDNA returns the critical fields of fp (error class, service role,
// attack pattern, environment), the others empty.
func CriticalDNA(fp Fingerprint) Fingerprint {
	return Fingerprint{ErrorClass: fp.ErrorClass, ServiceRole: fp.ServiceRole, AttackPattern: fp.AttackPattern, Environment: fp.Environment}
}

// Active reports whether the exception is in force at now: not revoked and
// not yet expired.
func (e Exception) Active(now time.Time) bool {
	return e.RevokedAt.IsZero() && now.Before(e.ExpiresAt)
}

// State returns active, expired or revoked at now.
func (e Exception) State(now time.Time) string {
	switch {
	case !e.RevokedAt.IsZero():
		return ExceptionRevoked
	case !now.Before(e.ExpiresAt):
		return ExceptionExpired
	}
	return ExceptionActive
}

// WithinCeiling reports whether an alert of severity sev is not more severe
// than ceiling; an alert of unknown (or empty) severity counts as critical,
// and an unknown ceiling admits nothing more severe than critical.
func WithinCeiling(sev, ceiling Severity) bool {
	a, c := sev.rank(), ceiling.rank()
	if a < 0 {
		a = SeverityCritical.rank()
	}
	if c < 0 {
		c = SeverityCritical.rank()
	}
	return a <= c
}

// Matches reports whether the exception covers alert a of identity id and
// Alert DNA fp at now: active, the same (non-zero) identity, the same
// critical DNA, every match field equal, and a within the ceiling.
func (e Exception) Matches(a Alert, id Identity, fp Fingerprint, now time.Time) bool {
	if !e.Active(now) || id.IsZero() || id != e.Identity || CriticalDNA(fp) != CriticalDNA(e.DNA) {
		return false
	}
	for k, v := range e.Match {
		got, ok := a.Entities[k]
		if !ok || got != v {
			return false
		}
	}
	return WithinCeiling(a.Severity, e.MaxSeverity)
}

// Validate reports the first rule the exception breaks: an identity
// without a rule (a service is matched exactly: an empty one is not a
// wildcard, it matches alerts without a service only), a DNA that is not canonical or not critical only, a
// decision that is not benign, a ceiling that is not a known severity, no
// expiry, no analyst, or a security detection without a match field.
func (e Exception) Validate() error {
	switch {
	case e.Identity.IsZero():
		return fmt.Errorf("exception: a rule is required: %w", ErrInvalid)
	case !e.Decision.Benign():
		return fmt.Errorf("exception decision %q: want false_positive, duplicate or known_benign: %w", e.Decision, ErrInvalid)
	case !e.MaxSeverity.Valid() || e.MaxSeverity == SeverityUnknown:
		return fmt.Errorf("exception severity ceiling %q: want critical, high, medium, low or info: %w", e.MaxSeverity, ErrInvalid)
	case e.ExpiresAt.IsZero():
		return fmt.Errorf("exception: an expiry is required: %w", ErrInvalid)
	case strings.TrimSpace(e.Analyst) == "":
		return fmt.Errorf("exception: the analyst who approves it is required: %w", ErrInvalid)
	case CriticalDNA(e.DNA) != e.DNA:
		return fmt.Errorf("exception DNA %s: only the critical fields may be set: %w", e.DNA, ErrInvalid)
	case e.DNA.HasAttack() && len(e.Match) == 0:
		return fmt.Errorf("exception for the attack pattern %s: at least one match field is required: %w", e.DNA.AttackPattern, ErrInvalid)
	}
	if err := e.DNA.Validate(); err != nil {
		return fmt.Errorf("exception DNA: %w", err)
	}
	for k, v := range e.Match {
		if strings.TrimSpace(k) == "" || v == "" {
			return fmt.Errorf("exception match field %q=%q: a name and a value are required: %w", k, v, ErrInvalid)
		}
	}
	return nil
}

// Describe returns the exception as a route step names it: its id, who
// approved it and when it expires.
func (e Exception) Describe() string {
	return fmt.Sprintf("exception %s (%s for %s, approved by %s, expires %s)", e.ID, e.Decision, e.Identity,
		e.Analyst, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// ExceptionRef is what a result says of the exception it matched.
type ExceptionRef struct {
	ID        string    `json:"id"`
	Analyst   string    `json:"analyst"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Proposal is a proposed exception (DESIGN §6b): memory vouched
// unanimously for a detection that the guard refused only by clause (d).
// Only a person turns it into an Exception. Its ID is derived from its
// content, so the same proposal made twice is one.
type Proposal struct {
	ID          string            `json:"id"`
	Identity    Identity          `json:"identity"`
	DNA         Fingerprint       `json:"dna"`
	Match       map[string]string `json:"match"`
	Decision    Decision          `json:"decision"`
	MaxSeverity Severity          `json:"max_severity"`
	// Expiry is how long the exception would last once approved.
	Expiry time.Duration `json:"expiry_ns"`
	// Supporting lists the memories that vouched, AlertID the alert it
	// was made for.
	Supporting []string  `json:"supporting"`
	AlertID    string    `json:"alert_id"`
	CreatedAt  time.Time `json:"created_at,omitzero"`
	// ApprovedAs names the exception it became, once approved.
	ApprovedAs string `json:"approved_as,omitempty"`
}

// proposalKey hashes what makes two proposals the same: identity, critical
// DNA, match fields, decision and ceiling.
func proposalKey(id Identity, dna Fingerprint, match map[string]string, d Decision, ceiling Severity) string {
	h := sha256.New()
	for _, s := range []string{id.Rule, id.Service, dna.String(), MatchString(match), string(d), string(ceiling)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// MatchString returns match fields as a canonical "k=v;k=v" list, sorted.
func MatchString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ";")
}

// ProposalEligible reports whether the guard refused the bypass only by
// clause (d) because the alert is an attack (an attack pattern or a
// security detection), while (a)–(c) and (e) hold with unanimous benign
// memory: the only refusal an exception may lift.
func ProposalEligible(fp Fingerprint, tr TriageResult, v GuardVerdict) bool {
	return fp.HasAttack() && v.StrongMatch && v.Consistent && v.Confident && !v.BenignNoAttack &&
		v.SeverityCovered && tr.Decision.Benign() && tr.StrongCount > 0 && tr.ConsistentCount == tr.StrongCount
}

// Propose returns the exception proposal for alert a of identity id and
// Alert DNA fp, or nil: only when ProposalEligible holds, the alert has an
// identity, and at least one entity field of the alert is equal in every
// supporting memory. supporting are the memories that vouched.
func Propose(a Alert, id Identity, fp Fingerprint, tr TriageResult, v GuardVerdict, supporting []Incident) *Proposal {
	if id.IsZero() || !ProposalEligible(fp, tr, v) || len(supporting) == 0 {
		return nil
	}
	match := map[string]string{}
	for k, val := range a.Entities {
		if val == "" {
			continue
		}
		equal := true
		for _, inc := range supporting {
			if inc.Identity != id || inc.Entities[k] != val {
				equal = false
				break
			}
		}
		if equal {
			match[k] = val
		}
	}
	if len(match) == 0 {
		return nil
	}
	ceiling := a.Severity
	if !ceiling.Valid() || ceiling == SeverityUnknown {
		ceiling = SeverityCritical // an unknown alert counts as critical
	}
	dna := CriticalDNA(fp)
	p := &Proposal{
		Identity: id, DNA: dna, Match: match, Decision: tr.Decision, MaxSeverity: ceiling,
		Expiry: DefaultProposalExpiry, AlertID: a.ID,
	}
	for _, inc := range supporting {
		p.Supporting = append(p.Supporting, inc.ID)
	}
	p.ID = "prop_" + proposalKey(id, dna, match, tr.Decision, ceiling)
	return p
}

// ExceptionID returns the id of an exception approved or written by
// analyst at created: stable for its content.
func ExceptionID(e Exception) string {
	h := sha256.New()
	for _, s := range []string{proposalKey(e.Identity, e.DNA, e.Match, e.Decision, e.MaxSeverity), e.Analyst,
		e.ExpiresAt.UTC().Format(time.RFC3339Nano), e.CreatedAt.UTC().Format(time.RFC3339Nano), e.ProposalID} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "exc_" + hex.EncodeToString(h.Sum(nil))[:16]
}
