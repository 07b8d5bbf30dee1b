package cockpit_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// benchQueue records n waiting analyses of a shift's mix (severities,
// two identities, one in fifty an attack) in e's store.
func benchQueue(b *testing.B, e *env, n int) {
	b.Helper()
	sevs := []openrecall.Severity{openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityCritical, openrecall.SeverityLow, openrecall.SeverityUnknown}
	ws := make([]openrecall.Waiting, 0, n)
	for i := range n {
		alert := openrecall.Alert{ID: fmt.Sprintf("a-%d", i), Title: fmt.Sprintf("disk usage %d%% on db-%d", 80+i%20, i),
			Labels: map[string]string{"alertname": "DiskFull", "service": "db", "instance": fmt.Sprintf("db-%d:9100", i)}, Severity: sevs[i%len(sevs)]}
		res := &openrecall.Result{Alert: alert}
		if i%50 == 0 {
			res.Fingerprint.AttackPattern = "brute_force"
		}
		ws = append(ws, openrecall.Waiting{
			AnalysisID: fmt.Sprintf("run-bench-%06d", i), Batch: "run-bench", Since: time.Unix(int64(i), 0),
			Reason: openrecall.WaitApproval, Why: "memory proposes false_positive; a person approves it", Severity: alert.Severity,
			Identity: openrecall.Identity{Rule: "DiskFull", Service: "db"}, Title: alert.Title, AlertID: alert.ID,
			Proposed: openrecall.DecisionFalsePositive, Result: res,
		})
	}
	for len(ws) > 0 {
		k := min(len(ws), 2000)
		if err := e.store.RecordWaiting(context.Background(), ws[:k]); err != nil {
			b.Fatal(err)
		}
		ws = ws[k:]
	}
}

// fetch gets path asking for gzip, and returns the time to the first
// byte, the bytes on the wire and the page once decompressed.
func fetch(b *testing.B, c *http.Client, url string) (ttfb time.Duration, wire int, page []byte, code int) {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	// Set by hand, the transport leaves the body as it came.
	req.Header.Set("Accept-Encoding", "gzip")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var first [1]byte
	n, _ := io.ReadFull(resp.Body, first[:])
	ttfb = time.Since(start)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	raw := append(first[:n], rest...)
	page = raw
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		if page, err = io.ReadAll(zr); err != nil {
			b.Fatal(err)
		}
	}
	return ttfb, len(raw), page, resp.StatusCode
}

func p95(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[min(len(ds)-1, len(ds)*95/100)].Microseconds()) / 1000
}

// BenchmarkQueuePage renders the queue's first page (the 100 most
// urgent) with 1,000 and 10,000 waiting analyses, over a real SQLite file
// and a loopback server, and reports the p95 of the time to its first
// byte (ms), the bytes on the wire (gzip asked for) and the page's HTML.
//
// The "search" cases search the labels too (q=db-42:9100), which reads them
// from every waiting result.
func BenchmarkQueuePage(b *testing.B) {
	for _, tc := range []struct {
		n     int
		query string
	}{{1000, ""}, {10000, ""}, {10000, "q=db-42%3A9100"}} {
		name := fmt.Sprint(tc.n)
		if tc.query != "" {
			name += "-search"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b)
			benchQueue(b, e, tc.n)
			c := e.session(b, "alice-secret")
			var lat []time.Duration
			var wire, html int
			for b.Loop() {
				t, w, page, code := fetch(b, c, e.srv.URL+"/ui/queue?"+tc.query)
				if code != http.StatusOK {
					b.Fatalf("queue: %d", code)
				}
				lat, wire, html = append(lat, t), w, len(page)
			}
			b.ReportMetric(p95(lat), "p95-ttfb-ms")
			b.ReportMetric(float64(wire), "wire-bytes")
			b.ReportMetric(float64(html), "html-bytes")
		})
	}
}

// BenchmarkQueueLive measures the live queue with 1,000 waiting: the
// script's poll while nothing changed (204), and the time from a new
// critical alert being stored to the poll that returns it on top — the
// server's part of the live update's latency; a browser adds up to the
// 5-second poll interval.
func BenchmarkQueueLive(b *testing.B) {
	e := newEnv(b)
	benchQueue(b, e, 1000)
	c := e.session(b, "alice-secret")
	_, _, page, _ := fetch(b, c, e.srv.URL+"/ui/queue")
	version := regexp.MustCompile(`data-version="([0-9a-f]+)"`).FindSubmatch(page)
	if version == nil {
		b.Fatal("no version on the queue page")
	}
	v := string(version[1])
	var idle, update []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		_, _, _, code := fetch(b, c, e.srv.URL+"/ui/queue/live?sort=urgency&v="+v)
		if code != http.StatusNoContent {
			b.Fatalf("unchanged queue: %d", code)
		}
		idle = append(idle, time.Since(start))

		i++
		id := fmt.Sprintf("run-live-%06d", i)
		alert := openrecall.Alert{ID: "live-" + id, Title: "checkout down " + id, Severity: openrecall.SeverityCritical}
		start = time.Now()
		if err := e.store.RecordWaiting(context.Background(), []openrecall.Waiting{{AnalysisID: id, Batch: "run-live", Since: time.Unix(5000+int64(i), 0),
			Reason: openrecall.WaitEscalated, Why: "escalated", Severity: alert.Severity, Title: alert.Title, AlertID: alert.ID,
			Result: &openrecall.Result{Alert: alert}}}); err != nil {
			b.Fatal(err)
		}
		_, _, list, code := fetch(b, c, e.srv.URL+"/ui/queue/live?sort=urgency&v="+v)
		if code != http.StatusOK || !bytes.Contains(list, []byte(id)) {
			b.Fatalf("the new critical is not in the live list: %d", code)
		}
		update = append(update, time.Since(start))
		// The next round starts from the list it now has.
		_, _, page, _ = fetch(b, c, e.srv.URL+"/ui/queue")
		v = string(regexp.MustCompile(`data-version="([0-9a-f]+)"`).FindSubmatch(page)[1])
	}
	b.ReportMetric(p95(idle), "p95-unchanged-ms")
	b.ReportMetric(p95(update), "p95-update-ms")
}
