package detectcorpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

func load(t *testing.T) []Rule {
	t.Helper()
	dir, err := Find(".")
	if errors.Is(err, ErrAbsent) {
		testenv.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rules, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func TestCorpusCounts(t *testing.T) {
	rules := load(t)
	count := map[string]int{}
	tagged := map[string]int{}
	bySource := map[string]int{}
	for _, r := range rules {
		count[r.Source]++
		if r.HasATTACK() {
			tagged[r.Source]++
		}
		ls := r.LogSource
		bySource[r.Source+" "+strings.Trim(ls.Product+"/"+ls.Service+"/"+ls.Category, "/")]++
		if r.Source == "sigma" && r.Author == "" {
			t.Errorf("sigma rule %s has no author (DRL 1.1 requires it)", r.ID)
		}
		if r.Source == "falco" && r.Output == "" {
			t.Errorf("falco rule %q has no output", r.ID)
		}
		if r.Repo == "" || r.Path == "" {
			t.Errorf("rule %s has no origin", r.Key())
		}
	}
	if count["falco"] != 238 || count["sigma"] != 459 {
		t.Errorf("counts = %v, want 238 falco and 459 sigma", count)
	}
	if tagged["falco"] != 109 || tagged["sigma"] != 454 {
		t.Errorf("rules with ATT&CK tags = %v, want 109 falco and 454 sigma", tagged)
	}
	t.Logf("corpus: %d rules (falco %d, %d with ATT&CK tags; sigma %d, %d with ATT&CK tags)",
		len(rules), count["falco"], tagged["falco"], count["sigma"], tagged["sigma"])
	keys := make([]string, 0, len(bySource))
	for k := range bySource {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  %-50s %3d", k, bySource[k])
	}
}

func TestHasATTACK(t *testing.T) {
	tests := []struct {
		tags []string
		want bool
	}{
		{[]string{"T1611"}, true},
		{[]string{"container", "mitre_privilege_escalation"}, true},
		{[]string{"attack.t1059.001"}, true},
		{[]string{"attack.command-and-control"}, true},
		{[]string{"attack.command_and_control"}, true},
		{[]string{"attack.s0002", "attack.g0016", "cve.2021-42278", "detection.emerging-threats"}, false},
		{[]string{"mitre_data_destruction", "k8s", "aws"}, false},
		{[]string{"GCP", "VM", "TA0005-defense-evasion", "T1562-impair-defenses"}, true},
		{[]string{"T1498-DOS"}, true},
		{[]string{"attack.stealth"}, true},
		{[]string{"attack.defense-impairment"}, true},
		{[]string{"TA9999", "T12", "impact", "data-exfiltration"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := (Rule{Tags: tt.tags}).HasATTACK(); got != tt.want {
			t.Errorf("HasATTACK(%q) = %v, want %v", tt.tags, got, tt.want)
		}
	}
}

func TestRenderEveryRuleEveryForm(t *testing.T) {
	rules := load(t)
	total := 0
	for _, form := range Forms() {
		firings := Render(rules, form, DefaultFirings, 42)
		if len(firings) != len(rules)*DefaultFirings {
			t.Fatalf("%s: %d firings, want %d", form, len(firings), len(rules)*DefaultFirings)
		}
		for i, f := range firings {
			r := rules[i/DefaultFirings]
			if f.Key != r.Key() || f.ATTACK != r.HasATTACK() || f.Form != form || f.N != i%DefaultFirings {
				t.Fatalf("%s firing %d: ground truth %q %v, want %q %v", form, i, f.Key, f.ATTACK, r.Key(), r.HasATTACK())
			}
			var doc map[string]any
			if err := json.Unmarshal(f.Payload, &doc); err != nil {
				t.Fatalf("%s firing of %s: invalid JSON: %v", form, f.Key, err)
			}
			checkShape(t, form, r, doc)
			if f.Host == "" || f.User == "" || f.Time.IsZero() {
				t.Fatalf("%s firing of %s: no host, user or time", form, f.Key)
			}
			total++
		}
	}
	t.Logf("rendered %d payloads (%d rules × %d firings × %d forms)", total, len(rules), DefaultFirings, len(Forms()))
}

// checkShape checks the fields each sender's payload is known to carry.
func checkShape(t *testing.T, form Form, r Rule, doc map[string]any) {
	t.Helper()
	fail := func(what string) { t.Fatalf("%s payload of %s: %s", form, r.Key(), what) }
	switch form {
	case Falcosidekick:
		for _, k := range []string{"uuid", "output", "priority", "rule", "time", "output_fields", "source", "hostname"} {
			if _, ok := doc[k]; !ok {
				fail("no " + k)
			}
		}
		if r.Source == "falco" {
			if doc["rule"] != r.ID {
				fail("rule is not the Falco rule name")
			}
			if strings.Contains(doc["output"].(string), "%") && !strings.Contains(r.Output, "%%") && placeholder.MatchString(doc["output"].(string)) {
				fail("output keeps a placeholder: " + doc["output"].(string))
			}
		} else if doc["output_fields"].(map[string]any)["rule.author"] != r.Author {
			fail("sigma firing without its author")
		}
	case Elastic:
		alerts, _ := doc["alerts"].([]any)
		if len(alerts) != 1 {
			fail("not one alert")
		}
		a := alerts[0].(map[string]any)
		for _, k := range []string{"kibana.alert.rule.name", "kibana.alert.rule.rule_id", "kibana.alert.severity", "kibana.alert.risk_score", "kibana.alert.rule.threat", "kibana.alert.reason", "host", "user", "@timestamp"} {
			if _, ok := a[k]; !ok {
				fail("no " + k)
			}
		}
		if a["kibana.alert.rule.name"] != r.Title {
			fail("rule name is not the title")
		}
		if r.Source == "sigma" && a["kibana.alert.rule.rule_id"] != r.ID {
			fail("rule_id is not the Sigma id")
		}
		if r.Author != "" && a["kibana.alert.rule.author"].([]any)[0] != r.Author {
			fail("author lost")
		}
	case Alertmanager:
		if doc["version"] != "4" || doc["status"] != "firing" {
			fail("not a version 4 firing webhook")
		}
		a := doc["alerts"].([]any)[0].(map[string]any)
		l := a["labels"].(map[string]any)
		for _, k := range []string{"source", "rule", "alertname", "eventsource", "priority", "severity", "hostname"} {
			if _, ok := l[k]; !ok {
				fail("no label " + k)
			}
		}
		if l["source"] != "falco" {
			fail("source label is not falco")
		}
		if len(r.Tags) > 0 && l["tags"] == nil {
			fail("no tags label")
		}
		an := a["annotations"].(map[string]any)
		if an["info"] == nil || an["description"] == nil || an["summary"] == nil {
			fail("no info, description or summary annotation")
		}
		for k := range l {
			if safeLabel(k) != k {
				fail("unsafe label name " + k)
			}
		}
	}
}

func TestRenderDeterministic(t *testing.T) {
	rules := load(t)[:40]
	for _, form := range Forms() {
		a, b := Render(rules, form, 3, 7), Render(rules, form, 3, 7)
		for i := range a {
			if !bytes.Equal(a[i].Payload, b[i].Payload) {
				t.Fatalf("%s: firing %d differs between two renders with one seed", form, i)
			}
		}
		c := Render(rules, form, 3, 8)
		same := 0
		for i := range a {
			if bytes.Equal(a[i].Payload, c[i].Payload) {
				same++
			}
		}
		if same == len(a) {
			t.Errorf("%s: another seed gives the same payloads", form)
		}
	}
}

func TestFiringsVary(t *testing.T) {
	rules := load(t)
	firings := Render(rules, Falcosidekick, DefaultFirings, 1)
	for i := 0; i < len(firings); i += DefaultFirings {
		hosts, payloads := map[string]bool{}, map[string]bool{}
		for _, f := range firings[i : i+DefaultFirings] {
			hosts[f.Host+f.User+f.Process] = true
			payloads[string(f.Payload)] = true
		}
		if len(payloads) != DefaultFirings {
			t.Errorf("%s: %d distinct payloads of %d firings", firings[i].Key, len(payloads), DefaultFirings)
		}
		if len(hosts) < 2 {
			t.Errorf("%s: every firing on the same host, user and process", firings[i].Key)
		}
	}
}

func TestEventSameInEveryForm(t *testing.T) {
	rules := load(t)[:30]
	a := Render(rules, Falcosidekick, 2, 3)
	for _, form := range Forms()[1:] {
		b := Render(rules, form, 2, 3)
		for i := range a {
			if a[i].Host != b[i].Host || a[i].User != b[i].User || a[i].PID != b[i].PID || !a[i].Time.Equal(b[i].Time) {
				t.Fatalf("%s firing %d observed another event than falcosidekick's", form, i)
			}
		}
	}
}

func TestFalcoOutputExpansion(t *testing.T) {
	r := Rule{Source: "falco", ID: "Terminal shell in container", Title: "Terminal shell in container", Priority: "NOTICE",
		Output:    "A shell was spawned in a container (user=%user.name process=%proc.name parent=%proc.aname[2] pid=%proc.pid image=%container.image.repository unknown=%evt.nosuchfield)",
		Tags:      []string{"container", "mitre_execution", "T1059"},
		LogSource: LogSource{Product: "falco", Service: "syscall"}}
	for _, f := range Render([]Rule{r}, Falcosidekick, 12, 5) {
		var p struct {
			Output       string         `json:"output"`
			Priority     string         `json:"priority"`
			OutputFields map[string]any `json:"output_fields"`
		}
		if err := json.Unmarshal(f.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.Priority != "Notice" || !strings.Contains(p.Output, ": Notice A shell was spawned in a container (user="+f.User+" process="+f.Process) {
			t.Errorf("output %q", p.Output)
		}
		if !strings.Contains(p.Output, "unknown=<NA>") || p.OutputFields["evt.nosuchfield"] != nil {
			t.Errorf("a field without value is not <NA>/null: %q", p.Output)
		}
		if f.ContainerID != "" {
			if !strings.Contains(p.Output, "container_id="+f.ContainerID) || p.OutputFields["container.id"] != f.ContainerID {
				t.Errorf("container firing without its container id: %q", p.Output)
			}
		} else if p.OutputFields["container.image.repository"] != nil {
			t.Errorf("host firing with an image: %v", p.OutputFields)
		}
		if pid, ok := p.OutputFields["proc.pid"].(float64); !ok || int(pid) != f.PID {
			t.Errorf("proc.pid = %v, want the number %d", p.OutputFields["proc.pid"], f.PID)
		}
	}
}

func TestAlertmanagerLabelsFollowFalcosidekick(t *testing.T) {
	r := Rule{Source: "falco", ID: "Read sensitive file untrusted", Title: "Read sensitive file untrusted", Priority: "WARNING",
		Output:    "Sensitive file opened (file=%fd.name user=%user.name uid=%user.uid)",
		Tags:      []string{"mitre_credential_access", "T1555", "host"},
		LogSource: LogSource{Product: "falco", Service: "syscall"}}
	f := Render([]Rule{r}, Alertmanager, 1, 9)[0]
	var wh struct {
		Alerts []struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
			Fingerprint string            `json:"fingerprint"`
		} `json:"alerts"`
	}
	if err := json.Unmarshal(f.Payload, &wh); err != nil {
		t.Fatal(err)
	}
	l := wh.Alerts[0].Labels
	want := map[string]string{
		"source": "falco", "rule": r.ID, "alertname": r.ID, "eventsource": "syscall", "priority": "Warning",
		"severity": "warning", "tags": "T1555,host,mitre_credential_access", "hostname": f.Host, "user_name": f.User,
	}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("label %s = %q, want %q", k, l[k], v)
		}
	}
	if _, ok := l["user_uid"]; !ok {
		t.Error("numeric output field user.uid is not a label")
	}
	if wh.Alerts[0].Annotations["summary"] != r.ID || wh.Alerts[0].Annotations["info"] != wh.Alerts[0].Annotations["description"] {
		t.Errorf("annotations %v", wh.Alerts[0].Annotations)
	}
	if wh.Alerts[0].Fingerprint != amFingerprint(l) || len(wh.Alerts[0].Fingerprint) != 16 {
		t.Errorf("fingerprint %q", wh.Alerts[0].Fingerprint)
	}
}

func TestAlertmanagerFingerprintMatchesAlertmanager(t *testing.T) {
	// Computed by a real Alertmanager (intake/testdata/alertmanager_payload.json).
	real := map[string]string{"alertname": "HighErrorRate", "env": "prod", "namespace": "shop",
		"pod": "checkout-api-7d9f8b-q8k2", "service": "checkout-api", "severity": "critical"}
	if got := amFingerprint(real); got != "c91d997d55db7a73" {
		t.Errorf("fingerprint = %s, want Alertmanager's c91d997d55db7a73", got)
	}
}

func TestElasticThreat(t *testing.T) {
	r := Rule{Source: "sigma", ID: "60fc936d-2eb0-4543-8a13-911c750a1dfc", Title: "Interactive AT Job", Level: "high", Author: "E.M. Anhaus",
		Tags:      []string{"attack.persistence", "attack.execution", "attack.privilege-escalation", "attack.t1053.002"},
		LogSource: LogSource{Product: "windows", Category: "process_creation"}}
	f := Render([]Rule{r}, Elastic, 1, 1)[0]
	var body struct {
		Alerts []map[string]json.RawMessage `json:"alerts"`
	}
	if err := json.Unmarshal(f.Payload, &body); err != nil {
		t.Fatal(err)
	}
	var threat []struct {
		Framework string `json:"framework"`
		Tactic    struct{ ID, Name string }
		Technique []struct {
			ID           string
			Subtechnique []struct{ ID string }
		}
	}
	if err := json.Unmarshal(body.Alerts[0]["kibana.alert.rule.threat"], &threat); err != nil {
		t.Fatal(err)
	}
	if len(threat) != 3 || threat[0].Tactic.ID != "TA0003" || threat[1].Tactic.Name != "Execution" || threat[2].Tactic.ID != "TA0004" {
		t.Fatalf("threat = %+v", threat)
	}
	if threat[0].Technique[0].ID != "T1053" || threat[0].Technique[0].Subtechnique[0].ID != "T1053.002" || threat[0].Framework != "MITRE ATT&CK" {
		t.Errorf("technique = %+v", threat[0].Technique)
	}
	var sev string
	var risk int
	_ = json.Unmarshal(body.Alerts[0]["kibana.alert.severity"], &sev)
	_ = json.Unmarshal(body.Alerts[0]["kibana.alert.risk_score"], &risk)
	if sev != "high" || risk != 73 {
		t.Errorf("severity %s %d, want high 73", sev, risk)
	}
}

func BenchmarkRender(b *testing.B) {
	dir, err := Find(".")
	if errors.Is(err, ErrAbsent) {
		testenv.Missing(b, err)
	}
	if err != nil {
		b.Fatal(err)
	}
	rules, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, form := range Forms() {
			_ = Render(rules, form, 1, 1)
		}
	}
}
