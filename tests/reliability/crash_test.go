package reliability

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/openrecall/openrecall"
)

// crashQueue is a JSON Lines queue of n alerts of a few families, so that
// some are bypassed by memory and others go to the models.
func crashQueue(n int) []byte {
	var b bytes.Buffer
	families := []string{"disk full on db-%d", "checkout-api 5xx ratio above 5%% on pod %d", "pod report-batch-%d OOMKilled", "TLS certificate expires in 3 days on host %d"}
	for i := range n {
		fmt.Fprintf(&b, `{"id":"c-%d","title":"`+families[i%len(families)]+`","severity":"high","environment":"prod","service":"svc-%d"}`+"\n", i, i, i%7)
	}
	return b.Bytes()
}

// openDB opens the database file directly, as sqlite3 would.
func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// TestKill9 kills analyze with SIGKILL while it writes, at several points
// of the queue, and checks what an operator relies on: the file is intact
// (PRAGMA integrity_check), the audit trail verifies, every result printed
// before the kill is in the database with all its audit entries, and a
// rerun on the same file succeeds.
func TestKill9(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	if r := runBin(t, nil, "--db", db, "memory", "seed"); r.code != 0 {
		t.Fatalf("seed: exit %d\n%s", r.code, r.stderr)
	}
	queue := filepath.Join(dir, "queue.jsonl")
	if err := os.WriteFile(queue, crashQueue(3000), 0o644); err != nil {
		t.Fatal(err)
	}
	for round, killAfter := range []int{1, 150, 600} {
		t.Run(fmt.Sprintf("kill after %d results", killAfter), func(t *testing.T) {
			cmd := exec.Command(bin, "--db", db, "analyze", "-o", "jsonl", "--workers", "2", queue)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var printed []openrecall.Result
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var r openrecall.Result
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatalf("result %d: %v", len(printed)+1, err)
				}
				printed = append(printed, r)
				if len(printed) == killAfter {
					if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
			for sc.Scan() { // what was already in the pipe was printed too
				var r openrecall.Result
				if json.Unmarshal(sc.Bytes(), &r) == nil {
					printed = append(printed, r)
				}
			}
			err = cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("analyze was not killed (round %d): %v\n%s", round, err, stderr.String())
			}
			if len(printed) < killAfter {
				t.Fatalf("only %d results before the kill", len(printed))
			}

			sqlDB := openDB(t, db)
			var check string
			if err := sqlDB.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
				t.Fatalf("integrity_check: %q, %v", check, err)
			}
			for _, r := range printed {
				var n int
				if err := sqlDB.QueryRow("SELECT count(*) FROM audit_entries WHERE analysis_id = $1", r.AnalysisID).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 || n != len(r.Audit) {
					t.Errorf("%s (%s) was printed with %d audit entries; the database holds %d", position(r), r.AnalysisID, len(r.Audit), n)
				}
			}
			if err := sqlDB.Close(); err != nil {
				t.Fatal(err)
			}
			if v := runBin(t, nil, "--db", db, "audit", "verify"); v.code != 0 {
				t.Fatalf("audit verify after kill -9: exit %d\n%s%s", v.code, v.stdout, v.stderr)
			}
		})
	}
	r := runBin(t, nil, "--db", db, "analyze", "-o", "jsonl", queue)
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%.2000s", r.code, r.stderr)
	}
	if got := len(results(t, r.stdout)); got != 3000 {
		t.Errorf("rerun printed %d results, want 3000", got)
	}
	if v := runBin(t, nil, "--db", db, "audit", "verify"); v.code != 0 {
		t.Fatalf("audit verify after the rerun: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
}
