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

// buildBinary builds the real binary (cgo and all) once per test run. A
// CGO_ENABLED=0 build would compile but fail at run time; this catches it.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "openrecall")
	cmd := exec.Command("go", "build", "-o", bin, ".")
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
