package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

// historyDB is a database keyed with the test's key where serve's sink
// stored one analysis memory bypassed on the vote of one memory by carol
// and one that waits; it returns the database, the analysis and the
// memory.
func historyDB(t *testing.T) (string, string, openrecall.Incident) {
	t.Helper()
	ctx := context.Background()
	k := useTestKey(t)
	db := filepath.Join(t.TempDir(), "memory.db")
	st, err := memory.Open(ctx, db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	sealer := storetest.Keyed(t, st, k)
	id := openrecall.Identity{Rule: "DiskFull", Service: "db"}
	inc, _, err := st.Retain(ctx, openrecall.Incident{Identity: id, Decision: openrecall.DecisionFalsePositive, Analyst: "carol", Note: "cron", SourceAlertID: "old"})
	if err != nil {
		t.Fatal(err)
	}
	results := []openrecall.Result{
		{AnalysisID: "serve-000001", Batch: "serve", Outcome: openrecall.ResultTriaged, Identity: id, Bypassed: true,
			Alert: openrecall.Alert{ID: "disk", Title: "Disk full on db-1"}, Decision: openrecall.DecisionFalsePositive,
			Matches: []openrecall.Match{{Incident: inc, Score: 1}}, Triage: openrecall.TriageResult{Supporting: []string{inc.ID}}},
		{AnalysisID: "serve-000002", Batch: "serve", Outcome: openrecall.ResultTriaged, Alert: openrecall.Alert{ID: "x", Title: "escalated"},
			Decision: openrecall.DecisionEscalated},
	}
	for i := range results {
		results[i].Audit = audit.Entries(results[i], time.Now())
	}
	sink := memory.Sink{Store: st, Seal: sealer.Seal, Waits: usecase.WaitingFor, Closes: usecase.ClosedBy}
	if _, err := sink.PersistBatch(ctx, results, nil); err != nil {
		t.Fatal(err)
	}
	return db, "serve-000001", inc
}

// TestHistoryCommand: `history` lists what memory closed with the memory
// that voted, filters and pages; `history wrong` needs --analyst and
// --reason, returns the analysis to the queue, forgets the memory (recall
// no longer finds it), audits it, and a second time changes nothing.
func TestHistoryCommand(t *testing.T) {
	db, id, inc := historyDB(t)
	run := func(args ...string) runResult {
		t.Helper()
		return runCLI(t, "", append([]string{"--db", db}, args...)...)
	}
	r := run("history")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "AT ") || strings.Count(r.stdout, "\n") != 2 {
		t.Fatalf("history: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{id, "bypass", "DiskFull @ db", inc.ID + " (carol)", "Disk full on db-1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("history lacks %q:\n%s", want, r.stdout)
		}
	}
	var page openrecall.ClosurePage
	r = run("history", "--search", "DISK", "--kind", "bypass", "--limit", "1", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &page); err != nil || r.code != exitOK || len(page.Closures) != 1 || page.Closures[0].Voters[0].Analyst != "carol" {
		t.Errorf("history -o json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if r := run("history", "--kind", "exception"); r.code != exitOK || !strings.Contains(r.stdout, "nothing closed without a person matches") {
		t.Errorf("history --kind exception: exit %d\n%s", r.code, r.stdout)
	}
	for _, args := range [][]string{
		{"history", "--kind", "model"}, {"history", "--limit", "-1"}, {"history", "frob"},
		{"history", "wrong", id, "--analyst", "alice"}, {"history", "wrong", id, "--reason", "x"}, {"history", "wrong"},
	} {
		if r := run(args...); r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, want %d and nothing on stdout\n%s", args, r.code, exitUsage, r.stdout)
		}
	}
	if r := run("history", "wrong", "serve-000002", "--analyst", "alice", "--reason", "x"); r.code == exitOK {
		t.Errorf("wrong about an analysis memory did not close: exit %d", r.code)
	}
	r = run("history", "wrong", id, "--analyst", "alice", "--reason", "it was the outage")
	if r.code != exitOK || !strings.Contains(r.stdout, id+" is back in the queue") || !strings.Contains(r.stdout, "forgot memory "+inc.ID) {
		t.Fatalf("history wrong: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run("queue"); !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, openrecall.WaitWrong) {
		t.Errorf("the queue after: exit %d\n%s", r.code, r.stdout)
	}
	st, err := memory.Open(context.Background(), db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recall(context.Background(), inc.Identity, inc.Fingerprint, 10); err != nil || len(m) != 0 {
		t.Errorf("recall after: %+v, %v; want nothing", m, err)
	}
	_ = st.Close()
	if r := run("audit", "show", id); !strings.Contains(r.stdout, usecase.StepHistoryWrong) || !strings.Contains(r.stdout, "alice") {
		t.Errorf("the audit trail of %s:\n%s%s", id, r.stdout, r.stderr)
	}
	if r := run("audit", "verify"); r.code != exitOK {
		t.Errorf("audit verify after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run("history", "wrong", id, "--analyst", "bob", "--reason", "again", "-o", "json")
	var out usecase.Wronged
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Changed || out.Closure.WrongBy != "alice" {
		t.Errorf("a second time: exit %d, %v\n%s", r.code, err, r.stdout)
	}
}
