package workflow_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/scripts/bench/queuegen"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/workflow"
)

// benchAlerts is the size of the generated queue of BenchmarkAnalyzeQueue.
const benchAlerts = 3000

// benchPipeline is the CLI's pipeline with the deterministic local models
// over a real SQLite file seeded with queuegen's analyst decisions.
type benchPipeline struct {
	store  *memory.Store
	ex     *fingerprint.Extractor
	router *routing.Router
}

func newBenchPipeline(b *testing.B) *benchPipeline {
	b.Helper()
	ctx := context.Background()
	st, err := memory.Open(ctx, filepath.Join(b.TempDir(), "memory.db"), memory.Options{Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := st.Close(); err != nil {
			b.Error(err)
		}
	})
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		b.Fatal(err)
	}
	ex, err := fingerprint.New(rules)
	if err != nil {
		b.Fatal(err)
	}
	seeds, err := queuegen.Seeds(1)
	if err != nil {
		b.Fatal(err)
	}
	for i, s := range seeds {
		recs, err := intake.ParseBytes(s.Alert, intake.Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			b.Fatalf("seed %d: %d records, %v", i, len(recs), err)
		}
		_, isNew, err := st.Retain(ctx, openrecall.Incident{
			Fingerprint: ex.Extract(recs[0].Alert), Decision: openrecall.Decision(s.Decision),
			Note: s.Note, DeadEnds: s.DeadEnds, Analyst: s.Analyst, SourceAlertID: recs[0].Alert.ID,
			Identity: ex.Identify(recs[0].Alert), Severity: recs[0].Alert.Severity,
		})
		if err != nil || !isNew {
			b.Fatalf("seed %d: new %v, %v", i, isNew, err)
		}
	}
	r, err := routing.New(routing.Config{
		Cheap: local.NewCheap(), Strong: local.NewStrong(), Prices: routing.DefaultPrices(),
		CheapMaxTokens: 400, StrongMaxTokens: 800, GateConfidence: 0.6,
		Vet: triage.Vet, Now: fixedNow,
	})
	if err != nil {
		b.Fatal(err)
	}
	return &benchPipeline{store: st, ex: ex, router: r}
}

func (p *benchPipeline) workflow(b *testing.B, batch string, sink workflow.Sink) *workflow.Workflow {
	b.Helper()
	w, err := workflow.New(workflow.Config{
		Fingerprinter: p.ex, Memory: p.store, Router: p.router, Triage: triage.DefaultConfig(),
		Mode: openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, Batch: batch,
		Sink: sink, Now: fixedNow,
	})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkAnalyzeQueue runs a generated queue of benchAlerts mixed-format
// alerts (queuegen, the queue of scripts/bench) through the whole pipeline
// as `openrecall analyze` does: intake from bytes, fingerprint, recall from
// a seeded SQLite file (through a fresh per-run recall cache, as analyze),
// triage, routing with the deterministic models, and
// the audit trail and cost curve persisted into the same file. It reports
// alerts/s; the persisted sub-benchmarks grow the audit trail by every
// iteration, as successive runs of the command do.
func BenchmarkAnalyzeQueue(b *testing.B) {
	var queue bytes.Buffer
	if _, err := queuegen.Write(&queue, benchAlerts, 1); err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchQueue(b, queue.Bytes(), benchAlerts, workers, true, true)
		})
	}
	// Without the sink: what persisting the audit trail and cost curve
	// costs, by difference.
	b.Run("unpersisted/workers=1", func(b *testing.B) {
		benchQueue(b, queue.Bytes(), benchAlerts, 1, false, true)
	})
	// The fixed queue of make bench-analyze: the rule corpus rendered as
	// Alertmanager webhooks, every firing with its own instance and value.
	b.Run("corpus/workers=1", func(b *testing.B) {
		rules, err := rulecorpus.LoadNear(".")
		if errors.Is(err, rulecorpus.ErrAbsent) {
			testenv.Missing(b, err)
		}
		if err != nil {
			b.Fatal(err)
		}
		var corpus bytes.Buffer
		if err := rulecorpus.WriteQueue(&corpus, rules, benchAlerts); err != nil {
			b.Fatal(err)
		}
		benchQueue(b, corpus.Bytes(), benchAlerts, 1, true, false)
	})
}

// benchKey keys the benchmark's audit chain and cost chain.
var benchKey, _ = audit.NewKey(bytes.Repeat([]byte{7}, audit.KeySize))

// benchQueue runs queue (n alerts) through the pipeline; generated says it
// is queuegen's queue, which must see bypasses.
func benchQueue(b *testing.B, queue []byte, n, workers int, persist, generated bool) {
	p := newBenchPipeline(b)
	ctx := context.Background()
	discard := func(openrecall.Result) error { return nil }
	persistSink := productSink(b, p.store, audit.NewSealer(benchKey))
	b.SetBytes(int64(len(queue)))
	b.ReportAllocs()
	run := 0
	for b.Loop() {
		// A fresh recall cache per run, as analyze has.
		p.store.EnableRecallCache(4096, 5*time.Millisecond)
		var sink workflow.Sink
		if persist {
			sink = persistSink
		}
		w := p.workflow(b, fmt.Sprintf("bench-%d", run), sink)
		run++
		src := workflow.Records(intake.NewReader(bytes.NewReader(queue), intake.Options{Source: "bench"}))
		sum, err := w.AnalyzeQueue(ctx, src, workflow.QueueOptions{Workers: workers}, discard)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Records != n || sum.Rejected != 0 {
			b.Fatalf("%d records, %d rejected; want %d records, none rejected", sum.Records, sum.Rejected, n)
		}
		if generated && sum.Bypassed == 0 {
			b.Fatalf("no bypasses in the generated queue, which re-sends seeded families")
		}
	}
	b.ReportMetric(float64(n*run)/b.Elapsed().Seconds(), "alerts/s")
}
