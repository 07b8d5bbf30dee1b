package intake

import (
	"bytes"
	"errors"
	"testing"

	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
)

// BenchmarkReaderCorpus reads the queue the analyze benchmark reads: the
// alerts of the rule corpus rendered as Alertmanager webhooks, one
// webhook of one alert per line (scripts/bench -queue corpus).
func BenchmarkReaderCorpus(b *testing.B) {
	rules, err := rulecorpus.LoadNear(".")
	if errors.Is(err, rulecorpus.ErrAbsent) {
		testenv.Missing(b, err)
	}
	if err != nil {
		b.Fatal(err)
	}
	const alerts = 5000
	var buf bytes.Buffer
	if err := rulecorpus.WriteQueue(&buf, rules, alerts); err != nil {
		b.Fatal(err)
	}
	benchmarkAlerts(b, buf.Bytes(), alerts)
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(alerts*b.N), "ns/alert")
}
