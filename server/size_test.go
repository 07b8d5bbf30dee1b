package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/internal/testenv"
)

// TestBytesPerAlert measures the database bytes per triaged alert of
// serve: Alertmanager webhooks (two alerts each, distinct label sets)
// through the inbox and the real workflow, then a pruning pass of every
// finished row. It logs the figures (go test -v -run BytesPerAlert; set
// OPENRECALL_BYTES_ALERTS to measure more than 40 alerts) and checks that
// pruning frees a third of what a triaged alert holds and archiving and
// forgetting nearly all of it.
func TestBytesPerAlert(t *testing.T) {
	alerts := 40
	if v := os.Getenv("OPENRECALL_BYTES_ALERTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			t.Fatalf("OPENRECALL_BYTES_ALERTS=%q: want a number of alerts, 2 or more", v)
		}
		alerts = n
	}
	e := newEnv(t, options{inboxLimit: alerts + 2, db: os.Getenv("OPENRECALL_BYTES_DB")})
	ctx := t.Context()
	empty, err := e.store.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	payload := fixture(t, "alertmanager_payload.json")
	var last string
	for i := range alerts / 2 {
		// Distinct alerts differ in their labels (an Alertmanager alert's
		// id is the hash of its labels and startsAt, never the fingerprint
		// as sent): another pod each.
		body := strings.NewReplacer("checkout-api-7d9f8b-q8k2", fmt.Sprintf("checkout-api-7d9f8b-%04d", 2*i),
			"checkout-api-7d9f8b-x2x1", fmt.Sprintf("checkout-api-7d9f8b-%04d", 2*i+1)).Replace(payload)
		var acc accepted
		if resp := e.post("/api/v1/alerts/alertmanager", "", body, &acc); resp.StatusCode != 202 || acc.Accepted != 2 {
			t.Fatalf("body %d: %d %+v", i, resp.StatusCode, acc)
		}
		last = acc.Analyses[1].AnalysisID
	}
	e.wait(last, "")
	if !testenv.Poll(t, 20*time.Millisecond, func() bool {
		n, err := e.store.InboxDepth(ctx)
		return err == nil && n == 0
	}) {
		t.Fatal("the inbox never drained")
	}
	full, err := e.store.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := e.store.PruneInboxAll(ctx, time.Now().Add(time.Hour), 0)
	if err != nil || pruned != alerts {
		t.Fatalf("pruned %d, %v; want the %d finished", pruned, err, alerts)
	}
	after, err := e.store.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// server.archive_dir: the trail archived, then what only those
	// analyses needed forgotten.
	cut := time.Now().Add(time.Hour)
	res, err := e.app.ArchiveTo(ctx, cut, filepath.Join(t.TempDir(), "trail.jsonl"), nil)
	if err != nil || res.Record.IsZero() {
		t.Fatalf("archive: %+v, %v", res, err)
	}
	if _, err := e.store.ForgetArchived(ctx, cut, 0); err != nil {
		t.Fatal(err)
	}
	forgotten, err := e.store.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	per := func(z int64) float64 { return float64(z-empty.Used()) / float64(alerts) }
	t.Logf("%d alerts: %.0f bytes per triaged alert kept whole, %.0f once pruned, %.0f once archived and forgotten (%d pages in use of %d bytes; %d free after pruning)",
		alerts, per(full.Used()), per(after.Used()), per(forgotten.Used()), after.Pages-after.FreePages, after.PageSize, after.FreePages)
	if storetest.Postgres() {
		// PostgreSQL keeps a pruned row's old version until (auto)vacuum
		// marks its space for reuse, and a table's files do not shrink:
		// its sizes say what the tables hold, dead rows included, so the
		// halving is SQLite's to show (its deleted pages are free at once).
		return
	}
	// Every alert here waits for a person: its waiting row names its inbox
	// row while that holds the result and takes its copy back when
	// pruning empties it (design §12a), so pruning frees the inbox's
	// documents but not the result each waiting item keeps (40 alerts:
	// 14,541 bytes whole and 6,349 pruned when the row held a copy
	// throughout; 10,854 and 6,349 since it names its inbox row).
	if per(after.Used()) >= per(full.Used())*2/3 {
		t.Errorf("pruning kept %.0f of %.0f bytes per alert, want less than two thirds", per(after.Used()), per(full.Used()))
	}
	if per(forgotten.Used()) >= per(full.Used())/10 {
		t.Errorf("archiving and forgetting kept %.0f of %.0f bytes per alert, want less than a tenth", per(forgotten.Used()), per(full.Used()))
	}
}
