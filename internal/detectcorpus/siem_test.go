package detectcorpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

func loadPanther(t *testing.T) []Rule {
	t.Helper()
	dir, err := Find(".")
	if errors.Is(err, ErrAbsent) {
		testenv.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rules, err := LoadPanther(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// TestPantherCounts holds the figures the ATTRIBUTION states.
func TestPantherCounts(t *testing.T) {
	rules := loadPanther(t)
	reporting, reports, several, enabled := 0, 0, 0, 0
	for _, r := range rules {
		if len(r.Attack) > 0 {
			reporting++
		}
		if len(r.Attack) > 1 {
			several++
		}
		reports += len(r.Attack)
		if r.Enabled != nil && *r.Enabled {
			enabled++
		}
		if r.Repo != PantherRepo || !strings.HasPrefix(r.Path, "rules/") {
			t.Errorf("%s: repo %q path %q", r.Key(), r.Repo, r.Path)
		}
	}
	if len(rules) != 866 || reporting != 598 || reports != 885 || several != 186 || enabled != 799 {
		t.Errorf("%d rules, %d reporting ATT&CK (%d reports, %d with several), %d enabled; ATTRIBUTION says 866, 598 (885, 186), 799",
			len(rules), reporting, reports, several, enabled)
	}
}

func TestPantherReport(t *testing.T) {
	for _, c := range []struct {
		in      string
		pattern string
		tech    string
	}{
		{"TA0006:T1110", "credential_access", "T1110"},
		{"TA0003:T1098.001", "persistence", "T1098.001"},
		{"TA0010:T1567", "data_exfiltration", "T1567"},
		{"TA003:T1556", "", "T1556"}, // as Microsoft365.MFA.Disabled writes it
		{"TA0011", "command_and_control", ""},
	} {
		i, tech := pantherReport(c.in)
		got := ""
		if i >= 0 {
			got = patternOfTactic(i)
		}
		if got != c.pattern || tech != c.tech {
			t.Errorf("%q: %q %q, want %q %q", c.in, got, tech, c.pattern, c.tech)
		}
	}
}

// TestDeclaredPattern: several declared tactics give the first of DESIGN
// §4's order, not the first written; v19's stealth is defense_evasion;
// techniques alone declare no tactic.
func TestDeclaredPattern(t *testing.T) {
	for _, c := range []struct {
		r    Rule
		want string
	}{
		{Rule{Source: "panther", Attack: []string{"TA0006:T1556", "TA0003:T1556"}}, "persistence"},
		{Rule{Source: "panther", Attack: []string{"TA0007:T1078"}}, "discovery"},
		{Rule{Source: "sigma", Tags: []string{"attack.stealth", "attack.execution", "attack.t1059"}}, "execution"},
		{Rule{Source: "sigma", Tags: []string{"attack.stealth", "attack.t1036"}}, "defense_evasion"},
		{Rule{Source: "sigma", Tags: []string{"attack.t1059.001"}}, ""},
		{Rule{Source: "panther", Attack: []string{"TA003:T1556"}}, ""},
	} {
		if got := DeclaredPattern(c.r); got != c.want {
			t.Errorf("%v %v: %q, want %q", c.r.Attack, c.r.Tags, got, c.want)
		}
	}
}

func TestSeverity(t *testing.T) {
	for _, c := range []struct {
		r    Rule
		want string
	}{
		{Rule{Source: "panther", Severity: "Info"}, "info"},
		{Rule{Source: "panther", Severity: "Critical"}, "critical"},
		{Rule{Source: "sigma", Level: "informational"}, "info"},
		{Rule{Source: "sigma", Level: "high"}, "high"},
		{Rule{Source: "falco", Priority: "WARNING"}, "medium"},
	} {
		if got := Severity(c.r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

// TestRenderSIEMShapes checks each SIEM form's payload for what it must
// carry and what it must not: Panther's webhook has no source field and no
// ATT&CK report; the SIEM JSON has the tags, a rule with a level and
// source "siem"; the forwarder's labels carry ATT&CK; the product form's
// labels carry none, only the product's name.
func TestRenderSIEMShapes(t *testing.T) {
	dir, err := Find(".")
	if err != nil {
		testenv.Missing(t, err)
	}
	panther := loadPanther(t)
	all, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sigma []Rule
	for _, r := range all {
		if r.Source == "sigma" {
			sigma = append(sigma, r)
		}
	}
	rules := append(Sample(panther, 7), Sample(sigma, 7)...)
	for _, r := range rules {
		for _, form := range SIEMForms(r.Source) {
			f := RenderSIEM([]Rule{r}, form, 1, 5)[0]
			var doc map[string]any
			if err := json.Unmarshal(f.Payload, &doc); err != nil {
				t.Fatal(err)
			}
			s := string(f.Payload)
			switch form {
			case PantherWebhook:
				if doc["id"] != r.ID || doc["name"] != r.Title || doc["type"] != "RULE" || doc["source"] != nil || strings.Contains(s, "TA0") {
					t.Errorf("%s %s: %s", r.Key(), form, s)
				}
			case SIEMJSON:
				rule, _ := doc["rule"].(map[string]any)
				if doc["source"] != "siem" || rule["level"] != severityWord(r) || doc["title"] != r.Title || doc["logsource"] == nil {
					t.Errorf("%s %s: %s", r.Key(), form, s)
				}
				tags, _ := doc["tags"].([]any)
				if tacs, techs := declared(r); len(tags) < len(tacs)+len(techs) {
					t.Errorf("%s %s: tags %v for tactics %v techniques %v", r.Key(), form, tags, tacs, techs)
				}
			case AlertmanagerATTACK, AlertmanagerProduct:
				alerts, _ := doc["alerts"].([]any)
				labels, _ := alerts[0].(map[string]any)["labels"].(map[string]any)
				attack := false
				for k := range labels {
					if strings.Contains(k, "mitre") || strings.Contains(k, "tactic") || strings.Contains(k, "technique") {
						attack = true
					}
				}
				if form == AlertmanagerProduct && (attack || labels["source"] != Product(r)) {
					t.Errorf("%s %s: labels %v", r.Key(), form, labels)
				}
				if tacs, techs := declared(r); form == AlertmanagerATTACK && (attack != (len(tacs)+len(techs) > 0) || labels["source"] != r.Source) {
					t.Errorf("%s %s: labels %v", r.Key(), form, labels)
				}
				if labels["alertname"] != r.Title || labels["severity"] != severityWord(r) {
					t.Errorf("%s %s: labels %v", r.Key(), form, labels)
				}
			}
			if r.Source == "sigma" && form != PantherWebhook && !strings.Contains(s, jsonString(r.Author)) {
				t.Errorf("%s %s: the Sigma rule's author is not in its firing", r.Key(), form)
			}
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestRenderSIEMFiringsDifferOnlyInHostUserTime: two firings of a rule
// differ, and only in the fields that hold host, user, time and the
// alert's id (and Alertmanager's fingerprint, a hash of the labels).
func TestRenderSIEMFiringsDifferOnlyInHostUserTime(t *testing.T) {
	varying := map[Form][]string{
		PantherWebhook:      {"createdAt", "link", "alertId", "alertContext.user", "alertContext.host"},
		SIEMJSON:            {"id", "timestamp", "host.name", "user.name"},
		AlertmanagerATTACK:  {"alerts.0.labels.host", "alerts.0.labels.user", "alerts.0.startsAt", "alerts.0.fingerprint", "commonLabels.host", "commonLabels.user"},
		AlertmanagerProduct: {"alerts.0.labels.host", "alerts.0.labels.user", "alerts.0.startsAt", "alerts.0.fingerprint", "commonLabels.host", "commonLabels.user"},
	}
	rules := Sample(loadPanther(t), 11)
	for _, form := range SIEMForms("panther") {
		a, b := RenderSIEM(rules, form, 2, 9), RenderSIEM(rules, form, 2, 9)
		for i := 0; i < len(a); i += 2 {
			if !bytes.Equal(a[i].Payload, b[i].Payload) {
				t.Fatalf("%s: two renders with one seed differ", form)
			}
			x, y := leaves(t, a[i].Payload), leaves(t, a[i+1].Payload)
			var differ []string
			for k, v := range x {
				if y[k] != v {
					differ = append(differ, k)
				}
			}
			if len(x) != len(y) {
				t.Errorf("%s %s: firings with other fields", form, a[i].Key)
			}
			if len(differ) == 0 {
				t.Errorf("%s %s: two firings with one payload", form, a[i].Key)
			}
			for _, k := range differ {
				if !slices.Contains(varying[form], k) {
					t.Errorf("%s %s: firings differ in %s", form, a[i].Key, k)
				}
			}
		}
	}
}

// leaves flattens a JSON document to its leaves' paths and values.
func leaves(t *testing.T, payload []byte) map[string]string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(payload, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
		case []any:
			for i, x := range v {
				walk(strings.TrimPrefix(prefix+"."+strconv.Itoa(i), "."), x)
			}
		default:
			b, _ := json.Marshal(v)
			out[prefix] = string(b)
		}
	}
	walk("", doc)
	return out
}
