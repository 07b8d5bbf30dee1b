package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the binary's contract, written as testscript scripts in
// testdata/script/*.txtar: exit codes, idempotent seeding, tamper then
// verify, the shapes of -o json, jsonl and table, the malformed-input demo.
// Each script runs the real binary, built once with cgo, in its own $WORK
// directory, with the audit key under $WORK/.config; $EXAMPLES is the
// repository's examples/ and $INTAKE its intake/testdata/.
func TestScripts(t *testing.T) {
	bin := buildBinary(t)
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("EXAMPLES", filepath.Join(repo, "examples"))
			env.Setenv("INTAKE", filepath.Join(repo, "intake", "testdata"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
			"tamper":   cmdTamper,
			"json":     cmdJSON,
			"jsonl":    cmdJSONL,
		},
	})
}

// cmdExitCode runs a program as exec does and checks its exit status is
// exactly N (exec only tells zero from non-zero):
//
//	exitcode N PROG ARGS...
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdTamper edits the reason of audit entry SEQ in database DB directly,
// as someone holding the file could (the append-only triggers dropped):
//
//	tamper DB SEQ
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper DB SEQ")
	}
	seq, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	conn, err := sql.Open("sqlite3", "file:"+ts.MkAbs(args[0])+"?_busy_timeout=5000")
	ts.Check(err)
	defer func() { ts.Check(conn.Close()) }()
	for _, trig := range []string{"audit_entries_no_update", "audit_entries_no_delete"} {
		_, err := conn.Exec("DROP TRIGGER IF EXISTS " + trig)
		ts.Check(err)
	}
	res, err := conn.Exec(`UPDATE audit_entries SET reason = reason || ' (edited by hand)' WHERE sequence = $1`, seq)
	ts.Check(err)
	if n, _ := res.RowsAffected(); n != 1 {
		ts.Fatalf("tamper: no audit entry %d", seq)
	}
}

// cmdJSON checks that FILE (stdout, stderr or a file) is one JSON object:
//
//	json FILE
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: json FILE")
	}
	var v map[string]any
	err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &v)
	switch {
	case neg && err == nil:
		ts.Fatalf("%s is one JSON object", args[0])
	case !neg && err != nil:
		ts.Fatalf("%s is not one JSON object: %v", args[0], err)
	}
}

// cmdJSONL checks that FILE holds exactly N lines, each one JSON object:
//
//	jsonl FILE N
func cmdJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonl FILE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	sc := bufio.NewScanner(bytes.NewReader([]byte(ts.ReadFile(args[0]))))
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		n++
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			ts.Fatalf("%s line %d is not a JSON object: %v", args[0], n, err)
		}
	}
	ts.Check(sc.Err())
	if n != want {
		ts.Fatalf("%s holds %d JSON lines, want %d", args[0], n, want)
	}
}
