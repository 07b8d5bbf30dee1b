package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
)

// TestRetainAboutAPrunedAnalysis: a retain about an analysis whose
// documents serve pruned after server.retention fails with an error naming
// the analysis and the retention, never an odd one about a missing alert.
func TestRetainAboutAPrunedAnalysis(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "m.db")
	st, err := memory.Open(ctx, db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	alert := openrecall.Alert{ID: "a-1", Title: "disk full on db-1", Status: openrecall.StatusFiring, Labels: map[string]string{"alertname": "DiskFull"}}
	if _, err := st.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alertmanager", Alert: alert}}, 0, name); err != nil {
		t.Fatal(err)
	}
	if err := st.Complete(ctx, []int64{1}, []openrecall.Result{{AnalysisID: name(1), Outcome: openrecall.ResultTriaged, Alert: alert}}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.PruneInboxAll(ctx, time.Now().Add(time.Hour), 0); err != nil || n != 1 {
		t.Fatalf("prune: %d, %v", n, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "--db", db, "retain", "--analysis-id", name(1), "--decision", "known_benign", "--note", "rotated")
	if r.code != exitFailure || !strings.Contains(r.stderr, `analysis "serve-000001"`) || !strings.Contains(r.stderr, "server.retention (720h0m0s)") ||
		!strings.Contains(r.stderr, "pruned on ") {
		t.Errorf("retain about a pruned analysis: exit %d\n%s", r.code, r.stderr)
	}
}
