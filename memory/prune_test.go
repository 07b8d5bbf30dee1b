package memory

import (
	"context"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestPruneInbox prunes finished rows older than the cut, in batches, and
// leaves pending rows, newer rows and the alert state alone; readers see a
// pruned row as pruned, with its ids.
func TestPruneInbox(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	var ds []openrecall.Delivery
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ds = append(ds, firing(id, "low"))
	}
	if _, err := s.Enqueue(ctx, ds, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	// 1..3 finish early, 4 later, 5 stays pending.
	for _, id := range []int64{1, 2, 3, 4} {
		if err := s.Complete(ctx, []int64{id}, []openrecall.Result{{AnalysisID: inboxName(id), Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal}}); err != nil {
			t.Fatal(err)
		}
	}
	four, err := s.Served(ctx, inboxName(4))
	if err != nil {
		t.Fatal(err)
	}
	cut := four.DoneAt // rows finished before row 4
	n, err := s.PruneInbox(ctx, cut, 2)
	if err != nil || n != 2 {
		t.Fatalf("first batch: %d, %v; want 2", n, err)
	}
	n, err = s.PruneInboxAll(ctx, cut, 2)
	if err != nil || n != 1 {
		t.Fatalf("the rest: %d, %v; want 1", n, err)
	}
	if n, err := s.PruneInboxAll(ctx, cut, 2); err != nil || n != 0 {
		t.Fatalf("again: %d, %v; want 0 (idempotent)", n, err)
	}
	for id := int64(1); id <= 5; id++ {
		sv, err := s.Served(ctx, inboxName(id))
		if err != nil {
			t.Fatal(err)
		}
		wantPruned := id <= 3
		if sv.Pruned != wantPruned || (sv.Result == nil) != (wantPruned || id == 5) {
			t.Errorf("row %d: pruned %v result %v, want pruned %v", id, sv.Pruned, sv.Result != nil, wantPruned)
		}
		if sv.ID != id || sv.AnalysisID != inboxName(id) || sv.Alert.ID == "" || sv.Endpoint != "alertmanager" || sv.ReceivedAt.IsZero() {
			t.Errorf("row %d lost its ids: %+v", id, sv)
		}
		if wantPruned && (sv.PrunedAt.IsZero() || !sv.Done || sv.Cursor == 0 || sv.Alert.Title != "") {
			t.Errorf("pruned row %d: %+v", id, sv)
		}
	}
	page, err := s.ServedSince(ctx, 0, 10)
	if err != nil || len(page) != 4 || !page[0].Pruned || page[3].Pruned {
		t.Fatalf("served since over pruned rows: %+v, %v", page, err)
	}
	// The alert state stays: a redelivery of a pruned analysis is still a
	// redelivery, named by its analysis id.
	out, err := s.Enqueue(ctx, []openrecall.Delivery{firing("a", "low")}, 0, inboxName)
	if err != nil || !out[0].Duplicate || out[0].AnalysisID != inboxName(1) {
		t.Fatalf("redelivery of a pruned analysis: %+v, %v", out, err)
	}
	// Nothing pending is ever pruned, however late the cut.
	if _, err := s.PruneInboxAll(ctx, time.Now().Add(24*time.Hour*365*100), 0); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Pending(ctx, 0, 10); err != nil || len(p) != 1 || p[0].Alert.Title != "disk full" {
		t.Fatalf("pending after pruning everything: %+v, %v", p, err)
	}
}
