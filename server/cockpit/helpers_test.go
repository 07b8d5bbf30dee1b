package cockpit_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/usecase"
)

// trailKey keys every test trail.
var trailKey = func() audit.Key {
	k, err := audit.NewKey(bytes.Repeat([]byte{7}, audit.KeySize))
	if err != nil {
		panic(err)
	}
	return k
}()

type testKeys struct{}

func (testKeys) Key(openrecall.TrailState, bool) (audit.Key, error) { return trailKey, nil }
func (testKeys) Explain(err error) error                            { return err }

// Tokens of every test: named tokens that act (bob's with retain alone),
// a named token that only sees, an unnamed token with every scope, and an ingest-only token.
var tokens = []cockpit.Token{
	{Name: "alice", Analyst: "alice", Secret: "alice-secret", Scopes: []string{cockpit.ScopeRead, cockpit.ScopeRetain}},
	{Name: "rita", Analyst: "rita", Secret: "rita-secret", Scopes: []string{cockpit.ScopeRead}},
	{Name: "bob", Analyst: "bob", Secret: "bob-secret", Scopes: []string{cockpit.ScopeRetain}},
	{Name: "", Secret: "anon-secret", Scopes: []string{cockpit.ScopeRead, cockpit.ScopeRetain}},
	{Name: "ingester", Analyst: "ingester", Secret: "ingest-secret", Scopes: []string{"ingest"}},
}

// env is a cockpit over the real application layer and a real SQLite
// file, served on loopback by httptest.
type env struct {
	t     *testing.T
	store *memory.Store
	app   *usecase.App
	sink  memory.Sink // the results' sink, as serve stores them
	ck    *cockpit.Cockpit
	srv   *httptest.Server
	loc   string // the store's location
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	loc := storetest.Location(t)
	st, err := memory.Open(ctx, loc, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// Keyed and sealed as the commands key and seal a memory.
	sealer := storetest.Keyed(t, st, trailKey)
	ex := storetest.Fingerprinter(t)
	// Wired as serve wires it (internal/compose).
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	root := compose.Open(cfg, st, nil, nil, compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(sealer)),
		compose.Keys(testKeys{}), compose.Batch("serve"), compose.GroupScope(), compose.Continue())
	sink, err := root.Sink(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app := root.UseCases
	ck, err := cockpit.New(cockpit.Config{
		UseCases: app, Store: st, Outbox: st, Inbox: st, Tokens: tokens,
		Badge: func(context.Context) cockpit.Badge {
			return cockpit.Badge{Ready: true, Text: "memory=sqlite model=deterministic"}
		},
		ErrorLog: func(_ *http.Request, err error) { t.Errorf("cockpit error: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the server, then the cockpit's background
	// work, then the store.
	t.Cleanup(ck.Close)
	srv := httptest.NewServer(ck.Handler())
	t.Cleanup(srv.Close)
	e := &env{store: st, app: app, sink: sink, ck: ck, srv: srv, loc: loc}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
	}
	return e
}

// waiting records an escalated alert (proposed is the model's decision,
// empty for none) and its audit entries, as the workflow's sink does.
func (e *env) waiting(t testing.TB, n int, title string, labels map[string]string, proposed openrecall.Decision, since time.Time) string {
	t.Helper()
	alert := openrecall.Alert{
		ID: "alert-" + title, Format: "openrecall", Title: title, Text: title + " (text)",
		Labels: labels, Severity: openrecall.SeverityHigh, Service: "checkout", Status: "firing",
	}
	return e.waitingAlert(t, n, alert, proposed, since)
}

// waitingAlert records alert escalated as waiting does.
func (e *env) waitingAlert(t testing.TB, n int, alert openrecall.Alert, proposed openrecall.Decision, since time.Time) string {
	t.Helper()
	ctx := context.Background()
	title := alert.Title
	res := openrecall.Result{
		AnalysisID: fmt.Sprintf("run-test-%06d", n), Batch: "run-test", Outcome: openrecall.ResultTriaged,
		Alert: alert, Fingerprint: e.app.Fingerprinter.Extract(alert), Identity: e.app.Fingerprinter.Identify(alert),
		Decision: openrecall.DecisionEscalated,
		Triage:   openrecall.TriageResult{Decision: openrecall.DecisionEscalated, RequiresHumanApproval: true, EscalationReason: "no memory matches"},
		Guard:    openrecall.GuardVerdict{Reason: "no strong match"},
		Steps: []openrecall.RouteStep{
			{Step: openrecall.StepIntake, Reason: "parsed " + title, Outcome: openrecall.OutcomeOK},
			{Step: openrecall.StepFingerprint, Reason: "rules", Outcome: openrecall.OutcomeOK},
		},
	}
	if proposed != "" {
		res.Analysis = &openrecall.Analysis{Decision: proposed, Confidence: 0.7, Summary: "model says " + title, Model: "local-strong"}
	}
	res.Audit = audit.Entries(res, since)
	if _, err := e.store.AppendAudit(ctx, res.Audit, audit.NewSealer(trailKey).Seal); err != nil {
		t.Fatal(err)
	}
	w, ok := usecase.WaitingFor(res)
	if !ok {
		t.Fatalf("result %s does not wait", res.AnalysisID)
	}
	w.Since = since
	if err := e.store.RecordWaiting(ctx, []openrecall.Waiting{w}); err != nil {
		t.Fatal(err)
	}
	return res.AnalysisID
}

// proposal stores the exception proposal memory would make for an alert
// titled title on identity rule, with match fields match, as the
// workflow's sink does, and returns it.
func (e *env) proposal(t testing.TB, n int, rule, title string, match map[string]string, since time.Time) openrecall.Proposal {
	t.Helper()
	p, _ := e.proposed(t, n, rule, title, match, since, nil)
	return p
}

// proposed stores the proposal as proposal does, recording what waits for a
// person with waits (nil: nothing), and returns it with its analysis id.
func (e *env) proposed(t testing.TB, n int, rule, title string, match map[string]string, since time.Time, waits memory.WaitsFunc) (openrecall.Proposal, string) {
	t.Helper()
	ctx := context.Background()
	alert := openrecall.Alert{ID: fmt.Sprintf("alert-prop-%d", n), Title: title, Severity: openrecall.SeverityLow,
		Labels: map[string]string{"alertname": rule}, Timestamp: since}
	p := &openrecall.Proposal{
		ID: fmt.Sprintf("prop_test%06d", n), Identity: openrecall.Identity{Rule: rule, Service: "shell"},
		DNA: openrecall.Fingerprint{ErrorClass: "shell_spawn"}, Match: match, Decision: openrecall.DecisionKnownBenign,
		MaxSeverity: openrecall.SeverityLow, Expiry: openrecall.DefaultProposalExpiry, Supporting: []string{"inc_a", "inc_b"},
		AlertID: alert.ID, CreatedAt: since,
	}
	res := openrecall.Result{AnalysisID: fmt.Sprintf("run-prop-%06d", n), Batch: "run-prop", Outcome: openrecall.ResultTriaged,
		Alert: alert, Identity: p.Identity, Decision: openrecall.DecisionEscalated, Proposal: p}
	res.Audit = audit.Entries(res, since)
	sink := e.sink
	sink.Waits = waits
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{res}, nil); err != nil {
		t.Fatal(err)
	}
	return *p, res.AnalysisID
}

// storm stores an alert group of size firings titled title, as the
// workflow's sink does: an escalated head and size-1 members that took its
// escalation, each waiting for a person, the first firing at since, one a
// second. It returns the group's id and the firings' analysis ids.
func (e *env) storm(t testing.TB, n, size int, title string, since time.Time) (string, []string) {
	t.Helper()
	return e.stormOf(t, n, size, title, since, nil)
}

// stormOf stores a storm as storm does, the labels of firing i being
// alertname's and labels(i)'s (nil: alertname's alone).
func (e *env) stormOf(t testing.TB, n, size int, title string, since time.Time, labels func(i int) map[string]string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	var results []openrecall.Result
	var ids []string
	head := fmt.Sprintf("run-storm-%03d-000", n)
	for i := range size {
		alert := openrecall.Alert{
			ID: fmt.Sprintf("alert-storm-%d-%d", n, i), Format: "openrecall", Title: title, Text: title + " (text)",
			Labels: map[string]string{"alertname": "Storm" + fmt.Sprint(n)}, Severity: openrecall.SeverityHigh, Service: "checkout", Status: "firing",
		}
		if labels != nil {
			maps.Copy(alert.Labels, labels(i))
		}
		res := openrecall.Result{
			AnalysisID: fmt.Sprintf("run-storm-%03d-%03d", n, i), Batch: "run-storm", Outcome: openrecall.ResultTriaged,
			Alert: alert, Fingerprint: e.app.Fingerprinter.Extract(alert), Identity: e.app.Fingerprinter.Identify(alert),
			Decision: openrecall.DecisionEscalated,
			Triage:   openrecall.TriageResult{Decision: openrecall.DecisionEscalated, RequiresHumanApproval: true, EscalationReason: "no memory matches"},
			Group: &openrecall.GroupRef{ID: openrecall.GroupID(head), Role: openrecall.GroupRoleMember, HeadAnalysisID: head,
				HeadAlertID: fmt.Sprintf("alert-storm-%d-0", n), At: since.Add(time.Duration(i) * time.Second)},
		}
		if i == 0 {
			res.Group.Role = openrecall.GroupRoleHead
			res.Analysis = &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Confidence: 0.7, Summary: "a deploy storm", Model: "local-strong"}
		}
		res.Audit = audit.Entries(res, since)
		results = append(results, res)
		ids = append(ids, res.AnalysisID)
	}
	if _, err := e.sink.PersistBatch(ctx, results, nil); err != nil {
		t.Fatal(err)
	}
	return openrecall.GroupID(head), ids
}

// client is a browser-like client: it keeps cookies and does not follow
// redirects, so tests see each 303.
func (e *env) client(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login logs c in with secret and returns the answer.
func (e *env) login(t testing.TB, c *http.Client, secret string) *http.Response {
	t.Helper()
	resp, err := c.PostForm(e.srv.URL+"/ui/login", url.Values{"token": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp
}

// session returns a client logged in with secret.
func (e *env) session(t testing.TB, secret string) *http.Client {
	t.Helper()
	c := e.client(t)
	if resp := e.login(t, c, secret); resp.Header.Get("Location") != "/ui/queue" {
		t.Fatalf("login with %s: %d to %q", secret, resp.StatusCode, resp.Header.Get("Location"))
	}
	return c
}

// get fetches path and returns the status, headers and body.
func get(t testing.TB, c *http.Client, base, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

// post submits a form and returns the answer.
func post(t testing.TB, c *http.Client, base, path string, form url.Values, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, c, req)
}

// do sends req and returns the answer with its body read.
func do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// auditEntries returns the audit entries of analysisID.
func (e *env) auditEntries(t testing.TB, analysisID string) []openrecall.AuditEntry {
	t.Helper()
	es, err := e.store.AuditByAnalysis(context.Background(), analysisID)
	if err != nil {
		t.Fatal(err)
	}
	return es
}
