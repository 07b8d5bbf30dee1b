package openrecall_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// designFile is the design that code and documents cite as "DESIGN §N".
const designFile = "docs/design.md"

var (
	// designHeading is a numbered section heading of the design: "## 6a. …".
	designHeading = regexp.MustCompile(`(?m)^#{2,3} (\d+[a-z]?)\. `)
	// sectionCite is one cited section: "§4", "§6a", "§6 e" (section 6).
	sectionCite = regexp.MustCompile(`§(\d+[a-z]?)`)
)

// citingFile reports whether a file of the repository may cite the design:
// source, documentation, rules, migrations, mutants and build files.
func citingFile(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".md", ".yaml", ".yml", ".mut", ".sql", ".sh", ".txt":
		return true
	}
	return name == "Makefile"
}

// repoFiles returns the repository's files that citingFile accepts, outside
// testdata (third-party payloads), hidden folders and build output.
func repoFiles(t *testing.T, keep func(name string) bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if base := d.Name(); path != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "bin" || base == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(d.Name()) {
			out = append(out, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDesignCitations: every section cited with "§N" in code and documents
// (the design's own cross-references included) is a numbered heading of
// docs/design.md, and nothing names a design file other than that one.
func TestDesignCitations(t *testing.T) {
	design, err := os.ReadFile(designFile)
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	for _, m := range designHeading.FindAllStringSubmatch(string(design), -1) {
		sections = append(sections, m[1])
	}
	for _, want := range []string{"1", "4", "6", "6a", "6b", "7", "12", "12a", "14"} {
		if !slices.Contains(sections, want) {
			t.Errorf("%s has no heading for §%s (headings: %v)", designFile, want, sections)
		}
	}
	stale := "DESIGN" + ".md" // the design's name before it lived in docs/
	cites := 0
	for _, path := range repoFiles(t, citingFile) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range sectionCite.FindAllStringSubmatch(line, -1) {
				cites++
				if !slices.Contains(sections, m[1]) {
					t.Errorf("%s:%d cites §%s, which is no section of %s: %s", path, i+1, m[1], designFile, strings.TrimSpace(line))
				}
			}
			if strings.Contains(line, stale) {
				t.Errorf("%s:%d names %s: the design is %s", path, i+1, stale, designFile)
			}
		}
	}
	if cites < 100 {
		t.Errorf("found %d section citations: the scan missed the code and documents that cite the design", cites)
	}
	t.Logf("%d section citations checked against the %d sections of %s", cites, len(sections), designFile)
}
