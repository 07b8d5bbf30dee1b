package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildBinary builds the real binary (cgo and all) once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	return buildBinaryWith(t)
}

// buildBinaryWith builds the binary with extra go build flags.
func buildBinaryWith(t *testing.T, flags ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "openrecall")
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runBinary(t *testing.T, bin, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("run %v: %v", args, err)
	return 0, "", ""
}

// TestBinaryExample is the black-box test: the built binary seeds a fresh
// database, analyses the bundled queue, and verifies its audit trail, as
// `make run` does.
func TestBinaryExample(t *testing.T) {
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "example.db")
	if code, out, errOut := runBinary(t, bin, "", "--db", db, "memory", "seed"); code != 0 || !strings.Contains(out, "seeded") {
		t.Fatalf("memory seed: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runBinary(t, bin, "", "--db", db, "analyze", "../../examples/queue.jsonl")
	if code != 0 {
		t.Fatalf("analyze: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "memory-bypass") || !strings.Contains(out, "DECISION") {
		t.Errorf("table output shows no memory bypass:\n%s", out)
	}
	if !strings.Contains(errOut, "savings") || strings.Contains(errOut, "0 memory bypasses") {
		t.Errorf("summary:\n%s", errOut)
	}
	if code, out, _ := runBinary(t, bin, "", "--db", db, "audit", "verify"); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("audit verify: exit %d\n%s", code, out)
	}
	if code, _, errOut := runBinary(t, bin, "not json\n", "--db", db, "analyze", "--format", "jsonl", "-"); code != exitPartial || !strings.Contains(errOut, "1 rejected") {
		t.Errorf("malformed input: exit %d, want %d\n%s", code, exitPartial, errOut)
	}
}

// TestBinaryWithoutCgoFailsToBuildSayingWhy: the SQLite driver is C, so a
// CGO_ENABLED=0 build must fail at compile time and say that cgo and a C
// compiler are needed (it used to fail with "undefined: sqlite3.Error").
func TestBinaryWithoutCgoFailsToBuildSayingWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build; skipped with -short")
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "openrecall"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("a CGO_ENABLED=0 build succeeded; it cannot open a database")
	}
	if !strings.Contains(string(out), "needs_cgo_and_a_C_compiler") || strings.Contains(string(out), "sqlite3.") {
		t.Errorf("the build failure does not say that cgo and a C compiler are needed:\n%s", out)
	}
}

// TestBinaryVersionAndConventions: the version set with -ldflags is what
// `version` and `--version` print, and an unknown subcommand of the real
// binary prints nothing on stdout and exits 2.
func TestBinaryVersionAndConventions(t *testing.T) {
	bin := buildBinaryWith(t, "-ldflags", "-X main.version=v9.8.7-test")
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, errOut := runBinary(t, bin, "", args...); code != 0 || !strings.HasPrefix(out, "openrecall v9.8.7-test (go") {
			t.Errorf("%v: exit %d, stdout %q\n%s", args, code, out, errOut)
		}
	}
	code, out, errOut := runBinary(t, bin, "", "--db", filepath.Join(t.TempDir(), "m.db"), "memory", "exprot")
	if code != exitUsage || out != "" || !strings.Contains(errOut, `did you mean "export"?`) {
		t.Errorf("memory exprot: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runBinary(t, bin, "", "--db", filepath.Join(t.TempDir(), "m.db"), "analyze"); code != exitPartial || !strings.Contains(errOut, "no alerts in standard input") {
		t.Errorf("analyze of empty stdin: exit %d\n%s", code, errOut)
	}
}
