package intake

import (
	"bytes"
	"errors"
	"testing"

	"github.com/openrecall/openrecall/internal/rulecorpus"
)

// BenchmarkReaderCorpus reads the queue the analyze benchmark reads: the
// alerts of the shared rule corpus rendered as Alertmanager webhooks, one
// webhook of one alert per line (scripts/bench -queue corpus).
func BenchmarkReaderCorpus(b *testing.B) {
	rules, err := rulecorpus.LoadNear(".")
	if errors.Is(err, rulecorpus.ErrAbsent) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	const alerts = 5000
	var buf bytes.Buffer
	if err := rulecorpus.WriteQueue(&buf, rules, alerts); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
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
		if n != alerts {
			b.Fatalf("read %d alerts, want %d", n, alerts)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(alerts*b.N), "ns/alert")
}
