package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// bin is the binary under test, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	short := false
	for _, a := range os.Args[1:] {
		short = short || a == "-test.short" || a == "-test.short=true"
	}
	if short {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "openrecall-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "openrecall")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/openrecall")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	// A leftover temporary directory does not change the tests' verdict;
	// say so rather than fail the run.
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "remove built binary:", err)
	}
	os.Exit(code)
}

// needBinary skips a test under -short.
func needBinary(t *testing.T) {
	t.Helper()
	if testing.Short() || bin == "" {
		t.Skip("drives the built binary; skipped with -short")
	}
}

// run is one finished run of the binary.
type run struct {
	code           int
	stdout, stderr string
}

// runBin runs the binary with args and stdin.
func runBin(t *testing.T, stdin []byte, args ...string) run {
	t.Helper()
	return runBinEnv(t, nil, stdin, args...)
}

// runBinEnv runs the binary with args and stdin, env added to the test's
// environment.
func runBinEnv(t *testing.T, env []string, stdin []byte, args ...string) run {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return run{0, out.String(), errOut.String()}
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return run{ee.ExitCode(), out.String(), errOut.String()}
	}
	t.Fatalf("run %v: %v", args, err)
	return run{}
}

// results decodes the JSON Lines results of analyze -o jsonl.
func results(t *testing.T, jsonl string) []openrecall.Result {
	t.Helper()
	var rs []openrecall.Result
	sc := bufio.NewScanner(strings.NewReader(jsonl))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r openrecall.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("result %d: %v: %.200s", len(rs)+1, err, sc.Text())
		}
		rs = append(rs, r)
	}
	return rs
}

// position names a result's position without its source.
func position(r openrecall.Result) string {
	p := r.Position
	p.Source = ""
	return p.String()
}
