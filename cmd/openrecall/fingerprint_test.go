package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// fingerprintLines runs `fingerprint -o jsonl` on stdin and decodes its lines.
func fingerprintLines(t *testing.T, stdin string, args ...string) []fingerprintLine {
	t.Helper()
	r := runCLI(t, stdin, append([]string{"fingerprint", "-o", "jsonl"}, append(args, "-")...)...)
	if r.code != exitOK {
		t.Fatalf("fingerprint: exit %d\n%s", r.code, r.stderr)
	}
	var out []fingerprintLine
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var l fingerprintLine
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// TestFingerprintIdentityAcrossFormats: the same alert sent as an
// Alertmanager webhook, as generic JSON and as a PagerDuty event whose
// custom_details carry the labels gets one identity.
func TestFingerprintIdentityAcrossFormats(t *testing.T) {
	webhook := `{"version":"4","status":"firing","receiver":"r","groupLabels":{},"commonLabels":{},"commonAnnotations":{},"externalURL":"","groupKey":"k","alerts":[` +
		`{"status":"firing","labels":{"alertname":"MysqlDown","job":"mysqld","instance":"db-1:9104","severity":"critical"},"annotations":{"summary":"MySQL down (instance db-1:9104)"},"startsAt":"2026-11-30T03:00:00Z","fingerprint":"f1"}]}`
	generic := `{"title":"MySQL down (instance db-2:9104)","labels":{"alertname":"MysqlDown","job":"mysqld","instance":"db-2:9104"},"severity":"critical"}`
	pagerduty := `{"event_action":"trigger","dedup_key":"k","payload":{"summary":"MySQL down","source":"db-3.example","severity":"critical","component":"mysqld","custom_details":{"alertname":"MysqlDown"}}}`
	want := openrecall.Identity{Rule: "MysqlDown", Service: "mysqld"}
	for name, in := range map[string]string{"alertmanager": webhook, "generic": generic, "pagerduty": pagerduty} {
		ls := fingerprintLines(t, in+"\n")
		if len(ls) != 1 || ls[0].Identity == nil || *ls[0].Identity != want {
			t.Errorf("%s: lines %+v, want identity %v", name, ls, want)
		}
	}
	// Without an alertname, the summary template is the rule: two firings on
	// other hosts with other values share it.
	a := fingerprintLines(t, `{"title":"Disk 91% full on db-7","service":"orders"}`+"\n"+`{"title":"Disk 97% full on db-2","service":"Orders"}`+"\n")
	if len(a) != 2 || *a[0].Identity != *a[1].Identity || a[0].Identity.Rule != "disk * full on *" {
		t.Errorf("template identities: %+v / %+v", a[0].Identity, a[1].Identity)
	}
}

func TestFingerprintTableAndExplainShowIdentity(t *testing.T) {
	in := `{"title":"t","labels":{"alertname":"KubePodCrashLooping","job":"kube-state-metrics","namespace":"shop","pod":"web-7d9f8b6c5-x2x9z"}}` + "\n" + `{"title":"12345"}` + "\n"
	r := runCLI(t, in, "fingerprint", "-")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "KubePodCrashLooping @ kube-state-metrics/shop/web") || !strings.Contains(lines[0], "error_class=crashloopbackoff") {
		t.Errorf("table:\n%s", r.stdout)
	}
	if f := strings.Fields(lines[1]); len(f) < 6 || f[len(f)-1] != "-" {
		t.Errorf("an alert without identity shows %q, want the column \"-\"", lines[1])
	}
	r = runCLI(t, in, "fingerprint", "--explain", "-")
	for _, want := range []string{
		"rule               = KubePodCrashLooping  from label:alertname (identity precedence)",
		"service            = kube-state-metrics   from label:job (identity precedence)",
		"from label:namespace, label:pod (identity kubernetes_workload)",
		"error_class        = crashloopbackoff",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--explain lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestFingerprintRulesFileIdentity(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("identity:\n  - name: shop\n    rules: [ShopDown]\n    labels: [region]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls := fingerprintLines(t, `{"title":"t","labels":{"alertname":"ShopDown","job":"web","region":"eu"}}`+"\n", "--rules", good)
	if ls[0].Identity.Service != "web/eu" {
		t.Errorf("identity with --rules: %+v", ls[0].Identity)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("identity:\n  - name: shop\n    rules: [ShopDown]\n    labels: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "{\"title\":\"t\"}\n", "fingerprint", "--rules", bad, "-")
	if r.code == exitOK || !strings.Contains(r.stderr, "bad.yaml:4") || !strings.Contains(r.stderr, `identity: rule "shop": labels`) {
		t.Errorf("bad identity rules: exit %d\n%s", r.code, r.stderr)
	}
}
