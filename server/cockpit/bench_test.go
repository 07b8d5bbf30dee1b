package cockpit_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// BenchmarkQueuePage1000 renders the queue with 1,000 waiting analyses,
// over a real SQLite file and a loopback server, and reports the p95 of
// one page's latency (ms).
func BenchmarkQueuePage1000(b *testing.B) {
	e := newEnv(b)
	ws := make([]openrecall.Waiting, 0, 1000)
	for i := range 1000 {
		alert := openrecall.Alert{ID: fmt.Sprintf("a-%d", i), Title: fmt.Sprintf("disk usage %d%% on db-%d", 80+i%20, i),
			Labels: map[string]string{"alertname": "DiskFull", "service": "db"}, Severity: openrecall.SeverityHigh}
		ws = append(ws, openrecall.Waiting{
			AnalysisID: fmt.Sprintf("run-bench-%06d", i), Batch: "run-bench", Since: time.Unix(int64(i), 0),
			Reason: openrecall.WaitApproval, Why: "memory proposes false_positive; a person approves it", Severity: alert.Severity,
			Identity: openrecall.Identity{Rule: "DiskFull", Service: "db"}, Title: alert.Title, AlertID: alert.ID,
			Proposed: openrecall.DecisionFalsePositive, Result: &openrecall.Result{Alert: alert},
		})
	}
	if err := e.store.RecordWaiting(context.Background(), ws); err != nil {
		b.Fatal(err)
	}
	c := e.session(b, "alice-secret")
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		resp, err := c.Get(e.srv.URL + "/ui/queue")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := resp.Body.Read(make([]byte, 1))
		for n > 0 {
			n, _ = resp.Body.Read(make([]byte, 32<<10))
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("queue: %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	p95 := lat[(len(lat)*95)/100]
	if len(lat)*95%100 == 0 && len(lat) > 0 {
		p95 = lat[len(lat)*95/100-1]
	}
	b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
}
