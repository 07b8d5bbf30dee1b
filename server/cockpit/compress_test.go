package cockpit_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/server/cockpit"
)

// TestPagesGzipped: a page is gzipped when the browser accepts it and
// sent as it is when it does not, both saying Vary: Accept-Encoding and
// both keeping every security header.
func TestPagesGzipped(t *testing.T) {
	e := newEnv(t)
	for i := range 30 {
		e.waiting(t, i+1, fmt.Sprintf("disk %d nearly full", i), map[string]string{"alertname": "DiskFull"}, "", t0)
	}
	alice := e.session(t, "alice-secret")
	// A transport that leaves Accept-Encoding and the body as they are.
	alice.Transport = &http.Transport{DisableCompression: true}
	tests := []struct {
		name, accept string
		gzipped      bool
	}{
		{"gzip asked", "gzip, deflate, br", true},
		{"gzip with a q-value", "br;q=1.0, gzip;q=0.5", true},
		{"nothing asked", "", false},
		{"gzip refused", "gzip;q=0, identity", false},
		{"another encoding", "br", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/ui/queue", nil)
			if tt.accept != "" {
				req.Header.Set("Accept-Encoding", tt.accept)
			}
			resp, raw := do(t, alice, req)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d", resp.StatusCode)
			}
			checkCSP(t, "/ui/queue", resp)
			if v := resp.Header.Values("Vary"); !contains(v, "Accept-Encoding") {
				t.Errorf("Vary %q lacks Accept-Encoding", v)
			}
			body := raw
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tt.gzipped {
				t.Fatalf("Content-Encoding %q, want gzip %v", resp.Header.Get("Content-Encoding"), tt.gzipped)
			}
			if tt.gzipped {
				body = gunzip(t, raw)
				t.Logf("queue of 30: %d bytes, %d gzipped (%.1fx)", len(body), len(raw), float64(len(body))/float64(len(raw)))
			}
			if !strings.Contains(body, "disk 29 nearly full") || !strings.HasSuffix(strings.TrimSpace(body), "</html>") {
				t.Errorf("the page is not whole:\n%s", body)
			}
		})
	}
}

func contains(vs []string, want string) bool {
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), want) {
				return true
			}
		}
	}
	return false
}

func gunzip(t *testing.T, b string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return string(out)
}

// TestCompressLeavesSmallAndStreamedBodies: a body under CompressMin, an
// event stream, a body already encoded and an answer to HEAD go out as
// they are; a flush sends what was written at once.
func TestCompressLeavesSmallAndStreamedBodies(t *testing.T) {
	big := strings.Repeat("<p>row</p>\n", 400)
	tests := []struct {
		name    string
		method  string
		h       http.HandlerFunc
		gzipped bool
		want    string
	}{
		{"small", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<p>tiny</p>")
		}, false, "<p>tiny</p>"},
		{"big in small writes", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for range 400 {
				_, _ = io.WriteString(w, "<p>row</p>\n")
			}
		}, true, big},
		{"big with a status", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, big)
		}, true, big},
		{"event stream", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, big)
		}, false, big},
		{"already encoded", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "br")
			_, _ = io.WriteString(w, big)
		}, false, big},
		{"image", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = io.WriteString(w, big)
		}, false, big},
		{"flushed early", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<p>first</p>")
			_ = http.NewResponseController(w).Flush()
			_, _ = io.WriteString(w, big)
		}, false, "<p>first</p>" + big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(cockpit.Compress(tt.h))
			defer srv.Close()
			req, _ := http.NewRequest(tt.method, srv.URL, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			raw, _ := io.ReadAll(resp.Body)
			body := string(raw)
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tt.gzipped {
				t.Fatalf("Content-Encoding %q, want gzip %v", resp.Header.Get("Content-Encoding"), tt.gzipped)
			}
			if tt.gzipped {
				body = gunzip(t, body)
			}
			if body != tt.want {
				t.Errorf("body %d bytes, want %d", len(body), len(tt.want))
			}
			if !contains(resp.Header.Values("Vary"), "Accept-Encoding") {
				t.Errorf("no Vary: Accept-Encoding")
			}
		})
	}
}

// BenchmarkCompressQueue reports the bytes of a queue page before and
// after gzip.
func BenchmarkCompressQueue(b *testing.B) {
	e := newEnv(b)
	for i := range 200 {
		e.waiting(b, i+1, fmt.Sprintf("disk %d nearly full on node-%d", i, i%17), map[string]string{"alertname": "DiskFull", "node": fmt.Sprint(i % 17)}, "", t0)
	}
	alice := e.session(b, "alice-secret")
	alice.Transport = &http.Transport{DisableCompression: true}
	var plain, zipped int
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/ui/queue", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		_, raw := do(b, alice, req)
		zr, err := gzip.NewReader(bytes.NewReader([]byte(raw)))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(zr)
		plain, zipped = len(out), len(raw)
	}
	b.ReportMetric(float64(plain), "html-bytes")
	b.ReportMetric(float64(zipped), "gzip-bytes")
}
