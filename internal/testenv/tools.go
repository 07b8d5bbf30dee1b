package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tools ends tb unless every program named is on PATH: in CI (CI=true) it
// fails tb, saying what installs them (install); elsewhere it skips it with
// the reason. It must be called from the goroutine running tb.
func Tools(tb testing.TB, install string, names ...string) {
	tb.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			if CI() {
				tb.Fatalf("%s not found (CI=true: %s): %v", name, install, err)
				return
			}
			tb.Skipf("skipping: %s not found: %v", name, err)
			return
		}
	}
}

// Build builds the openrecall command of the module at repo into a
// temporary directory of tb, with cgo (the SQLite driver needs it), and
// returns the binary's path.
func Build(tb testing.TB, repo string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "openrecall")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/openrecall")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
