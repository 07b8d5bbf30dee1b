package property

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/eval"
	"github.com/openrecall/openrecall/examples"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// dnaProperties are the rules of the fast fingerprint engine.
func dnaProperties() []pbt.Property {
	ex, ref := newDNAPair()
	return []pbt.Property{
		pbt.ForAll("P35_fast_extractor_equals_reference",
			"The fast extractor (prefilter, hand-written normalizer scans, fingerprint cache) normalizes text exactly as the original regex passes and gives exactly the Alert DNA and identity of the naive reference interpreter that reads the same rules file and tries every rule in order, on the first extraction and on a cached one, and Explain agrees with Extract.",
			"DNAAlertGen", gen.DNAAlertGen(), func(d gen.DNAAlert) error {
				return sameDNA(ex, ref, d.Alert())
			},
			pbt.Classify(func(d gen.DNAAlert) []string {
				a := d.Alert()
				var out []string
				if ref.extract(a).IsZero() {
					out = append(out, "empty DNA")
				} else {
					out = append(out, "some DNA")
				}
				if ref.attack.pattern(a) != "" {
					out = append(out, "att&ck reference")
				}
				if a.Security {
					out = append(out, "security sender")
				}
				return out
			}),
			pbt.Cover("some DNA", 30),
			pbt.Cover("att&ck reference", 10),
			pbt.Cover("security sender", 5),
		),
		pbt.ForAll("P47_dna_lines_normalized_apart",
			"Normalizing each distinct line of an alert once (the title, the text's parts, the label and annotation values) and joining the results gives exactly what normalizing the joined text and fields gives, also when a number at the end of one line is followed by a time word or reason phrase on the next, or a number at the start of a line follows a status keyword; and the Alert DNA and identity equal the reference interpreter's.",
			"DNALinesGen", gen.DNALinesGen(), func(d gen.DNALines) error {
				return sameDNA(ex, ref, d.Alert())
			},
			pbt.Classify(func(d gen.DNALines) []string {
				if linesReadAcross(ref, d.Alert()) {
					return []string{"lines read across"}
				}
				return []string{"lines apart"}
			}),
			pbt.Cover("lines read across", 5),
			pbt.Cover("lines apart", 30),
			pbt.Found(`"http 1.5" kept 1.5 as an HTTP status code: any three-byte number after a status keyword or before a reason phrase was one, so "http 500 errors: 2.3%" kept 2.3 (fixed: a status code is three digits)`,
				gen.DNALines{Title: []int{14, 4, 7}, Text: []int{}, Summary: []int{0}, Description: []int{}, Alertname: []int{0}, Code: []int{0}, Instance: []int{0}, Port: []int{}}),
		),
		pbt.ForAll("P42_redact_prefilter_equals_every_pattern",
			"Secret redaction's literal prefilters change nothing: Redact (each pattern tried only where its literals are present) returns exactly what trying every pattern in order over the whole text returns, and RedactField names the same label names secret as the full pattern, whatever the case, the near misses and the non-ASCII letters that fold to ASCII ones, and it is idempotent.",
			"SecretTextGen", gen.SecretTextGen(), func(t gen.SecretText) error {
				s := t.String()
				got, want := routing.Redact(s), routing.RedactEvery(s)
				if got != want {
					return fmt.Errorf("Redact(%q) = %q, every pattern gives %q", s, got, want)
				}
				if again := routing.Redact(got); again != got {
					return fmt.Errorf("Redact is not idempotent on %q: %q then %q", s, got, again)
				}
				// The text as a label's name, with a value.
				if got, want := routing.RedactField(s, "v4lue"), routing.RedactFieldEvery(s, "v4lue"); got != want {
					return fmt.Errorf("RedactField(%q, value) = %q, without the prefilters %q", s, got, want)
				}
				return nil
			},
			pbt.Classify(func(t gen.SecretText) []string {
				if s := t.String(); routing.RedactEvery(s) != s {
					return []string{"redacted"}
				}
				return []string{"unchanged"}
			}),
			pbt.Pin("a key=value secret with no ':' in the text", gen.SecretText{Pieces: []int{20, 5, 40}}),
			pbt.Cover("redacted", 30),
			pbt.Cover("unchanged", 5),
			pbt.Found(`"authorization: :" was not redacted idempotently: the replacement added a space before the marker on every pass (fixed: the scheme keeps its own white space)`,
				gen.SecretText{Pieces: []int{46, 4}}),
			pbt.Found(`"password: 'Tr0ub4dor&3':" was not redacted idempotently: the second pass took the marker and the colon after the quoted value for a new value (fixed: a quoted value takes what sticks to its closing quote)`,
				gen.SecretText{Pieces: []int{20, 6, 43, 4}}),
		),
	}
}

// linesReadAcross reports whether the reference normalizes a's joined text
// or fields otherwise than line by line: a number pass decision reads across
// a line break.
func linesReadAcross(ref *refExtractor, a openrecall.Alert) bool {
	_, text, fields := ref.inputs(a)
	var lines []string
	for _, p := range []string{a.Text, a.Annotations["summary"], a.Annotations["description"]} {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(lines, p) {
			lines = append(lines, p)
		}
	}
	var apart, values []string
	for _, l := range lines {
		apart = append(apart, ref.norm.normalize(l))
	}
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			values = append(values, ref.norm.normalize(m[k])+"\n")
		}
	}
	return text != strings.Join(apart, "\n") || fields != strings.Join(values, "")
}

// newDNAPair returns the fast extractor over the embedded rules and the
// reference interpreter over the same rules file, read from disk; the
// reference is given the product's title template (see reference_test.go).
func newDNAPair() (*fingerprint.Extractor, *refExtractor) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		panic(err)
	}
	ref, err := newRefExtractor(fingerprint.Template)
	if err != nil {
		panic(err)
	}
	return ex, ref
}

// TestReferenceSharesOnlyData keeps the reference interpreter independent of
// the code it checks: reference_test.go imports only the standard library,
// the root package (the domain types) and the YAML parser (to read the
// rules file), never a fingerprint package, so that the two cannot share a
// bug; it reads the rules and the ATT&CK table as data.
func TestReferenceSharesOnlyData(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "reference_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"github.com/openrecall/openrecall": true, "go.yaml.in/yaml/v3": true}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		if std := !strings.Contains(strings.Split(path, "/")[0], "."); !std && !allowed[path] {
			t.Errorf("reference_test.go imports %s: the reference may share only the rules data, the ATT&CK table data and the root domain types", path)
		}
	}
	if len(f.Imports) == 0 {
		t.Fatal("reference_test.go has no imports: the check reads the wrong file")
	}
}

// sameDNA checks the fast extractor against the reference on one alert:
// Normalize, Name of every label value, the service and the environment, the normalized title, text and fields the patterns read,
// Identify, Extract twice (the second may come from the cache) and Explain.
func sameDNA(ex *fingerprint.Extractor, ref *refExtractor, a openrecall.Alert) error {
	for _, s := range []string{a.Title, a.Text, a.Annotations["summary"], a.Annotations["description"]} {
		if got, want := ex.Normalize(s), ref.norm.normalize(s); got != want {
			return fmt.Errorf("Normalize(%q) = %q, the reference %q", s, got, want)
		}
	}
	for _, v := range append(slices.Collect(maps.Values(a.Labels)), a.Service, a.Environment) {
		if got, want := ex.Name(v), ref.norm.name(v); got != want {
			return fmt.Errorf("Name(%q) = %q, the reference %q", v, got, want)
		}
	}
	title, text, fields := ex.Normalized(a)
	rTitle, rText, rFields := ref.inputs(a)
	for _, c := range []struct{ what, got, want string }{{"title", title, rTitle}, {"text", text, rText}, {"fields", fields, rFields}} {
		if c.got != c.want {
			return fmt.Errorf("the normalized %s is %q, the reference's %q, for text %q, annotations %q, labels %q", c.what, c.got, c.want, a.Text, a.Annotations, a.Labels)
		}
	}
	if got, want := ex.Identify(a), ref.identify(a); got != want {
		return fmt.Errorf("Identify gave %+v, the reference %+v, for labels %q, annotations %q, title %q", got, want, a.Labels, a.Annotations, a.Title)
	}
	want := ref.extract(a)
	for i, how := range []string{"Extract", "Extract again (cached)", "Explain"} {
		var got openrecall.Fingerprint
		if i < 2 {
			got = ex.Extract(a)
		} else {
			got, _ = ex.Explain(a)
		}
		if got != want {
			return fmt.Errorf("%s gave %s, the reference %s, for title %q, text %q, annotations %q, labels %q, service %q, environment %q",
				how, got, want, a.Title, a.Text, a.Annotations, a.Labels, a.Service, a.Environment)
		}
	}
	return nil
}

// TestFastExtractorMatchesReference runs the equivalence of P35 over the real
// queues: the bundled example queue, the generated eval corpus and the
// community rule corpus rendered as Alertmanager alerts (two firings of every rule:
// as rendered, and with a service label and an overridden severity).
func TestFastExtractorMatchesReference(t *testing.T) {
	ex, ref := newDNAPair()
	check := func(name string, alerts []openrecall.Alert) {
		t.Helper()
		distinct := map[openrecall.Fingerprint]bool{}
		for i, a := range alerts {
			if err := sameDNA(ex, ref, a); err != nil {
				t.Fatalf("%s: alert %d: %v", name, i+1, err)
			}
			distinct[ref.extract(a)] = true
		}
		if len(alerts) == 0 || len(distinct) < 2 {
			t.Fatalf("%s: %d alerts, %d distinct fingerprints: the comparison proves nothing", name, len(alerts), len(distinct))
		}
		t.Logf("%s: %d alerts, %d distinct fingerprints, all equal", name, len(alerts), len(distinct))
	}
	check("examples/queue.jsonl", readAlerts(t, examples.Queue()))
	c, err := eval.Generate(20260101, 800)
	if err != nil {
		t.Fatal(err)
	}
	check("eval corpus (seed 20260101, 800)", readAlerts(t, c.Alerts))

	rules, err := rulecorpus.LoadNear(".")
	if errors.Is(err, rulecorpus.ErrAbsent) {
		testenv.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var alerts []openrecall.Alert
	for i, r := range rules {
		for _, f := range []rulecorpus.Firing{{N: i}, {N: i + 1000, Service: r.Exporter, Severity: "warning"}} {
			body, err := rulecorpus.Webhook(rulecorpus.Alert(r, f))
			if err != nil {
				t.Fatal(err)
			}
			alerts = append(alerts, readAlerts(t, body)...)
		}
	}
	check("rule corpus", alerts)
}

// readAlerts reads every alert of a queue through intake.
func readAlerts(t *testing.T, queue []byte) []openrecall.Alert {
	t.Helper()
	rd := intake.NewReader(bytes.NewReader(queue), intake.Options{})
	var out []openrecall.Alert
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Err == nil {
			out = append(out, rec.Alert)
		}
	}
}
