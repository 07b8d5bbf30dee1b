package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestRetainGroupDecidesTheStormOnce analyses a storm, lists its open
// group, decides it with retain --group (one memory, every firing's audit
// entry, the group closed), and refuses a second decision (DESIGN §6a).
func TestRetainGroupDecidesTheStormOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "storm.db")
	var q strings.Builder
	for i := range 6 {
		fmt.Fprintf(&q, `{"id":"storm-%d","title":"Filesystem on node-%d has less than 5%% space left","severity":"warning","labels":{"alertname":"NodeFilesystemAlmostOutOfSpace","service":"node-exporter","instance":"node-%d:9100"},"timestamp":"2026-11-30T03:%02d:00Z"}`+"\n", i, i, i, i)
	}
	r := runCLI(t, q.String(), "--db", db, "analyze", "-o", "jsonl", "-")
	if r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "1 alert groups opened; 5 firings grouped") {
		t.Errorf("summary does not count the group apart:\n%s", r.stderr)
	}
	r = runCLI(t, "", "--db", db, "groups", "-o", "json")
	var groups []openrecall.Group
	if err := json.Unmarshal([]byte(r.stdout), &groups); err != nil || r.code != exitOK || len(groups) != 1 || groups[0].Size != 6 {
		t.Fatalf("groups: exit %d, %v, %s", r.code, err, r.stdout)
	}
	id := groups[0].ID
	r = runCLI(t, "", "--db", db, "retain", "--group", id, "--decision", "known_benign", "--note", "disk cleanup job", "--analyst", "ana", "-o", "json")
	var dg usecase.DecidedGroup
	if err := json.Unmarshal([]byte(r.stdout), &dg); err != nil || r.code != exitOK {
		t.Fatalf("retain --group: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if !dg.Created || dg.Incident.SourceAlertID != "storm-0" || len(dg.Members) != 6 || !dg.Group.Decided {
		t.Errorf("decided group: %+v", dg)
	}
	stats := runCLI(t, "", "--db", db, "memory", "stats", "-o", "json")
	if !strings.Contains(stats.stdout, `"incidents": 1`) && !strings.Contains(stats.stdout, `"incidents":1`) {
		t.Errorf("memory after one group decision:\n%s", stats.stdout)
	}
	audit := runCLI(t, "", "--db", db, "audit", "show", dg.Members[5].AnalysisID)
	if !strings.Contains(audit.stdout, usecase.StepGroupDecision) {
		t.Errorf("audit of member %s lacks the group decision:\n%s", dg.Members[5].AnalysisID, audit.stdout)
	}
	if r := runCLI(t, "", "--db", db, "groups"); !strings.Contains(r.stdout, "no alert groups waiting") {
		t.Errorf("the decided group is still listed open:\n%s", r.stdout)
	}
	if r := runCLI(t, "", "--db", db, "retain", "--group", id, "--decision", "real"); r.code == exitOK || !strings.Contains(r.stderr, "already decided") {
		t.Errorf("a second decision: exit %d\n%s", r.code, r.stderr)
	}
}
