package jsonfast_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// benchResults are results with every field set (filled as the equality
// tests fill them), the same on every run.
func benchResults() []openrecall.Result {
	rng := rand.New(rand.NewPCG(7, 8))
	rs := make([]openrecall.Result, 64)
	for i := range rs {
		filler{rng: rng, keep: 1}.fill(reflect.ValueOf(&rs[i]).Elem(), 0)
		if rs[i].Analysis != nil {
			rs[i].Analysis.Confidence = 0.85 // finite, so no result falls back
		}
		rs[i].Triage.Confidence, rs[i].Triage.Consistency, rs[i].Triage.BestScore = 0.9, 1, 0.8
	}
	return rs
}

func BenchmarkAppendResult(b *testing.B) {
	rs := benchResults()
	buf := make([]byte, 0, 1<<16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var err error
		if buf, err = jsonfast.AppendResult(buf[:0], rs[i%len(rs)], false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendString(b *testing.B) {
	s := strings.Repeat("service payments-api in prod: p99 latency above 2s <html> & \"quotes\" é ", 8)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		buf = jsonfast.AppendString(buf[:0], s, true)
	}
}

func BenchmarkDecodeString(b *testing.B) {
	raws := [][]byte{[]byte(`"payments-api-7f9c5d-abcde"`), []byte(`"p99 latency \"high\"\nsee runbook caf\u00e9"`)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := jsonfast.DecodeString(raws[i%2]); !ok {
			b.Fatal("not a string")
		}
	}
}

// BenchmarkResultDocuments writes, per result, the documents analyze
// writes (the waiting row's: escaped, no audit entries; the jsonl line:
// not escaped, with them) and serve writes (the waiting row's and the
// inbox row's: escaped, with them): each encoded anew (plain), and from
// one encoding (shared, what the sink and analyze's writer do).
func BenchmarkResultDocuments(b *testing.B) {
	rs := benchResults()
	for i := range rs {
		rs[i].Alert.Title = "p99 > 2s & rising on <checkout>" // HTML specials: the escaped form differs
	}
	readers := map[string][]bool{"analyze": {true, false}, "serve": {true, true}} // escapeHTML per reader; the first without audit
	for _, name := range []string{"analyze", "serve"} {
		html := readers[name]
		b.Run(name+"/plain", func(b *testing.B) {
			buf := make([]byte, 0, 1<<16)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r := rs[i%len(rs)]
				for k, h := range html {
					rr := r
					if k == 0 {
						rr.Audit = nil
					}
					buf, _ = jsonfast.AppendResult(buf[:0], rr, h)
				}
			}
		})
		b.Run(name+"/shared", func(b *testing.B) {
			buf := make([]byte, 0, 1<<16)
			var d jsonfast.ResultDoc
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r := &rs[i%len(rs)]
				d.Encode(r)
				for k, h := range html {
					audit := r.Audit
					if k == 0 {
						audit = nil
					}
					buf, _ = d.Append(buf[:0], audit, h)
				}
			}
		})
	}
}
