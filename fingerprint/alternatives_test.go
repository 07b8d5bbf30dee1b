package fingerprint

import (
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
