package pbt

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
)

// fakeT records what the helper reports, so the helper's own failures can be
// asserted without failing the test that runs them.
type fakeT struct {
	name   string
	errors []string
	logs   []string
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func ciSettings(seed int64) Settings {
	p, _ := ProfileNamed("ci")
	return Settings{Seed: seed, Profile: p, Package: "./tests/property/pbt/"}
}

// atMostTen fails for every x > 10: its only minimal counterexample is 11.
func atMostTen(pins ...Option) Property {
	return ForAll("P900_at_most_ten", "every x is at most 10", "IntRange(0, 10000)",
		gen.IntRange(0, 10000), func(x int) error {
			if x > 10 {
				return fmt.Errorf("too big: %d > 10", x)
			}
			return nil
		}, pins...)
}

func TestFailingPropertyShrinksTo11AndReplayReproducesIt(t *testing.T) {
	s := ciSettings(DefaultSeed)
	ft := &fakeT{name: "TestProperties/P900_at_most_ten"}
	r := Check(ft, s, atMostTen())
	if r.Failure == nil {
		t.Fatalf("property x <= 10 passed over x in [0, 10000]; errors %v", ft.errors)
	}
	if r.Failure.Shrunk != 11 {
		t.Fatalf("shrunk counterexample = %#v, want 11", r.Failure.Shrunk)
	}
	if len(ft.errors) != 1 {
		t.Fatalf("reported %d errors, want 1: %q", len(ft.errors), ft.errors)
	}
	report := ft.errors[0]
	for _, want := range []string{
		"P900_at_most_ten", "every x is at most 10", "shrunk (", "): 11\n", "original: ",
		"base seed 20260101", "profile ci", "kind: too big", "replay: OPENRECALL_PBT_SEED=20260101 OPENRECALL_PBT_PROFILE=ci OPENRECALL_PBT_CASE=",
		"go test ./tests/property/pbt/ -run '^TestProperties$/^P900_at_most_ten$' -count=1",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// The replay line names the case; replaying it alone gives 11 again.
	_, after, ok := strings.Cut(report, "OPENRECALL_PBT_CASE=")
	if !ok {
		t.Fatalf("no case in report:\n%s", report)
	}
	field, _, _ := strings.Cut(after, " ")
	c, err := ParseCase(field)
	if err != nil {
		t.Fatal(err)
	}
	if c != r.Failure.Case {
		t.Fatalf("replay case %v, failure case %v", c, r.Failure.Case)
	}
	replay := s
	replay.Replay = &c
	ft2 := &fakeT{name: ft.name}
	r2 := Check(ft2, replay, atMostTen())
	if r2.Failure == nil || r2.Failure.Shrunk != 11 || r2.Failure.Original != r.Failure.Original {
		t.Fatalf("replay of %v gave %+v, want the same original %v shrunk to 11", c, r2.Failure, r.Failure.Original)
	}
	if r2.Cases != 0 || r2.Pinned != 0 {
		t.Errorf("replay checked %d cases and %d pinned, want only the one case", r2.Cases, r2.Pinned)
	}
}

func TestSameSeedSameReport(t *testing.T) {
	var reports []string
	for i := 0; i < 2; i++ {
		ft := &fakeT{name: "TestProperties/P900_at_most_ten"}
		Check(ft, ciSettings(7), atMostTen())
		reports = append(reports, strings.Join(ft.errors, "\n"))
	}
	if reports[0] != reports[1] {
		t.Fatalf("two runs with one seed reported differently:\n%s\n---\n%s", reports[0], reports[1])
	}
	ft := &fakeT{name: "TestProperties/P900_at_most_ten"}
	Check(ft, ciSettings(8), atMostTen())
	if strings.Join(ft.errors, "\n") == reports[0] {
		t.Fatalf("seeds 7 and 8 gave the same report")
	}
}

func TestPropertySeedDependsOnlyOnBaseAndID(t *testing.T) {
	// Two calls, so that a seed drawn from a clock or a global counter
	// shows (comparing one call with itself could never fail).
	first, second := PropertySeed(1, "P1_a"), PropertySeed(1, "P1_a")
	if first != second {
		t.Fatal("property seed not deterministic")
	}
	if PropertySeed(1, "P1_a") == PropertySeed(1, "P2_a") || PropertySeed(1, "P1_a") == PropertySeed(2, "P1_a") {
		t.Fatal("property seeds collide across IDs or base seeds")
	}
	if CaseSeed(5, 0) == CaseSeed(5, 1) {
		t.Fatal("case seeds collide")
	}
}

func TestSlippageGuardKeepsTheFirstKind(t *testing.T) {
	// Values below 5 panic (bug B); values above 10 fail (bug A). Shrinking
	// from a large value meets 0 first; the guard must not report bug B.
	p := ForAll("P901_two_bugs", "no bug", "IntRange(0, 10000)", gen.IntRange(0, 10000), func(x int) error {
		if x < 5 {
			var s []int
			_ = s[x]
		}
		if x > 10 {
			return errors.New("too big: over 10")
		}
		return nil
	})
	ft := &fakeT{name: "TestProperties/P901_two_bugs"}
	s := ciSettings(3)
	r := Check(ft, s, p)
	if r.Failure == nil {
		t.Fatal("no failure")
	}
	// Seed 3's first case is 5560, which fails with "too big"; its first
	// shrink candidate, 0, panics instead.
	if r.Failure.Kind != "too big" || r.Failure.Shrunk != 11 {
		t.Fatalf("kind %q shrunk %v, want \"too big\" shrunk to 11", r.Failure.Kind, r.Failure.Shrunk)
	}
	if len(r.Failure.OtherKinds) != 1 || !strings.Contains(r.Failure.OtherKinds[0], "panic: runtime error: index out of range") {
		t.Fatalf("the panic met while shrinking is not reported: %q", r.Failure.OtherKinds)
	}
	if !strings.Contains(ft.errors[0], "another failure kind met while shrinking") {
		t.Fatalf("report:\n%s", ft.errors[0])
	}
}

func TestPanicIsRecoveredAndShrunk(t *testing.T) {
	p := ForAll("P902_panics", "never panics", "IntRange(0, 10000)", gen.IntRange(0, 10000), func(x int) error {
		if x >= 100 {
			panic(fmt.Sprintf("boom at %d", x))
		}
		return nil
	})
	ft := &fakeT{name: "T/P902_panics"}
	r := Check(ft, ciSettings(DefaultSeed), p)
	if r.Failure == nil || r.Failure.Shrunk != 100 || r.Failure.Kind != "panic: boom at #" {
		t.Fatalf("got %+v, want a panic shrunk to 100", r.Failure)
	}
	if !strings.Contains(ft.errors[0], "shrunk (") || !strings.Contains(ft.errors[0], "): 100\n") {
		t.Fatalf("report:\n%s", ft.errors[0])
	}
}

func TestPinnedExamplesRunFirst(t *testing.T) {
	ft := &fakeT{name: "T/P900_at_most_ten"}
	r := Check(ft, ciSettings(DefaultSeed), atMostTen(Pin("ten is fine", 10), Pin("eleven is the bug", 11)))
	if r.Failure == nil || r.Failure.Pinned != "eleven is the bug" || r.Cases != 0 || r.Pinned != 2 {
		t.Fatalf("got %+v, want the pinned 11 to fail before any generated case", r)
	}
	if !strings.Contains(ft.errors[0], `pinned example "eleven is the bug" failed`) || !strings.Contains(ft.errors[0], "value: 11") ||
		!strings.Contains(ft.errors[0], "replay: go test ./tests/property/pbt/ -run '^T$/^P900_at_most_ten$' -count=1 -v") {
		t.Fatalf("report:\n%s", ft.errors[0])
	}
	ft = &fakeT{name: "T/P903"}
	calls := 0
	r = Check(ft, ciSettings(DefaultSeed), ForAll("P903_pinfunc", "s", "g", gen.Const(1), func(int) error { return nil },
		PinFunc("sequence", func() error { calls++; return errors.New("replayed: bad") })))
	if calls != 1 || r.Failure == nil || r.Failure.Kind != "replayed" {
		t.Fatalf("PinFunc: calls %d, report %+v", calls, r)
	}
}

func TestCoverageFailsWhenAClassIsRare(t *testing.T) {
	p := func(pct float64) Property {
		return ForAll("P904_cover", "s", "IntRange(0, 99)", gen.IntRange(0, 99), func(int) error { return nil },
			Classify(func(x int) []string {
				if x == 0 {
					return []string{"zero"}
				}
				return []string{"nonzero"}
			}), Cover("zero", pct), Cover("nonzero", 50))
	}
	ft := &fakeT{name: "T/P904"}
	r := Check(ft, ciSettings(DefaultSeed), p(30))
	if len(r.CoverageErrors) != 1 || !strings.Contains(r.CoverageErrors[0], `label "zero"`) {
		t.Fatalf("coverage errors %q, want one for zero", r.CoverageErrors)
	}
	ft = &fakeT{name: "T/P904"}
	r = Check(ft, ciSettings(DefaultSeed), p(0))
	if len(ft.errors) != 0 || r.Labels["nonzero"] == 0 {
		t.Fatalf("errors %q labels %v", ft.errors, r.Labels)
	}
	if !strings.Contains(strings.Join(ft.logs, "\n"), "% nonzero") {
		t.Fatalf("stats not logged: %q", ft.logs)
	}
	// The fast profile's 40 cases are too few to enforce coverage.
	fast := ciSettings(DefaultSeed)
	fast.Profile, _ = ProfileNamed("fast")
	ft = &fakeT{name: "T/P904"}
	r = Check(ft, fast, p(30))
	if len(ft.errors) != 0 || len(r.CoverageErrors) != 0 || !strings.Contains(strings.Join(ft.logs, "\n"), "coverage not enforced") {
		t.Fatalf("fast profile: errors %q logs %q", ft.errors, ft.logs)
	}
}

func TestDiscardsAreCountedAndHeavyFilteringFails(t *testing.T) {
	g := gen.IntRange(0, 99).SuchThat(func(x int) bool { return x < 10 })
	ft := &fakeT{name: "T/P905"}
	r := Check(ft, ciSettings(DefaultSeed), ForAll("P905_filtered", "s", "filtered", g, func(int) error { return nil }))
	if r.Discards == 0 || len(ft.errors) == 0 || !strings.Contains(ft.errors[0], "construct valid values") {
		t.Fatalf("discards %d errors %q", r.Discards, ft.errors)
	}
}

func TestForAllPropReportsShrunkArgument(t *testing.T) {
	mk := func() gopter.Prop {
		return gopter.Prop(func(gp *gopter.GenParameters) *gopter.PropResult {
			return gopter.NewPropResult(gp.MaxSize < 30, "size below 30")
		})
	}
	ft := &fakeT{name: "T/P906_prop"}
	r := Check(ft, ciSettings(DefaultSeed), ForAllProp("P906_prop", "sizes stay small", "size", mk))
	if r.Failure == nil || r.Failure.Case.Size < 30 || r.Failure.Kind != "postcondition failed" {
		t.Fatalf("got %+v", r.Failure)
	}
}

func TestCheckIDs(t *testing.T) {
	ok := ForAll("P1_a", "s", "g", gen.Const(1), func(int) error { return nil })
	tests := []struct {
		name  string
		props []Property
		want  string
	}{
		{"valid", []Property{ok}, ""},
		{"duplicate number", []Property{ok, ForAll("P1_b", "s", "g", gen.Const(1), func(int) error { return nil })}, "used twice"},
		{"malformed", []Property{ForAll("p1-a", "s", "g", gen.Const(1), func(int) error { return nil })}, "is not P<n>_<words>"},
		{"leading zero", []Property{ForAll("P01_a", "s", "g", gen.Const(1), func(int) error { return nil })}, "is not P<n>_<words>"},
		{"no statement", []Property{ForAll("P2_a", "", "g", gen.Const(1), func(int) error { return nil })}, "needs a statement"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckIDs(tt.props)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Fatalf("CheckIDs = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	t.Setenv(EnvSeed, "")
	t.Setenv(EnvProfile, "")
	t.Setenv(EnvCase, "")
	s, err := FromEnv(false)
	if err != nil || s.Seed != DefaultSeed || s.Profile.Name != "ci" || s.Replay != nil || s.Package != "./tests/property/pbt/" {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	s, _ = FromEnv(true)
	if s.Profile.Name != "fast" {
		t.Fatalf("-short gave profile %q", s.Profile.Name)
	}
	t.Setenv(EnvSeed, "7")
	t.Setenv(EnvProfile, "nightly")
	t.Setenv(EnvCase, "12345:17")
	s, err = FromEnv(true)
	want := Case{Seed: 12345, Size: 17}
	if err != nil || s.Seed != 7 || s.Profile.Name != "nightly" || s.Replay == nil || *s.Replay != want {
		t.Fatalf("from env: %+v %v", s, err)
	}
	for _, bad := range [][2]string{{EnvSeed, "x"}, {EnvProfile, "slow"}, {EnvCase, "1"}, {EnvCase, "1:-2"}} {
		t.Run(bad[0]+"="+bad[1], func(t *testing.T) {
			t.Setenv(bad[0], bad[1])
			if _, err := FromEnv(false); err == nil || !strings.Contains(err.Error(), bad[0]) {
				t.Fatalf("FromEnv with %s=%s: %v, want an error naming the variable", bad[0], bad[1], err)
			}
		})
	}
}

func TestCaseSizeRamp(t *testing.T) {
	var got []int
	for i := 0; i < 5; i++ {
		got = append(got, CaseSize(i, 5, 40))
	}
	if diff := cmp.Diff([]int{0, 10, 20, 30, 40}, got); diff != "" {
		t.Fatal(diff)
	}
}
