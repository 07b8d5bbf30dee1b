package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestWaitingBodyIsEncodingJSON: the result stored with what waits is what
// json.Marshal writes for it without its audit entries (HTML escaped), and
// in one batch an analysis listed twice keeps its first row.
func TestWaitingBodyIsEncodingJSON(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	results := []openrecall.Result{
		{AnalysisID: "a-1", Batch: "b", Outcome: openrecall.ResultTriaged, Alert: openrecall.Alert{ID: "x", Title: "<p>disk & \u2028 \"full\"</p>", Labels: map[string]string{"z": "1", "a": "é"}},
			Audit: []openrecall.AuditEntry{{AnalysisID: "a-1", Step: "analysis"}}},
		{AnalysisID: "a-2", Batch: "b", Outcome: openrecall.ResultTriaged, Alert: openrecall.Alert{ID: "y", Title: "second"}},
		{AnalysisID: "a-1", Batch: "b", Outcome: openrecall.ResultTriaged, Alert: openrecall.Alert{ID: "x", Title: "a later row"}},
	}
	var ws []openrecall.Waiting
	for i := range results {
		ws = append(ws, openrecall.Waiting{AnalysisID: results[i].AnalysisID, Batch: "b", Since: since, Reason: "escalated",
			Title: results[i].Alert.Title, AlertID: results[i].Alert.ID, Result: &results[i]})
	}
	if err := s.RecordWaiting(ctx, ws); err != nil {
		t.Fatal(err)
	}
	for _, want := range results[:2] {
		var body string
		if err := s.db.QueryRowContext(ctx, `SELECT result FROM waiting WHERE analysis_id = $1`, want.AnalysisID).Scan(&body); err != nil {
			t.Fatal(err)
		}
		want.Audit = nil
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if body != string(b) {
			t.Errorf("%s: stored\n%s\nwant\n%s", want.AnalysisID, body, b)
		}
	}
}

// TestRecordWaitingKeepsFirstRowsAcrossChunks: recording what waits in a
// batch larger than one existence query (storedChunk) keeps the first row
// of each analysis recorded before, seals and binds each new row once,
// and leaves a trail whose rows verify. Fails when the existence check
// misses the rows of a later chunk (they would be sealed and bound again).
func TestRecordWaitingKeepsFirstRowsAcrossChunks(t *testing.T) {
	ctx := context.Background()
	s := sealedTemp(t)
	since := s.now()
	row := func(i int, title string) openrecall.Waiting {
		id := fmt.Sprintf("c-%04d", i)
		return openrecall.Waiting{AnalysisID: id, Batch: "c", Since: since, Reason: "escalated", Title: title, AlertID: "a" + id,
			Result: &openrecall.Result{AnalysisID: id, Alert: openrecall.Alert{Title: title}}}
	}
	var first []openrecall.Waiting
	for i := storedChunk - 3; i < storedChunk+40; i += 2 { // some in each chunk of the batch below
		first = append(first, row(i, "first"))
	}
	if err := s.RecordWaiting(ctx, first); err != nil {
		t.Fatal(err)
	}
	var again []openrecall.Waiting
	for i := range storedChunk + 40 {
		again = append(again, row(i, "later"))
	}
	if err := s.RecordWaiting(ctx, again); err != nil {
		t.Fatal(err)
	}
	for i := range storedChunk + 40 {
		want := "later"
		if i >= storedChunk-3 && (i-(storedChunk-3))%2 == 0 {
			want = "first"
		}
		w, err := s.WaitingFor(ctx, fmt.Sprintf("c-%04d", i))
		if err != nil {
			t.Fatal(err)
		}
		if w.Title != want || w.Result.Alert.Title != want {
			t.Fatalf("%s: title %q, result's %q; want %q", w.AnalysisID, w.Title, w.Result.Alert.Title, want)
		}
	}
	var bindings int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_entries WHERE batch = $1 AND step = 'waiting'`, openrecall.SealBatch).Scan(&bindings); err != nil {
		t.Fatal(err)
	}
	if bindings != storedChunk+40 {
		t.Errorf("%d waiting rows bound in the chain, want one binding per row: %d", bindings, storedChunk+40)
	}
	if ps := rowProblems(t, s); len(ps) != 0 {
		t.Errorf("rows do not verify: %v", ps)
	}
}
