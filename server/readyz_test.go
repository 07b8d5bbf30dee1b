package server_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/model/openai"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/server"
)

// readyzAnswer is GET /readyz's answer as a client reads it.
type readyzAnswer struct {
	Ready      bool                 `json:"ready"`
	Database   string               `json:"database"`
	Models     string               `json:"models"`
	Degraded   bool                 `json:"degraded"`
	ModelTiers []server.ModelHealth `json:"model_tiers"`
}

// TestReadyzFullDatabase: on a database that cannot grow (SQLite's
// max_page_count: writes fail with SQLITE_FULL, as on a full disk) /readyz
// answers 503 with the database not writable, the kind of failure named
// without a token; enqueues fail alike. It said "database: writable" while
// every enqueue failed. Fails without the fix.
func TestReadyzFullDatabase(t *testing.T) {
	if os.Getenv("OPENRECALL_TEST_BACKEND") == "postgres" {
		t.Skip("max_page_count is SQLite's")
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	first := newEnv(t, options{noServe: true, db: path})
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	z, err := first.store.Size(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := first.store.Close(); err != nil { // checkpoints the WAL into the file
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	const token = "read-token-0123456789abcdef"
	e := newEnv(t, options{noServe: true, db: path, maxPages: int(fi.Size() / z.PageSize),
		tokens: []server.Token{{Name: "ops", Secret: token, Scopes: []string{server.ScopeIngest, server.ScopeRead}}}})
	var out map[string]any
	if resp := e.post("/api/v1/alerts", token, `{"title":"disk full on db-1","service":"db","text":"`+strings.Repeat("x", 20000)+`"}`, &out); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("an alert into a full database: %d %v, want 503", resp.StatusCode, out)
	}
	var rd readyzAnswer
	resp, b := e.do(http.MethodGet, "/readyz", "", nil, nil, &rd)
	if resp.StatusCode != http.StatusServiceUnavailable || rd.Ready || !strings.HasPrefix(rd.Database, "not writable: no space left") {
		t.Fatalf("readyz on a full database: %d %s", resp.StatusCode, b)
	}
	if strings.Contains(string(b), path) || strings.Contains(string(b), "SQLITE") {
		t.Errorf("readyz without a token shows the error itself: %s", b)
	}
	if _, b := e.do(http.MethodGet, "/readyz", token, nil, nil, &rd); !strings.Contains(rd.Database, "full") {
		t.Errorf("readyz with a token: the error is not shown: %s", b)
	}
}

// TestReadyzModelFailing: with the strong model's server (a real loopback
// server speaking the OpenAI API) answering 500 forever, the strong tier's
// circuit opens after routing.DefaultCircuitFailures failed calls:
// /readyz says the models are failing and is degraded (still ready: the
// alerts are accepted and go to a person), and the metrics say the
// circuit is open. It said "models: reachable". Fails without the fix.
func TestReadyzModelFailing(t *testing.T) {
	var calls atomic.Int64
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"the model is down","type":"server_error"}}`))
	}))
	t.Cleanup(ms.Close)
	strongModel, err := openai.New(openai.Options{BaseURL: ms.URL + "/v1", Model: "gpt-4o", MaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	cheapCircuit := routing.NewCircuit(openrecall.TierCheap, 0, nil)
	strongCircuit := routing.NewCircuit(openrecall.TierStrong, 0, nil)
	health := func() []server.ModelHealth {
		var out []server.ModelHealth
		for _, c := range []routing.CircuitState{cheapCircuit.State(), strongCircuit.State()} {
			out = append(out, server.ModelHealth{Tier: string(c.Tier), Open: c.Open, ConsecutiveFailures: c.Failures, LastError: c.LastError})
		}
		return out
	}
	const token = "ingest-token-0123456789abcdef"
	e := newEnv(t, options{tokens: []server.Token{{Name: "ops", Secret: token, Scopes: []string{server.ScopeIngest, server.ScopeRead}}},
		models: func(cheap, _ routing.Model) (routing.Model, routing.Model) {
			return cheapCircuit.Wrap(cheap), strongCircuit.Wrap(strongModel)
		}, modelHealth: health})
	for i := range routing.DefaultCircuitFailures {
		var acc accepted
		body := fmt.Sprintf(`{"title":"replication lag %d s on db-%d","service":"db-%d","severity":"critical"}`, 40+i, i, i)
		if resp := e.post("/api/v1/alerts", token, body, &acc); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("alert %d: %d", i, resp.StatusCode)
		}
		sv := e.wait(acc.Analyses[0].AnalysisID, token)
		if sv.Result == nil || sv.Result.Decision != openrecall.DecisionEscalated {
			t.Fatalf("alert %d with the model down: %+v, want escalated", i, sv.Result)
		}
	}
	if calls.Load() < routing.DefaultCircuitFailures {
		t.Fatalf("the model server got %d calls, want %d", calls.Load(), routing.DefaultCircuitFailures)
	}
	var rd readyzAnswer
	resp, b := e.do(http.MethodGet, "/readyz", "", nil, nil, &rd)
	if resp.StatusCode != http.StatusOK || !rd.Ready || !rd.Degraded || !strings.HasPrefix(rd.Models, "failing: strong tier") {
		t.Fatalf("readyz with the strong model down: %d %s", resp.StatusCode, b)
	}
	for _, h := range rd.ModelTiers {
		if h.Tier == "strong" && (!h.Open || h.ConsecutiveFailures < routing.DefaultCircuitFailures) || h.LastError != "" {
			t.Errorf("tier without a token: %+v", h)
		}
	}
	if _, b := e.do(http.MethodGet, "/readyz", token, nil, nil, &rd); !strings.Contains(string(b), "the model is down") {
		t.Errorf("readyz with a token does not show the last error: %s", b)
	}
	if v := e.metric(`openrecall_model_circuit_open{tier="strong"}`); v != "1" {
		t.Errorf("openrecall_model_circuit_open{tier=\"strong\"} = %q, want 1", v)
	}
	if v := e.metric(`openrecall_model_circuit_open{tier="cheap"}`); v != "0" {
		t.Errorf("openrecall_model_circuit_open{tier=\"cheap\"} = %q, want 0", v)
	}
}

// TestReadyzHidesConnectionDetails: a PostgreSQL error (the server refuses
// the store's role a new connection) carries the database user, host and
// name; /readyz without a token names only the kind of failure. It showed
// them to anyone. Fails without the fix.
func TestReadyzHidesConnectionDetails(t *testing.T) {
	base := pgtest.Server(t)
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	var b [4]byte
	_, _ = rand.Read(b[:])
	role, db := "rz_user_"+hex.EncodeToString(b[:]), "rz_db_"+hex.EncodeToString(b[:])
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'rz-secret-pw'",
		"CREATE DATABASE " + db + " OWNER " + role,
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '"+role+"'")
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+db)
		_, _ = admin.ExecContext(ctx, "DROP ROLE IF EXISTS "+role)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "rz-secret-pw")
	u.Path = "/" + db
	const token = "read-token-0123456789abcdef"
	e := newEnv(t, options{db: u.String(), tokens: []server.Token{{Name: "ops", Secret: token, Scopes: []string{server.ScopeRead}}}})
	var rd readyzAnswer
	if resp, b := e.do(http.MethodGet, "/readyz", "", nil, nil, &rd); resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz before: %d %s", resp.StatusCode, b)
	}
	// The role may log in no more, and its connections are cut: every new
	// connection fails with an error naming the user, host and database.
	for _, stmt := range []string{"ALTER ROLE " + role + " NOLOGIN",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'"} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	// The pool's connections each fail once as cut; then every new one is
	// refused. Ask with a token until the answer names the role: from
	// then on every probe meets that error.
	named := false
	for i := 0; i < 20 && !named; i++ {
		_, body := e.do(http.MethodGet, "/readyz", token, nil, nil, &rd)
		named = strings.Contains(string(body), role)
		if named {
			t.Logf("readyz with a token: %s", body)
		}
	}
	if !named {
		t.Fatalf("readyz with a token never named the role: the database error is not the one this test is about")
	}
	resp, body := e.do(http.MethodGet, "/readyz", "", nil, nil, &rd)
	t.Logf("readyz without a token: %s", body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(rd.Database, "not writable") {
		t.Fatalf("readyz with the database refusing the role: %d %s", resp.StatusCode, body)
	}
	for _, secret := range []string{role, db, u.Hostname(), u.Port(), "rz-secret-pw"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("readyz without a token shows %q: %s", secret, body)
		}
	}
}
