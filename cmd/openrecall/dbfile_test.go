package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readOnlyCommands are the commands that only read the memory database.
func readOnlyCommands(analysisID string) [][]string {
	fp := "error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod"
	return [][]string{
		{"audit", "verify"},
		{"audit", "show", analysisID},
		{"cost"},
		{"recall", "--fingerprint", fp},
		{"memory", "stats"},
		{"memory", "export"},
		{"groups"},
		{"exception", "list"},
		{"exception", "proposals"},
		{"queue"},
	}
}

// TestReadOnlyCommandsRefuseAMissingDatabase pins the fix for a typo'd --db
// silently creating an empty database (and its directory) and reporting
// "intact: 0 entries": every read-only command refuses the missing file,
// says so once, prints nothing on stdout and creates nothing.
func TestReadOnlyCommandsRefuseAMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	for _, db := range []string{filepath.Join(dir, "tpyo.db"), filepath.Join(dir, "no", "such", "dir", "x.db")} {
		for _, args := range readOnlyCommands("run-x-000001") {
			r := runCLI(t, "", append([]string{"--db", db}, args...)...)
			if r.code != exitFailure || r.stdout != "" {
				t.Errorf("%v on %s: exit %d, stdout %q; want %d and nothing", args, db, r.code, r.stdout, exitFailure)
			}
			if !strings.Contains(r.stderr, "no database") || strings.Count(r.stderr, db) != 1 {
				t.Errorf("%v: stderr does not say once that there is no database at %s:\n%s", args, db, r.stderr)
			}
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("read-only commands created %v (%v)", entries, err)
	}
}

// TestReadOnlyCommandsRunWhileAWriterHoldsTheLock: readers of a WAL
// database do not wait for writers. Before, every command took the write
// lock at open and failed after the 5 s busy timeout.
func TestReadOnlyCommandsRunWhileAWriterHoldsTheLock(t *testing.T) {
	db := seededDB(t)
	r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", "../../examples/queue.jsonl")
	if r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", r.code, r.stderr)
	}
	id := decodeResults(t, r.stdout)[0].AnalysisID

	ctx := context.Background()
	holder, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Close() }()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()

	for _, args := range readOnlyCommands(id) {
		if r := runCLI(t, "", append([]string{"--db", db}, args...)...); r.code != exitOK {
			t.Errorf("%v while a writer holds the lock: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}

// TestForeignDatabaseRefusedByEveryCommand: a SQLite file of another
// application is refused by readers and writers alike, unchanged.
func TestForeignDatabaseRefusedByEveryCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "grafana.db")
	raw, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE dashboard (id INTEGER PRIMARY KEY, title TEXT)`); err != nil {
		t.Fatal(err)
	}
	_ = raw.Close()
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	cmds := append(readOnlyCommands("run-x-000001"), []string{"analyze", "../../examples/queue.jsonl"}, []string{"memory", "seed"})
	for _, args := range cmds {
		r := runCLI(t, "", append([]string{"--db", db}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "not an openrecall database") || !strings.Contains(r.stderr, "dashboard") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	after, err := os.ReadFile(db)
	if err != nil || string(after) != string(before) {
		t.Errorf("the foreign database changed (%v)", err)
	}
	if sib, _ := filepath.Glob(db + "-*"); len(sib) != 0 {
		t.Errorf("files created beside it: %v", sib)
	}
}

// TestUnwritableDatabaseNamesTheCause pins the fix for "open memory X: open
// memory X: ... unable to open database file: no such file or directory"
// when the directory exists but cannot be written: the cause is named,
// once. /sys refuses new files even to root.
func TestUnwritableDatabaseNamesTheCause(t *testing.T) {
	db := "/sys/openrecall-test.db"
	if f, err := os.OpenFile(db, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		_ = f.Close()
		_ = os.Remove(db)
		t.Skip("/sys accepts new files here")
	}
	r := runCLI(t, "", "--db", db, "analyze", "../../examples/queue.jsonl")
	if r.code != exitFailure || strings.Count(r.stderr, "open memory") != 1 || strings.Contains(r.stderr, "no such file") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "permission denied") && !strings.Contains(r.stderr, "read-only file system") {
		t.Errorf("stderr does not name the cause:\n%s", r.stderr)
	}
}

// TestBinaryReadOnlyCopy: a copy of the database in a directory the user
// cannot write (no -shm can be created beside it) is verified, shown and
// exported; a writer there is refused with the real cause. As root the
// binary runs as nobody, for whom the permissions hold.
func TestBinaryReadOnlyCopy(t *testing.T) {
	bin := buildBinary(t)
	var asUser []string
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: cannot drop to a user the permissions apply to")
		}
		asUser = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	// The audit key travels in the environment: the key file under the
	// test's config directory is root's alone (mode 0600).
	useTestKey(t)
	base := t.TempDir()
	db := filepath.Join(base, "m.db")
	if code, _, errOut := runBinary(t, bin, "", "--db", db, "memory", "seed"); code != 0 {
		t.Fatalf("seed: %s", errOut)
	}
	if code, _, errOut := runBinary(t, bin, "", "--db", db, "analyze", "../../examples/queue.jsonl"); code != 0 {
		t.Fatalf("analyze: %s", errOut)
	}
	roDir := filepath.Join(base, "ro")
	if err := os.Mkdir(roDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(roDir, "m.db")
	if err := os.WriteFile(cp, data, 0o444); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{roDir, base, filepath.Dir(base), bin, filepath.Dir(bin), filepath.Dir(filepath.Dir(bin))} {
		mode := os.FileMode(0o755)
		if p == roDir {
			mode = 0o555
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.Chmod(roDir, 0o755) })
	run := func(args ...string) (int, string, string) {
		full := append(append([]string{}, asUser...), bin)
		full = append(full, args...)
		return runBinary(t, full[0], "", full[1:]...)
	}
	if code, out, errOut := run("--db", cp, "audit", "verify"); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("audit verify on a read-only copy: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("--db", cp, "memory", "export"); code != 0 || strings.Count(out, "\n") < 40 {
		t.Errorf("memory export on a read-only copy: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), errOut)
	}
	if code, _, errOut := run("--db", cp, "analyze", "../../examples/queue.jsonl"); code != exitFailure || !strings.Contains(errOut, "permission denied") {
		t.Errorf("analyze into a read-only copy: exit %d\n%s", code, errOut)
	}
	if sib, _ := filepath.Glob(cp + "-*"); len(sib) != 0 {
		t.Errorf("files created beside the read-only copy: %v", sib)
	}
}
