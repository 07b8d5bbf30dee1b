package fingerprint

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestAlternativesMatchAsTheWhole holds the split patterns to the whole
// regex: for every pattern and identity regex of the default rules, a
// string holds a match of one of its alternatives exactly when it holds a
// match of the pattern, on strings made of every pattern's literals with
// and without word boundaries around them (P35 and P47 hold the extractor
// that uses the alternatives to the reference interpreter).
func TestAlternativesMatchAsTheWhole(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	var regexes []string
	for _, fr := range rules.fields {
		for _, p := range fr.patterns {
			regexes = append(regexes, p.regex)
		}
	}
	for _, ir := range rules.identity {
		if ir.regex != "" {
			regexes = append(regexes, ir.regex)
		}
	}
	var compiled []*regexp.Regexp
	var words []string
	for _, s := range regexes {
		re, err := compilePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		compiled = append(compiled, re)
		tree, err := syntax.Parse(re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range literalClauses(tree) {
			for _, set := range c {
				words = append(words, set...)
			}
		}
	}
	var inputs []string
	for i, w := range words {
		next := words[(i*7+3)%len(words)]
		inputs = append(inputs, " "+w+" ", "x"+w+"x", w+" <dur> "+next, w+" is "+next)
	}
	inputs = append(inputs, "", "probe_success", "blackboxprobefailed", "xprobe", "slo", "the slo burn", "target is down", "prod.", "(prod)")
	for i, re := range compiled {
		alts := alternativesOf(re)
		for _, s := range inputs {
			s = strings.ToLower(s)
			got := false
			for _, a := range alts {
				got = got || a.MatchString(s)
			}
			if want := re.MatchString(s); got != want {
				t.Errorf("pattern %q on %q: the alternatives say %v, the whole regex %v", regexes[i], s, got, want)
			}
		}
	}
}

// TestIdentityRegexSecondAlternative: an identity rule whose regex matches
// by a later alternative ('^probe' of blackbox_probe) still applies.
func TestIdentityRegexSecondAlternative(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := openrecall.Alert{Title: "probe failed", Service: "orders", Labels: map[string]string{"alertname": "probe_success", "instance": "stg"}}
	if got, want := e.Identify(a).String(), "probe_success @ orders/stg"; got != want {
		t.Errorf("Identify = %q, want %q", got, want)
	}
}

// TestManyAlternatives: a pattern of more alternatives than runPattern
// marks in one word (64) matches by any of them, literal or regex, and not
// otherwise.
func TestManyAlternatives(t *testing.T) {
	var alts []string
	for i := range 70 {
		if i%2 == 0 {
			alts = append(alts, fmt.Sprintf("word%03dx", i))
		} else {
			alts = append(alts, fmt.Sprintf(`\bre%03d\d+\b`, i))
		}
	}
	custom := load(t, "many.yaml", "fields:\n  error_class:\n    patterns:\n      - name: many\n        value: many_alternatives\n        regex: '"+strings.Join(alts, "|")+"'\n")
	defaults, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(defaults.Merge(custom))
	if err != nil {
		t.Fatal(err)
	}
	e.DisableCache()
	for i := range 70 {
		title := fmt.Sprintf("pool saw word%03dx today", i)
		if i%2 == 1 {
			title = fmt.Sprintf("pool saw re%03d42 today", i)
		}
		if got := e.Extract(openrecall.Alert{Title: title}).ErrorClass; got != "many_alternatives" {
			t.Errorf("alternative %d, %q: error class %q", i, title, got)
		}
	}
	for _, title := range []string{"pool saw re001 today", "pool saw word001x today", "pool saw xre06542 today"} {
		if got := e.Extract(openrecall.Alert{Title: title}).ErrorClass; got == "many_alternatives" {
			t.Errorf("%q matched", title)
		}
	}
}

// TestAllowedEqualsClauses holds allowed's shortcut for patterns of one
// literal set to the plain rule: a pattern runs when it has no required
// literal or when, for one of its clauses, a literal of each set occurs.
// The strings are made of the literals of each clause of every pattern,
// one clause at a time and each clause's sets but one.
func TestAllowedEqualsClauses(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := func(p int, found []uint64) bool {
		if e.always[p/64]&(1<<(p%64)) != 0 {
			return true
		}
		for _, c := range e.clauses[p] {
			all := true
			for _, g := range c {
				all = all && found[g/64]&(1<<(g%64)) != 0
			}
			if all {
				return true
			}
		}
		return false
	}
	sets := literalsOfSets(e)
	var inputs []string
	for p := range e.patterns {
		for _, c := range e.clauses[p] {
			var all []string
			for _, g := range c {
				all = append(all, sets[g][0])
			}
			inputs = append(inputs, strings.Join(all, " "))
			for skip := range all {
				inputs = append(inputs, strings.Join(append(append([]string{}, all[:skip]...), all[skip+1:]...), " "))
			}
		}
	}
	for _, s := range inputs {
		found := make([]uint64, e.prefix[0].words)
		for _, m := range e.prefix {
			m.scan(s, found) // every pattern's sets, whatever its sources
		}
		for p := range e.patterns {
			if got, want := e.allowed(p, found), plain(p, found); got != want {
				t.Fatalf("pattern %d on %q: allowed %v, the clauses say %v", p, s, got, want)
			}
		}
	}
}

// literalsOfSets rebuilds the prefilter's literal sets, numbered as New
// numbered them: pattern by pattern, clause by clause.
func literalsOfSets(e *Extractor) [][]string {
	res := make([]*regexp.Regexp, e.patterns)
	for _, cf := range e.fields {
		for _, s := range cf.steps {
			if s.re == nil {
				continue
			}
			for j, alt := range alternativesOf(s.re) {
				res[s.alts[j].pattern] = alt
			}
		}
	}
	var sets [][]string
	for _, re := range res {
		for _, c := range patternLiterals(re).clauses {
			sets = append(sets, c...)
		}
	}
	return sets
}
