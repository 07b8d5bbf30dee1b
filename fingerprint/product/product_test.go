package product

import (
	"strings"
	"testing"
)

func TestDefaultMatches(t *testing.T) {
	tests := []struct {
		value, want string
	}{
		{"Splunk Enterprise Security", "Splunk Enterprise Security"},
		{"splunk-es", "Splunk Enterprise Security"},
		{"SPLUNK_ES", "Splunk Enterprise Security"},
		{"SplunkEnterpriseSecurity", "Splunk Enterprise Security"},
		{"Google SecOps", "Google Security Operations"},
		{"google-secops", "Google Security Operations"},
		{"Chronicle", "Google Security Operations"},
		{"Microsoft Sentinel", "Microsoft Sentinel"},
		{"Microsoft Sentinel (Azure)", "Microsoft Sentinel"},
		{"Defender", "Microsoft Defender"},
		{"CrowdStrike Falcon", "CrowdStrike Falcon"},
		{"sentinelone", "SentinelOne"},
		{"aws.securityhub", "AWS Security Hub"},
		{"Security Hub", "AWS Security Hub"},
		{"aws.guardduty", "Amazon GuardDuty"},
		{"QRadar", "IBM QRadar"},
		{" wazuh ", "Wazuh"},
		{"falco", "Falco"},
		{"Suricata", "Suricata"},
		{"zeek", "Zeek"},
		{"Sysdig Secure", "Sysdig Secure"},
		{"panther", "Panther"},
		{"Elastic Security", "Elastic Security"},
		{"elastic-security", "Elastic Security"},
		{"Sumo Logic Cloud SIEM", "Sumo Logic Cloud SIEM"},
		{"siem", "a SIEM"},
		{"sigma", "Sigma"},
		{"osquery", "osquery"},
		{"tetragon", "Tetragon"},
		{"auditd", "Linux audit"},
		{"ossec", "OSSEC"},
	}
	for _, tt := range tests {
		got, ok := Default().Match(tt.value)
		if !ok || got != tt.want {
			t.Errorf("Match(%q) = %q, %v; want %q", tt.value, got, ok, tt.want)
		}
	}
}

// TestOrdinaryWordsAreNoProduct: the values a source-like field of an
// ordinary alert holds, and words a "whole" spelling must not match inside
// a longer value.
func TestOrdinaryWordsAreNoProduct(t *testing.T) {
	for _, v := range []string{"prometheus", "alertmanager", "grafana", "kubernetes", "aws", "google", "microsoft", "azure", "datadog",
		"redis-sentinel", "sentinel", "chronicle-api", "panther-service", "the siem team's disk", "sigma-rules-db", "defender-of-the-realm",
		"security", "enterprise", "cloud", "elastic", "splunk", "falcon", "zabbix", "loki", "node_exporter", "", "hub", "s1"} {
		if p, ok := Default().Match(v); ok {
			t.Errorf("Match(%q) = %q, want no product", v, p)
		}
	}
}

func TestEverySpellingMatchesItself(t *testing.T) {
	for _, s := range Default().Spellings() {
		for _, v := range []string{s.Spelling, strings.ToUpper(s.Spelling), strings.ReplaceAll(s.Spelling, " ", "-"), strings.ReplaceAll(s.Spelling, " ", "_"), strings.ReplaceAll(s.Spelling, " ", "")} {
			if got, ok := Default().Match(v); !ok || got != s.Product {
				t.Errorf("Match(%q) = %q, %v; want %q", v, got, ok, s.Product)
			}
		}
		if s.Where == "" {
			t.Errorf("%q says not where it comes from", s.Spelling)
		}
	}
}

func TestWith(t *testing.T) {
	l, err := Default().With([]string{"Acme Shield"}, "rules file")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"acme-shield", "Acme Shield EU", "AcmeShield"} {
		if got, ok := l.Match(v); !ok || got != "Acme Shield" {
			t.Errorf("Match(%q) = %q, %v", v, got, ok)
		}
	}
	if _, ok := Default().Match("acme-shield"); ok {
		t.Error("With changed the default list")
	}
	if _, err := Default().With([]string{" - "}, "rules file"); err == nil {
		t.Error("a name without a letter was accepted")
	}
}

func TestSourceKey(t *testing.T) {
	for _, k := range []string{"source", "Source", "sender", "tool", "product", "vendor", "provider", "integration", "detector", "logsource",
		"logsource.product", "event.module", "observer.product", "alert_source", "sourceName", "ProductName", "detection-tool"} {
		if !SourceKey(k) {
			t.Errorf("SourceKey(%q) = false", k)
		}
	}
	for _, k := range []string{"service", "instance", "alertname", "datasource", "resource", "severity", "title", "tags", ""} {
		if SourceKey(k) {
			t.Errorf("SourceKey(%q) = true", k)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n", "A\tA\twords\n", "A\tA\tsome\tdocs\n", "A\t-\twords\tdocs\n", "A\tA\twords\t\n"} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
