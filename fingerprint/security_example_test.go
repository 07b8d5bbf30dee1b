package fingerprint_test

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
)

// attackOfPayload reads a payload through intake and prints, per alert,
// its attack_pattern and the evidence that gave it.
func attackOfPayload(e *fingerprint.Extractor, payload string) {
	recs, err := intake.ParseBytes([]byte(payload), intake.Options{})
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		if r.Err != nil {
			panic(r.Err)
		}
		fp, evidence := e.Explain(r.Alert)
		for _, ev := range evidence {
			if ev.Field == openrecall.FieldAttackPattern {
				fmt.Printf("%s: %s (%s)\n", r.Alert.Title, fp.AttackPattern, ev.Rule)
			}
		}
	}
}

// A SIEM's own JSON alert for a Sigma rule: its tags array, rule object and
// logsource are read though no sender names them. The description's words
// ("exfiltrate") do not outrank the tactic the tags declare.
func ExampleExtractor_Explain_sigmaAlertOfASIEM() {
	e, err := fingerprint.New(nil)
	if err != nil {
		panic(err)
	}
	attackOfPayload(e, `{"title": "Suspicious Encoded PowerShell Command Line",
 "description": "Detects an encoded PowerShell command, often used to download and exfiltrate data",
 "source": "siem", "level": "high",
 "rule": {"id": "ca2092a1-c273-4878-9b4b-0d60115bf5ea", "level": "high", "author": "Florian Roth"},
 "tags": ["attack.execution", "attack.t1059.001"],
 "logsource": {"category": "process_creation", "product": "windows"},
 "host": "ws-0231"}`)
	// Output:
	// Suspicious Encoded PowerShell Command Line: execution (att&ck T1059.001)
}

// Alertmanager alerts written the ways forwarders write ATT&CK: a list of
// tactics in one label, Sentinel's CamelCase, a technique only as an
// ATT&CK URL, and a source label naming a SIEM in full.
func ExampleExtractor_Explain_alertmanagerLabels() {
	e, err := fingerprint.New(nil)
	if err != nil {
		panic(err)
	}
	attackOfPayload(e, `{"version": "4", "status": "firing", "receiver": "soc", "groupLabels": {}, "alerts": [
 {"status": "firing", "labels": {"alertname": "AuditLogCleared", "severity": "critical", "mitre_attack_tactic": "Defense Evasion, Persistence"},
  "annotations": {"summary": "Audit log cleared on dc-02", "description": "the log was cleared to exfiltrate quietly"}},
 {"status": "firing", "labels": {"alertname": "BruteForceAgainstAzurePortal", "severity": "high", "tactics": "CredentialAccess", "source": "Microsoft Sentinel"},
  "annotations": {"summary": "Brute force against Azure Portal"}},
 {"status": "firing", "labels": {"alertname": "SshKeyAdded", "severity": "high"},
  "annotations": {"summary": "SSH authorized key added for root", "runbook_url": "https://attack.mitre.org/techniques/T1098/004/"}},
 {"status": "firing", "labels": {"alertname": "RareParentProcess", "severity": "critical", "source": "Splunk Enterprise Security"},
  "annotations": {"summary": "Rare parent process for svchost"}},
 {"status": "firing", "labels": {"alertname": "GCP Service Account Key Created", "severity": "critical", "source": "Google SecOps"},
  "annotations": {"summary": "Service account key created"}},
 {"status": "firing", "labels": {"alertname": "UnusualLogin", "severity": "critical", "product": "Chronicle"},
  "annotations": {"summary": "Unusual login"}},
 {"status": "firing", "labels": {"alertname": "DiskFull", "severity": "critical", "source": "prometheus"},
  "annotations": {"summary": "Disk full on db-1"}}]}`)
	// Output:
	// Audit log cleared on dc-02: persistence (att&ck)
	// Brute force against Azure Portal: credential_access (att&ck)
	// SSH authorized key added for root: persistence (att&ck T1098.004)
	// Rare parent process for svchost: security_detection (security product Splunk Enterprise Security (source))
	// Service account key created: security_detection (security product Google Security Operations (source))
	// Unusual login: security_detection (security product Google Security Operations (product))
}

// A team names its own detection tool in the rules file.
func ExampleExtractor_Explain_securitySources() {
	defaults, err := fingerprint.DefaultRules()
	if err != nil {
		panic(err)
	}
	team, err := fingerprint.LoadRules(strings.NewReader("security_sources: [Acme Shield]\n"), "team.yaml")
	if err != nil {
		panic(err)
	}
	e, err := fingerprint.New(defaults.Merge(team))
	if err != nil {
		panic(err)
	}
	fp := e.Extract(openrecall.Alert{Title: "Unmapped rule 4711 fired", Severity: openrecall.SeverityCritical,
		Labels: map[string]string{"alertname": "Rule4711", "tool": "acme-shield"}})
	fmt.Println(fp.AttackPattern)
	// Output:
	// security_detection
}
