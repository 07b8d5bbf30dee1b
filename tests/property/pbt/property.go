package pbt

import (
	"fmt"
	"strings"

	"github.com/leanovate/gopter"
)

// T is the part of *testing.T the helper reports through. Tests of the helper
// pass a fake.
type T interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Property is one permanent rule of the design turned into code: an ID, the
// sentence it enforces, the named generator it draws from, and how to check
// one value. Build it with [ForAll] or [ForAllProp].
type Property struct {
	// ID is permanent and unique, such as "P11_guard_iff_four_clauses".
	ID string
	// Statement is the sentence of the design the property enforces.
	Statement string
	// Generator names the generator the cases come from.
	Generator string

	gen      gopter.Gen
	check    func(any) error
	prop     func() gopter.Prop
	classify func(any) []string
	pinned   []pinned
	cover    []coverage
	divisor  int
	needs    []string
	install  string
}

type pinned struct {
	name  string
	value any
	hasV  bool
	found bool
	run   func() error
}

type coverage struct {
	label   string
	percent float64
}

// Option configures a property.
type Option func(*Property)

// Pin keeps a value as a pinned example: it is checked before any generated
// case, on every run, under every seed. Pin shrunk counterexamples here.
func Pin[V any](name string, v V) Option {
	return func(p *Property) { p.pinned = append(p.pinned, pinned{name: name, value: v, hasV: true}) }
}

// Found keeps a counterexample the property once found (in the product or in
// the property itself) as a pinned example, and lists it in
// docs/properties.md: a failure found once is kept as a value.
func Found[V any](name string, v V) Option {
	return func(p *Property) { p.pinned = append(p.pinned, pinned{name: name, value: v, hasV: true, found: true}) }
}

// FoundFunc is Found for an example that is not a generated value.
func FoundFunc(name string, run func() error) Option {
	return func(p *Property) { p.pinned = append(p.pinned, pinned{name: name, run: run, found: true}) }
}

// FoundNames returns the names of the counterexamples kept with Found.
func (p Property) FoundNames() []string {
	var out []string
	for _, pin := range p.pinned {
		if pin.found {
			out = append(out, pin.name)
		}
	}
	return out
}

// PinFunc keeps an example that is not a generated value, such as a replayed
// command sequence of a stateful property; run returns nil when it holds.
func PinFunc(name string, run func() error) Option {
	return func(p *Property) { p.pinned = append(p.pinned, pinned{name: name, run: run}) }
}

// Classify labels each generated value for the statistics; a value may carry
// several labels.
func Classify[V any](f func(V) []string) Option {
	return func(p *Property) {
		p.classify = func(v any) []string {
			x, ok := v.(V)
			if !ok {
				return nil
			}
			return f(x)
		}
	}
}

// Cover requires that at least percent % of the generated cases carry label.
// A run that generates the class too rarely fails.
func Cover(label string, percent float64) Option {
	return func(p *Property) { p.cover = append(p.cover, coverage{label: label, percent: percent}) }
}

// Needs names the programs a property runs (a real Alertmanager's amtool):
// without them it is skipped, loudly, and under CI=true it fails (install
// says how to get them; see Property.Needs).
func Needs(install string, programs ...string) Option {
	return func(p *Property) { p.needs, p.install = programs, install }
}

// Needs returns the programs the property runs and how to install them.
func (p Property) Needs() (programs []string, install string) { return p.needs, p.install }

// Expensive divides the profile's number of cases by divisor (at least 10
// cases remain) for a property whose every case is costly, such as one that
// opens SQLite files.
func Expensive(divisor int) Option {
	return func(p *Property) { p.divisor = divisor }
}

// Printed is a value shown as its text, for counterexamples whose Go form is
// not readable (gopter's command sequences print as their String()).
type Printed string

// GoString returns the text itself.
func (p Printed) GoString() string { return string(p) }

// ForAll builds a property that holds when check returns nil for every value
// of g. check reports a failure as an error whose text before the first ':'
// names its kind ("confidence out of range: 1.2"); the slippage guard keeps
// shrinking on that kind.
func ForAll[V any](id, statement, generator string, g gopter.Gen, check func(V) error, opts ...Option) Property {
	p := Property{ID: id, Statement: statement, Generator: generator, gen: g}
	p.check = func(v any) error {
		x, ok := v.(V)
		if !ok {
			var zero V
			if v != nil {
				return fmt.Errorf("generator type: got %T, want %T", v, zero)
			}
			x = zero
		}
		return check(x)
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// ForAllProp builds a property from a gopter Prop, for stateful properties
// built with gopter's commands package. mk is called once per case so that no
// state leaks between cases; gopter shrinks the failing argument itself.
func ForAllProp(id, statement, generator string, mk func() gopter.Prop, opts ...Option) Property {
	p := Property{ID: id, Statement: statement, Generator: generator, prop: mk}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// ValidID reports whether id has the shape P<n>_<words>: a 'P', a number
// without leading zero, '_', then lowercase letters, digits and '_'.
func ValidID(id string) bool {
	n, rest, ok := strings.Cut(id, "_")
	if !ok || len(n) < 2 || n[0] != 'P' || n[1] == '0' || rest == "" {
		return false
	}
	for _, c := range n[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, c := range rest {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// Number returns the "P<n>" prefix of an ID.
func Number(id string) string {
	n, _, _ := strings.Cut(id, "_")
	return n
}
