package gen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// SeverityAliases are spellings of a source severity and the normalized
// severity DESIGN §3 gives each, written out here independently of intake's
// own table.
func SeverityAliases() [][2]string {
	return [][2]string{
		{"critical", "critical"}, {"crit", "critical"}, {"fatal", "critical"}, {"emergency", "critical"}, {"p1", "critical"}, {"sev1", "critical"}, {"page", "critical"},
		{"high", "high"}, {"error", "high"}, {"err", "high"}, {"major", "high"}, {"p2", "high"}, {"sev2", "high"},
		{"medium", "medium"}, {"warning", "medium"}, {"warn", "medium"}, {"moderate", "medium"}, {"p3", "medium"}, {"sev3", "medium"},
		{"low", "low"}, {"minor", "low"}, {"p4", "low"}, {"sev4", "low"}, {"notice", "low"},
		{"info", "info"}, {"informational", "info"}, {"ok", "info"}, {"debug", "info"}, {"p5", "info"},
	}
}

// EnvironmentAliases are environment words and the environment DESIGN §3
// gives each.
func EnvironmentAliases() [][2]string {
	return [][2]string{
		{"production", "prod"}, {"prod", "prod"}, {"prd", "prod"}, {"live", "prod"},
		{"staging", "staging"}, {"stage", "staging"}, {"stg", "staging"}, {"preprod", "staging"}, {"uat", "staging"}, {"qa", "staging"},
		{"development", "dev"}, {"dev", "dev"}, {"test", "dev"}, {"sandbox", "dev"}, {"local", "dev"},
	}
}

// SpellingSeparators may split a severity spelling ("sev-1", "P 2").
func SpellingSeparators() []string { return []string{"", " ", "-", "_", "  ", "\t"} }

// EnvironmentWords are neutral words around an environment word
// ("shop-prod", "prod-eu-1"); none is an environment word itself.
func EnvironmentWords() []string { return []string{"", "shop", "eu", "1", "k8s", "west", "team", "a"} }

// EnvironmentJoiners join an environment word to its neighbours.
func EnvironmentJoiners() []string { return []string{"-", "_", ".", " ", "/"} }

// Spelling is how a field value is written: one of a table's aliases,
// decorated, or free text when Free is set.
type Spelling struct {
	Free  bool
	Text  Text
	Alias int
	Case  int // 0 as is, 1 upper, 2 title
	Sep   int // severity: a separator inside the word
	Pad   int // surrounding spaces
	Pre   int // environment: a neutral word before
	Post  int // environment: a neutral word after
	Join  int
}

// SeveritySpelling is a Spelling of a severity.
type SeveritySpelling struct{ Spelling }

// EnvironmentSpelling is a Spelling of an environment.
type EnvironmentSpelling struct{ Spelling }

func (s Spelling) cased(w string) string {
	switch s.Case % 3 {
	case 1:
		return strings.ToUpper(w)
	case 2:
		return strings.ToUpper(w[:1]) + w[1:]
	}
	return w
}

// String returns the severity as written, and Want the normalized severity
// it must map to ("" for free text).
func (s SeveritySpelling) String() string {
	if s.Free {
		return s.Text.String()
	}
	a := SeverityAliases()[s.Alias%len(SeverityAliases())][0]
	k := len(a) / 2
	w := s.cased(a[:k] + SpellingSeparators()[s.Sep%len(SpellingSeparators())] + a[k:])
	pad := strings.Repeat(" ", s.Pad%3)
	return pad + w + pad
}

// Want is the normalized severity of a spelled alias, "" for free text.
func (s SeveritySpelling) Want() string {
	if s.Free {
		return ""
	}
	return SeverityAliases()[s.Alias%len(SeverityAliases())][1]
}

// String returns the environment as written.
func (s EnvironmentSpelling) String() string {
	if s.Free {
		return s.Text.String()
	}
	words, join := EnvironmentWords(), EnvironmentJoiners()[s.Join%len(EnvironmentJoiners())]
	parts := []string{}
	if w := words[s.Pre%len(words)]; w != "" {
		parts = append(parts, w)
	}
	parts = append(parts, s.cased(EnvironmentAliases()[s.Alias%len(EnvironmentAliases())][0]))
	if w := words[s.Post%len(words)]; w != "" {
		parts = append(parts, w)
	}
	pad := strings.Repeat(" ", s.Pad%3)
	return pad + strings.Join(parts, join) + pad
}

// Want is the normalized environment of a spelled alias, "" for free text.
func (s EnvironmentSpelling) Want() string {
	if s.Free {
		return ""
	}
	return EnvironmentAliases()[s.Alias%len(EnvironmentAliases())][1]
}

func spellingGen(aliases int) gopter.Gen {
	return gg.Struct(reflect.TypeOf(Spelling{}), map[string]gopter.Gen{
		"Free":  gg.Weighted([]gg.WeightedGen{{Weight: 2, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Text":  TextGen(),
		"Alias": Index(aliases, 0.1),
		"Case":  Index(3, 0.4),
		"Sep":   Index(len(SpellingSeparators()), 0.4),
		"Pad":   Index(3, 0.6),
		"Pre":   Index(len(EnvironmentWords()), 0.4),
		"Post":  Index(len(EnvironmentWords()), 0.4),
		"Join":  Index(len(EnvironmentJoiners()), 0.4),
	})
}

// SeveritySpellingGen generates severities as sources write them: known
// aliases in any case, split by a separator, padded; and free text.
func SeveritySpellingGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(SeveritySpelling{}), map[string]gopter.Gen{"Spelling": spellingGen(len(SeverityAliases()))})
}

// EnvironmentSpellingGen generates environment names: known words in any
// case between neutral words ("shop-PROD-eu"), and free text.
func EnvironmentSpellingGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(EnvironmentSpelling{}), map[string]gopter.Gen{"Spelling": spellingGen(len(EnvironmentAliases()))})
}

// ValidSpelling reports whether s is a value the spelling generators
// produce.
func ValidSpelling(s Spelling) error {
	for _, v := range []int{s.Alias, s.Case, s.Sep, s.Pad, s.Pre, s.Post, s.Join} {
		if v < 0 {
			return fmt.Errorf("negative index %d in %+v", v, s)
		}
	}
	return indexesIn(s.Text.Atoms, len(TextAtoms()), "atom")
}
