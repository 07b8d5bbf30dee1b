package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strconv"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/detectcorpus"
	"github.com/openrecall/openrecall/internal/figures"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/workflow"
)

// siemCorpusEvery is the sample TestSIEMCorpus takes by default: every
// third rule of each rule set (289 of Panther's 866, 153 of Sigma's 459),
// which keeps the test well under a minute. OPENRECALL_SIEM_CORPUS_EVERY=1
// runs every rule.
const siemCorpusEvery = 3

// TestSIEMCorpus runs public detection rules that this code was not written
// against — Panther's (panther-labs/panther-analysis, whose rules declare
// ATT&CK as "TA0006:T1110" reports) and the corpus's Sigma rules — fired six
// times each by other hosts and users at other times, in the ways SOCs
// deliver a SIEM's detections (issue 32, item 6): Panther's own webhook,
// a SIEM's own JSON (tags, rule object, logsource), Alertmanager with a
// forwarder's ATT&CK labels, and Alertmanager with only a source label
// naming the product. Through the real intake, fingerprint, SQLite memory
// and workflow, per form: how many firings are recognised as attacks, carry
// the tactic the rule declares (the first in DESIGN §4's order) and its
// severity; whether one rule's firings keep one identity and two rules never
// share one; and, after five known_benign decisions on the first five
// firings, how many sixth firings memory bypasses. The test holds DESIGN
// §4's promise as issue 32's Done-when states it: every form recognises at
// least 99% and bypasses none, after five decisions memory kept as five
// (distinct firings must stay distinct alerts for the figure to mean it).
//
// One command runs it on any tree:
//
//	go test -count=1 ./workflow -run 'TestSIEMCorpus$' -v
func TestSIEMCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the SIEM corpus in -short mode (make test runs it)")
	}
	dir, err := detectcorpus.Find(".")
	if errors.Is(err, detectcorpus.ErrAbsent) {
		testenv.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	panther, err := detectcorpus.LoadPanther(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := detectcorpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sigma []detectcorpus.Rule
	for _, r := range all {
		if r.Source == "sigma" {
			sigma = append(sigma, r)
		}
	}
	if len(panther) < 800 || len(sigma) < 400 {
		t.Fatalf("%d Panther and %d Sigma rules, want the corpus's 866 and 459", len(panther), len(sigma))
	}
	every := siemCorpusEvery
	if v := os.Getenv("OPENRECALL_SIEM_CORPUS_EVERY"); v != "" {
		if every, err = strconv.Atoi(v); err != nil || every < 1 {
			t.Fatalf("OPENRECALL_SIEM_CORPUS_EVERY=%q: want a whole number of at least 1", v)
		}
	}
	for _, set := range []struct {
		name  string
		rules []detectcorpus.Rule
	}{
		{"panther", detectcorpus.Sample(panther, every)},
		{"sigma", detectcorpus.Sample(sigma, every)},
	} {
		for _, form := range detectcorpus.SIEMForms(set.name) {
			t.Run(set.name+"/"+string(form), func(t *testing.T) {
				m := measureSIEMForm(t, set.rules, form)
				figures.Report(t, "%s", m)
				if m.recognised*100 < 99*m.firings {
					t.Errorf("recognised %d of %d firings (%.1f%%), want at least 99%%; e.g. %v", m.recognised, m.firings, pct(m.recognised, m.firings), m.missed)
				}
				// Memory keeps one decision per alert id. Firings that the
				// reader gives one id (a rule's id taken for the alert's)
				// are one alert to it: the sixth firing then comes after
				// one decision, not five, and its figure measures nothing
				// — and distinct alerts have been folded into one.
				if m.kept < m.taught {
					t.Errorf("memory kept %d of %d benign decisions as distinct alerts': firings of one rule were read with one alert id, so no sixth firing came after five decisions", m.kept, m.taught)
				}
				if m.bypassed > 0 {
					t.Errorf("%d sixth firings bypassed by memory after five benign decisions, want 0; e.g. %v", m.bypassed, m.bypassedNames)
				}
			})
		}
	}
}

// siemMeasure is what TestSIEMCorpus measures on one form.
type siemMeasure struct {
	form              detectcorpus.Form
	rules, firings    int
	unparsed          int
	recognised        int
	tagged, taggedRec int // firings of rules with ATT&CK; of them, recognised
	declared, tactic  int // firings whose rule declares a tactic; of them, with that tactic
	severity          int // firings whose severity is the rule's
	stable, unnamed   int // rules whose firings share one identity; rules with no identity
	merged            int // rules that share an identity with another rule
	taught, kept      int // benign decisions taught; of them, kept by memory as decisions of distinct alerts
	sixth, bypassed   int
	cheap, vouched    int
	missed            []string
	wrongTactic       []string
	bypassedNames     []string
	mergedIdentities  []string
	unparsedExamples  []string
	wrongSeverity     []string
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func (m siemMeasure) String() string {
	return string(m.form) + ": " + strconv.Itoa(m.rules) + " rules, " + strconv.Itoa(m.firings) + " firings" +
		" (" + strconv.Itoa(m.unparsed) + " not read)" +
		"; recognised " + ratio(m.recognised, m.firings) +
		" (rules with ATT&CK " + ratio(m.taggedRec, m.tagged) + ", without " + ratio(m.recognised-m.taggedRec, m.firings-m.tagged) + ")" +
		"; tactic correct " + ratio(m.tactic, m.declared) +
		"; severity kept " + ratio(m.severity, m.firings) +
		"; identity stable " + ratio(m.stable, m.rules) + " rules (" + strconv.Itoa(m.unnamed) + " without identity)" +
		", distinct " + ratio(m.rules-m.merged, m.rules) +
		"; after 5 benign decisions (" + strconv.Itoa(m.kept) + " of " + strconv.Itoa(m.taught) + " kept as distinct alerts' decisions)" +
		", sixth firings memory vouches for " + strconv.Itoa(m.vouched) +
		", bypassed " + strconv.Itoa(m.bypassed) + " of " + strconv.Itoa(m.sixth) +
		", cheap tier " + strconv.Itoa(m.cheap)
}

func ratio(a, b int) string {
	return strconv.Itoa(a) + "/" + strconv.Itoa(b) + " (" + strconv.FormatFloat(pct(a, b), 'f', 1, 64) + "%)"
}

// measureSIEMForm renders the rules' firings in form and measures them
// through a fresh pipeline.
func measureSIEMForm(t *testing.T, rules []detectcorpus.Rule, form detectcorpus.Form) siemMeasure {
	t.Helper()
	firings := detectcorpus.RenderSIEM(rules, form, detectcorpus.DefaultFirings, 20260101)
	m := siemMeasure{form: form, rules: len(rules), firings: len(firings)}
	p := newPipeline(t)
	ids := map[string]map[openrecall.Identity]bool{}
	owners := map[openrecall.Identity]map[string]bool{}
	unnamed := map[string]bool{}
	// Recognised firings by the way the forwarder wrote ATT&CK in labels
	// (AlertmanagerATTACK): mitre_attack_tactic names, Sentinel's
	// CamelCase, tactic ids and technique URLs.
	var styleFirings, styleRecognised [3]int
	// Recognised firings by the product named in the source label
	// (AlertmanagerProduct).
	productFirings, productRecognised := map[string]int{}, map[string]int{}
	var taught []openrecall.Alert
	var sixthKeys []string
	var lines bytes.Buffer
	for _, f := range firings {
		recs, err := intake.ParseBytes(f.Payload, intake.Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			// A firing openrecall cannot read is neither recognised nor
			// bypassed: it is counted as not recognised.
			m.unparsed++
			if len(m.unparsedExamples) < 3 {
				m.unparsedExamples = append(m.unparsedExamples, f.Key)
				t.Logf("%s firing %d of %s not read: %v %+v", form, f.N, f.Key, err, recs)
			}
			if f.N == 0 && len(m.missed) < 10 {
				m.missed = append(m.missed, f.Key+" (not read)")
			}
			continue
		}
		a := recs[0].Alert
		fp := p.ex.Extract(a)
		if form == detectcorpus.AlertmanagerATTACK {
			styleFirings[detectcorpus.LabelStyle(f.Rule)]++
		}
		if form == detectcorpus.AlertmanagerProduct {
			productFirings[detectcorpus.Product(f.Rule)]++
			if fp.AttackPattern != "" {
				productRecognised[detectcorpus.Product(f.Rule)]++
			}
		}
		if f.ATTACK {
			m.tagged++
			if fp.AttackPattern != "" {
				m.taggedRec++
			}
		}
		if fp.AttackPattern != "" {
			m.recognised++
			if form == detectcorpus.AlertmanagerATTACK {
				styleRecognised[detectcorpus.LabelStyle(f.Rule)]++
			}
		} else if f.N == 0 && len(m.missed) < 10 {
			m.missed = append(m.missed, f.Key)
		}
		if want := detectcorpus.DeclaredPattern(f.Rule); want != "" {
			m.declared++
			if fp.AttackPattern == want {
				m.tactic++
			} else if f.N == 0 && len(m.wrongTactic) < 10 {
				m.wrongTactic = append(m.wrongTactic, f.Key+": "+fp.AttackPattern+" for "+want)
			}
		}
		if string(a.Severity) == detectcorpus.Severity(f.Rule) {
			m.severity++
		} else if f.N == 0 && len(m.wrongSeverity) < 5 {
			m.wrongSeverity = append(m.wrongSeverity, f.Key+": "+string(a.Severity)+" for "+detectcorpus.Severity(f.Rule))
		}
		id := p.ex.Identify(a)
		if id.IsZero() {
			unnamed[f.Key] = true
		}
		if ids[f.Key] == nil {
			ids[f.Key] = map[openrecall.Identity]bool{}
		}
		ids[f.Key][id] = true
		if owners[id] == nil {
			owners[id] = map[string]bool{}
		}
		owners[id][f.Key] = true
		// Five benign decisions on firings 1–5 of every rule; the sixth
		// goes through the workflow.
		if f.N < detectcorpus.DefaultFirings-1 {
			taught = append(taught, a)
			continue
		}
		sixthKeys = append(sixthKeys, f.Key)
		if err := json.Compact(&lines, f.Payload); err != nil {
			t.Fatal(err)
		}
		lines.WriteByte('\n')
	}
	for _, s := range ids {
		if len(s) == 1 {
			m.stable++
		}
	}
	m.unnamed = len(unnamed)
	for id, o := range owners {
		if len(o) > 1 {
			m.merged += len(o)
			if len(m.mergedIdentities) < 5 {
				m.mergedIdentities = append(m.mergedIdentities, id.String())
			}
		}
	}
	m.taught = len(taught)
	if len(taught) > 0 {
		m.kept = teach(t, p, taught)
	}
	var results []openrecall.Result
	_, err := p.workflow(t, nil, nil).AnalyzeQueue(context.Background(), workflow.Records(intake.NewReader(&lines, intake.Options{})),
		workflow.QueueOptions{Workers: 2}, func(r openrecall.Result) error {
			results = append(results, r)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(sixthKeys) {
		t.Fatalf("%d results for %d sixth firings", len(results), len(sixthKeys))
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Position.Line < results[j].Position.Line })
	m.sixth = len(results)
	for i, r := range results {
		if r.Bypassed {
			m.bypassed++
			if len(m.bypassedNames) < 10 {
				m.bypassedNames = append(m.bypassedNames, sixthKeys[i]+" ("+string(r.Alert.Severity)+")")
			}
		}
		if cheapTier(r) {
			m.cheap++
		}
		if r.Triage.ConsistentCount >= 5 && r.Triage.Decision == openrecall.DecisionKnownBenign {
			m.vouched++
		}
	}
	if form == detectcorpus.AlertmanagerATTACK {
		t.Logf("recognised by label style: mitre_attack_tactic names %s, CamelCase tactics %s, tactic ids and technique URLs %s",
			ratio(styleRecognised[0], styleFirings[0]), ratio(styleRecognised[1], styleFirings[1]), ratio(styleRecognised[2], styleFirings[2]))
	}
	if form == detectcorpus.AlertmanagerProduct {
		var by []string
		for name, n := range productFirings {
			by = append(by, strconv.Quote(name)+" "+ratio(productRecognised[name], n))
		}
		sort.Strings(by)
		t.Logf("recognised by the product in the source label: %v", by)
	}
	if len(m.wrongTactic) > 0 {
		t.Logf("tactic not the declared one, e.g. %v", m.wrongTactic)
	}
	if len(m.wrongSeverity) > 0 {
		t.Logf("severity not the rule's, e.g. %v", m.wrongSeverity)
	}
	if m.stable < m.rules {
		var split []string
		for k, s := range ids {
			if len(s) > 1 && len(split) < 3 {
				var names []string
				for id := range s {
					names = append(names, id.String())
				}
				sort.Strings(names)
				split = append(split, k+" "+strconv.Quote(names[0])+" …")
			}
		}
		sort.Strings(split)
		t.Logf("rules whose firings have more than one identity, e.g. %v", split)
	}
	if m.merged > 0 {
		t.Logf("identities shared by several rules, e.g. %v", m.mergedIdentities)
	}
	return m
}

// teach imports a known_benign decision on each alert, as retainAll does,
// and returns how many memory created. Memory keeps one decision per alert
// id: firings that a reader gives one id (a sender's rule id taken for the
// alert's) count once, which the figures show instead of failing.
func teach(t *testing.T, p *pipeline, alerts []openrecall.Alert) int {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, a := range alerts {
		if err := enc.Encode(openrecall.Incident{
			Fingerprint: p.ex.Extract(a), Identity: p.ex.Identify(a), Severity: a.Severity,
			Decision: openrecall.DecisionKnownBenign, Note: "benign, taught by the SIEM corpus test",
			SourceAlertID: a.ID, Analyst: "corpus", CreatedAt: fixedNow(),
		}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := p.store.Import(context.Background(), &buf)
	if err != nil || len(rep.Rejected) > 0 || rep.Created+rep.Existing != len(alerts) {
		t.Fatalf("teach %d decisions: %+v, %v", len(alerts), rep, err)
	}
	return rep.Created
}
