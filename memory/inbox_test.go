package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

func inboxName(id int64) string { return fmt.Sprintf("serve-%06d", id) }

func firing(id string, sev openrecall.Severity) openrecall.Delivery {
	return openrecall.Delivery{Endpoint: "alertmanager", Alert: openrecall.Alert{ID: id, Title: "disk full", Severity: sev, Status: openrecall.StatusFiring}}
}

func TestEnqueueFullStoresNothing(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("a", "low"), firing("b", "low")}, 2, inboxName); err != nil {
		t.Fatal(err)
	}
	// A redelivery needs no room: it is answered even when the inbox is full.
	out, err := s.Enqueue(ctx, []openrecall.Delivery{firing("a", "low")}, 2, inboxName)
	if err != nil || !out[0].Duplicate || out[0].AnalysisID != "serve-000001" {
		t.Fatalf("redelivery into a full inbox: %+v, %v", out, err)
	}
	_, err = s.Enqueue(ctx, []openrecall.Delivery{firing("c", "low"), firing("a", "critical")}, 2, inboxName)
	if !errors.Is(err, openrecall.ErrFull) {
		t.Fatalf("enqueue past the limit: %v, want ErrFull", err)
	}
	if n, err := s.InboxDepth(ctx); err != nil || n != 2 {
		t.Fatalf("depth %d, %v; want 2: a refused body stores nothing", n, err)
	}
	// Nor did the refused body move alert a's state: its critical re-trigger
	// is still new once there is room.
	if err := s.Complete(ctx, []int64{1}, []openrecall.Result{{AnalysisID: "serve-000001", Outcome: openrecall.ResultTriaged}}); err != nil {
		t.Fatal(err)
	}
	out, err = s.Enqueue(ctx, []openrecall.Delivery{firing("a", "critical")}, 2, inboxName)
	if err != nil || out[0].Duplicate {
		t.Fatalf("critical re-trigger after the refusal: %+v, %v", out, err)
	}
}

func TestCompleteServedSince(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("a", "low"), firing("b", "low"), firing("c", "low")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	// Completed out of order: the cursor follows completion, so a reader
	// that polls with since= misses nothing.
	for _, id := range []int64{3, 1} {
		if err := s.Complete(ctx, []int64{id}, []openrecall.Result{{AnalysisID: inboxName(id), Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ServedSince(ctx, 0, 10)
	if err != nil || len(got) != 2 || got[0].AnalysisID != "serve-000003" || got[1].AnalysisID != "serve-000001" {
		t.Fatalf("served since 0: %+v, %v", got, err)
	}
	if err := s.Complete(ctx, []int64{2}, []openrecall.Result{{AnalysisID: "serve-000002"}}); err != nil {
		t.Fatal(err)
	}
	got, err = s.ServedSince(ctx, got[1].Cursor, 10)
	if err != nil || len(got) != 1 || got[0].AnalysisID != "serve-000002" || got[0].Result == nil {
		t.Fatalf("served since the cursor: %+v, %v", got, err)
	}
	// Completing twice keeps the first result.
	if err := s.Complete(ctx, []int64{3}, []openrecall.Result{{AnalysisID: "serve-000003", Decision: openrecall.DecisionEscalated}}); err != nil {
		t.Fatal(err)
	}
	sv, err := s.Served(ctx, "serve-000003")
	if err != nil || !sv.Done || sv.Result.Decision != openrecall.DecisionReal || sv.Alert.ID != "c" {
		t.Fatalf("served: %+v, %v", sv, err)
	}
	if err := s.Complete(ctx, []int64{99}, []openrecall.Result{{}}); !errors.Is(err, openrecall.ErrNotFound) {
		t.Fatalf("complete unknown: %v, want ErrNotFound", err)
	}
	if p, err := s.Pending(ctx, 0, 10); err != nil || len(p) != 0 {
		t.Fatalf("pending after all completed: %+v, %v", p, err)
	}
	if err := s.Writable(ctx); err != nil {
		t.Fatalf("writable: %v", err)
	}
}

// TestInboxQueriesUseIndexes pins the plans of the inbox's hot queries: a
// completion cursor read by scanning the table made draining quadratic.
func TestInboxQueriesUseIndexes(t *testing.T) {
	sqliteOnly(t) // EXPLAIN QUERY PLAN is SQLite's
	s := openTemp(t)
	for q, index := range map[string]string{
		lastCursor: "inbox_done",
		`SELECT id FROM inbox INDEXED BY inbox_pending WHERE done_seq IS NULL AND id > 0 ORDER BY id LIMIT 8`:                "inbox_pending",
		`SELECT id FROM inbox WHERE done_seq IS NOT NULL AND pruned_at IS NULL AND done_at < 5 ORDER BY done_at, id LIMIT 8`: "inbox_prunable",
	} {
		if plan := queryPlan(t, s, q); !strings.Contains(plan, index) {
			t.Errorf("%s: plan %q does not use %s", q, plan, index)
		}
	}
}

// TestEnqueueBodyLargerThanLimit: the limit is back-pressure, not a ceiling
// on one body. A body of more records than the limit finds an empty inbox
// and is stored whole (it used to be refused forever, though nothing
// waited); the next body finds the backlog over the limit and is refused,
// and a redelivery is still answered.
func TestEnqueueBodyLargerThanLimit(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	body := []openrecall.Delivery{firing("a", "low"), firing("b", "low"), firing("c", "low"), firing("d", "low"), firing("e", "low")}
	out, err := s.Enqueue(ctx, body, 2, inboxName)
	if err != nil {
		t.Fatalf("a body of 5 records into an empty inbox limited to 2: %v, want it stored", err)
	}
	if len(out) != 5 || out[4].AnalysisID != "serve-000005" {
		t.Fatalf("stored %+v", out)
	}
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("f", "low")}, 2, inboxName); !errors.Is(err, openrecall.ErrFull) {
		t.Fatalf("a body while 5 records wait, limit 2: %v, want ErrFull", err)
	}
	if out, err := s.Enqueue(ctx, []openrecall.Delivery{firing("a", "low")}, 2, inboxName); err != nil || !out[0].Duplicate {
		t.Fatalf("a redelivery while the backlog is over the limit: %+v, %v", out, err)
	}
	// One short of the limit, a body of any size is stored.
	for id := int64(1); id <= 4; id++ {
		if err := s.Complete(ctx, []int64{id}, []openrecall.Result{{AnalysisID: inboxName(id), Outcome: openrecall.ResultTriaged}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("g", "low"), firing("h", "low"), firing("i", "low")}, 2, inboxName); err != nil {
		t.Fatalf("3 records while 1 waits, limit 2: %v, want them stored", err)
	}
	if n, err := s.InboxDepth(ctx); err != nil || n != 4 {
		t.Fatalf("depth %d, %v; want 4", n, err)
	}
}

// queryPlan returns SQLite's plan of q on s, its details joined by "; ".
func queryPlan(t *testing.T, s *Store, q string) string {
	t.Helper()
	var plan strings.Builder
	rows, err := s.db.Query("EXPLAIN QUERY PLAN " + q)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "; ")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// TestEpisodes: a delivery carries the firing episode it belongs to, the
// analysis of the delivery that opened it (DESIGN §12b): a new alert opens
// one; its severity rise, acknowledgement and recovery continue it; a
// firing after the recovery opens the next, unless the alert's id names
// its episode (Alertmanager's), when it is a late redelivery of the same.
// A claim gives each delivery's result the episode of its notifications.
func TestEpisodes(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	status := func(d openrecall.Delivery, st string) openrecall.Delivery {
		d.Alert.Status = st
		return d
	}
	episodic := func(d openrecall.Delivery) openrecall.Delivery {
		d.Alert.Episode = true
		return d
	}
	steps := []struct {
		d    openrecall.Delivery
		want int // the episode, by the step that opened it
	}{
		{firing("a", "low"), 0},
		{firing("a", "critical"), 0}, // a severity rise, triaged again
		{status(firing("a", "low"), openrecall.StatusAcknowledged), 0},
		{status(firing("a", "low"), openrecall.StatusResolved), 0},
		{firing("a", "low"), 4}, // fires again: the next episode
		{status(firing("a", "low"), openrecall.StatusResolved), 4},
		{episodic(firing("b", "low")), 6},
		{status(episodic(firing("b", "low")), openrecall.StatusResolved), 6},
		{episodic(firing("b", "critical")), 6}, // its id names the episode: late, not new
		{status(firing("c", "low"), openrecall.StatusResolved), 9},
	}
	ids := make([]string, len(steps))
	for i, st := range steps {
		out, err := s.Enqueue(ctx, []openrecall.Delivery{st.d}, 0, inboxName)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = out[0].AnalysisID
		opener := st.want
		if got := out[0].EpisodeOf(); got != ids[opener] {
			t.Errorf("step %d (%s %s): episode %q, want step %d's %q", i, st.d.Alert.ID, st.d.Alert.Status, got, opener, ids[opener])
		}
	}
	claimed, err := s.Claim(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range claimed {
		i := slices.Index(ids, d.AnalysisID)
		opener := steps[i].want
		if got := s.leases.episodeOf(d.AnalysisID); got != ids[opener] {
			t.Errorf("claimed step %d: episode %q, want %q", i, got, ids[opener])
		}
	}
	if got := s.leases.episodeOf("never-claimed"); got != "never-claimed" {
		t.Errorf("a result of no delivery is its own episode, got %q", got)
	}
}
