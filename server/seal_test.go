package server_test

import (
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

// tamper runs q on the store's database as someone holding it would.
func (e *env) tamper(q string) {
	e.t.Helper()
	driver, dsn := "sqlite3", "file:"+e.db+"?_busy_timeout=5000"
	if memory.IsPostgres(e.db) {
		driver, dsn = "pgx", e.db
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(q); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// TestEditedResultIsNotServed: a stored result whose decision is edited in
// the database is answered 409 with "integrity": "failed" and without the
// edited document, listed by results?since= without its result, and named
// by GET /api/v1/audit/verify. Fails without the fix (the edit was served
// with 200 and verify said intact).
func TestEditedResultIsNotServed(t *testing.T) {
	e := newEnv(t, options{})
	id := e.analyse(`{"id":"a","title":"checkout 5xx spike","service":"checkout"}`)
	sv := e.wait(id, "")
	if sv.Result == nil {
		t.Fatalf("no result: %+v", sv)
	}
	was := string(sv.Result.Decision)
	e.tamper(`UPDATE inbox SET result = replace(result, '"decision":"` + was + `"', '"decision":"known_benign"') WHERE analysis_id = '` + id + `'`)
	var body map[string]any
	resp, b := e.do(http.MethodGet, "/api/v1/results/"+id, "", nil, nil, &body)
	if resp.StatusCode != http.StatusConflict || body["integrity"] != "failed" || strings.Contains(string(b), "known_benign") {
		t.Fatalf("edited result answered %d %s", resp.StatusCode, b)
	}
	var page struct {
		Results []map[string]any `json:"results"`
	}
	if resp, b := e.do(http.MethodGet, "/api/v1/results?since=0", "", nil, nil, &page); resp.StatusCode != http.StatusOK || len(page.Results) != 1 ||
		page.Results[0]["integrity"] != "failed" || page.Results[0]["result"] != nil {
		t.Fatalf("results page: %d %s", resp.StatusCode, b)
	}
	var v usecase.Verified
	if resp, b := e.do(http.MethodGet, "/api/v1/audit/verify", "", nil, nil, &v); resp.StatusCode != http.StatusConflict || v.Intact {
		t.Fatalf("verify after the edit: %d %s", resp.StatusCode, b)
	}
	found := false
	for _, p := range v.Problems {
		found = found || (p.Chain == "row" && p.Step == "result" && p.AnalysisID == id && p.Kind == "edited")
	}
	if !found {
		t.Errorf("verify does not name the edited result: %+v", v.Problems)
	}
}
