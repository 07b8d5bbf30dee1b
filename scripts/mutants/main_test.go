package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseReadsHeaderFindAndReplace(t *testing.T) {
	m, err := parse("id: M99\nfile: a/b.go\nrule: DESIGN §7 a rule\nexpect: P1\n<<<<<<< find\n\tx := 1\n=======\n\tx := 2\n>>>>>>> replace\n")
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "M99" || m.File != "a/b.go" || m.Rule != "DESIGN §7 a rule" || m.Expect != "P1" || m.Find != "\tx := 1" || m.Replace != "\tx := 2" {
		t.Fatalf("parsed %+v", m)
	}
}

func TestParseRefusesIncompleteSpecs(t *testing.T) {
	for name, spec := range map[string]string{
		"no find block":       "id: M1\nfile: f\nrule: r\n",
		"no separator":        "id: M1\nfile: f\nrule: r\n<<<<<<< find\nx\n>>>>>>> replace\n",
		"no end":              "id: M1\nfile: f\nrule: r\n<<<<<<< find\nx\n=======\ny\n",
		"no id":               "file: f\nrule: r\n<<<<<<< find\nx\n=======\ny\n>>>>>>> replace\n",
		"replacement a no-op": "id: M1\nfile: f\nrule: r\n<<<<<<< find\nx\n=======\nx\n>>>>>>> replace\n",
	} {
		if _, err := parse(spec); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

// A mutant whose find text is gone (or ambiguous) is an error, never a
// kill, and leaves the file as it was.
func TestApplyReportsAMutantThatNoLongerApplies(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nvar x = 1\nvar y = 1\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for find, want := range map[string]string{"var z = 1": "occurs 0 times", "= 1": "occurs 2 times"} {
		status, detail := apply(dir, mutant{ID: "M1", File: "p.go", Find: find, Replace: "var z = 2"}, "fast", "1")
		if status != "error" || !strings.Contains(detail, want) {
			t.Errorf("find %q: %s %q, want error %q", find, status, detail, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "p.go")); string(got) != src {
		t.Fatalf("the file changed: %q", got)
	}
}

func TestExpectedReadsThePropertyNumbers(t *testing.T) {
	for expect, want := range map[string]string{
		"P40, steps (P15)": "P40,P15",
		"P69":              "P69",
		"audit":            "",
		"P3, P5, P3":       "P3,P5",
	} {
		if got := strings.Join(expected(expect), ","); got != want {
			t.Errorf("expected(%q) = %q, want %q", expect, got, want)
		}
	}
}

// TestEverySpecStillApplies holds the repository's own mutant specs to the
// code they patch: each find text occurs exactly once in its file, so a
// change that moves the code fails make test at once rather than as an
// error of make mutants in CI.
func TestEverySpecStillApplies(t *testing.T) {
	root := filepath.Join("..", "..")
	ms, err := load(filepath.Join(root, "tests", "property", "mutants"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		src, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		if n := strings.Count(string(src), m.Find); n != 1 {
			t.Errorf("%s (%s): its find text occurs %d times in %s, want once: retarget the spec", m.ID, filepath.Base(m.Path), n, m.File)
		}
	}
}

// A mutated data file (a sender's embedded mapping) is built as the
// package of the nearest directory above it that holds Go files.
func TestPackageDirOfADataFile(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"intake/sender/sender.go", "intake/sender/mappings/a.yaml"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]string{"intake/sender/mappings": "intake/sender", "intake/sender": "intake/sender", "nowhere/at/all": "."} {
		if got := packageDir(root, dir); got != want {
			t.Errorf("packageDir(%q) = %q, want %q", dir, got, want)
		}
	}
}

func TestShardsCoverTheSetOnceAndChangesAreAlwaysJudged(t *testing.T) {
	var ms []mutant
	for k := range 10 {
		ms = append(ms, mutant{ID: "M" + string(rune('a'+k)), File: "pkg/f" + string(rune('a'+k)) + ".go", Path: "tests/property/mutants/" + string(rune('a'+k)) + ".mut"})
	}
	seen := map[string]int{}
	for i := range 3 {
		sel, inShard, byChange := slice(ms, i, 3, nil)
		if byChange != 0 || inShard != len(sel) {
			t.Fatalf("shard %d: %d in the shard, %d by change, %d chosen", i, inShard, byChange, len(sel))
		}
		for _, m := range sel {
			seen[m.ID]++
		}
	}
	for _, m := range ms {
		if seen[m.ID] != 1 {
			t.Errorf("%s judged by %d of the 3 shards, want 1", m.ID, seen[m.ID])
		}
	}
	// Shard 0 of 3 holds a, d, g, j: b's file and c's spec were touched.
	sel, inShard, byChange := slice(ms, 0, 3, map[string]bool{"pkg/fb.go": true, "tests/property/mutants/c.mut": true, "pkg/fa.go": true})
	var ids []string
	for _, m := range sel {
		ids = append(ids, m.ID)
	}
	if got := strings.Join(ids, ","); got != "Ma,Mb,Mc,Md,Mg,Mj" || inShard != 4 || byChange != 2 {
		t.Fatalf("chose %s (%d in the shard, %d by change), want Ma,Mb,Mc,Md,Mg,Mj (4, 2)", got, inShard, byChange)
	}
}

func TestParseShard(t *testing.T) {
	for s, want := range map[string][2]int{"0/3": {0, 3}, "2/3": {2, 3}, "auto/4": {-1, 4}} {
		i, n, err := parseShard(s)
		if err != nil || i != want[0] || n != want[1] {
			t.Errorf("%s: %d/%d %v, want %d/%d", s, i, n, err, want[0], want[1])
		}
	}
	for _, s := range []string{"3/3", "-1/3", "1", "a/3", "1/0", "auto/x"} {
		if _, _, err := parseShard(s); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
}
