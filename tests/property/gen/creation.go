package gen

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
)

// Exception doors: the use cases every door of the product calls to create
// an exception (DESIGN §6b). The CLI's `exception add`, POST
// /api/v1/exceptions without a proposal and the cockpit's form call
// AddException; `exception approve`, the API with a proposal, the
// cockpit's button, Slack's and eval's approvals call ApproveProposal;
// `memory import` and the API's import call ImportExceptions.
const (
	DoorAdd = iota
	DoorApprove
	DoorImport
	doorKinds
)

// DoorNames names the doors for labels.
var DoorNames = [doorKinds]string{"add", "approve", "import"}

// Creation is one request to create an exception, through one door, with
// every part a creation rule reads drawn from valid and invalid values.
type Creation struct {
	Door     int
	Rule     int // index into creationRules ("" at 0)
	Service  int // index into creationServices (blank at 0 and 1)
	Attack   int // index into creationAttacks (none at 0)
	Match    int // index into CreationMatches
	Analyst  int // index into creationAnalysts (blank at 0 and 1)
	Expiry   int // index into creationExpiries (days)
	Cap      int // index into creationCaps (days; 0 is the default)
	Decision int // index into creationDecisions
	Ceiling  int // index into creationCeilings
	Revoked  bool
}

var (
	creationRules     = []string{"", "Terminal shell in container", "5710"}
	creationServices  = []string{"", "   ", "ci-runner", "payments"}
	creationAttacks   = []string{"", "execution", "brute_force"}
	creationAnalysts  = []string{"", "  ", "alice", "bob"}
	creationExpiries  = []int{-1, 0, 1, 7, 30, 31, 90, 91, 400}
	creationCaps      = []int{0, 7, 30}
	creationDecisions = []openrecall.Decision{openrecall.DecisionFalsePositive, openrecall.DecisionKnownBenign, openrecall.DecisionDuplicate, openrecall.DecisionReal}
	creationCeilings  = []openrecall.Severity{openrecall.SeverityHigh, openrecall.SeverityLow, openrecall.SeverityUnknown}
)

// CreationMatches are the match fields a request may carry: none, valid
// ones, and fields with a blank name or an empty value.
var CreationMatches = []map[string]string{
	nil,
	{"user": "runner"},
	{"user": "runner", "process": "sh"},
	{"user": ""},
	{" ": "sh"},
}

// Identity is the exception's rule and service.
func (c Creation) Identity() openrecall.Identity {
	return openrecall.Identity{Rule: creationRules[c.Rule], Service: creationServices[c.Service]}
}

// DNA is the exception's critical DNA.
func (c Creation) DNA() openrecall.Fingerprint {
	return openrecall.Fingerprint{ErrorClass: "security", ServiceRole: "unknown", AttackPattern: creationAttacks[c.Attack], Environment: "prod"}
}

// MatchFields returns a copy of the request's match fields.
func (c Creation) MatchFields() map[string]string {
	m := CreationMatches[c.Match]
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// AnalystName is who asks.
func (c Creation) AnalystName() string { return creationAnalysts[c.Analyst] }

// ExpiryDuration is how long the exception is asked to last.
func (c Creation) ExpiryDuration() time.Duration {
	return time.Duration(creationExpiries[c.Expiry]) * 24 * time.Hour
}

// ProposalExpiry is how long the proposal an approval approves would last:
// an approval that asks for no expiry (0) keeps it.
const ProposalExpiry = 30 * 24 * time.Hour

// EffectiveExpiry is the expiry the request asks for as its door reads it:
// an approval without one keeps the proposal's.
func (c Creation) EffectiveExpiry() time.Duration {
	if c.Door == DoorApprove && c.ExpiryDuration() == 0 {
		return ProposalExpiry
	}
	return c.ExpiryDuration()
}

// CapDuration is the configured cap (0: the default).
func (c Creation) CapDuration() time.Duration {
	return time.Duration(creationCaps[c.Cap]) * 24 * time.Hour
}

// DecisionOf is the decision the exception would make.
func (c Creation) DecisionOf() openrecall.Decision { return creationDecisions[c.Decision] }

// CeilingOf is the severity ceiling.
func (c Creation) CeilingOf() openrecall.Severity { return creationCeilings[c.Ceiling] }

// Violations lists the creation rules the request breaks, stated from
// DESIGN §6b independently of the product's checks: no exception without a
// person; a rule, and a service where a person writes one (blank is no
// wildcard); an expiry in the
// future within the cap; a benign decision; a known ceiling; match fields
// named and valued; at least one match field for an attack pattern; an
// import of a revoked exception is none.
func (c Creation) Violations() []string {
	var out []string
	add := func(cond bool, what string) {
		if cond {
			out = append(out, what)
		}
	}
	limit := c.CapDuration()
	if limit == 0 {
		limit = openrecall.DefaultMaxExceptionExpiry
	}
	add(strings.TrimSpace(c.AnalystName()) == "", "no person")
	add(creationRules[c.Rule] == "", "no rule")
	// A person writes the service of an exception added or imported; an
	// approved proposal keeps the identity of the alerts it was made for,
	// which is matched exactly (an alert without a service is one), so
	// the rule is not the approval's (DESIGN §6b).
	add(c.Door != DoorApprove && strings.TrimSpace(creationServices[c.Service]) == "", "blank service")
	add(c.EffectiveExpiry() <= 0, "expiry not in the future")
	add(c.EffectiveExpiry() > limit, "expiry past the cap")
	add(!c.DecisionOf().Benign(), "decision not benign")
	add(c.CeilingOf() == openrecall.SeverityUnknown, "no ceiling")
	for k, v := range CreationMatches[c.Match] {
		add(strings.TrimSpace(k) == "" || v == "", "match field without name or value")
	}
	add(creationAttacks[c.Attack] != "" && len(CreationMatches[c.Match]) == 0, "attack pattern without a match field")
	add(c.Door == DoorImport && c.Revoked, "revoked")
	return out
}

// CreationGen generates requests: valid parts twice as often as each
// invalid one, so that about a third are admissible.
func CreationGen() gopter.Gen {
	valid := func(good []int, bad []int) gopter.Gen {
		var ws []gg.WeightedGen
		for _, g := range good {
			ws = append(ws, gg.WeightedGen{Weight: 6, Gen: gg.Const(g)})
		}
		for _, b := range bad {
			ws = append(ws, gg.WeightedGen{Weight: 1, Gen: gg.Const(b)})
		}
		return gg.Weighted(ws)
	}
	return gg.Struct(reflect.TypeOf(Creation{}), map[string]gopter.Gen{
		"Door":     gg.IntRange(0, doorKinds-1),
		"Rule":     valid([]int{1, 2}, []int{0}),
		"Service":  valid([]int{2, 3}, []int{0, 1}),
		"Attack":   gg.IntRange(0, len(creationAttacks)-1),
		"Match":    valid([]int{0, 1, 2}, []int{3, 4}),
		"Analyst":  valid([]int{2, 3}, []int{0, 1}),
		"Expiry":   valid([]int{2, 3, 4}, []int{0, 1, 5, 6, 7, 8}),
		"Cap":      gg.IntRange(0, len(creationCaps)-1),
		"Decision": valid([]int{0, 1, 2}, []int{3}),
		"Ceiling":  valid([]int{0, 1}, []int{2}),
		"Revoked":  gg.Weighted([]gg.WeightedGen{{Weight: 6, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
	})
}

// ValidCreation reports whether c is a request CreationGen may produce.
func ValidCreation(c Creation) error {
	for _, f := range []struct {
		name string
		v, n int
	}{
		{"door", c.Door, doorKinds}, {"rule", c.Rule, len(creationRules)}, {"service", c.Service, len(creationServices)},
		{"attack", c.Attack, len(creationAttacks)}, {"match", c.Match, len(CreationMatches)}, {"analyst", c.Analyst, len(creationAnalysts)},
		{"expiry", c.Expiry, len(creationExpiries)}, {"cap", c.Cap, len(creationCaps)}, {"decision", c.Decision, len(creationDecisions)},
		{"ceiling", c.Ceiling, len(creationCeilings)},
	} {
		if f.v < 0 || f.v >= f.n {
			return fmt.Errorf("%s index %d out of range", f.name, f.v)
		}
	}
	return nil
}
