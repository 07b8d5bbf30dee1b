package intake

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPerLineDetection pins the rules of DESIGN §3: each line is
// classified by its own first byte, whatever line 1 was.
func TestPerLineDetection(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []brief
	}{
		{"text first, JSON later keeps its fields", "some text header\n{\"id\":\"a1\",\"title\":\"db down\",\"severity\":\"critical\",\"environment\":\"prod\",\"service\":\"db\"}\n",
			[]brief{{"line 1", "some text header"}, {"line 2", "db down"}}},
		{"comment above a pretty-printed webhook", "# captured from prod\n{\n  \"version\": \"4\",\n  \"status\": \"firing\",\n  \"alerts\": [\n    {\"labels\": {\"alertname\": \"A\"}},\n    {\"labels\": {\"alertname\": \"B\"}}\n  ]\n}\n",
			[]brief{{"line 2, item 0", "A"}, {"line 2, item 1", "B"}}},
		{"comments between lines", "# one\n{\"title\":\"a\"}\n  # indented comment\ndisk full\n",
			[]brief{{"line 2", "a"}, {"line 4", "disk full"}}},
		{"bracketed text is text", "[FIRING:2] disk full\n[1] host down\n[warn cpu high\n",
			[]brief{{"line 1", "[FIRING:2] disk full"}, {"line 2", "[1] host down"}, {"line 3", "[warn cpu high"}}},
		{"a JSON array line is an array", "disk full\n[\"a\",{\"title\":\"b\"}]\n",
			[]brief{{"line 1", "disk full"}, {"line 2, item 0", "a"}, {"line 2, item 1", "b"}}},
		{"a quoted text line is text", "\"disk\" full on db-1\n\"json string\"\n",
			[]brief{{"line 1", "\"disk\" full on db-1"}, {"line 2", "json string"}}},
		{"a broken object line stays JSON", "disk full\n{\"title\": broken\nnext alert\n",
			[]brief{{"line 1", "disk full"}, {"line 2", "error: invalid JSON: unexpected character 'b' at byte 11"}, {"line 3", "next alert"}}},
		{"a JSON string line after an unclosed object is kept", "{\"title\": \"latency\", \"severity\": \"high\"\n\"disk full\"\n{\n  \"title\": \"x\",\n  \"text\": oops\n  \"more\": 1\n}\n\"next\"\n",
			[]brief{{"line 1", "error: invalid JSON: unexpected end of input after 39 bytes"}, {"line 2", "disk full"},
				{"line 3", "error: invalid JSON: unexpected character 'o' at byte 29"}, {"line 8", "next"}}},
		{"control characters and invalid UTF-8 are not text", "ok one\nbell \a here\nlatin1 caf\xe9\nok two\n",
			[]brief{{"line 1", "ok one"}, {"line 2", "error: not text: control character 0x07 at byte 6"},
				{"line 3", "error: not text: invalid UTF-8 (byte 0xe9 at byte 11)"}, {"line 4", "ok two"}}},
		{"text that looks like key: value is text", "Error: disk full on db-1\nWarning: cpu high on web-2\n",
			[]brief{{"line 1", "Error: disk full on db-1"}, {"line 2", "Warning: cpu high on web-2"}}},
		{"text with commas is text", "disk full on db-1, db-2, db-3\ncpu high on a, b, c\n",
			[]brief{{"line 1", "disk full on db-1, db-2, db-3"}, {"line 2", "cpu high on a, b, c"}}},
		{"syslog priority is text", "<13>Nov 30 sshd[1]: Failed password for root\n",
			[]brief{{"line 1", "<13>Nov 30 sshd[1]: Failed password for root"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, briefs(readAll(t, tt.in, Options{}))); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
	recs := readAll(t, tests[0].in, Options{})
	if a := recs[1].Alert; a.ID != "a1" || a.Environment != "prod" || a.Service != "db" || a.Severity != "critical" || a.Format != "jsonl" {
		t.Errorf("JSON after a text line lost its fields: %+v", a)
	}
}

// TestNotAlertDocuments: binary data and YAML, XML or CSV documents are one
// rejected record each, whatever their length; nothing in them is an alert.
func TestNotAlertDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	elf := append([]byte("\x7fELF\x02\x01\x01\x00\x00\x00"), bytes.Repeat([]byte("text segment\n"), 50000)...)
	noNUL := bytes.ReplaceAll(random, []byte{0}, []byte{1})
	tests := []struct {
		name, in, reason string
		opts             Options
	}{
		{"random bytes", string(random), "binary data (a NUL byte at byte", Options{}},
		{"random bytes without NUL", string(noNUL), "binary data (", Options{}},
		{"executable", string(elf), "binary data (a NUL byte at byte 8)", Options{}},
		{"executable, forced jsonl", string(elf), "binary data (a NUL byte at byte 8)", Options{Format: FormatJSONL}},
		{"UTF-16 text", "\xff\xfed\x00i\x00s\x00k\x00\n\x00", "binary data (a NUL byte", Options{}},
		{"YAML rules", "# rules\ngroups:\n- name: x\n  rules:\n  - alert: A\n    expr: up == 0\n", "a YAML document", Options{}},
		{"YAML with a document marker", "---\nfoo: bar\n", "a YAML document", Options{}},
		{"YAML manifest", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "a YAML document", Options{}},
		{"YAML, forced text", "groups:\n  - name: x\n", "a YAML document", Options{Format: FormatText}},
		{"XML", "<?xml version=\"1.0\"?>\n<alerts>\n  <alert>disk</alert>\n</alerts>\n", "an XML document", Options{}},
		{"HTML", "<html>\n<body>oops</body>\n</html>\n", "an XML document", Options{}},
		{"CSV", "alertname,severity,instance\nDiskFull,critical,host1\nCPUHigh,warning,host2\n", "a CSV document", Options{}},
		{"TSV", "alertname\tseverity\tinstance\nDiskFull\tcritical\thost1\n", "a CSV document", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := readAll(t, tt.in, tt.opts)
			if len(recs) != 1 || recs[0].Err == nil || recs[0].Err.Position.String() != "line 1" ||
				!strings.HasPrefix(recs[0].Err.Reason, tt.reason) || !strings.Contains(recs[0].Err.Reason, "not alerts") {
				t.Fatalf("got %d records, first %+v; want one rejection at line 1 starting %q", len(recs), recs[0], tt.reason)
			}
		})
	}
}

// TestLargeWebhookStreamed: a webhook over the record limit, on one line or
// pretty-printed, auto-detected or forced, is read item by item.
func TestLargeWebhookStreamed(t *testing.T) {
	const n = 300
	var items []string
	for i := range n {
		items = append(items, fmt.Sprintf(`{"status":"firing","labels":{"alertname":"A%d","severity":"critical"},"annotations":{"summary":"s%d"},"startsAt":"2026-11-30T03:00:00Z","fingerprint":"%016x"}`, i, i, i))
	}
	line := `{"receiver":"r","status":"firing","alerts":[` + strings.Join(items, ",") + `],"groupLabels":{},"version":"4","groupKey":"k"}`
	pretty := "{\n  \"receiver\": \"r\",\n  \"status\": \"firing\",\n  \"alerts\": [\n    " + strings.Join(items, ",\n    ") + "\n  ],\n  \"version\": \"4\"\n}\n"
	for name, in := range map[string]string{"one line": line, "pretty": pretty, "after a text line": "disk full\n" + line} {
		for _, f := range []Format{FormatAuto, FormatAlertmanager} {
			t.Run(fmt.Sprintf("%s/%s", name, f), func(t *testing.T) {
				if f == FormatAlertmanager && strings.HasPrefix(in, "disk") {
					t.Skip("text is not a webhook")
				}
				opts := Options{Format: f, MaxRecordBytes: 1024}
				var alerts int
				for _, rec := range readAll(t, in, opts) {
					if rec.Err != nil {
						t.Fatalf("rejected: %v", rec.Err)
					}
					if rec.Alert.Format == "alertmanager" {
						alerts++
					}
				}
				if alerts != n {
					t.Errorf("read %d webhook alerts, want %d", alerts, n)
				}
				recs, err := ParseBytes([]byte(in), opts)
				if err != nil || len(recs) < n || recs[len(recs)-1].Err != nil {
					t.Errorf("ParseBytes: %d records, %v", len(recs), err)
				}
			})
		}
	}
}

// TestBrokenElementLosesOnlyItself: a broken alerts[] item or array
// element, or a broken JSON Lines line followed by more than the record
// limit of good lines, costs one record.
func TestBrokenElementLosesOnlyItself(t *testing.T) {
	var good strings.Builder
	for i := range 100 {
		fmt.Fprintf(&good, "{\"id\":\"g%d\",\"title\":\"alert %d\"}\n", i, i)
	}
	tests := []struct {
		name     string
		in       string
		rejected []string
		alerts   int
	}{
		{"broken first line, then more than the limit", "{\"id\":\"x\",\"title\":\"broken\"\n" + good.String(), []string{"line 1"}, 100},
		{"broken nested first line, then more than the limit", "{\"labels\":{\"a\":\"b\"\n" + good.String(), []string{"line 1"}, 100},
		{"broken array first line, then more than the limit", "{\"tags\":[1,2\n" + good.String(), []string{"line 1"}, 100},
		{"broken webhook item", "{\"version\":\"4\",\"alerts\":[{\"labels\":{\"alertname\":\"A\"}},{\"labels\":{\"alertname\":}},{\"labels\":{\"alertname\":\"C\"}}]}\n" + good.String(),
			[]string{"line 1, item 1"}, 102},
		{"broken element of a pretty-printed array", "[\n  {\"title\":\"a\"},\n  {\"title\": nope},\n  {\"title\":\"c\"}\n]\n" + good.String(), []string{"index 1"}, 102},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rejected []string
			alerts := 0
			for _, rec := range readAll(t, tt.in, Options{MaxRecordBytes: 512}) {
				if rec.Err != nil {
					rejected = append(rejected, rec.Err.Position.String())
				} else {
					alerts++
				}
			}
			if diff := cmp.Diff(tt.rejected, rejected); diff != "" || alerts != tt.alerts {
				t.Errorf("rejected (-want +got):\n%s\nalerts %d, want %d", diff, alerts, tt.alerts)
			}
		})
	}
}

// webhookReader generates a pretty-printed (or one-line) Alertmanager
// webhook of n alerts on the fly.
type webhookReader struct {
	n, i   int
	pretty bool
	buf    []byte
	done   bool
}

func (w *webhookReader) Read(p []byte) (int, error) {
	sep := ""
	if w.pretty {
		sep = "\n  "
	}
	for len(w.buf) == 0 {
		switch {
		case w.done:
			return 0, io.EOF
		case w.i == 0:
			w.buf = fmt.Appendf(w.buf, `{%s"receiver": "r",%s"status": "firing",%s"alerts": [`, sep, sep, sep)
		case w.i <= w.n:
			if w.i > 1 {
				w.buf = append(w.buf, ',')
			}
			w.buf = fmt.Appendf(w.buf, `%s{"status":"firing","labels":{"alertname":"A%d","pod":"p-%d"},"annotations":{"summary":"disk full"},"startsAt":"2026-11-30T03:00:00Z","fingerprint":"%016x"}`, sep, w.i, w.i, w.i)
		default:
			w.buf = fmt.Appendf(w.buf, `%s],%s"version": "4"%s}`+"\n", sep, sep, "\n")
			w.done = true
		}
		w.i++
	}
	k := copy(p, w.buf)
	w.buf = w.buf[k:]
	return k, nil
}

// TestWebhookHeapFlat reads a 100k-alert webhook, pretty-printed and on one
// line: the heap in use stays under a bound that does not grow with it.
func TestWebhookHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100k alerts")
	}
	for _, pretty := range []bool{true, false} {
		t.Run(fmt.Sprintf("pretty=%v", pretty), func(t *testing.T) {
			const n, bound = 100_000, 8 << 20
			before := heapInuse()
			alerts, rejected, peak := readCounting(t, NewReader(&webhookReader{n: n, pretty: pretty}, Options{}), 25_000)
			if rejected != 0 {
				t.Errorf("%d records rejected", rejected)
			}
			if alerts != n {
				t.Errorf("read %d alerts, want %d", alerts, n)
			}
			t.Logf("heap in use: %d bytes before, %d at peak", before, peak)
			if peak > before+bound {
				t.Errorf("heap grew from %d to %d bytes reading a %d-alert webhook", before, peak, n)
			}
		})
	}
}

// TestWebhookAlertsFirst: a webhook whose alerts array comes before its
// own fields (Go's encoding/json sorts map keys, so "alerts" is first) is
// still read as a webhook: a resolved item stays resolved, and an item with
// null labels but a summary is an alert. Found by P30 (resolved never triaged).
func TestWebhookAlertsFirst(t *testing.T) {
	in := `{"alerts":[{"annotations":{"summary":"DNS failures"},"endsAt":"2026-11-29T21:20:00Z","fingerprint":"0000000000000001","labels":null,"startsAt":"2026-11-29T21:10:00Z","status":"resolved"},` +
		`{"fingerprint":"0000000000000002","labels":{"alertname":"B"},"startsAt":"2026-11-29T21:10:00Z","status":"firing"}],"groupKey":"{}","receiver":"r","status":"resolved","version":"4"}`
	recs := readAll(t, in, Options{})
	if len(recs) != 2 || recs[0].Err != nil || recs[1].Err != nil {
		t.Fatalf("got %+v", recs)
	}
	for i, want := range []string{"resolved", "firing"} {
		if a := recs[i].Alert; a.Status != want || a.Format != "alertmanager" {
			t.Errorf("item %d: status %q format %q, want %q alertmanager", i, a.Status, a.Format, want)
		}
	}
}
