package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/memory"
)

// served is a running `openrecall serve` process.
type served struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

// startServe starts the binary's serve on a free loopback port and waits for
// its address line.
func startServe(t *testing.T, bin, db string, env []string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--db", db, "--log-level", "info", "--log-format", "json", "serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "openrecall serve: listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // already gone is fine
		}
	})
	select {
	case u := <-addr:
		s.url = u
	case err := <-s.done:
		t.Fatalf("serve exited before listening: %v\n%s", err, s.log())
	case <-testenv.Expiry(t):
		t.Fatalf("serve did not listen before the test's deadline\n%s", s.log())
	}
	return s
}

func (s *served) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// call sends a request and decodes a JSON answer into out (when not nil).
func (s *served) call(method, path, token string, body io.Reader, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

type e2eAccepted struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	Analyses   []struct {
		AnalysisID string `json:"analysis_id"`
		State      string `json:"state"`
		Duplicate  bool   `json:"duplicate"`
	} `json:"analyses"`
}

type e2eResult struct {
	AnalysisID string `json:"analysis_id"`
	State      string `json:"state"`
	Done       bool   `json:"done"`
	Result     struct {
		Outcome  string            `json:"outcome"`
		Decision string            `json:"decision"`
		Bypassed bool              `json:"bypassed"`
		Steps    []json.RawMessage `json:"steps"`
		Audit    []json.RawMessage `json:"audit"`
	} `json:"result"`
}

// allResults pages through results?since= until want are done or the
// test's deadline nears, then returns every result listed.
func (s *served) allResults(token string, want int) []e2eResult {
	s.t.Helper()
	var all []e2eResult
	var cursor int64
	testenv.Poll(s.t, 50*time.Millisecond, func() bool {
		for {
			var page struct {
				Results []e2eResult `json:"results"`
				Next    int64       `json:"next"`
			}
			if code := s.call(http.MethodGet, fmt.Sprintf("/api/v1/results?since=%d&limit=1000", cursor), token, nil, &page); code != http.StatusOK {
				s.t.Fatalf("results: %d", code)
			}
			all = append(all, page.Results...)
			cursor = page.Next
			if len(page.Results) == 0 || len(all) >= want {
				return len(all) >= want
			}
		}
	})
	return all
}

// TestServeEndToEnd drives the built binary: real Alertmanager payloads,
// PagerDuty events, a redelivery, an oversize body and a bad token; a kill
// -9 right after a 202 and a restart that drains what was accepted; results,
// metrics, audit verification, and a SIGTERM that exits 0.
func TestServeEndToEnd(t *testing.T) {
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "serve.db")
	const ingest, read = "ingest-e2e-0123456789", "read-e2e-0123456789ab"
	env := []string{"OPENRECALL_INGEST_TOKEN=" + ingest, "OPENRECALL_READ_TOKEN=" + read}
	s := startServe(t, bin, db, env, "--workers", "1")

	expected := 0
	fixtures := "../../server/testdata/alertmanager/"
	for _, name := range []string{"alertmanager_payload.json", "alertmanager_payload_from_prometheus.json", "alertmanager_payload_truncated.json", "alertmanager_payload_resolved.json"} {
		f, err := os.Open(fixtures + name)
		if err != nil {
			t.Fatal(err)
		}
		var acc e2eAccepted
		code := s.call(http.MethodPost, "/api/v1/alerts/alertmanager", ingest, f, &acc)
		_ = f.Close() // read to the end
		if code != http.StatusAccepted || acc.Accepted == 0 {
			t.Fatalf("%s: %d %+v", name, code, acc)
		}
		expected += acc.Accepted
	}
	f, _ := os.Open(fixtures + "prometheus_to_alertmanager_v2_postable_alerts.json")
	var acc e2eAccepted
	if code := s.call(http.MethodPost, "/api/v1/alerts", ingest, f, &acc); code != http.StatusAccepted {
		t.Fatalf("postable alerts: %d", code)
	}
	_ = f.Close() // read to the end
	expected += acc.Accepted

	// The redelivery is recognised.
	f, _ = os.Open(fixtures + "alertmanager_payload.json")
	acc = e2eAccepted{}
	s.call(http.MethodPost, "/api/v1/alerts/alertmanager", ingest, f, &acc)
	_ = f.Close() // read to the end
	if acc.Accepted != 0 || acc.Duplicates != 2 {
		t.Errorf("redelivery: %+v", acc)
	}

	// PagerDuty: routing_key as the token, PagerDuty-shaped answers.
	for _, action := range []string{"trigger", "acknowledge", "resolve"} {
		var pd map[string]any
		body := `{"routing_key":"` + ingest + `","event_action":"` + action + `","dedup_key":"pg-lag","payload":{"summary":"Replication lag 40s on pg-2","source":"pg-2","severity":"error","component":"postgres"}}`
		if code := s.call(http.MethodPost, "/v2/enqueue", "", strings.NewReader(body), &pd); code != http.StatusAccepted || pd["status"] != "success" || pd["dedup_key"] != "pg-lag" {
			t.Fatalf("pagerduty %s: %d %v", action, code, pd)
		}
		expected++
	}

	// Refusals: a bad token, a body past the default 32 MiB limit.
	var e map[string]any
	if code := s.call(http.MethodPost, "/api/v1/alerts", "wrong", strings.NewReader(`{"title":"x"}`), &e); code != http.StatusUnauthorized || e["error"] == nil {
		t.Errorf("bad token: %d %v", code, e)
	}
	huge := io.MultiReader(strings.NewReader(`{"title":"`), io.LimitReader(zeros{}, 32<<20), strings.NewReader(`"}`))
	if code := s.call(http.MethodPost, "/api/v1/alerts", ingest, huge, &e); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize body: %d %v", code, e)
	}

	// A large body, then kill -9 right after its 202.
	var queue strings.Builder
	const big = 3000
	for i := range big {
		fmt.Fprintf(&queue, `{"id":"bulk-%d","title":"Disk usage above 90%% on node-%d","service":"node-exporter","severity":"warning"}`+"\n", i, i)
	}
	acc = e2eAccepted{}
	if code := s.call(http.MethodPost, "/api/v1/alerts", ingest, strings.NewReader(queue.String()), &acc); code != http.StatusAccepted || acc.Accepted != big {
		t.Fatalf("bulk: %d accepted %d", code, acc.Accepted)
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-s.done; err == nil {
		t.Fatal("serve exited 0 after kill -9")
	}
	expected += big

	s = startServe(t, bin, db, env, "--workers", "2")
	results := s.allResults(read, expected)
	if !strings.Contains(s.log(), "draining deliveries accepted before this start") {
		t.Fatalf("the restart found nothing pending: the kill came too late to prove anything\n%s", s.log())
	}
	seen := map[string]bool{}
	outcomes := map[string]int{}
	for _, r := range results {
		if seen[r.AnalysisID] {
			t.Errorf("analysis %s listed twice", r.AnalysisID)
		}
		seen[r.AnalysisID] = true
		outcomes[r.Result.Outcome]++
		if len(r.Result.Audit) != len(r.Result.Steps) {
			t.Errorf("%s: %d audit entries for %d steps", r.AnalysisID, len(r.Result.Audit), len(r.Result.Steps))
		}
	}
	if len(results) != expected {
		t.Fatalf("%d results, want every one of the %d accepted deliveries (outcomes %v)", len(results), expected, outcomes)
	}
	// 2 Alertmanager resolves, a PagerDuty acknowledge and resolve, and the
	// notice that max_alerts left 2 alerts out of the truncated webhook.
	if outcomes["resolved"] != 5 {
		t.Errorf("outcomes %v, want 5 recorded, not triaged", outcomes)
	}
	// Audit verification over HTTP is the command's: the keyed chains of
	// entries and cost points, and a checkpoint from 'audit head' (run
	// while the server holds the database).
	var rep struct {
		Intact            bool   `json:"intact"`
		Entries           int    `json:"entries"`
		Costs             int    `json:"cost_points"`
		KeyID             string `json:"key_id"`
		ExtendsCheckpoint bool   `json:"extends_checkpoint"`
	}
	if code := s.call(http.MethodGet, "/api/v1/audit/verify", read, nil, &rep); code != http.StatusOK || !rep.Intact ||
		rep.KeyID == "" || rep.Costs == 0 || rep.Entries == 0 {
		t.Errorf("audit verify: %d %+v", code, rep)
	}
	// That the answers are the commands' -o json, field for field, is
	// TestCLIAndAPIAgree's.
	code, cp, errOut := runBinary(t, bin, "", "--db", db, "audit", "head")
	if code != 0 {
		t.Fatalf("audit head beside the server: exit %d\n%s", code, errOut)
	}
	rep.ExtendsCheckpoint = false
	if code := s.call(http.MethodGet, "/api/v1/audit/verify?checkpoint="+url.QueryEscape(strings.TrimSpace(cp)), read, nil, &rep); code != http.StatusOK || !rep.Intact || !rep.ExtendsCheckpoint {
		t.Errorf("audit verify against the checkpoint: %d %+v", code, rep)
	}
	forged := strings.TrimSpace(cp) + "0"
	if code := s.call(http.MethodGet, "/api/v1/audit/verify?checkpoint="+url.QueryEscape(forged), read, nil, &e); code != http.StatusBadRequest || e["error"] == nil {
		t.Errorf("audit verify against a forged checkpoint: %d %v", code, e)
	}

	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{"openrecall_alerts_analysed_total", "openrecall_inbox_depth 0", "openrecall_http_request_duration_seconds_bucket", "openrecall_alert_cost_usd_bucket"} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// SIGTERM: stop accepting, finish in-flight work, exit 0.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, s.log())
	}
	if code, out, errOut := runBinary(t, bin, "", "--db", db, "audit", "verify"); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("audit verify after the runs: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runBinary(t, bin, "", "--db", db, "retain", "--analysis-id", results[0].AnalysisID, "--decision", "known_benign", "--note", "e2e"); code != 0 || !strings.Contains(out, "retained") {
		t.Errorf("retain --analysis-id: exit %d\n%s%s", code, out, errOut)
	}
}

// zeros reads as endless 'x' bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'x'
	}
	return len(b), nil
}

// TestServeRefusesOpenListen: without a token, a non-loopback address is a
// usage error.
func TestServeRefusesOpenListen(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"--db", filepath.Join(t.TempDir(), "m.db"), "serve", "--listen", "0.0.0.0:0"}, streams{in: strings.NewReader(""), out: &out, errOut: &errOut})
	if code != exitUsage || !strings.Contains(errOut.String(), "not loopback") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

// TestServeDailyBudget: server.budget_usd_per_day caps model spend: with a
// budget smaller than one strong call, an alert that needs the model is
// escalated to a person without a call.
func TestServeDailyBudget(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "openrecall.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  budget_usd_per_day: 0.000001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, bin, filepath.Join(dir, "m.db"), nil, "--config", cfg)
	var acc e2eAccepted
	body := `{"id":"ssh-1","title":"Brute force: 500 failed ssh logins for root from 203.0.113.9","service":"bastion","severity":"high"}`
	if code := s.call(http.MethodPost, "/api/v1/alerts", "", strings.NewReader(body), &acc); code != http.StatusAccepted {
		t.Fatalf("post: %d", code)
	}
	results := s.allResults("", 1)
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	type step struct {
		Step    string `json:"step"`
		Outcome string `json:"outcome"`
		Cost    int64  `json:"cost_nano_usd"`
	}
	var steps []step
	for _, raw := range results[0].Result.Steps {
		var st step
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st)
	}
	last := steps[len(steps)-1]
	if results[0].Result.Decision != "escalated" || last.Outcome != "budget-exceeded" || last.Cost != 0 {
		t.Errorf("decision %s, steps %+v: want escalated without a call for budget", results[0].Result.Decision, steps)
	}
}

// Several serve processes on one PostgreSQL database: when another binary
// migrates the schema, a running serve claims no more work and exits 1,
// saying why; what waits stays in the inbox.
func TestServeOnPostgresStopsWhenTheSchemaChanges(t *testing.T) {
	bin := buildBinary(t)
	db := pgtest.DSN(t)
	s := startServe(t, bin, db, []string{"OPENRECALL_AUDIT_KEY=" + strings.Repeat("cd", 32)})
	var acc e2eAccepted
	body := `{"id":"disk-1","title":"disk full on db-1","service":"db","severity":"low"}`
	if code := s.call(http.MethodPost, "/api/v1/alerts", "", strings.NewReader(body), &acc); code != http.StatusAccepted {
		t.Fatalf("post: %d", code)
	}
	if got := s.allResults("", 1); len(got) != 1 {
		t.Fatalf("%d results before the migration", len(got))
	}
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }() // one statement's pool
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'from a newer binary', 0)`, memory.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(s.log(), "schema version") {
			t.Fatalf("serve ended with %v; want exit 1 naming the schema version\n%s", err, s.log())
		}
	case <-testenv.Expiry(t):
		t.Fatalf("serve kept running on a schema another binary migrated\n%s", s.log())
	}
}

// TestServeDebugListen: --debug-listen serves the runtime profiles on a
// loopback address only (they have no token).
func TestServeDebugListen(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"--db", filepath.Join(t.TempDir(), "m.db"), "serve", "--debug-listen", "0.0.0.0:0"}, streams{in: strings.NewReader(""), out: &out, errOut: &errOut})
	if code != exitUsage || !strings.Contains(errOut.String(), "loopback") {
		t.Fatalf("--debug-listen 0.0.0.0:0: exit %d: %s", code, errOut.String())
	}
	addr, err := debugListen(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Errorf("heap profile: %d %.80s", resp.StatusCode, body)
	}
}

// TestServeRevokeSessions: `serve revoke-sessions` ends every cockpit
// session stored in the database (issue 33, item 9).
func TestServeRevokeSessions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	st, err := memory.Open(t.Context(), db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, h := range []string{strings.Repeat("a", 64), strings.Repeat("b", 64)} {
		if err := st.CreateSession(t.Context(), openrecall.Session{IDHash: h, Analyst: "alice", Scopes: []string{"read"}, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "--db", db, "serve", "revoke-sessions")
	if r.code != 0 || r.stdout != "revoked 2 cockpit session(s)\n" {
		t.Fatalf("exit %d: %q %q", r.code, r.stdout, r.stderr)
	}
	st, err = memory.Open(t.Context(), db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if _, err := st.Session(t.Context(), strings.Repeat("a", 64), now); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("a session after revoke-sessions: %v", err)
	}
}

// TestServeRefusesShortAndUnnamedTokens: a token shorter than 16 bytes, or
// a retain token without a name, stops serve at start with a message that
// names it and not its secret (issue 33, items 7 and 9).
func TestServeRefusesShortAndUnnamedTokens(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"OPENRECALL_INGEST_TOKEN=Qz7", "$OPENRECALL_INGEST_TOKEN: a token of 3 bytes, at least 16 are required"},
		{"OPENRECALL_RETAIN_TOKEN=retain-0123456789abcdef", "$OPENRECALL_RETAIN_TOKEN grants the retain scope"},
	} {
		k, v, _ := strings.Cut(tt.env, "=")
		t.Setenv(k, v)
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"--db", filepath.Join(t.TempDir(), "m.db"), "serve", "--listen", "127.0.0.1:0"}, streams{in: strings.NewReader(""), out: &out, errOut: &errOut})
		if code == 0 || !strings.Contains(errOut.String(), tt.want) || strings.Contains(errOut.String(), v) {
			t.Errorf("%s: exit %d: %s", k, code, errOut.String())
		}
		t.Setenv(k, "")
	}
}
