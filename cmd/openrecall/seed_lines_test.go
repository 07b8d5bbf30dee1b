package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/memory"
)

// TestSeedLongLines: memory seed and memory import read lines of any
// length; a line over the record limit is rejected with its line number and
// the lines after it are still read (it stopped at "bufio.Scanner: token too
// long" on a 4 MiB line).
func TestSeedLongLines(t *testing.T) {
	long := `{"fingerprint":"error_class=disk_full","decision":"real","note":"` + strings.Repeat("n", 4<<20) + `"}`
	near := `{"alert":{"title":"pod oom killed"},"decision":"real","note":"` + strings.Repeat("m", memory.MaxRecordBytes-200) + `"}`
	good := `{"alert":{"title":"disk full on db-1"},"decision":"real","note":"after the long line"}`
	in := "# seed\n" + long + "\n" + near + "\r\n" + good + "\n"
	db := t.TempDir() + "/m.db"
	r := runCLI(t, in, "--db", db, "memory", "seed", "-")
	if r.code != exitPartial {
		t.Fatalf("seed: exit %d, want %d\n%s%s", r.code, exitPartial, r.stdout, r.stderr)
	}
	if want := fmt.Sprintf("line 2: record is %d bytes, over the limit of %d bytes", len(long), memory.MaxRecordBytes); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not name the long line: want %q", r.stderr, want)
	}
	if !strings.Contains(r.stdout, "seeded 2 memories") || !strings.Contains(r.stdout, "1 rejected") {
		t.Errorf("stdout %q, want 2 seeded and 1 rejected", r.stdout)
	}
	r = runCLI(t, long+"\n", "--db", db, "memory", "import", "-")
	if r.code != exitPartial || !strings.Contains(r.stderr, "line 1: record longer than") {
		t.Errorf("import: exit %d, stderr %q; want line 1 rejected", r.code, r.stderr)
	}
}
