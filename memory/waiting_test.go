package memory

import (
	"context"
	"encoding/json"
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
