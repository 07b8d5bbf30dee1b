package intake

import (
	"maps"
	"testing"
)

// TestNestedStringsKeptAsFields: the members of a SIEM's own JSON alert that
// no part of the alert reads (a tags array, a rule object, a logsource)
// reach the alert as Fields, flattened by path, and a source naming a
// security product makes it a security detection; the content id does not
// change with them.
func TestNestedStringsKeptAsFields(t *testing.T) {
	body := `{"title": "Suspicious Encoded PowerShell Command Line", "description": "encoded command", "source": "siem",
 "rule": {"id": "ca2092a1", "level": "high"}, "tags": ["attack.execution", "attack.t1059.001"],
 "logsource": {"category": "process_creation", "product": "windows"}}` + "\n"
	recs, err := ParseBytes([]byte(body), Options{})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("ParseBytes: %v %+v", err, recs)
	}
	a := recs[0].Alert
	want := map[string]string{"rule.id": "ca2092a1", "rule.level": "high", "tags.0": "attack.execution", "tags.1": "attack.t1059.001",
		"logsource.category": "process_creation", "logsource.product": "windows"}
	if !maps.Equal(a.Fields, want) {
		t.Errorf("Fields = %v, want %v", a.Fields, want)
	}
	if !a.Security {
		t.Error("source siem is not read as a security detection")
	}
	b := a
	b.Fields = nil
	if contentID(a) != contentID(b) {
		t.Error("Fields change the content id")
	}

	// A generic object (no title) keeps every string as Fields too.
	recs, err = ParseBytes([]byte(`{"detection": {"ruleName": "x", "tactics": ["CredentialAccess"]}, "product": "Google SecOps"}`+"\n"), Options{})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("ParseBytes: %v %+v", err, recs)
	}
	if g := recs[0].Alert; g.Fields["detection.tactics.0"] != "CredentialAccess" || !g.Security {
		t.Errorf("generic object: Fields %v, security %v", g.Fields, g.Security)
	}

	// An ordinary object names no security tool.
	recs, _ = ParseBytes([]byte(`{"title": "Disk full", "source": "prometheus", "extra": {"team": "db"}}`+"\n"), Options{})
	if a := recs[0].Alert; a.Security || a.Fields["extra.team"] != "db" {
		t.Errorf("ordinary object: security %v, Fields %v", a.Security, a.Fields)
	}
}

// TestRuleObjectStatesSeverity: a SIEM's own JSON alert with no severity of
// its own takes the level its rule object states (the corpus test's
// siem-json form kept 0% of severities before); a severity of the alert's
// own wins.
func TestRuleObjectStatesSeverity(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"title": "Encoded PowerShell", "source": "siem", "rule": {"id": "ca2092a1", "level": "high"}}`, "high"},
		{`{"title": "Encoded PowerShell", "source": "siem", "rule": {"id": "ca2092a1", "level": "informational"}}`, "info"},
		{`{"title": "Encoded PowerShell", "source": "siem", "rule": {"id": "ca2092a1", "severity": "Critical"}}`, "critical"},
		{`{"title": "Encoded PowerShell", "severity": "low", "rule": {"id": "ca2092a1", "level": "high"}}`, "low"},
		{`{"title": "Encoded PowerShell", "rule": {"id": "ca2092a1", "level": "whenever"}}`, "unknown"},
	}
	for _, tt := range tests {
		recs, err := ParseBytes([]byte(tt.body+"\n"), Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			t.Fatalf("ParseBytes(%s): %v %+v", tt.body, err, recs)
		}
		if got := string(recs[0].Alert.Severity); got != tt.want {
			t.Errorf("%s: severity %s, want %s", tt.body, got, tt.want)
		}
	}
}
