package openrecall_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoConflictMarkers fails when a tracked file holds a line of a merge
// conflict: a half-resolved merge must never land. Mutant files
// (tests/property/mutants/*.mut) use the same markers for find and replace.
func TestNoConflictMarkers(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, name := range strings.Fields(string(out)) {
		if strings.HasSuffix(name, ".pprof") || strings.HasSuffix(name, ".mut") || strings.Contains(name, "/fuzz/") {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue // deleted in the work tree
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") || line == "=======" && strings.HasSuffix(name, ".go") {
				t.Errorf("%s:%d: merge conflict marker %q", name, n, line)
			}
		}
		_ = f.Close() // read only
	}
}
