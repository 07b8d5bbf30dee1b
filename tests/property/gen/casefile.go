package gen

import (
	"math"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

// CaseWords are the short strings case inputs take their ids, decisions,
// severities and supporting ids from: valid and invalid UTF-8, empty,
// markers, HTML and JSON specials, and line separators the encoder
// escapes.
func CaseWords() []string {
	return []string{
		"", "inc-1", "inc-2", "known_benign", "real", "escalated", "false_positive", "duplicate", "bogus",
		"critical", "warning", "unknown", "\xff", "a\xc3", "<b>&amp;</b>", `"quoted"\`, "\u2028\u2029",
		routing.CaseFileEnd, "ſ", "\x00",
	}
}

// CaseFloats are the numbers a case input's confidence, consistency and
// scores take: the edges, values that need rounding, and non-finite ones.
func CaseFloats() []float64 {
	return append(ScoreEdges(), 0.1234567, 1.0/3, 2.0/3, 0.0005, 0.9995, math.NaN(), math.Inf(1), -0.25, 1e-12)
}

// CaseMatch is one recalled match of a CaseInput, by index.
type CaseMatch struct {
	ID, Decision int // CaseWords
	Score        int // CaseFloats
	Note         SecretText
	DeadEnds     []SecretText
}

// CaseInput is a routing input built by index: an alert of DNAPieces with a
// secret-bearing label, triage figures, supporting ids and recalled
// matches with notes and dead ends, more of them than the case file keeps.
type CaseInput struct {
	Alert                        DNAAlert
	Secret                       SecretText
	ID, Severity                 int // CaseWords
	Fingerprint                  openrecall.Fingerprint
	Decision                     int // CaseWords
	Confidence, Consistency      int // CaseFloats
	StrongCount, ConsistentCount int
	Supporting                   []int // CaseWords
	NilSupporting                bool
	Matches                      []CaseMatch
}

// Input returns the routing input.
func (c CaseInput) Input() routing.Input {
	words, floats := CaseWords(), CaseFloats()
	a := c.Alert.Alert()
	a.ID = words[c.ID%len(words)]
	a.Severity = openrecall.Severity(words[c.Severity%len(words)])
	if s := c.Secret.String(); s != "" {
		a.Labels["db_password"] = s
		a.Labels["url"] = s
	}
	in := routing.Input{Alert: a, Fingerprint: c.Fingerprint}
	in.Triage.Decision = openrecall.Decision(words[c.Decision%len(words)])
	in.Triage.Confidence = floats[c.Confidence%len(floats)]
	in.Triage.Consistency = floats[c.Consistency%len(floats)]
	in.Triage.StrongCount, in.Triage.ConsistentCount = c.StrongCount, c.ConsistentCount
	if !c.NilSupporting {
		in.Triage.Supporting = []string{}
	}
	for _, i := range c.Supporting {
		in.Triage.Supporting = append(in.Triage.Supporting, words[i%len(words)])
	}
	for _, m := range c.Matches {
		inc := openrecall.Incident{ID: words[m.ID%len(words)], Decision: openrecall.Decision(words[m.Decision%len(words)]), Note: m.Note.String()}
		for _, d := range m.DeadEnds {
			inc.DeadEnds = append(inc.DeadEnds, d.String())
		}
		in.Matches = append(in.Matches, openrecall.Match{Incident: inc, Score: floats[m.Score%len(floats)]})
	}
	return in
}

// CaseInputGen generates routing inputs for the case file: alerts of
// DNAPieces, secrets, invalid UTF-8 and JSON/HTML specials in every field
// the case file carries, non-finite and unrounded figures, and up to 12
// matches (the case file keeps 10) with up to 9 dead ends (it keeps 8).
func CaseInputGen() gopter.Gen {
	word := Index(len(CaseWords()), 0.2)
	num := Index(len(CaseFloats()), 0.2)
	secret := SecretTextGen()
	match := gg.Struct(reflect.TypeOf(CaseMatch{}), map[string]gopter.Gen{
		"ID": word, "Decision": word, "Score": num, "Note": secret,
		"DeadEnds": SliceUpTo(9, secret, reflect.TypeOf(SecretText{})),
	})
	return gg.Struct(reflect.TypeOf(CaseInput{}), map[string]gopter.Gen{
		"Alert": DNAAlertGen(), "Secret": secret, "ID": word, "Severity": word,
		"Fingerprint": AlertFingerprintGen(), "Decision": word, "Confidence": num, "Consistency": num,
		"StrongCount": gg.IntRange(0, 6), "ConsistentCount": gg.IntRange(0, 6),
		"Supporting":    SliceUpTo(6, word, reflect.TypeOf(0)),
		"NilSupporting": gg.Bool(),
		"Matches":       SliceUpTo(12, match, reflect.TypeOf(CaseMatch{})),
	})
}
