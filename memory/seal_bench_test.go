package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/openrecall/openrecall"
)

// BenchmarkRecallSealed is BenchmarkRecall with rows sealed: every memory
// recall returns is checked against its seal (an HMAC-SHA-256 over its
// columns with a pooled keyed state). The first run adopts the cached
// database's rows (seals them once); later runs find them sealed.
func BenchmarkRecallSealed(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1k", 1_000}, {"100k", 100_000}} {
		b.Run(size.name, func(b *testing.B) {
			path := benchDB(b, size.n)
			s, err := Open(context.Background(), path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			if _, err := s.BindAuditKey(context.Background(), testKey.ID(), testSign); err != nil {
				b.Fatal(err)
			}
			if err := s.SealRows(context.Background(), testRowSealer()); err != nil {
				b.Fatal(err)
			}
			benchRecall(b, s)
		})
	}
}

// BenchmarkSealedWrites persists batches of 64 results that all wait for a
// person, then completes 64 inbox deliveries, into a fresh store, without
// and with sealing: ns/alert is the cost of one result's persist and one
// completion together.
func BenchmarkSealedWrites(b *testing.B) {
	for _, sealed := range []bool{false, true} {
		name := "plain"
		if sealed {
			name = "sealed"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := openTemp(b)
			if _, err := st.BindAuditKey(ctx, testKey.ID(), testSign); err != nil {
				b.Fatal(err)
			}
			rs := testRowSealer()
			if sealed {
				if err := st.SealRows(ctx, rs); err != nil {
					b.Fatal(err)
				}
			}
			waits := func(r openrecall.Result) (openrecall.Waiting, bool) {
				rr := r
				return openrecall.Waiting{AnalysisID: r.AnalysisID, Batch: r.Batch, Reason: "escalated", AlertID: r.Alert.ID, Result: &rr}, true
			}
			sink := Sink{Store: st, Seal: rs.Seal, Waits: waits}
			const perBatch = 64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				results := make([]openrecall.Result, perBatch)
				ds := make([]openrecall.Delivery, perBatch)
				for j := range results {
					results[j] = sinkResult(fmt.Sprintf("an-%d-%d", i, j), 4)
					ds[j] = firing(fmt.Sprintf("al-%d-%d", i, j), "high")
				}
				if _, err := sink.PersistBatch(ctx, results, nil); err != nil {
					b.Fatal(err)
				}
				out, err := st.Enqueue(ctx, ds, 0, inboxName)
				if err != nil {
					b.Fatal(err)
				}
				ids := make([]int64, len(out))
				for j, d := range out {
					ids[j] = d.ID
					results[j].AnalysisID = d.AnalysisID
				}
				if err := st.Complete(ctx, ids, results); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perBatch), "ns/alert")
		})
	}
}
