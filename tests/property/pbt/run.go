package pbt

import (
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
)

// MinCasesForCoverage is the fewest generated cases on which required
// coverage is enforced: below it (the fast profile) a rare class can miss by
// chance, so the statistics are only logged.
const MinCasesForCoverage = 50

// Report is what checking one property found.
type Report struct {
	ID string
	// Pinned is the number of pinned examples checked.
	Pinned int
	// Cases is the number of generated cases checked.
	Cases int
	// Discards is the number of generated values the generator rejected.
	Discards int
	// Labels counts the generated cases per label.
	Labels map[string]int
	// Failure is the first failure, nil when the property held.
	Failure *Failure
	// CoverageErrors lists the labels generated too rarely.
	CoverageErrors []string
}

// Failure is a falsified property: what failed and how to get it back.
type Failure struct {
	// Pinned names the pinned example that failed; empty for a generated case.
	Pinned string
	// Case is the generated case that failed first.
	Case Case
	// Passed is the number of generated cases that held before it.
	Passed int
	// Kind is the failure's kind (error text before its first ':', or the
	// panic message with digits masked); shrinking kept to this kind.
	Kind string
	// Message is the full failure of the shrunk value.
	Message string
	// Original and Shrunk are the first failing value and its shrunk form.
	Original, Shrunk any
	// Shrinks is the number of accepted shrink steps.
	Shrinks int
	// OtherKinds lists failures of other kinds met while shrinking, with the
	// value that showed each: they are separate bugs.
	OtherKinds []string
	// Replay is the command line that regenerates and reshrinks this case.
	Replay string
}

// Run checks every property as a subtest named by its ID, under s. Duplicate
// or malformed IDs fail the test before anything runs.
func Run(t *testing.T, s Settings, props []Property) {
	t.Helper()
	if err := CheckIDs(props); err != nil {
		t.Fatal(err)
	}
	for _, p := range props {
		t.Run(p.ID, func(t *testing.T) { Check(t, s, p) })
	}
}

// CheckIDs reports the first malformed, duplicate or renumbered ID.
func CheckIDs(props []Property) error {
	seen := map[string]string{}
	for _, p := range props {
		if !ValidID(p.ID) {
			return fmt.Errorf("property ID %q is not P<n>_<words>", p.ID)
		}
		if prev, ok := seen[Number(p.ID)]; ok {
			return fmt.Errorf("property number %s used twice: %s and %s", Number(p.ID), prev, p.ID)
		}
		seen[Number(p.ID)] = p.ID
		if p.Statement == "" || p.Generator == "" {
			return fmt.Errorf("property %s needs a statement and a generator name", p.ID)
		}
	}
	return nil
}

// outcome is one evaluation of the property on one value.
type outcome struct {
	err  error
	kind string
}

func (o outcome) failed() bool { return o.err != nil }

// Check runs one property under s and reports any failure through t. It is
// the helper's whole loop: pinned examples first, then the generated cases
// (or only s.Replay), shrinking with the slippage guard, then the label
// statistics and coverage.
func Check(t T, s Settings, p Property) Report {
	t.Helper()
	r := Report{ID: p.ID, Labels: map[string]int{}}
	if s.Replay == nil {
		for _, pin := range p.pinned {
			r.Pinned++
			var o outcome
			if pin.hasV {
				o = evaluate(p.check, pin.value)
			} else {
				o = evaluate(func(any) error { return pin.run() }, nil)
			}
			if o.failed() {
				f := &Failure{Pinned: pin.name, Kind: o.kind, Message: o.err.Error(), Original: pin.value, Shrunk: pin.value}
				r.Failure = f
				t.Errorf("%s", formatFailure(t, s, p, f))
				return r
			}
		}
	}
	propSeed := PropertySeed(s.Seed, p.ID)
	cases := []Case{}
	if s.Replay != nil {
		cases = append(cases, *s.Replay)
	} else {
		n := s.Profile.Cases
		if p.divisor > 1 {
			n = max(min(n, 10), n/p.divisor)
		}
		for i := 0; i < n; i++ {
			cases = append(cases, Case{Seed: CaseSeed(propSeed, i), Size: CaseSize(i, n, s.Profile.MaxSize)})
		}
	}
	extra := 0
	for i := 0; i < len(cases); i++ {
		c := cases[i]
		var f *Failure
		var labels []string
		var discarded bool
		if p.prop != nil {
			f, labels, discarded = runProp(p, s, c)
		} else {
			f, labels, discarded = runValue(p, s, c)
		}
		if discarded {
			r.Discards++
			if s.Replay == nil && extra < s.Profile.Cases {
				extra++
				cases = append(cases, Case{Seed: CaseSeed(propSeed, 1_000_000+extra), Size: c.Size})
			}
			continue
		}
		for _, l := range labels {
			r.Labels[l]++
		}
		if f != nil {
			f.Passed = r.Cases
			r.Failure = f
			t.Errorf("%s", formatFailure(t, s, p, f))
			return r
		}
		r.Cases++
	}
	if r.Cases == 0 {
		t.Errorf("%s: no case was checked (%d discarded): the generator %s rejects its own values", p.ID, r.Discards, p.Generator)
		return r
	}
	if r.Discards*10 > r.Cases {
		t.Errorf("%s: generator %s discarded %d of %d values; construct valid values instead of filtering", p.ID, p.Generator, r.Discards, r.Cases+r.Discards)
	}
	t.Logf("%s", formatStats(p, s, r))
	if s.Replay == nil && len(p.cover) > 0 && r.Cases < MinCasesForCoverage {
		t.Logf("%s: coverage not enforced: %d cases, fewer than %d", p.ID, r.Cases, MinCasesForCoverage)
	}
	if s.Replay == nil && r.Cases >= MinCasesForCoverage {
		for _, c := range p.cover {
			got := 100 * float64(r.Labels[c.label]) / float64(r.Cases)
			if got < c.percent {
				msg := fmt.Sprintf("%s: coverage: label %q in %.1f%% of %d cases, need at least %.1f%% (generator %s)", p.ID, c.label, got, r.Cases, c.percent, p.Generator)
				r.CoverageErrors = append(r.CoverageErrors, msg)
				t.Errorf("%s", msg)
			}
		}
	}
	return r
}

// params returns gopter's generation parameters for one case.
func params(s Settings, c Case) *gopter.GenParameters {
	return &gopter.GenParameters{
		MinSize:        0,
		MaxSize:        c.Size,
		MaxShrinkCount: s.Profile.MaxShrinks,
		Rng:            rand.New(rand.NewSource(c.Seed)),
	}
}

// runValue generates, checks and, on failure, shrinks one case of a value
// property.
func runValue(p Property, s Settings, c Case) (*Failure, []string, bool) {
	res := p.gen(params(s, c))
	v, ok := res.Retrieve()
	if !ok {
		return nil, nil, true
	}
	var labels []string
	if p.classify != nil {
		labels = p.classify(v)
	}
	first := evaluate(p.check, v)
	if !first.failed() {
		return nil, labels, false
	}
	f := &Failure{Case: c, Kind: first.kind, Original: v}
	shrunk, last, steps, others := shrink(p.check, res, v, first, s.Profile.MaxShrinks)
	f.Shrunk, f.Shrinks, f.Message, f.OtherKinds = shrunk, steps, last.err.Error(), others
	return f, labels, false
}

// shrink walks the shrink tree greedily, accepting only candidates that fail
// with the first failure's kind (the slippage guard). It stops after
// maxShrinks accepted steps or 50·maxShrinks evaluated candidates.
func shrink(check func(any) error, res *gopter.GenResult, v any, first outcome, maxShrinks int) (any, outcome, int, []string) {
	cur, last := v, first
	steps, evaluated := 0, 0
	others := map[string]string{}
	if res.Shrinker == nil {
		return cur, last, 0, nil
	}
	for steps < maxShrinks {
		next := res.Shrinker(cur)
		if res.Sieve != nil {
			next = next.Filter(res.Sieve)
		}
		accepted := false
		for cand, ok := next(); ok && evaluated < 50*maxShrinks; cand, ok = next() {
			evaluated++
			o := evaluate(check, cand)
			if !o.failed() {
				continue
			}
			if o.kind != first.kind {
				if _, seen := others[o.kind]; !seen {
					others[o.kind] = fmt.Sprintf("%s (for %#v)", o.err, cand)
				}
				continue
			}
			cur, last, accepted = cand, o, true
			steps++
			break
		}
		if !accepted {
			break
		}
	}
	var list []string
	for _, m := range others {
		list = append(list, m)
	}
	sort.Strings(list)
	return cur, last, steps, list
}

// runProp runs one case of a gopter Prop (stateful properties).
func runProp(p Property, s Settings, c Case) (f *Failure, labels []string, discarded bool) {
	defer func() {
		if r := recover(); r != nil {
			f = &Failure{Case: c, Kind: panicKind(r), Message: fmt.Sprintf("panic: %v", r)}
		}
	}()
	res := p.prop()(params(s, c))
	switch res.Status {
	case gopter.PropUndecided:
		return nil, nil, true
	case gopter.PropTrue, gopter.PropProof:
		return nil, res.Labels, false
	}
	f = &Failure{Case: c, Kind: "postcondition failed", Message: "postcondition failed"}
	if res.Error != nil {
		f.Kind, f.Message = kindOf(res.Error), res.Error.Error()
	}
	if len(res.Labels) > 0 {
		f.Message += " [" + strings.Join(res.Labels, "; ") + "]"
	}
	if len(res.Args) > 0 {
		a := res.Args[0]
		f.Original, f.Shrunk, f.Shrinks = Printed(fmt.Sprint(a.OrigArg)), Printed(fmt.Sprint(a.Arg)), a.Shrinks
	}
	return f, res.Labels, false
}

// evaluate calls check on v, recovering a panic as a failure of its own kind.
func evaluate(check func(any) error, v any) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{err: fmt.Errorf("panic: %v", r), kind: panicKind(r)}
		}
	}()
	if err := check(v); err != nil {
		return outcome{err: err, kind: kindOf(err)}
	}
	return outcome{}
}

// kindOf is the text of err before its first ':'.
func kindOf(err error) string {
	k, _, _ := strings.Cut(err.Error(), ":")
	return strings.TrimSpace(k)
}

// panicKind is the panic message with digit runs masked, so an index panic
// at another index is the same kind.
func panicKind(r any) string {
	return "panic: " + maskDigits(fmt.Sprint(r))
}

func maskDigits(s string) string {
	var b strings.Builder
	inDigits := false
	for _, c := range s {
		if c >= '0' && c <= '9' {
			if !inDigits {
				b.WriteByte('#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteRune(c)
	}
	return b.String()
}

// ReplayCommand returns the command line that replays case c of the test
// named testName (a subtest path such as "TestProperties/P11_x").
func ReplayCommand(s Settings, testName string, c Case) string {
	return fmt.Sprintf("%s=%d %s=%s %s=%s go test %s -run '%s' -count=1 -v",
		EnvSeed, s.Seed, EnvProfile, s.Profile.Name, EnvCase, c, s.Package, runPattern(testName))
}

// runPattern is the -run pattern that selects exactly the test testName.
func runPattern(testName string) string {
	parts := strings.Split(testName, "/")
	for i, part := range parts {
		parts[i] = "^" + regexp.QuoteMeta(part) + "$"
	}
	return strings.Join(parts, "/")
}

func formatFailure(t T, s Settings, p Property, f *Failure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "property %s falsified\n", p.ID)
	fmt.Fprintf(&b, "  statement: %s\n", p.Statement)
	fmt.Fprintf(&b, "  generator: %s\n", p.Generator)
	if f.Pinned != "" {
		fmt.Fprintf(&b, "  pinned example %q failed (base seed %d, profile %s)\n", f.Pinned, s.Seed, s.Profile.Name)
		fmt.Fprintf(&b, "  failure: %s\n", f.Message)
		if f.Shrunk != nil {
			fmt.Fprintf(&b, "  value: %#v\n", f.Shrunk)
		}
		f.Replay = fmt.Sprintf("go test %s -run '%s' -count=1 -v", s.Package, runPattern(t.Name()))
		fmt.Fprintf(&b, "  replay: %s", f.Replay)
		return b.String()
	}
	fmt.Fprintf(&b, "  after %d passing cases; base seed %d, property seed %d, profile %s, case %s\n",
		f.Passed, s.Seed, PropertySeed(s.Seed, p.ID), s.Profile.Name, f.Case)
	fmt.Fprintf(&b, "  kind: %s\n", f.Kind)
	fmt.Fprintf(&b, "  failure: %s\n", f.Message)
	fmt.Fprintf(&b, "  shrunk (%d steps): %#v\n", f.Shrinks, f.Shrunk)
	fmt.Fprintf(&b, "  original: %#v\n", f.Original)
	for _, o := range f.OtherKinds {
		fmt.Fprintf(&b, "  another failure kind met while shrinking (a separate bug): %s\n", o)
	}
	f.Replay = ReplayCommand(s, t.Name(), f.Case)
	fmt.Fprintf(&b, "  replay: %s\n", f.Replay)
	fmt.Fprintf(&b, "  keep it: add pbt.Found(\"<what it means>\", <shrunk value>) to %s and a named regression test", p.ID)
	return b.String()
}

func formatStats(p Property, s Settings, r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ok, %d pinned, %d cases, %d discarded (profile %s, base seed %d, property seed %d)",
		p.ID, r.Pinned, r.Cases, r.Discards, s.Profile.Name, s.Seed, PropertySeed(s.Seed, p.ID))
	labels := make([]string, 0, len(r.Labels))
	for l := range r.Labels {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		fmt.Fprintf(&b, "\n  %5.1f%% %s", 100*float64(r.Labels[l])/float64(r.Cases), l)
	}
	return b.String()
}
