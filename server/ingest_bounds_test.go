package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/server"
)

// amWebhook is an Alertmanager webhook of n firing alerts, node-first to
// node-(first+n-1).
func amWebhook(first, n int) string {
	items := make([]string, n)
	for j := range items {
		i := first + j
		items[j] = fmt.Sprintf(`{"status":"firing","labels":{"alertname":"DiskFull","instance":"node-%d","severity":"warning"},`+
			`"annotations":{"summary":"disk 97%% full on node-%d"},"startsAt":"2026-01-01T00:00:00Z","fingerprint":"f%04d"}`, i, i, i)
	}
	return `{"version":"4","status":"firing","receiver":"openrecall","groupLabels":{},"commonLabels":{},"alerts":[` + strings.Join(items, ",") + `]}`
}

// TestWebhookLargerThanInboxLimit: server.inbox_limit is back-pressure, not
// a ceiling on one request. A webhook of more alerts than the limit on an
// empty inbox is accepted (it was answered 503 with Retry-After forever,
// and Alertmanager retried it forever); while the backlog it left is over
// the limit the next body is refused with 503 and Retry-After. Fails
// without the fix.
func TestWebhookLargerThanInboxLimit(t *testing.T) {
	e := newEnv(t, options{noServe: true, inboxLimit: 2})
	var acc accepted
	resp := e.post("/api/v1/alerts/alertmanager", "", amWebhook(0, 5), &acc)
	if resp.StatusCode != http.StatusAccepted || acc.Accepted != 5 {
		t.Fatalf("5 alerts into an empty inbox limited to 2: %d %+v, want 202 with 5 accepted", resp.StatusCode, acc)
	}
	var out map[string]any
	resp = e.post("/api/v1/alerts/alertmanager", "", amWebhook(9, 1), &out)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a webhook while 5 wait, limit 2: %d %v, want 503 with Retry-After", resp.StatusCode, out)
	}
	if n, _ := e.store.InboxDepth(t.Context()); n != 5 {
		t.Errorf("inbox depth %d, want 5", n)
	}
}

// countingListener counts the bytes the server reads from every connection
// it accepts.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// paddedEvent streams a JSON body of about size bytes without holding it:
// head, a string of 'A's, tail.
func paddedEvent(head, tail string, size int) io.Reader {
	pad := max(size-len(head)-len(tail), 0)
	return io.MultiReader(strings.NewReader(head), io.LimitReader(repeatReader('A'), int64(pad)), strings.NewReader(tail))
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// rawPost sends a POST over its own connection, writing the body while it
// reads the answer (a server that answers early and closes must not block
// the test on a full socket), and returns the status code of the answer.
// chunked sends the body without a Content-Length.
func rawPost(t *testing.T, addr, path string, header map[string]string, body io.Reader, size int, chunked bool) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	var h strings.Builder
	fmt.Fprintf(&h, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", path, addr)
	if chunked {
		h.WriteString("Transfer-Encoding: chunked\r\n")
	} else {
		fmt.Fprintf(&h, "Content-Length: %d\r\n", size)
	}
	for k, v := range header {
		fmt.Fprintf(&h, "%s: %s\r\n", k, v)
	}
	h.WriteString("\r\n")
	go func() {
		// Errors are expected once the server closes: it refused the rest.
		if _, err := io.WriteString(c, h.String()); err != nil {
			return
		}
		if chunked {
			cw := httputil.NewChunkedWriter(c)
			if _, err := io.Copy(cw, body); err != nil {
				return
			}
			_ = cw.Close()
			_, _ = io.WriteString(c, "\r\n")
			return
		}
		_, _ = io.Copy(c, body)
	}()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	_ = resp.Body.Close()
	// The server is done with the connection (and with reading from it)
	// when it closes it, as it does after refusing a body it did not read;
	// one that keeps the connection read the whole body before answering.
	if resp.Close {
		_, _ = io.Copy(io.Discard, br)
	}
	return resp.StatusCode
}

// TestIngestRefusedReadsABoundedPrefix: an ingest request without a valid
// credential is refused having read a bounded prefix of its body, counted
// on the server's side of a real loopback connection. PagerDuty's
// /v2/enqueue and /api/v1/alerts/pagerduty read the whole body (up to
// server.max_body_bytes) and parsed it before checking the routing_key in
// it: 16 concurrent 30 MiB bodies with a wrong key took the server from
// 72 MiB to 1.1 GiB. Now the headers are checked first and the routing_key
// is read while streaming, within RoutingKeyWithin bytes. Fails without
// the fix (8 MiB read of each 8 MiB body).
func TestIngestRefusedReadsABoundedPrefix(t *testing.T) {
	var read atomic.Int64
	const token = "ingest-token-0123456789abcdef"
	e := newEnv(t, options{noServe: true, tokens: []server.Token{{Name: "am", Secret: token, Scopes: []string{server.ScopeIngest}}},
		listener: func(ln net.Listener) net.Listener { return countingListener{Listener: ln, read: &read} }})
	addr := strings.TrimPrefix(e.url, "http://")
	const size = 8 << 20
	// What the server may read of a refused body: the routing_key's bound,
	// the request line and headers, and a buffer's worth of read-ahead. Of
	// a chunked body (no Content-Length) net/http itself reads up to 256
	// KiB more, twice, after the handler (to reuse the connection), and
	// discards it: a constant too, whatever the body's size.
	const bound, chunkedBound = intake.DefaultRoutingKeyWithin + 64<<10, intake.DefaultRoutingKeyWithin + 64<<10 + 2*256<<10
	payload := `"event_action":"trigger","payload":{"summary":"s","source":"x","severity":"info","custom_details":{"pad":"`
	tests := []struct {
		name, path string
		header     map[string]string
		head, tail string
		want       int
	}{
		{"wrong routing_key first", "/v2/enqueue", nil, `{"routing_key":"wrong-key-0123456789",` + payload, `"}}}`, http.StatusUnauthorized},
		{"wrong routing_key, sender path", "/api/v1/alerts/pagerduty", nil, `{"routing_key":"wrong-key-0123456789",` + payload, `"}}}`, http.StatusUnauthorized},
		{"the right routing_key past the bound", "/v2/enqueue", nil, `{` + payload, `"}},"routing_key":"` + token + `"}`, http.StatusUnauthorized},
		{"no routing_key, a wrong bearer", "/v2/enqueue", map[string]string{"Authorization": "Bearer wrong"}, `{` + payload, `"}}}`, http.StatusUnauthorized},
		{"not JSON", "/v2/enqueue", nil, `AAAA`, ``, http.StatusUnauthorized},
		{"generic receiver, no token", "/api/v1/alerts", nil, `[{"title":"`, `"}]`, http.StatusUnauthorized},
		{"alertmanager receiver, a wrong token", "/api/v1/alerts/alertmanager", map[string]string{"Authorization": "Bearer wrong"}, `{"alerts":[{"labels":{"a":"`, `"}}]}`, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", tt.name, chunked), func(t *testing.T) {
				read.Store(0)
				code := rawPost(t, addr, tt.path, tt.header, paddedEvent(tt.head, tt.tail, size), size, chunked)
				if code != tt.want {
					t.Fatalf("status %d, want %d", code, tt.want)
				}
				want := int64(bound)
				if chunked {
					want = chunkedBound
				}
				if n := read.Load(); n > want {
					t.Errorf("the server read %d bytes of a refused %d-byte body, want at most %d", n, size, want)
				} else {
					t.Logf("the server read %d bytes of a refused %d-byte body", n, size)
				}
			})
		}
	}
	// The right key first still gets the event in, however large it is.
	var ans map[string]any
	body := `{"routing_key":"` + token + `",` + payload + strings.Repeat("B", 200<<10) + `"}}}`
	if resp := e.post("/v2/enqueue", "", body, &ans); resp.StatusCode != http.StatusAccepted || ans["status"] != "success" {
		t.Fatalf("a 200 KiB event with the right routing_key first: %d %v", resp.StatusCode, ans)
	}
}

// TestPagerDutyWrongKeyMemory is the probe, run on demand
// (OPENRECALL_MEMPROBE=1, alone in its process): 16 concurrent 30 MiB
// PagerDuty events with a wrong routing_key on a real loopback server, and
// the process's peak resident memory (VmHWM) and heap before and after. It
// logs the figures; the bound it asserts is TestIngestRefusedReadsABoundedPrefix's.
func TestPagerDutyWrongKeyMemory(t *testing.T) {
	if os.Getenv("OPENRECALL_MEMPROBE") == "" {
		t.Skip("set OPENRECALL_MEMPROBE=1 to run the memory probe")
	}
	e := newEnv(t, options{noServe: true, tokens: []server.Token{{Name: "am", Secret: "ingest-token-0123456789abcdef", Scopes: []string{server.ScopeIngest}}}})
	addr := strings.TrimPrefix(e.url, "http://")
	const size, clients = 30 << 20, 16
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	hwm0 := vmHWM(t)
	var wg sync.WaitGroup
	codes := make([]int, clients)
	for i := range clients {
		wg.Go(func() {
			codes[i] = rawPost(t, addr, "/v2/enqueue", nil, paddedEvent(`{"routing_key":"wrong-key-0123456789","event_action":"trigger","payload":{"summary":"s","source":"x","severity":"info","custom_details":{"pad":"`, `"}}}`, size), size, false)
		})
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("answers %v", codes)
	t.Logf("peak RSS (VmHWM) %d MiB before, %d MiB after; heap allocated during the probe %d MiB; heap in use after %d MiB",
		hwm0>>20, vmHWM(t)>>20, (after.TotalAlloc-before.TotalAlloc)>>20, after.HeapInuse>>20)
}

// vmHWM returns the process's peak resident set size in bytes.
func vmHWM(t *testing.T) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: ", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
