package property

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// evidenceProperties are the laws of an alert's evidence: what changes
// from one firing of a check to the next never moves its Alert DNA nor its
// identity (DESIGN §4).
func evidenceProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P155_evidence_never_moves_dna_or_identity",
			"An alert's evidence never moves its Alert DNA nor its identity (DESIGN §4): for every fixture of every sender, the host its first alert fired on (Alert.Host) or an entity that acted (user, process, command, file, image, account, parent process, executable), written as a whole word anywhere in the payload, replaced there by another value — hosts named after a dependency (db-2, postgres-primary-1, redis-cache-3, kafka-broker-2), database and shell processes, command lines and file paths an attack rule reads (/etc/passwd, ../../etc/hosts, a metadata address) — reads as an alert with the same identity and the same six fields. A detection's attack pattern comes from its rule, title and ATT&CK references, never from its evidence; a host is masked wherever it is written. Liveness: the same alert with its rule field changed has another identity.",
			"EvidenceChangeGen", gen.EvidenceChangeGen(), func(c gen.EvidenceChange) error {
				kind, value := c.Get()
				_, err := checkEvidenceChange(ex, c.Fixture.Get(), kind, value)
				return err
			},
			pbt.Found("a Wazuh 3.x file-integrity event on /etc/passwd, not /etc/shadow: attack_pattern=path_traversal from the file path in its full_log (fixed: a detection's attack pattern is never read from its text or field values)",
				gen.EvidenceChange{Fixture: gen.FixtureRef{Pool: gen.EverySender, Sender: 37, Fixture: 4}, Kind: 4, Value: 1}),
			pbt.Found("a Zabbix trigger on host db-2, not web-01: dependency_pattern=database from the host in its evidence (fixed: the host is masked)",
				gen.EvidenceChange{Fixture: gen.FixtureRef{Pool: gen.EverySender, Sender: 38, Fixture: 2}, Kind: 0, Value: 0}),
			pbt.PinFunc("every fixture, every kind of evidence it has, every value of its kind", func() error {
				changed := map[string]bool{}
				for _, f := range gen.AllSenderFixtures() {
					for _, kind := range gen.EvidenceKinds() {
						for _, v := range gen.EvidenceValues(kind) {
							class, err := checkEvidenceChange(ex, f, kind, v)
							if err != nil {
								return err
							}
							if class == "changed "+kind {
								changed[f.Dir] = true
							}
						}
					}
				}
				if len(changed) < 15 {
					return fmt.Errorf("coverage: only %d senders have a fixture whose evidence could be changed: %v", len(changed), changed)
				}
				return nil
			}),
			pbt.Classify(func(c gen.EvidenceChange) []string {
				kind, value := c.Get()
				class, _ := checkEvidenceChange(ex, c.Fixture.Get(), kind, value)
				labels := []string{class}
				if strings.HasPrefix(class, "changed ") {
					labels = append(labels, "evidence changed")
				}
				if c.Fixture.Get().Sender().Security {
					labels = append(labels, "a security sender")
				}
				return labels
			}),
			pbt.Cover("evidence changed", 4), pbt.Cover("changed host", 1), pbt.Cover("a security sender", 10),
		),
	}
}

// checkEvidenceChange is P155 for one fixture, kind of evidence and new
// value; it returns the case's class ("changed host", "no user", …).
func checkEvidenceChange(ex *fingerprint.Extractor, f gen.SenderFixture, kind, value string) (string, error) {
	recs := readFixture(f, f.Body)
	if len(recs) == 0 || recs[0].Err != nil || !openrecall.Triaged(recs[0].Alert.Status) {
		return "no firing alert", nil
	}
	a := recs[0].Alert
	old := a.Host()
	if kind != "host" {
		old = a.Entities[kind]
	}
	if len(old) < 3 || strings.EqualFold(old, value) || strings.EqualFold(old, a.Service) || strings.EqualFold(old, a.Rule) {
		// Too short to be told from other words, already the value, or
		// the alert's service or rule itself: no evidence to change.
		return "no " + kind, nil
	}
	if replaceWord(a.Rule, old, value) != a.Rule {
		// The rule names it ("Root success" for the user root): a word of
		// the check, not only evidence.
		return "the rule names its " + kind, nil
	}
	body, n, err := replaceWords(f.Body, old, value)
	if err != nil {
		return "", fmt.Errorf("%s/%s: %v", f.Dir, f.Name, err)
	}
	if n == 0 {
		return "no " + kind, nil
	}
	again := readFixture(f, body)
	if len(again) == 0 || again[0].Err != nil {
		return "", fmt.Errorf("read: %s/%s with its %s %q written %q: %s", f.Dir, f.Name, kind, old, value, recordsText(again))
	}
	b := again[0].Alert
	if ia, ib := ex.Identify(a), ex.Identify(b); ia != ib {
		return "", fmt.Errorf("identity: %s/%s: its %s %q written %q moves the identity %v to %v", f.Dir, f.Name, kind, old, value, ia, ib)
	}
	if fa, fb := ex.Extract(a), ex.Extract(b); fa != fb {
		return "", fmt.Errorf("dna: %s/%s: its %s %q written %q moves the Alert DNA %s to %s", f.Dir, f.Name, kind, old, value, fa.String(), fb.String())
	}
	if _, steps := ruleField(ex, f); steps != nil {
		// Liveness: another rule is another identity.
		q, _ := json.Marshal(a.Rule + " on another check")
		other := readFixture(f, f.Tree.Replace(steps, mustTree(string(q))).Write(0, 0, 0))
		if len(other) > 0 && other[0].Err == nil && ex.Identify(other[0].Alert) == ex.Identify(a) {
			return "", fmt.Errorf("liveness: %s/%s: another rule keeps the identity %v", f.Dir, f.Name, ex.Identify(a))
		}
	}
	return "changed " + kind, nil
}

// replaceWords writes new for every whole-word occurrence of old (ASCII
// letters compared without case) in every string of the JSON payload
// body, and returns the payload and the number of strings changed.
func replaceWords(body []byte, old, new string) ([]byte, int, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, 0, err
	}
	n := 0
	var walk func(x any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case string:
			if s := replaceWord(t, old, new); s != t {
				n++
				return s
			}
		}
		return x
	}
	v = walk(v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), n, nil
}

// replaceWord replaces the whole-word occurrences of old in s.
func replaceWord(s, old, new string) string {
	word := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	var b strings.Builder
	from := 0
	lower, lold := strings.ToLower(s), strings.ToLower(old)
	if len(lower) != len(s) || len(lold) != len(old) {
		lower, lold = s, old // not ASCII-folded in place: compare exactly
	}
	for i := 0; ; {
		j := strings.Index(lower[i:], lold)
		if j < 0 {
			break
		}
		at, end := i+j, i+j+len(old)
		if (at == 0 || !word(s[at-1]) || !word(old[0])) && (end == len(s) || !word(s[end]) || !word(old[len(old)-1])) {
			b.WriteString(s[from:at])
			b.WriteString(new)
			from = end
		}
		i = at + 1
		if i >= len(s) {
			break
		}
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}
