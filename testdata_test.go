package openrecall_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestsCarryTheirData: the data files the tests read ship in the
// repository — the rule corpus with its attribution, the security
// detection corpus, the captured Alertmanager payloads — and no source,
// script or build file reads a folder beside the checkout.
func TestTestsCarryTheirData(t *testing.T) {
	for _, f := range []struct{ path, mention string }{
		{"testdata/prometheus-rules/rules.jsonl", `"alert":`},
		{"testdata/prometheus-rules/ATTRIBUTION.md", "CC BY 4.0"},
		{"testdata/security/ATTRIBUTION", "Apache License 2.0"},
		{"testdata/security/falco_rules.jsonl", `"source":"falco"`},
		{"testdata/security/panther_rules.jsonl", `"source":"panther"`},
		{"testdata/security/LICENSE-panther-analysis.txt", "Panther Labs"},
		{"intake/testdata/alertmanager_payload.json", `"version":"4"`},
		{"intake/testdata/alertmanager_payload_resolved.json", `"resolved"`},
		{"intake/testdata/senders/alertmanager/ATTRIBUTION", "Alertmanager"},
		{"server/testdata/alertmanager/alertmanager_payload.json", `"version":"4"`},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Errorf("test data missing from the repository: %v", err)
			continue
		}
		if !strings.Contains(string(b), f.mention) {
			t.Errorf("%s does not mention %q: is it the file the tests expect?", f.path, f.mention)
		}
	}
	// Spelled in pieces so that this file does not match itself.
	outside := []string{
		"shared" + "/corpus", "shared" + "/fixtures", "../" + "shared",
		`"shared", ` + `"corpus"`, `"shared", ` + `"fixtures"`,
	}
	code := func(name string) bool {
		return filepath.Ext(name) == ".go" || filepath.Ext(name) == ".sh" || name == "Makefile"
	}
	for _, path := range append(repoFiles(t, code), ".ci/run") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, o := range outside {
				if strings.Contains(line, o) {
					t.Errorf("%s:%d reads %s beside the checkout: the data belongs in testdata: %s", path, i+1, o, strings.TrimSpace(line))
				}
			}
		}
	}
}
