package cockpit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/usecase"
)

// TestAnalysisPageChecksItsOwnLinks: the analysis page checks its own
// audit entries on every view and shows the last verification of the
// whole trail without reading the trail again (the trail is read once,
// by RefreshChain, and once more in the background when that result is
// older than ChainEvery); an edited entry of the analysis shows as broken
// on its page at once.
func TestAnalysisPageChecksItsOwnLinks(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "cpu high", map[string]string{"alertname": "CPU"}, "", t0)
	e.waiting(t, 2, "disk full", map[string]string{"alertname": "Disk"}, "", t0)
	app := *e.app
	var full atomic.Int32
	app.ReadTrail = func(ctx context.Context, tr usecase.TrailReader) error {
		full.Add(1)
		return e.app.ReadTrail(ctx, tr)
	}
	var now atomic.Int64
	now.Store(t0.Add(time.Hour).UnixNano())
	ck, err := cockpit.New(cockpit.Config{
		UseCases: &app, Store: e.store, Tokens: tokens, ChainEvery: 10 * time.Minute,
		Now:      func() time.Time { return time.Unix(0, now.Load()).UTC() },
		Badge:    func(context.Context) cockpit.Badge { return cockpit.Badge{Ready: true, Text: "memory=sqlite"} },
		ErrorLog: func(_ *http.Request, err error) { t.Errorf("cockpit error: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ck.RefreshChain(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2 := *e
	e2.srv = httptest.NewServer(ck.Handler())
	defer e2.srv.Close()
	alice := e2.session(t, "alice-secret")
	for range 5 {
		_, body := get(t, alice, e2.srv.URL, "/ui/analysis/"+id)
		for _, want := range []string{`id="links">its `, `audit entries match their content`, `id="chain">audit chain verified`, "1 h ago"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the page lacks %q:\n%s", want, body)
			}
		}
	}
	if n := full.Load(); n != 1 {
		t.Errorf("the whole trail was read %d times, want once (by RefreshChain)", n)
	}
	// Older than ChainEvery: the page shows the old result and asks for a
	// new one in the background.
	now.Add(int64(11 * time.Minute))
	if _, body := get(t, alice, e2.srv.URL, "/ui/analysis/"+id); !strings.Contains(body, "audit chain verified") {
		t.Errorf("the old result is not shown:\n%s", body)
	}
	for deadline := time.Now().Add(10 * time.Second); full.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := full.Load(); n != 2 {
		t.Errorf("the whole trail was read %d times, want twice", n)
	}

	// An edited entry of this analysis: its page says so on the next view.
	db, driver := e.rawDB(t)
	drop := `DROP TRIGGER audit_entries_no_update`
	if driver == "pgx" {
		drop += ` ON audit_entries`
	}
	if _, err := db.Exec(drop); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit_entries SET reason = 'nothing to see' WHERE analysis_id = $1 AND step_index = 0`, id); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, alice, e2.srv.URL, "/ui/analysis/"+id)
	for _, want := range []string{`id="links">its audit entries are NOT intact: 1 problems`, `id="link-problems"`, "(analysis " + id + ", step", "was edited"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if n := full.Load(); n != 2 {
		t.Errorf("the whole trail was read %d times, want twice", n)
	}
}

// TestCloseEndsTheBackgroundVerification: a page's background verification
// of the trail outlives its request; Close cancels it and returns only once
// it has ended, without reporting the cancellation as an error, so the
// store can be closed after it (a verification still reading when the
// store closed failed with "database is closed", under load).
func TestCloseEndsTheBackgroundVerification(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "cpu high", map[string]string{"alertname": "CPU"}, "", t0)
	app := *e.app
	started := make(chan struct{})
	var ended atomic.Bool
	app.ReadTrail = func(ctx context.Context, tr usecase.TrailReader) error {
		close(started)
		<-ctx.Done() // reads until cancelled
		ended.Store(true)
		return ctx.Err()
	}
	ck, err := cockpit.New(cockpit.Config{
		UseCases: &app, Store: e.store, Tokens: tokens,
		Badge:    func(context.Context) cockpit.Badge { return cockpit.Badge{Ready: true, Text: "memory=sqlite"} },
		ErrorLog: func(_ *http.Request, err error) { t.Errorf("cockpit error: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	e2 := *e
	e2.srv = httptest.NewServer(ck.Handler())
	alice := e2.session(t, "alice-secret")
	if resp, body := get(t, alice, e2.srv.URL, "/ui/analysis/"+id); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the analysis page: %d\n%s", resp.StatusCode, body)
	}
	e2.srv.Close()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the page started no verification of the trail")
	}
	ck.Close()
	if !ended.Load() {
		t.Error("Close returned while the verification was still reading")
	}
}
