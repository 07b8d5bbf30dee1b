package cockpit_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/memory"
)

// TestAnalysisBadgeSaysRowEdited: when what waits for a person is edited
// in the database, the analysis page's audit badge says the chain is not
// intact, names the row, and the page says why the waiting row is not
// shown (no cockpit error, no edited row shown). Fails without the fix
// (the badge said verified and the page showed the edit).
func TestAnalysisBadgeSaysRowEdited(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "cpu high", map[string]string{"alertname": "CPU"}, "", t0)
	db, _ := e.rawDB(t)
	if _, err := db.Exec(`UPDATE waiting SET title = 'nothing to see' WHERE analysis_id = '` + id + `'`); err != nil {
		t.Fatal(err)
	}
	alice := e.session(t, "alice-secret")
	// The badge shows the last verification of the whole trail.
	if err := e.ck.RefreshChain(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, alice, e.srv.URL, "/ui/analysis/"+id)
	for _, want := range []string{`id="chain">audit chain NOT intact`, `id="integrity"`, "waiting row of analysis " + id + " was edited"} {
		if !strings.Contains(body, want) {
			t.Errorf("analysis page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "nothing to see") {
		t.Errorf("the page shows the edited row")
	}
}

// rawDB opens the env's database around the store, to tamper with it as
// someone with the file would; it also says which driver.
func (e *env) rawDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+e.loc+"?_busy_timeout=5000"
	if memory.IsPostgres(e.loc) {
		driver, dsn = "pgx", e.loc
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, driver
}
