package notify

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// The fields a matcher may name besides an alert's labels (DESIGN §12b):
// what openrecall decided and how, and what the alert says of itself.
const (
	FieldDecision      = "decision"       // the final decision: known_benign, duplicate, real, escalated, …
	FieldRoute         = "route"          // how it was decided: see Route*
	FieldStatus        = "status"         // firing, acknowledged, resolved, notice
	FieldSeverity      = "severity"       // the normalized severity
	FieldService       = "service"        //
	FieldEnvironment   = "environment"    //
	FieldSender        = "sender"         // the sender's name: alertmanager, datadog, falcosidekick, …
	FieldRule          = "rule"           // the identity's rule
	FieldAttackPattern = "attack_pattern" // the Alert DNA's attack pattern, "" when none
)

// The values of FieldRoute: how a result was decided.
const (
	RouteBypass     = "bypass"     // memory closed it without a model call
	RouteException  = "exception"  // an exception a person approved closed it
	RouteGroup      = "group"      // a member of an alert group took its head's outcome
	RouteCheap      = "cheap"      // the cheap model's answer passed the gate
	RouteStrong     = "strong"     // the strong model answered
	RouteUnanalysed = "unanalysed" // escalated to a person without analysis (budget, model down)
	RouteNone       = "none"       // not triaged: a recovery, an acknowledgement, a notice, a duplicate delivery
)

// Fields lists the fields a matcher may name, in documentation order.
func Fields() []string {
	return []string{FieldDecision, FieldRoute, FieldStatus, FieldSeverity, FieldService, FieldEnvironment,
		FieldSender, FieldRule, FieldAttackPattern}
}

// Subject is what the matchers of a route read of one result: the fields
// by name, and the alert's labels for every other name.
type Subject struct {
	Fields SubjectFields
	Labels map[string]string
}

// SubjectFields holds the value of each field a matcher may name (Fields),
// "" for none: a struct, not a map, as a route reads one per alert.
type SubjectFields struct {
	Decision, Route, Status, Severity, Service, Environment, Sender, Rule, AttackPattern string
}

// field returns the field of f named name, nil when name is not a field.
func (f *SubjectFields) field(name string) *string {
	switch name {
	case FieldDecision:
		return &f.Decision
	case FieldRoute:
		return &f.Route
	case FieldStatus:
		return &f.Status
	case FieldSeverity:
		return &f.Severity
	case FieldService:
		return &f.Service
	case FieldEnvironment:
		return &f.Environment
	case FieldSender:
		return &f.Sender
	case FieldRule:
		return &f.Rule
	case FieldAttackPattern:
		return &f.AttackPattern
	}
	return nil
}

// Get returns the field named name and whether name is a field.
func (f SubjectFields) Get(name string) (string, bool) {
	if p := f.field(name); p != nil {
		return *p, true
	}
	return "", false
}

// Set sets the field named name to value and reports whether name is a
// field (it sets nothing when it is not).
func (f *SubjectFields) Set(name, value string) bool {
	if p := f.field(name); p != nil {
		*p = value
		return true
	}
	return false
}

// NonEmpty returns the fields that have a value, by name.
func (f SubjectFields) NonEmpty() map[string]string {
	out := map[string]string{}
	for _, name := range Fields() {
		if v, _ := f.Get(name); v != "" {
			out[name] = v
		}
	}
	return out
}

// Get returns the value a matcher on name reads: the field, else the
// alert's label, else "".
func (s Subject) Get(name string) string {
	if v, ok := s.Fields.Get(name); ok {
		return v
	}
	return s.Labels[name]
}

// SubjectOf returns what the matchers read of r.
func SubjectOf(r openrecall.Result) Subject {
	status := r.Alert.Status
	if status == "" {
		status = openrecall.StatusFiring
	}
	return Subject{
		Fields: SubjectFields{
			Decision:      string(r.Decision),
			Route:         RouteOf(r),
			Status:        status,
			Severity:      string(r.Alert.Severity),
			Service:       r.Alert.Service,
			Environment:   r.Alert.Environment,
			Sender:        r.Alert.Sender,
			Rule:          r.Identity.Rule,
			AttackPattern: r.Fingerprint.AttackPattern,
		},
		Labels: r.Alert.Labels,
	}
}

// RouteOf names how r was decided (FieldRoute).
func RouteOf(r openrecall.Result) string {
	switch {
	case r.Outcome != openrecall.ResultTriaged:
		return RouteNone
	case r.Bypassed:
		return RouteBypass
	case r.Excepted():
		return RouteException
	case r.Grouped():
		return RouteGroup
	case r.EscalatedWithoutAnalysis:
		return RouteUnanalysed
	}
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if s := r.Steps[i]; s.Step == openrecall.StepAnalysis && !s.Skipped {
			if s.Tier == openrecall.TierCheap {
				return RouteCheap
			}
			return RouteStrong
		}
	}
	return RouteUnanalysed
}

// Op is a matcher's comparison.
type Op string

// The comparisons, as Alertmanager writes them.
const (
	OpEqual     Op = "="
	OpNotEqual  Op = "!="
	OpRegexp    Op = "=~"
	OpNotRegexp Op = "!~"
)

// Matcher compares one field or label of a result with a value, as an
// Alertmanager matcher does: equal, not equal, or a regular expression
// anchored at both ends that matches, or does not.
type Matcher struct {
	Name  string
	Op    Op
	Value string
	re    *regexp.Regexp
}

// Matches reports whether the matcher holds for s.
func (m Matcher) Matches(s Subject) bool {
	v := s.Get(m.Name)
	switch m.Op {
	case OpEqual:
		return v == m.Value
	case OpNotEqual:
		return v != m.Value
	case OpRegexp:
		return m.re.MatchString(v)
	default:
		return !m.re.MatchString(v)
	}
}

// String renders the matcher as it is written: name="value".
func (m Matcher) String() string { return m.Name + string(m.Op) + strconv.Quote(m.Value) }

// ParseMatcher reads a matcher written as Alertmanager writes one:
// name="value", name!="value", name=~"regexp" or name!~"regexp", the value
// quoted or bare, spaces around the operator allowed. A name is a field
// (Fields) or a label name.
func ParseMatcher(s string) (Matcher, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "=!")
	if i <= 0 {
		return Matcher{}, fmt.Errorf("matcher %q: want name=\"value\", name!=\"value\", name=~\"regexp\" or name!~\"regexp\"", s)
	}
	m := Matcher{Name: strings.TrimSpace(s[:i])}
	rest := s[i:]
	for _, op := range []Op{OpRegexp, OpNotRegexp, OpNotEqual, OpEqual} {
		if strings.HasPrefix(rest, string(op)) {
			m.Op, rest = op, strings.TrimSpace(rest[len(op):])
			break
		}
	}
	if m.Op == "" {
		return Matcher{}, fmt.Errorf("matcher %q: no operator (=, !=, =~, !~) after %q", s, m.Name)
	}
	if !validName(m.Name) {
		return Matcher{}, fmt.Errorf("matcher %q: %q is not a field or label name (letters, digits and _, not starting with a digit)", s, m.Name)
	}
	if strings.HasPrefix(rest, `"`) {
		v, err := strconv.Unquote(rest)
		if err != nil {
			return Matcher{}, fmt.Errorf("matcher %q: the value is not one quoted string: %v", s, err)
		}
		rest = v
	}
	m.Value = rest
	if m.Op == OpRegexp || m.Op == OpNotRegexp {
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		if err != nil {
			return Matcher{}, fmt.Errorf("matcher %q: %v", s, err)
		}
		m.re = re
	}
	return m, nil
}

// validName reports whether name is a field or label name as Prometheus
// writes them.
func validName(name string) bool {
	for i, c := range name {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return name != ""
}
