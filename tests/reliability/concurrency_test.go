package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestConcurrentProcesses runs several analyze processes and a stream of
// retain processes on one database file at once: no process fails or
// reports a locked database, every printed result is stored with exactly
// its audit entries, every retained decision is stored once, and the audit
// trail verifies at the end.
func TestConcurrentProcesses(t *testing.T) {
	needBinary(t)
	const analyzers, perQueue, retains = 3, 300, 20
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	if r := runBin(t, nil, "--db", db, "memory", "seed"); r.code != 0 {
		t.Fatalf("seed: exit %d\n%s", r.code, r.stderr)
	}
	sqlDB := openDB(t, db)
	var seeded int
	if err := sqlDB.QueryRow("SELECT count(*) FROM incidents").Scan(&seeded); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	runs := make([]run, analyzers+retains)
	for p := range analyzers {
		queue := filepath.Join(dir, fmt.Sprintf("q%d.jsonl", p))
		data := strings.ReplaceAll(string(crashQueue(perQueue)), `"id":"c-`, fmt.Sprintf(`"id":"p%d-`, p))
		if err := os.WriteFile(queue, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[p] = runBin(t, nil, "--db", db, "analyze", "-o", "jsonl", queue)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range retains {
			alert := fmt.Sprintf(`{"id":"r-%d","title":"disk full on db-%d","environment":"prod"}`, i, i)
			runs[analyzers+i] = runBin(t, []byte(alert), "--db", db, "retain", "-", "--decision", "real", "--note", fmt.Sprintf("concurrent note %d", i))
		}
	}()
	wg.Wait()

	var printed []openrecall.Result
	for i, r := range runs {
		if r.code != 0 {
			t.Errorf("process %d: exit %d\n%.2000s", i, r.code, r.stderr)
		}
		for _, bad := range []string{"locked", "busy", "SQLITE_"} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("process %d reports %q:\n%.2000s", i, bad, r.stderr)
			}
		}
		if i < analyzers {
			rs := results(t, r.stdout)
			if len(rs) != perQueue {
				t.Errorf("analyze %d printed %d results, want %d", i, len(rs), perQueue)
			}
			printed = append(printed, rs...)
		}
	}
	sqlDB = openDB(t, db)
	wantEntries := 0
	for _, r := range printed {
		var n int
		if err := sqlDB.QueryRow("SELECT count(*) FROM audit_entries WHERE analysis_id = $1", r.AnalysisID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(r.Audit) || n == 0 {
			t.Errorf("%s: %d audit entries stored, %d printed", r.AnalysisID, n, len(r.Audit))
		}
		wantEntries += len(r.Audit)
	}
	var entries, incidents int
	// The seals of rows (batch "seals") are not route steps.
	if err := sqlDB.QueryRow("SELECT count(*) FROM audit_entries WHERE batch <> $1", openrecall.SealBatch).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.QueryRow("SELECT count(*) FROM incidents").Scan(&incidents); err != nil {
		t.Fatal(err)
	}
	if entries != wantEntries {
		t.Errorf("%d audit entries in the database, %d in the printed results", entries, wantEntries)
	}
	if incidents != seeded+retains {
		t.Errorf("%d incidents, want %d seeded + %d retained", incidents, seeded, retains)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
	if v := runBin(t, nil, "--db", db, "audit", "verify"); v.code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
}
