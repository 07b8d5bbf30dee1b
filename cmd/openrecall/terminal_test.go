package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// hostile is text that steers a terminal: it sets the window title, clears
// the screen, and turns the rest of the line around.
const hostile = "ok\x1b]0;pwned\x07\x1b[2J\u202eevil\u2066"

// steering lists what must never reach a terminal raw.
var steering = []string{"\x1b", "\x07", "\u202e", "\u2066", "\x9b", "\r"}

func assertSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range steering {
		if strings.Contains(out, c) {
			t.Errorf("%s prints %q raw:\n%q", what, c, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s prints invalid UTF-8: %q", what, out)
	}
}

func TestTerminalSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcode and 日本語\tcolumns\n", "plain text, ünïcode and 日本語\tcolumns\n"},
		{"\x1b[2J", `\u001b[2J`},
		{"bell\x07 cr\r del\x7f", `bell\u0007 cr\u000d del\u007f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"a\u202eb\u2066c\u2069d\u200fe\u061cf", `a\u202eb\u2066c\u2069d\u200fe\u061cf`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff byte, real \ufffd", `bad \xff byte, real ` + "\ufffd"},
	}
	for _, tt := range tests {
		if got := terminalSafe(tt.in); got != tt.want {
			t.Errorf("terminalSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSafeWriterSplitRune writes a bidi override one byte at a time: it is
// still recognised and escaped, and JSON passed through decodes to the
// same value.
func TestSafeWriterSplitRune(t *testing.T) {
	var buf bytes.Buffer
	w := &safeWriter{w: &buf}
	doc, _ := json.Marshal(map[string]string{"note": hostile + "\x7f\u0085"})
	for i := range doc {
		if _, err := w.Write(doc[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	assertSafe(t, "safeWriter", buf.String())
	var got map[string]string
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got["note"] != hostile+"\x7f\u0085" {
		t.Errorf("JSON through the writer: %v, note %q", err, got["note"])
	}
	buf.Reset()
	if _, err := w.Write([]byte("cut \xe2\x80")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != `cut \xe2\x80` {
		t.Errorf("a character cut at the end: %q", buf.String())
	}
}

// TestCommandsPrintStoredTextSafely retains a memory whose note, analyst and
// dead end carry terminal escapes and a bidi override, analyses an alert
// whose id and title carry them, and uses a database path with them: recall,
// audit show, analyze and memory stats print them escaped, and the JSON
// output decodes to the exact stored text.
func TestCommandsPrintStoredTextSafely(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x\x1b[2J\u202e")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "memory.db")
	fp := "error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod"
	r := runCLI(t, "", "--db", db, "retain", "--fingerprint", fp, "--decision", "known_benign",
		"--note", "note "+hostile, "--dead-end", "dead end "+hostile, "--analyst", "ana "+hostile)
	if r.code != exitOK {
		t.Fatalf("retain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSafe(t, "retain", r.stdout+r.stderr)

	r = runCLI(t, "", "--db", db, "recall", "--fingerprint", fp)
	if r.code != exitOK || !strings.Contains(r.stdout, `\u001b]0;pwned`) {
		t.Fatalf("recall: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSafe(t, "recall", r.stdout+r.stderr)
	r = runCLI(t, "", "--db", db, "recall", "--fingerprint", fp, "-o", "json")
	var got struct{ Matches []openrecall.Match }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Matches) != 1 {
		t.Fatalf("recall -o json: %v\n%s", err, r.stdout)
	}
	inc := got.Matches[0].Incident
	if inc.Note != "note "+hostile || inc.Analyst != "ana "+hostile || len(inc.DeadEnds) != 1 || inc.DeadEnds[0] != "dead end "+hostile {
		t.Errorf("recall -o json does not give the stored text exactly: %+v", inc)
	}
	assertSafe(t, "recall -o json", r.stdout)

	alert := `{"id":"id-` + jsonEscape(hostile) + `","title":"disk full ` + jsonEscape(hostile) + `","severity":"high"}` + "\n"
	r = runCLI(t, alert, "--db", db, "analyze", "-")
	if r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSafe(t, "analyze", r.stdout+r.stderr)
	r = runCLI(t, alert, "--db", db, "analyze", "-o", "jsonl", "-")
	rs := decodeResults(t, r.stdout)
	// Intake drops C0 controls from an id; the bidi override stays.
	if len(rs) != 1 || !strings.Contains(rs[0].Alert.ID, "\u202eevil") {
		t.Fatalf("analyze -o jsonl does not keep the alert id: %q", rs[0].Alert.ID)
	}
	r = runCLI(t, "", "--db", db, "audit", "show", rs[0].AnalysisID)
	if r.code != exitOK || !strings.Contains(r.stdout, `pwned[2J\u202eevil\u2066`) {
		t.Fatalf("audit show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSafe(t, "audit show", r.stdout+r.stderr)

	r = runCLI(t, "", "--db", db, "memory", "stats")
	if r.code != exitOK || !strings.Contains(r.stdout, `x\u001b[2J\u202e`) {
		t.Fatalf("memory stats: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSafe(t, "memory stats", r.stdout+r.stderr)
	r = runCLI(t, "", "--db", db, "audit", "show", "no-such-"+hostile)
	assertSafe(t, "an error message", r.stdout+r.stderr)
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
