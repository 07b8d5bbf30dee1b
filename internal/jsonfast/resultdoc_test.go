package jsonfast_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// TestResultDocMatchesAppendResult holds a document encoded once to
// AppendResult for every reader: each HTML mode, the audit entries nil,
// empty, the result's own or others, on filled results (HTML specials
// included), the zero result and results encoding/json refuses.
func TestResultDocMatchesAppendResult(t *testing.T) {
	results := filledResults(rand.New(rand.NewPCG(20261207, 1)), 300, openrecall.Result{},
		openrecall.Result{Triage: openrecall.TriageResult{Confidence: math.NaN()}},
		openrecall.Result{Alert: openrecall.Alert{Title: `a<b>&c \u003c \\u003c \"<"`}})
	late := []openrecall.AuditEntry{{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}
	var d jsonfast.ResultDoc
	for i, r := range results {
		d.Encode(&r)
		for _, audit := range [][]openrecall.AuditEntry{nil, {}, r.Audit, results[(i+1)%len(results)].Audit, late} {
			for _, html := range []bool{true, false, true} {
				rr := r
				rr.Audit = audit
				want, wantErr := jsonfast.AppendResult([]byte("prefix"), rr, html)
				got, err := d.Append([]byte("prefix"), audit, html)
				if (err != nil) != (wantErr != nil) || string(got) != string(want) {
					t.Fatalf("result %d (html %v, %d entries):\n got %s (%v)\nwant %s (%v)", i, html, len(audit), got, err, want, wantErr)
				}
			}
		}
	}
}

// TestDocsEncodeOnce checks that a batch's documents are encoded once,
// that a result the batch does not hold (or holds twice) is encoded anew,
// and that a batch's documents replace the last batch's.
func TestDocsEncodeOnce(t *testing.T) {
	batch := []openrecall.Result{
		{AnalysisID: "a-1", Alert: openrecall.Alert{ID: "x", Title: "p99 > 2s & rising"}},
		{AnalysisID: "a-2", Alert: openrecall.Alert{ID: "y"}},
		{AnalysisID: "a-2", Alert: openrecall.Alert{ID: "z"}},
	}
	var docs jsonfast.Docs
	for round := range 2 {
		docs.Reset(batch)
		for i := range batch {
			for _, html := range []bool{true, false} {
				want, _ := jsonfast.AppendResult(nil, batch[i], html)
				got, err := docs.Append(nil, &batch[i], batch[i].Audit, html)
				if err != nil || string(got) != string(want) {
					t.Fatalf("round %d result %d (html %v):\n got %s (%v)\nwant %s", round, i, html, got, err, want)
				}
			}
		}
		other := openrecall.Result{AnalysisID: "a-1", Alert: openrecall.Alert{ID: "another"}}
		want, _ := jsonfast.AppendResult(nil, other, true)
		if got, _ := docs.Append(nil, &other, nil, true); string(got) != string(want) {
			t.Fatalf("another result under a batch's id:\n got %s\nwant %s", got, want)
		}
		batch[0].Alert.Title = "changed for the next batch <"
	}
	var none *jsonfast.Docs
	want, _ := jsonfast.AppendResult(nil, batch[1], false)
	if got, _ := none.Append(nil, &batch[1], nil, false); string(got) != string(want) {
		t.Fatalf("nil Docs:\n got %s\nwant %s", got, want)
	}
	allocs := testing.AllocsPerRun(100, func() {
		docs.Reset(batch[:1])
		_, _ = docs.Append(make([]byte, 0, 4096), &batch[0], nil, true)
	})
	if allocs > 1 {
		t.Errorf("a batch reused its buffers with %v allocations per run, want at most 1", allocs)
	}
}
