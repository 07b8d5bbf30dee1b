package fingerprint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

var update = flag.Bool("update", false, "rewrite testdata/fingerprints.golden")

// newDefault returns an Extractor over the embedded rules.
func newDefault(tb testing.TB) *Extractor {
	tb.Helper()
	rules, err := DefaultRules()
	if err != nil {
		tb.Fatalf("DefaultRules: %v", err)
	}
	e, err := New(rules)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return e
}

// readAlerts reads testdata/alerts.jsonl: one openrecall.Alert per line.
func readAlerts(tb testing.TB) []openrecall.Alert {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "alerts.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []openrecall.Alert
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var a openrecall.Alert
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			tb.Fatalf("alerts.jsonl line %d: %v", line, err)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestGolden pins the fingerprint of every alert in testdata/alerts.jsonl.
// Run `go test ./fingerprint -run TestGolden -update` after a deliberate
// rules change and review the diff.
func TestGolden(t *testing.T) {
	e := newDefault(t)
	var b bytes.Buffer
	for _, a := range readAlerts(t) {
		fp := e.Extract(a)
		if err := fp.Validate(); err != nil {
			t.Errorf("alert %s: %v", a.ID, err)
		}
		fmt.Fprintf(&b, "%s %q -> %s\n", a.ID, a.Title, fp)
	}
	path := filepath.Join("testdata", "fingerprints.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("fingerprints differ from %s (-want +got):\n%s", path, diff)
	}
}

// TestGoldenAttacks checks the property the guard relies on over the whole
// corpus: an alert has an attack pattern exactly when it is a security alert
// (its id starts with "sec-").
func TestGoldenAttacks(t *testing.T) {
	e := newDefault(t)
	for _, a := range readAlerts(t) {
		fp := e.Extract(a)
		security := len(a.ID) > 4 && a.ID[:4] == "sec-"
		if fp.HasAttack() != security {
			t.Errorf("alert %s %q: attack_pattern %q, security alert %v", a.ID, a.Title, fp.AttackPattern, security)
		}
	}
}
