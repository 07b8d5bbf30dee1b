package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// twoAlerts is an Alertmanager webhook with two firings of one rule.
const twoAlerts = `{"version":"4","status":"firing","receiver":"r","alerts":[
{"status":"firing","labels":{"alertname":"MysqlRestarted","service":"orders-db","severity":"info","instance":"10.0.0.1:9104"},"annotations":{"summary":"MySQL restarted"},"startsAt":"2026-11-01T00:00:00Z","fingerprint":"aaaaaaaaaaaaaaa1"},
{"status":"firing","labels":{"alertname":"MysqlRestarted","service":"orders-db","severity":"info","instance":"10.0.0.2:9104"},"annotations":{"summary":"MySQL restarted"},"startsAt":"2026-11-01T00:05:00Z","fingerprint":"aaaaaaaaaaaaaaa2"}]}`

// TestRetainEveryAlertOfTheFile: retain FILE retains each alert, with its
// identity and severity, never silently only the first.
func TestRetainEveryAlertOfTheFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	r := runCLI(t, twoAlerts, "--db", db, "retain", "-", "--decision", "known_benign", "--note", "restart after patching", "-o", "jsonl")
	if r.code != exitOK {
		t.Fatalf("retain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("retain of two alerts wrote %d results, want 2:\n%s", len(lines), r.stdout)
	}
	for _, l := range lines {
		var got usecase.Retained
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		want := openrecall.Identity{Rule: "MysqlRestarted", Service: "orders-db"}
		if !got.Created || got.Incident.Identity != want || got.Incident.Severity != openrecall.SeverityInfo || got.Warning != "" {
			t.Errorf("retained %+v, want a new memory of %s at info", got, want)
		}
	}
	s := runCLI(t, "", "--db", db, "memory", "stats")
	if !strings.Contains(s.stdout, "without identity 0") || !strings.Contains(s.stdout, "2  MysqlRestarted @ orders-db") {
		t.Errorf("memory stats does not group by identity:\n%s", s.stdout)
	}
}

// TestRetainWarnsWithoutIdentity: a memory without a rule is related
// knowledge only, and retain says so; memory stats counts it.
func TestRetainWarnsWithoutIdentity(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	fp := "error_class=timeout;service_role=db_primary;dependency_pattern=;signal_shape=;attack_pattern=;environment=prod"
	r := runCLI(t, "", "--db", db, "retain", "--fingerprint", fp, "--decision", "known_benign")
	if r.code != exitOK || !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "never votes") {
		t.Fatalf("retain without identity: exit %d, stderr %q; want a warning", r.code, r.stderr)
	}
	s := runCLI(t, "", "--db", db, "memory", "stats", "-o", "json")
	var st struct {
		WithoutIdentity int `json:"without_identity"`
	}
	if err := json.Unmarshal([]byte(s.stdout), &st); err != nil || st.WithoutIdentity != 1 {
		t.Errorf("stats: %v %s; want 1 memory without identity", err, s.stdout)
	}
	for _, tt := range [][]string{
		{"retain", "--fingerprint", fp, "--decision", "real", "--service", "db"},
		{"retain", "--fingerprint", fp, "--decision", "real", "--rule", "X", "--severity", "dire"},
		{"retain", "-", "--decision", "real", "--rule", "X"},
		{"retain", "--fingerprint", fp, "--decision", "real", "--rule", "X", "--expires", "soon"},
	} {
		if r := runCLI(t, twoAlerts, append([]string{"--db", db}, tt...)...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", tt, r.code, exitUsage, r.stderr)
		}
	}
}

// TestForgetAndSupersedeAreAudited: memory forget takes a decision back and
// the audit trail records it; retain --supersedes replaces one; a taken-back
// memory is no longer recalled.
func TestForgetAndSupersedeAreAudited(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	fp := "error_class=timeout;service_role=db_primary;dependency_pattern=;signal_shape=;attack_pattern=;environment=prod"
	id := func(r runResult) string {
		var got usecase.Retained
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v: %s%s", err, r.stdout, r.stderr)
		}
		return got.Incident.ID
	}
	args := []string{"--db", db, "retain", "--fingerprint", fp, "--rule", "MysqlSlowQueries", "--service", "orders-db", "--severity", "warning", "-o", "json"}
	a := id(runCLI(t, "", append(args, "--decision", "known_benign", "--alert-id", "a1")...))
	b := id(runCLI(t, "", append(args, "--decision", "known_benign", "--alert-id", "a2")...))

	if r := runCLI(t, "", "--db", db, "memory", "forget", a, "--analyst", "ana", "--reason", "was a real outage"); r.code != exitOK || !strings.Contains(r.stdout, "took back "+a) {
		t.Fatalf("forget: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "memory", "forget", "inc_0000000000000000"); r.code == exitOK {
		t.Errorf("forget of an unknown id succeeded: %s", r.stdout)
	}
	repl := runCLI(t, "", append(args, "--decision", "real", "--alert-id", "a2", "--note", "replica lag was real", "--supersedes", b)...)
	var sup usecase.Retained
	if err := json.Unmarshal([]byte(repl.stdout), &sup); err != nil || sup.Superseded == nil || sup.Superseded.ID != b || sup.Incident.Decision != openrecall.DecisionReal {
		t.Fatalf("supersede: %v %s%s", err, repl.stdout, repl.stderr)
	}
	r := runCLI(t, "", "--db", db, "recall", "--fingerprint", fp, "--rule", "MysqlSlowQueries", "--service", "orders-db", "-o", "json")
	var got struct{ Matches []openrecall.Match }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Matches) != 1 || got.Matches[0].Incident.ID != sup.Incident.ID {
		t.Fatalf("recall after forget and supersede: %v %+v; want only %s", err, got, sup.Incident.ID)
	}
	v := runCLI(t, "", "--db", db, "audit", "verify")
	if v.code != exitOK {
		t.Errorf("audit verify after forget: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	var n int
	for _, want := range []string{a, b} {
		e := runCLI(t, "", "--db", db, "audit", "show", "forget-"+want)
		if strings.Contains(e.stdout, "taken back") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the audit trail records %d of the 2 decisions taken back", n)
	}
}

// TestRetainJSONIsOneDocument: -o json is one JSON document — an array when
// the file held several alerts (jsonl gives one object per line).
func TestRetainJSONIsOneDocument(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	r := runCLI(t, twoAlerts, "--db", db, "retain", "-", "--decision", "known_benign", "--note", "n", "-o", "json")
	if r.code != exitOK {
		t.Fatalf("retain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got []usecase.Retained
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("-o json of two alerts: %d results, %v:\n%s", len(got), err, r.stdout)
	}
}
