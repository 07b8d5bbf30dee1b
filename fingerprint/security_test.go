package fingerprint

import (
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestDeclaredTacticOutranksText: a rule declaring Persistence keeps it
// whatever its description mentions — an exfiltration word of the rules
// file, or a bare technique id of an earlier tactic.
func TestDeclaredTacticOutranksText(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		a    openrecall.Alert
		want string
	}{
		{"a tactic label and a bare id of an earlier tactic in the text",
			openrecall.Alert{Title: "New service installed", Text: "often follows T1190 on exposed hosts", Labels: map[string]string{"alertname": "NewService", "tactic": "Persistence"}}, "persistence"},
		{"a tags field and the rules file's exfiltration words",
			openrecall.Alert{Title: "Cron job created", Text: "a job that may exfiltrate data to a remote host", Fields: map[string]string{"tags.0": "attack.persistence"}}, "persistence"},
		{"a bare id alone still counts",
			openrecall.Alert{Title: "Exploit attempt", Text: "matches T1190"}, "initial_access"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Extract(tt.a).AttackPattern; got != tt.want {
				t.Errorf("attack_pattern %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDetectionShapes: an alert shaped as a detection is at least
// security_detection, whoever sent it; its twin without the shape is not.
func TestDetectionShapes(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	base := openrecall.Alert{Title: "Rule 4711 fired", Severity: openrecall.SeverityCritical, Sender: openrecall.SenderGeneric}
	tests := []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"a Sigma logsource", map[string]string{"logsource.category": "process_creation", "logsource.product": "windows"}, SecurityDetection},
		{"an ECS threat field", map[string]string{"threat.framework": "MITRE ATT&CK"}, SecurityDetection},
		{"a rule with a level and ATT&CK tags of software only", map[string]string{"rule.level": "high", "tags.0": "attack.s0002"}, SecurityDetection},
		{"a source field naming a product", map[string]string{"event.module": "suricata"}, SecurityDetection},
		{"none", map[string]string{"rule.level": "high", "tags.0": "team.payments", "source": "prometheus"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base
			a.Fields = tt.fields
			if got := e.Extract(a).AttackPattern; got != tt.want {
				t.Errorf("attack_pattern %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSecuritySourcesRejected(t *testing.T) {
	for _, in := range []string{"security_sources: acme\n", "security_sources: [\"--\"]\n", "security_sources: [[a]]\n"} {
		_, err := LoadRules(strings.NewReader(in), "team.yaml")
		if err == nil || !strings.Contains(err.Error(), "security_sources") {
			t.Errorf("LoadRules(%q) = %v, want an error naming security_sources", in, err)
		}
	}
}
