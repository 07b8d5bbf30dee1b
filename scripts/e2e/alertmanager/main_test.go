package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall/internal/testenv"
)

// TestAlertmanagerCatchesWrongProduct runs the whole check against a real
// Alertmanager with a wrong product: openrecall serve in shadow mode, which
// never bypasses. The run must fail (exit 1) on the benign repeats memory
// vouches for and pass every other check. It needs Debian's
// prometheus-alertmanager (with amtool); .ci/run installs it, so in CI its
// absence fails the test.
func TestAlertmanagerCatchesWrongProduct(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs Alertmanager; skipped with -short")
	}
	testenv.Tools(t, ".ci/run installs prometheus-alertmanager", "prometheus-alertmanager", "amtool")
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.Build(t, repo)
	dir := t.TempDir()
	shadow := filepath.Join(dir, "openrecall-shadow")
	if err := os.WriteFile(shadow, []byte("#!/bin/sh\nexec "+bin+" \"$@\" --shadow\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	deadline, ok := testenv.Deadline(t)
	if !ok {
		deadline = time.Now().Add(time.Hour)
	}
	r := &run{bin: shadow, am: "prometheus-alertmanager", amtool: "amtool", deadline: deadline}
	if code := r.main(false); code != 1 {
		t.Fatalf("a product that never bypasses: exit %d, want 1 (failures %q)", code, r.failures)
	}
	if len(r.failures) != 3 {
		t.Errorf("%d failures, want the 3 benign repeats not bypassed: %q", len(r.failures), r.failures)
	}
	for _, f := range r.failures {
		if !strings.Contains(f, "bypassed by memory") {
			t.Errorf("failure %q: want only the missing bypasses", f)
		}
	}
}
