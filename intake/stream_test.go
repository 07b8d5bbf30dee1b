package intake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// queueReader generates a JSON Lines queue of n alerts on the fly, so that
// the test itself holds none of it in memory.
type queueReader struct {
	n, i int
	buf  []byte
}

func (q *queueReader) Read(p []byte) (int, error) {
	for len(q.buf) == 0 {
		if q.i == q.n {
			return 0, io.EOF
		}
		switch q.i % 4 {
		case 0:
			q.buf = fmt.Appendf(q.buf, `{"id":"a-%d","title":"disk full on db-%d","labels":{"env":"prod","service":"db"},"severity":"p2"}`+"\n", q.i, q.i%50)
		case 1:
			q.buf = fmt.Appendf(q.buf, `{"version":"4","alerts":[{"labels":{"alertname":"HighErrorRate","pod":"api-%d"},"fingerprint":"%016x","startsAt":"2026-11-30T03:42:06Z"}]}`+"\n", q.i, q.i)
		case 2:
			q.buf = fmt.Appendf(q.buf, `"free text alert %d"`+"\n", q.i)
		default:
			q.buf = fmt.Appendf(q.buf, "{\"title\": broken %d\n", q.i)
		}
		q.i++
	}
	n := copy(p, q.buf)
	q.buf = q.buf[n:]
	return n, nil
}

// hugeLine is head, n bytes of 'x', then tail, generated on the fly.
type hugeLine struct {
	head, tail string
	n, i       int
}

func (h *hugeLine) Read(p []byte) (int, error) {
	total := len(h.head) + h.n + len(h.tail)
	k := 0
	for ; k < len(p) && h.i < total; k, h.i = k+1, h.i+1 {
		switch {
		case h.i < len(h.head):
			p[k] = h.head[h.i]
		case h.i < len(h.head)+h.n:
			p[k] = 'x'
		default:
			p[k] = h.tail[h.i-len(h.head)-h.n]
		}
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// readCounting reads r to its end and counts alerts and rejected records,
// sampling the heap in use every n records.
func readCounting(t *testing.T, r *Reader, n int) (alerts, rejected, peak uint64) {
	t.Helper()
	for i := 0; ; i++ {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return alerts, rejected, peak
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Err != nil {
			rejected++
		} else {
			alerts++
		}
		if i%n == 0 {
			peak = max(peak, heapInuse())
		}
	}
}

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHeapFlat reads a generated 200k-line queue and checks that the heap
// in use stays under a fixed bound: the reader streams, it does not collect.
func TestHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200k lines")
	}
	const lines, bound = 200_000, 8 << 20
	before := heapInuse()
	alerts, rejected, peak := readCounting(t, NewReader(&queueReader{n: lines}, Options{}), 50_000)
	after := heapInuse()
	peak = max(peak, after)
	if alerts != 150_000 || rejected != 50_000 {
		t.Errorf("read %d alerts and %d rejected records, want 150000 and 50000", alerts, rejected)
	}
	t.Logf("heap in use: %d bytes before, %d at peak, %d after %d lines", before, peak, after, lines)
	if peak > before+bound {
		t.Errorf("heap in use grew from %d to %d bytes reading %d lines, over the %d bound", before, peak, lines, bound)
	}
}

// TestOversizedLineNotBuffered reads a 64 MiB line (or array element) with
// a 1 KiB limit: it is rejected, the next record is read, and the heap never
// holds the oversized one.
func TestOversizedLineNotBuffered(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	const size = 64 << 20
	after := "\n{\"title\":\"after\"}\n"
	tests := []struct {
		name       string
		format     Format
		head, tail string
		wantErr    string
		wantPos    string
	}{
		{"text", FormatAuto, "", after, fmt.Sprintf("line 1: record is %d bytes, over the limit of 1024 bytes", size), "line 2"},
		{"jsonl", FormatJSONL, "", after, fmt.Sprintf("line 1: record is %d bytes, over the limit of 1024 bytes", size), "line 2"},
		{"forced text", FormatText, "", after, fmt.Sprintf("line 1: record is %d bytes, over the limit of 1024 bytes", size), "line 2"},
		{"json object line", FormatAuto, `{"title":"`, `"}` + after, fmt.Sprintf("line 1: record is %d bytes, over the limit of 1024 bytes", size+12), "line 2"},
		{"array element", FormatAuto, `[{"title":"`, `"},{"title":"after"}]`, fmt.Sprintf("index 0: record is %d bytes, over the limit of 1024 bytes", size+12), "index 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := heapInuse()
			r := NewReader(&hugeLine{head: tt.head, tail: tt.tail, n: size}, Options{Format: tt.format, MaxRecordBytes: 1024})
			rec, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			mid := heapInuse()
			t.Logf("heap in use: %d bytes before, %d after rejecting the record", before, mid)
			if rec.Err == nil || rec.Err.Error() != tt.wantErr {
				t.Errorf("first record %+v, want %q", rec.Err, tt.wantErr)
			}
			if mid > before+8<<20 {
				t.Errorf("heap grew from %d to %d bytes rejecting a %d-byte record", before, mid, size)
			}
			rec, err = r.Next()
			if err != nil || rec.Err != nil || !strings.Contains(rec.Alert.Title, "after") || rec.Alert.Position.String() != tt.wantPos {
				t.Errorf("second record %+v, %v; want the one after at %s", rec, err, tt.wantPos)
			}
		})
	}
}

// FuzzReader checks that no input makes the reader panic or loop, and that
// every record is either an alert with an id and a valid severity or a
// rejection with a position and a reason.
func FuzzReader(f *testing.F) {
	seeds := []string{
		"", "\xEF\xBB\xBF", "{\"title\":\"a\"}\n", "not json\n", "[1,2,{\"title\":\"x\"}]", "{\n\"title\":\"pretty\"\n}\n",
		`{"version":"4","alerts":[{"labels":{"alertname":"A"}},{"labels":3}]}`,
		`{"event_action":"trigger","dedup_key":"k","payload":{"summary":"s","custom_details":{"a":[1]}}}`,
		`[{"labels":{"alertname":"P"},"startsAt":"2026-11-30T03:00:00Z"}`, "\"free\"\n\"\"\n", "[,,]", "{\"a\":\"\\\"}\n}",
		"{\"title\":\"a\"} x\r\n\r\n", "]]]}}}", "[[[[", "\"unterminated\n{\"title\":\"b\"}",
	}
	for _, s := range seeds {
		for _, format := range []Format{FormatAuto, FormatJSONL} {
			f.Add(s, string(format), 64)
		}
	}
	f.Add("{\"title\":\"a\"}", string(FormatPagerDuty), 0)
	// The bad-input corpus of the reliability suite.
	corpus, err := filepath.Glob("../tests/reliability/testdata/badinput/*")
	if err != nil || len(corpus) == 0 {
		f.Fatalf("bad-input corpus: %v (%d files)", err, len(corpus))
	}
	for _, path := range corpus {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), string(FormatAuto), 0)
		f.Add(string(data), string(FormatJSONL), 48)
	}
	f.Fuzz(func(t *testing.T, in, format string, limit int) {
		fm, err := ParseFormat(format)
		if err != nil {
			fm = FormatAuto
		}
		limit = limit%4096 + 1
		if limit < 1 {
			limit = -limit + 1
		}
		opts := Options{Format: fm, MaxRecordBytes: limit, MaxDocumentBytes: 2 * limit}
		r := NewReader(strings.NewReader(in), opts)
		for n := 0; ; n++ {
			if n > len(in)+1 {
				t.Fatalf("more records (%d) than input bytes (%d)", n, len(in))
			}
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("I/O error from a strings.Reader: %v", err)
			}
			checkRecord(t, rec)
		}
		recs, err := ParseBytes([]byte(in), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			checkRecord(t, rec)
		}
	})
}

func checkRecord(t *testing.T, rec Record) {
	t.Helper()
	if rec.Err != nil {
		if rec.Err.Reason == "" {
			t.Fatalf("rejection without a reason at %v", rec.Err.Position)
		}
		if rec.Alert.ID != "" {
			t.Fatalf("record has both an alert and an error: %+v", rec)
		}
		return
	}
	a := rec.Alert
	if a.ID == "" || a.Format == "" || (a.Status != "firing" && a.Status != "resolved") {
		t.Fatalf("alert lacks id, format or status: %+v", a)
	}
	if a.Title == "" && a.Text == "" && len(a.Labels) == 0 && a.Status != "resolved" {
		t.Fatalf("empty alert accepted: %+v", a)
	}
	valid := false
	for _, s := range openrecall.Severities {
		valid = valid || a.Severity == s
	}
	if !valid {
		t.Fatalf("severity %q is not normalized", a.Severity)
	}
	if e := a.Environment; e != "" && e != "prod" && e != "staging" && e != "dev" {
		t.Fatalf("environment %q is not normalized", e)
	}
	if a.Position.Line == 0 && !a.Position.HasIndex {
		t.Fatalf("alert without a position: %+v", a)
	}
	for _, s := range []string{a.Title, a.Text, a.Service, a.ID} {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 in %q", s)
		}
		for _, r := range s {
			if r < 0x20 && r != '\n' && r != '\t' {
				t.Fatalf("control character %U in %q", r, s)
			}
		}
	}
}

// BenchmarkReaderJSONL reads a generated JSON Lines queue (a mix of generic
// alerts, webhooks, bare strings and bad lines).
func BenchmarkReaderJSONL(b *testing.B) {
	const lines = 20_000
	var size int64
	q := &queueReader{n: lines}
	data, _ := io.ReadAll(q)
	size = int64(len(data))
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), Options{})
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "alerts/s")
}

// BenchmarkReaderArray reads a generated JSON array of alerts, streamed
// element by element.
func BenchmarkReaderArray(b *testing.B) {
	const elements = 20_000
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i := range elements {
		if i > 0 {
			buf.WriteString(",\n")
		}
		fmt.Fprintf(&buf, `  {"id":"a-%d","title":"disk full on db-%d","labels":{"env":"prod","service":"db"},"severity":"p2","text":"free space below 5%% on /var/lib/postgresql"}`, i, i%50)
	}
	buf.WriteString("\n]\n")
	benchmarkAlerts(b, buf.Bytes(), elements)
	b.ReportMetric(float64(elements)*float64(b.N)/b.Elapsed().Seconds(), "alerts/s")
}

// benchmarkAlerts reads data, which holds want alerts and no rejected
// record, b.N times.
func benchmarkAlerts(b *testing.B, data []byte, want int) {
	b.Helper()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), Options{})
		n := 0
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			if rec.Err != nil {
				b.Fatal(rec.Err)
			}
			n++
		}
		if n != want {
			b.Fatalf("read %d alerts, want %d", n, want)
		}
	}
}

// TestControlOnlyAlertsAreRejected pins what FuzzReader found: an alert
// whose only content is control characters passed the shapes' blank checks
// (made before cleaning) and came out of cleaning empty, yet accepted.
func TestControlOnlyAlertsAreRejected(t *testing.T) {
	for _, in := range []string{
		`{"title":"\u007f"}`,
		"{\"title\":\"\x7f\"}",
		`{"title":" \u0001 ","text":"\u0085"}`,
		`{"status":"firing","alerts":[{"status":"firing","annotations":{"summary":"\u007f"}}]}`,
		`{"payload":{"summary":"\u0007","source":"x","severity":"info"},"event_action":"trigger","routing_key":"k"}`,
	} {
		recs, err := ParseBytes([]byte(in), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].Err == nil || !strings.Contains(recs[0].Err.Reason, "empty alert") {
			t.Errorf("%q: %+v, want one record rejected as an empty alert", in, recs)
		}
	}
}
