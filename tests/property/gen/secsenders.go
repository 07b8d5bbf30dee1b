package gen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall/internal/detectcorpus"
)

// VendorScale is a security sender's documented severity scale in the
// vendor's own order, least severe first, written here from the vendor's
// documentation (not from the adapter): the reference of P110.
type VendorScale struct {
	Sender string
	Values []string
}

// VendorScales returns the scales of the security senders whose severity
// the vendor documents as a scale.
func VendorScales() []VendorScale {
	return []VendorScale{
		{"wazuh", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"}},
		{"securityhub", []string{"INFORMATIONAL", "LOW", "MEDIUM", "HIGH", "CRITICAL"}},
		{"securityhub", []string{"0", "1", "10", "39", "40", "55", "69", "70", "80", "89", "90", "100"}},
		{"sentinel", []string{"Informational", "Low", "Medium", "High"}},
		{"defender", []string{"informational", "low", "medium", "high"}},
		{"crowdstrike", []string{"Informational", "Low", "Medium", "High", "Critical"}},
		{"crowdstrike", []string{"1", "2", "3", "4", "5"}},
		{"sentinelone", []string{"suspicious", "malicious"}},
		{"datadog-signal", []string{"info", "low", "medium", "high", "critical"}},
		{"secops", []string{"Informational", "Low", "Medium", "High", "Critical"}},
	}
}

// ScalePair is two values of one vendor scale (P110), each an index into
// it, in any order.
type ScalePair struct {
	Scale, A, B int
}

// Of returns the scale and the two values' positions in it.
func (p ScalePair) Of() (VendorScale, int, int) {
	ss := VendorScales()
	s := ss[p.Scale%len(ss)]
	return s, p.A % len(s.Values), p.B % len(s.Values)
}

// ScalePairGen generates two values of one security sender's scale.
func ScalePairGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ScalePair{}), map[string]gopter.Gen{
		"Scale": Index(len(VendorScales()), 0),
		"A":     Index(17, 0),
		"B":     Index(17, 0),
	})
}

// ValidScalePair reports indexes outside their pools.
func ValidScalePair(p ScalePair) error {
	if err := indexesIn([]int{p.Scale}, len(VendorScales()), "scale"); err != nil {
		return err
	}
	return indexesIn([]int{p.A, p.B}, 17, "value")
}

// StatusRule says where a security sender's payload states its status: the
// objects that may hold the alert (dotted paths from the payload, numbers
// index arrays; "" the payload itself) and, in it, the first field path
// whose parent exists, with the vendor's documented closing values
// (resolved, closed, dismissed, archived) and an open one.
type StatusRule struct {
	Sender     string
	Containers []string
	Fields     []string
	Closed     []string
	Open       string
	// Reopen are the payload's other status fields and their open values,
	// set too in the open case (where their parent exists), so that the
	// open twin of a closed fixture is open.
	Reopen map[string]string
}

// StatusRules returns the status rules of the security senders whose
// payloads carry a status (CrowdStrike's stream and SecOps' detections
// carry only new detections).
func StatusRules() []StatusRule {
	return []StatusRule{
		{"securityhub", []string{"detail.findings.0", "Findings.0", ""}, []string{"Workflow.Status"}, []string{"RESOLVED", "SUPPRESSED"}, "NEW", asffOpen},
		{"securityhub", []string{"detail.findings.0", "Findings.0", ""}, []string{"RecordState"}, []string{"ARCHIVED"}, "ACTIVE", asffOpen},
		{"sentinel", []string{"object", ""}, []string{"properties.status", "Status"}, []string{"Closed", "Resolved", "Dismissed"}, "New", nil},
		{"defender", []string{"value.0", ""}, []string{"status"}, []string{"resolved"}, "new", nil},
		{"sentinelone", []string{"data.0", ""}, []string{"threatInfo.incidentStatus"}, []string{"resolved"}, "unresolved", nil},
		{"datadog-signal", []string{"data.0", "data", ""}, []string{"attributes.custom.workflow.triage.state", "attributes.attributes.workflow.triage.state"}, []string{"archived"}, "open", nil},
	}
}

// asffOpen are an ASFF finding's status fields, open.
var asffOpen = map[string]string{"Workflow.Status": "NEW", "RecordState": "ACTIVE", "Compliance.Status": "FAILED"}

// StatusCase is a fixture of a security sender with its status set to a
// closing value of the vendor's, or (Open) to an open one (P111).
type StatusCase struct {
	Rule, Fixture, Value int
	Open                 bool
}

// StatusCaseGen generates status cases.
func StatusCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(StatusCase{}), map[string]gopter.Gen{
		"Rule":    Index(len(StatusRules()), 0),
		"Fixture": Index(8, 0),
		"Value":   Index(3, 0),
		"Open":    gg.Bool(),
	})
}

// ValidStatusCase reports indexes outside their pools.
func ValidStatusCase(c StatusCase) error {
	if err := indexesIn([]int{c.Rule}, len(StatusRules()), "rule"); err != nil {
		return err
	}
	return indexesIn([]int{c.Fixture, c.Value}, 8, "fixture or value")
}

// Of returns the rule, the fixture's name, the payload with its status set
// and the value set; an error when the fixture holds no status field.
func (c StatusCase) Of() (StatusRule, string, []byte, string, error) {
	rules := StatusRules()
	r := rules[c.Rule%len(rules)]
	names := statusFixtures(r.Sender)
	if len(names) == 0 {
		return r, "", nil, "", fmt.Errorf("no fixture of %s", r.Sender)
	}
	name := names[c.Fixture%len(names)]
	raw, err := os.ReadFile(filepath.Join(senderFixtureDir(), r.Sender, name))
	if err != nil {
		return r, name, nil, "", err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return r, name, nil, "", err
	}
	value := r.Open
	if !c.Open {
		value = r.Closed[c.Value%len(r.Closed)]
	}
	if c.Open {
		for f, v := range r.Reopen {
			setStatus(doc, StatusRule{Containers: r.Containers, Fields: []string{f}}, v)
		}
	}
	if !setStatus(doc, r, value) {
		return r, name, nil, "", fmt.Errorf("%s/%s: no status field %v in %v", r.Sender, name, r.Fields, r.Containers)
	}
	out, err := json.Marshal(doc)
	return r, name, out, value, err
}

// setStatus sets the first field of r whose parent exists in the first
// container that is an object.
func setStatus(doc any, r StatusRule, value string) bool {
	for _, c := range r.Containers {
		obj, ok := walk(doc, c).(map[string]any)
		if !ok {
			continue
		}
		for _, f := range r.Fields {
			parts := strings.Split(f, ".")
			parent, ok := walk(obj, strings.Join(parts[:len(parts)-1], ".")).(map[string]any)
			if !ok {
				continue
			}
			parent[parts[len(parts)-1]] = value
			return true
		}
	}
	return false
}

// walk follows a dotted path of object keys and array indexes.
func walk(v any, path string) any {
	if path == "" {
		return v
	}
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscanf(p, "%d", &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// senderFixtureDir is intake's fixture directory, found from the test's
// working directory.
func senderFixtureDir() string {
	for _, d := range []string{"../../intake/testdata/senders", "../../../intake/testdata/senders", "intake/testdata/senders"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return "../../intake/testdata/senders"
}

// statusFixtures lists a sender's fixtures, sorted.
func statusFixtures(s string) []string {
	names, _ := filepath.Glob(filepath.Join(senderFixtureDir(), s, "*.json"))
	var out []string
	for _, n := range names {
		if b := filepath.Base(n); b != "golden.json" && b != "identity.json" {
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}

// FalcoPath is one firing of a public corpus rule (P112), delivered through
// falcosidekick's webhook and through its Alertmanager output, the latter
// as Alertmanager's webhook or (Postable) as the alerts falcosidekick
// posts to /api/v2/alerts.
type FalcoPath struct {
	Rule, Firing int
	Postable     bool
}

// FalcoPathGen generates corpus firings.
func FalcoPathGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(FalcoPath{}), map[string]gopter.Gen{
		"Rule":     Index(4096, 0),
		"Firing":   Index(6, 0),
		"Postable": gg.Bool(),
	})
}

// ValidFalcoPath reports indexes outside their pools.
func ValidFalcoPath(p FalcoPath) error {
	if err := indexesIn([]int{p.Rule}, 4096, "rule"); err != nil {
		return err
	}
	return indexesIn([]int{p.Firing}, 6, "firing")
}

// CorpusRules returns the public detection corpus's rules, nil when the
// corpus is absent.
func CorpusRules() []detectcorpus.Rule { return corpusRules() }

var corpusRules = sync.OnceValue(func() []detectcorpus.Rule {
	dir, err := detectcorpus.Find(".")
	if err != nil {
		return nil
	}
	rules, err := detectcorpus.Load(dir)
	if err != nil {
		panic(err)
	}
	return rules
})

// Of returns the rule's key and the two payloads of one event: the webhook
// falcosidekick posts and the Alertmanager delivery.
func (p FalcoPath) Of() (key string, webhook, forwarded []byte, err error) {
	rules := CorpusRules()
	if len(rules) == 0 {
		return "", nil, nil, fmt.Errorf("the detection corpus is absent")
	}
	r := rules[p.Rule%len(rules)]
	n := p.Firing % 6
	native := detectcorpus.Render([]detectcorpus.Rule{r}, detectcorpus.Falcosidekick, n+1, 32)[n]
	am := detectcorpus.Render([]detectcorpus.Rule{r}, detectcorpus.Alertmanager, n+1, 32)[n]
	forwarded = am.Payload
	if p.Postable {
		var wh struct {
			Alerts []map[string]any `json:"alerts"`
		}
		if err := json.Unmarshal(am.Payload, &wh); err != nil {
			return "", nil, nil, err
		}
		var postable []map[string]any
		for _, a := range wh.Alerts {
			postable = append(postable, map[string]any{"labels": a["labels"], "annotations": a["annotations"], "startsAt": a["startsAt"], "endsAt": a["endsAt"], "generatorURL": ""})
		}
		if forwarded, err = json.Marshal(postable); err != nil {
			return "", nil, nil, err
		}
	}
	return r.Key(), native.Payload, forwarded, nil
}
