package property

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// senderProperties are the laws of reading the senders' payloads through
// their adapters (DESIGN §3, §4).
func senderProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P48_sender_reading_deterministic_round_trip",
			"Reading a sender's payload is deterministic and independent of JSON member order and formatting: every fixture of every sender, its object members reversed, sorted or shuffled at every level and written compact, indented (spaces, tabs, CRLF) or spaced, reads as the same records as the fixture itself (the container format and the line aside); and every alert read round-trips: json.Marshal of the alert decodes to an equal alert (reflect.DeepEqual), its time in UTC.",
			"SenderReadingGen", gen.SenderReadingGen(), func(r gen.SenderReading) error {
				return checkSenderReading(r.Fixture.Get(), r.Body())
			},
			pbt.Found("a Grafana webhook with its keys sorted (alerts before orgId): its alerts were read as Alertmanager's (fixed: Grafana's own item fields name the sender)",
				gen.SenderReading{Fixture: gen.FixtureRef{Pool: gen.EverySender, Sender: 10, Fixture: 0}, Order: 2}),
			pbt.Found("an Alertmanager webhook with its receiver after its alerts: the truncation notice lost the receiver and got another id (fixed: the receiver is kept after the alerts too)",
				gen.SenderReading{Fixture: gen.FixtureRef{Pool: gen.EverySender, Sender: 0, Fixture: 3}, Order: 1}),
			pbt.PinFunc("every fixture of every sender, reversed and indented", func() error {
				for _, f := range gen.AllSenderFixtures() {
					if err := checkSenderReading(f, f.Tree.Write(1, 0, 1)); err != nil {
						return err
					}
				}
				return nil
			}),
			pbt.Classify(func(r gen.SenderReading) []string {
				f := r.Fixture.Get()
				labels := []string{"order " + gen.Orders()[r.Order%len(gen.Orders())], gen.Layouts()[r.Layout%len(gen.Layouts())]}
				if f.Sender().Builtin {
					labels = append(labels, "a built-in sender")
				} else {
					labels = append(labels, "an adapter sender")
				}
				return labels
			}),
			pbt.Cover("a built-in sender", 5), pbt.Cover("an adapter sender", 50),
			pbt.Cover("order shuffled", 30), pbt.Cover("compact", 10),
		),
		pbt.ForAll("P49_sender_rule_never_masked",
			"A sender's rule is never masked (DESIGN §4): for a fixture whose first alert has a rule read from one string field (origin[\"rule\"], a dotted path as sender.Value.Path reads it), setting that field to two values that differ only in digits (CVE-2021-42278 and CVE-2021-42287, \"Disk 1 full\" and \"Disk 2 full\", 7 and 07, numbers of any length, ids) gives two different identities, and each rule is the value set, whitespace-collapsed.",
			"RuleDigitsGen", gen.RuleDigitsGen(), func(r gen.RuleDigits) error {
				a, b := r.Values()
				_, err := checkRuleDigits(ex, r.Fixture.Get(), a, b)
				return err
			},
			pbt.PinFunc("CVE-2021-42278 and CVE-2021-42287 in every sender with a plain rule field", func() error {
				senders := map[string]bool{}
				for _, f := range gen.AllSenderFixtures() {
					if f.Sender().Builtin {
						continue
					}
					class, err := checkRuleDigits(ex, f, "CVE-2021-42278", "CVE-2021-42287")
					if err != nil {
						return err
					}
					if class == "rule field set" {
						senders[f.Dir] = true
					}
				}
				if len(senders) < 18 {
					return fmt.Errorf("coverage: only %d senders have a fixture with a plain rule field: %v", len(senders), senders)
				}
				return nil
			}),
			pbt.Classify(func(r gen.RuleDigits) []string {
				class, _ := ruleField(ex, r.Fixture.Get())
				labels := []string{class}
				if class == "rule field set" && r.Fixture.Get().Sender().Security {
					labels = append(labels, "a security sender's rule")
				}
				if r.Change%2 == 1 {
					labels = append(labels, "a leading zero more")
				}
				return labels
			}),
			pbt.Cover("rule field set", 50), pbt.Cover("a security sender's rule", 5), pbt.Cover("a leading zero more", 10),
		),
		pbt.ForAll("P50_sender_wrong_typed_optional_field_never_rejects",
			"A payload of a known sender is never rejected for an unexpected optional field type (DESIGN §3): with one member or element of a fixture (a leaf, an object or an array) replaced by a number, boolean, null, object, array or string of another kind, a payload the sender's Match still accepts reads without a panic and, when the field is optional (the payload without it is still the sender's by its Match and reads without a rejection), with no rejected record except an empty alert (when the value replaced held the alert's title), and every alert is still that sender's (or, for an envelope that no longer opens, the envelope's).",
			"WrongTypeGen", gen.WrongTypeGen(), func(w gen.WrongType) error {
				_, err := checkWrongType(w)
				return err
			},
			pbt.PinFunc("every top-level member of every adapter fixture, replaced by a value of another kind", func() error {
				for s, dir := range gen.AdapterFixtureDirs() {
					for f := range gen.FixturesOf(dir) {
						ref := gen.FixtureRef{Pool: gen.AdapterSenders, Sender: s, Fixture: f}
						for i, pl := range ref.Get().Places {
							if len(pl.Steps) > 1 {
								continue
							}
							if _, err := checkWrongType(gen.WrongType{Fixture: ref, Target: i, Kind: i + f, Variant: i / 5}); err != nil {
								return err
							}
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(w gen.WrongType) []string {
				class := "a panic"
				func() {
					defer func() { _ = recover() }()
					class, _ = checkWrongType(w)
				}()
				pl, v := w.Place()
				labels := []string{class, "to " + gen.JSONKinds()[gen.KindOf(mustTree(v))]}
				if k := gen.KindOf(pl.Node); k == 3 || k == 4 {
					labels = append(labels, "an object or array replaced")
				}
				return labels
			}),
			pbt.Cover("still matched", 50), pbt.Cover("a required field", 1), pbt.Cover("an object or array replaced", 10),
			pbt.Cover("to number", 8), pbt.Cover("to object", 8), pbt.Cover("to string", 5),
		),
		pbt.ForAll("P51_sender_documented_severity_known",
			"Every documented severity value of every sender (its Levels), in any case and between blanks (spaces, tabs, line ends, no-break and ideographic spaces), maps to a known severity — never unknown — by the sender's Severity function, or intake.NormalizeSeverity when it has none.",
			"LevelSpellingGen", gen.LevelSpellingGen(), func(l gen.LevelSpelling) error {
				s, raw := l.Of()
				return checkLevel(s, raw)
			},
			pbt.PinFunc("every level of every sender as documented, upper-cased and padded", func() error {
				for _, s := range gen.LevelSenders() {
					for _, lv := range s.Levels {
						for _, raw := range []string{lv, strings.ToUpper(lv), " \t" + strings.ToLower(lv) + "\u00a0"} {
							if err := checkLevel(s, raw); err != nil {
								return err
							}
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(l gen.LevelSpelling) []string {
				s, raw := l.Of()
				labels := []string{}
				if raw != strings.TrimSpace(raw) {
					labels = append(labels, "blanks around")
				}
				if s.Severity == nil {
					labels = append(labels, "NormalizeSeverity")
				}
				if l.Case%len(gen.LevelCases()) != 0 {
					labels = append(labels, "case changed")
				}
				return labels
			}),
			pbt.Cover("blanks around", 40), pbt.Cover("case changed", 50),
		),
	}
}

// readFixture reads a payload as a file named as the fixture.
func readFixture(f gen.SenderFixture, body []byte) []intake.Record {
	recs, err := intake.ParseBytes(body, intake.Options{Source: f.Name})
	if err != nil {
		panic(err)
	}
	return recs
}

// sameReading compares two readings of one payload: the same records, the
// container format (json or jsonl, which layout decides) and the line aside.
func sameReading(a, b []intake.Record) bool {
	strip := func(recs []intake.Record) []intake.Record {
		out := make([]intake.Record, len(recs))
		for i, r := range recs {
			r.Alert.Format, r.Alert.Position.Line = "", 0
			if r.Err != nil {
				e := *r.Err
				e.Position.Line = 0
				r.Err = &e
			}
			out[i] = r
		}
		return out
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// checkSenderReading is P48 for one fixture and one rewriting of it.
func checkSenderReading(f gen.SenderFixture, body []byte) error {
	want := readFixture(f, f.Body)
	got := readFixture(f, body)
	if again := readFixture(f, body); !reflect.DeepEqual(got, again) {
		return fmt.Errorf("determinism: %s/%s read twice:\n %s\n %s", f.Dir, f.Name, recordsText(got), recordsText(again))
	}
	if !sameReading(want, got) {
		return fmt.Errorf("order: %s/%s rewritten as %s reads otherwise:\n fixture:   %s\n rewritten: %s", f.Dir, f.Name, body, recordsText(want), recordsText(got))
	}
	for _, r := range got {
		if r.Err != nil {
			continue
		}
		a := r.Alert
		if !a.Timestamp.IsZero() && a.Timestamp.Location() != time.UTC {
			return fmt.Errorf("utc: %s/%s: alert time %s is in %s", f.Dir, f.Name, a.Timestamp, a.Timestamp.Location())
		}
		raw, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("round trip: %s/%s: marshal: %v", f.Dir, f.Name, err)
		}
		var back openrecall.Alert
		if err := json.Unmarshal(raw, &back); err != nil {
			return fmt.Errorf("round trip: %s/%s: unmarshal %s: %v", f.Dir, f.Name, raw, err)
		}
		if !reflect.DeepEqual(a, back) {
			return fmt.Errorf("round trip: %s/%s: %s decodes to\n %#v\n want %#v", f.Dir, f.Name, raw, back, a)
		}
	}
	return nil
}

// ruleField classifies a fixture for P49 and returns the place of its rule
// field when it is a plain string field: its first alert has a rule, and
// origin["rule"] names a string field whose value, whitespace-collapsed, is
// the rule.
func ruleField(ex *fingerprint.Extractor, f gen.SenderFixture) (string, []int) {
	recs := readFixture(f, f.Body)
	if len(recs) == 0 || recs[0].Err != nil || recs[0].Alert.Rule == "" {
		return "no rule", nil
	}
	a := recs[0].Alert
	path := a.Origin[sender.PartRule]
	steps, ok := f.Tree.Find(path)
	if !ok {
		return "rule not a plain string field", nil
	}
	n := f.Tree
	for _, s := range steps {
		n = n.Kids[s]
	}
	if n.Kind != '"' || strings.Join(strings.Fields(n.Text()), " ") != a.Rule {
		return "rule not a plain string field", nil
	}
	return "rule field set", steps
}

// checkRuleDigits is P49 for one fixture and two rule values; it returns
// the fixture's class.
func checkRuleDigits(ex *fingerprint.Extractor, f gen.SenderFixture, va, vb string) (string, error) {
	class, steps := ruleField(ex, f)
	if steps == nil {
		return class, nil
	}
	read := func(v string) (openrecall.Alert, error) {
		q, _ := json.Marshal(v)
		body := f.Tree.Replace(steps, mustTree(string(q))).Write(0, 0, 0)
		recs := readFixture(f, body)
		if len(recs) == 0 || recs[0].Err != nil {
			return openrecall.Alert{}, fmt.Errorf("read: %s/%s with rule %q: %s", f.Dir, f.Name, v, recordsText(recs))
		}
		a := recs[0].Alert
		if want := strings.Join(strings.Fields(v), " "); a.Rule != want {
			return a, fmt.Errorf("rule: %s/%s: field %s set to %q reads as rule %q, want %q", f.Dir, f.Name, a.Origin[sender.PartRule], v, a.Rule, want)
		}
		return a, nil
	}
	a, err := read(va)
	if err != nil {
		return class, err
	}
	b, err := read(vb)
	if err != nil {
		return class, err
	}
	if ia, ib := ex.Identify(a), ex.Identify(b); ia == ib {
		return class, fmt.Errorf("masked: %s/%s: rules %q and %q share the identity %v", f.Dir, f.Name, a.Rule, b.Rule, ia)
	}
	return class, nil
}

func mustTree(s string) gen.JSONNode {
	n, err := gen.ParseJSONTree([]byte(s))
	if err != nil {
		panic(err)
	}
	return n
}

// checkWrongType is P50 for one replaced value; it returns the case's class.
func checkWrongType(w gen.WrongType) (string, error) {
	f := w.Fixture.Get()
	orig, _ := sender.Parse(f.Body)
	det, ok := sender.Detect(sender.All(), orig)
	if !ok {
		return "", fmt.Errorf("fixture: %s/%s is recognised by no adapter", f.Dir, f.Name)
	}
	body := w.Body()
	v, err := sender.Parse(body)
	if err != nil {
		return "", fmt.Errorf("fixture: %s: %v", body, err)
	}
	if !det.Match(v) {
		return "no longer matched", nil
	}
	// A field is optional when the payload without it is still the
	// sender's and reads without a rejection.
	without := w.Without()
	if wv, err := sender.Parse(without); err != nil || !det.Match(wv) {
		return "a required field", nil
	}
	for _, r := range readFixture(f, without) {
		if r.Err != nil {
			return "a required field", nil
		}
	}
	pl, repl := w.Place()
	before := readFixture(f, f.Body)
	senders := map[string]bool{}
	titled := map[string]bool{}
	for _, r := range before {
		if r.Err == nil {
			senders[r.Alert.Sender] = true
			for _, o := range strings.Split(r.Alert.Origin[sender.PartTitle], "+") {
				titled[o] = true
			}
		}
	}
	if det.Open != nil {
		senders[det.Name] = true
	}
	holdsTitle := false
	for o := range titled {
		if o == pl.Path || strings.HasPrefix(o, pl.Path+".") || strings.HasPrefix(pl.Path, o+".") {
			holdsTitle = true
		}
	}
	class := "still matched"
	for _, r := range readFixture(f, body) {
		if r.Err != nil {
			if strings.Contains(r.Err.Reason, "empty alert") && holdsTitle {
				class = "an empty alert"
				continue
			}
			return class, fmt.Errorf("rejected: %s/%s with %s set to %s: %s", f.Dir, f.Name, pl.Path, repl, r.Err)
		}
		if !senders[r.Alert.Sender] {
			return class, fmt.Errorf("sender: %s/%s with %s set to %s read by %q, want %v", f.Dir, f.Name, pl.Path, repl, r.Alert.Sender, senders)
		}
	}
	return class, nil
}

// checkLevel is P51 for one spelled level.
func checkLevel(s sender.Sender, raw string) error {
	sev := intake.NormalizeSeverity(raw)
	if s.Severity != nil {
		sev = s.Severity(raw)
	}
	switch sev {
	case openrecall.SeverityCritical, openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityLow, openrecall.SeverityInfo:
		return nil
	}
	return fmt.Errorf("unknown: %s's documented level %q maps to %q", s.Name, raw, sev)
}
