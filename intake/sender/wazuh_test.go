package sender

import (
	"testing"
	"time"
)

func TestWazuhTimestampAndLevels(t *testing.T) {
	// Wazuh writes its zone without a colon; a level may arrive as text.
	v, _ := Parse([]byte(`{"timestamp":"2024-03-01T10:00:00.123+0000","rule":{"id":"5716","level":"5","description":"sshd: authentication failed.","groups":"sshd"},"agent":{"id":"001","name":"web-01"},"location":"/var/log/auth.log","id":"1.2","data":{"srcuser":["x"],"dstuser":"root"}}`))
	s := mapped("wazuh")
	if !s.Match(v) {
		t.Fatal("not recognised")
	}
	events, err := s.Map(v)
	if err != nil || len(events) != 1 {
		t.Fatalf("Map = %v, %v", events, err)
	}
	e := events[0]
	if want := time.Date(2024, 3, 1, 10, 0, 0, 123e6, time.UTC); !e.Timestamp.Equal(want) {
		t.Errorf("timestamp %v, want %v", e.Timestamp, want)
	}
	if e.Rule != "5716" || e.Host != "web-01" || e.Service == "web-01" || e.Entities["user"] != "" || e.Entities["target_user"] != "root" {
		t.Errorf("rule %q host %q service %q entities %v", e.Rule, e.Host, e.Service, e.Entities)
	}
	// An alert without an agent is not Wazuh's (the product's own object
	// has a rule too, but no agent).
	other, _ := Parse([]byte(`{"rule":{"id":"1","level":3},"title":"x"}`))
	if s.Match(other) {
		t.Error("matched an object without an agent")
	}
}

// TestWazuhLevelsByRulesClassification pins every level of Wazuh's own
// "Rules classification" table (Wazuh documentation, levels 0–15, and 16
// which the rules accept): the table says what each level means, and the
// severity follows it — 10 (multiple user generated errors: "may indicate an
// attack") and 11 (integrity checking warning: "may indicate a successful
// attack") are high, 14 (high importance security event: "indicates an
// attack") is critical.
func TestWazuhLevelsByRulesClassification(t *testing.T) {
	want := map[string]string{
		"0": "info", "1": "info", "2": "info",
		"3": "low", "4": "low", "5": "low", "6": "low",
		"7": "medium", "8": "medium", "9": "medium",
		"10": "high", "11": "high", "12": "high", "13": "high",
		"14": "critical", "15": "critical", "16": "critical",
		"10.0": "high", "-1": "unknown", "x": "unknown", "": "unknown",
	}
	for raw, w := range want {
		if got := string(mapped("wazuh").Severity(raw)); got != w {
			t.Errorf("level %q = %s, want %s", raw, got, w)
		}
	}
}
