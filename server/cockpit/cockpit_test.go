package cockpit_test

import (
	"context"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/usecase"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func checkCSP(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("Content-Security-Policy"); got != cockpit.CSP {
		t.Errorf("%s: Content-Security-Policy %q, want %q", what, got, cockpit.CSP)
	}
	if strings.Contains(cockpit.CSP, "unsafe-inline") || !strings.Contains(cockpit.CSP, "script-src 'self'") {
		t.Errorf("the CSP allows inline script or style: %s", cockpit.CSP)
	}
}

func TestLoginNeedsANamedScopedToken(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		secret string
		ok     bool
	}{
		{"alice-secret", true}, {"rita-secret", true}, {"anon-secret", false}, {"ingest-secret", false},
		{"no-such-secret", false}, {"", false},
	} {
		c := e.client(t)
		resp := e.login(t, c, tt.secret)
		loc := resp.Header.Get("Location")
		if ok := loc == "/ui/queue"; ok != tt.ok || resp.StatusCode != http.StatusSeeOther {
			t.Errorf("login %q: %d to %q, want logged in %v", tt.secret, resp.StatusCode, loc, tt.ok)
		}
		var ck *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == cockpit.SessionCookie {
				ck = c
			}
		}
		if tt.ok != (ck != nil) {
			t.Errorf("login %q: session cookie %v", tt.secret, ck)
			continue
		}
		if ck != nil && (!ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure || ck.Path != "/ui/") {
			t.Errorf("login %q: cookie %+v, want HttpOnly, SameSite=Strict, Path /ui/, not Secure over http", tt.secret, ck)
		}
	}
}

func TestSessionCookieIsSecureOverTLS(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewTLSServer(e.ck.Handler())
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(srv.URL+"/ui/login", url.Values{"token": {"alice-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if cs := resp.Cookies(); len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly {
		t.Errorf("cookies over TLS %+v, want one Secure HttpOnly session cookie", cs)
	}
}

func TestEveryPageRendersWithCSPAndNeedsALogin(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "checkout latency high", map[string]string{"alertname": "CheckoutLatency", "service": "checkout"}, openrecall.DecisionFalsePositive, t0)
	mem, err := e.app.Retain(context.Background(), usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Note: "batch job", DeadEnds: []string{"restarted pods"}, Analyst: "bob"},
		Subject:  usecase.Subject{Alerts: []openrecall.Alert{{ID: "x", Title: "checkout latency high", Labels: map[string]string{"alertname": "CheckoutLatency", "service": "checkout"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"/ui/":                                "What waits for a person",
		"/ui/queue":                           "checkout latency high",
		"/ui/queue?severity=high":             "checkout latency high",
		"/ui/queue?service=nowhere":           "Nothing waiting matches the filter, service containing “nowhere”",
		"/ui/review/" + id:                    "model says checkout latency high",
		"/ui/analysis/" + id:                  "audit entries match their content",
		"/ui/cost":                            "No run has cost points yet",
		"/ui/memory":                          "Memory id",
		"/ui/memory?id=" + mem[0].Incident.ID: "restarted pods",
		"/ui/exceptions":                      "No proposed exception waits",
		"/ui/exceptions?state=active":         "No exception is active",
	}
	anon := e.client(t)
	alice := e.session(t, "alice-secret")
	for p, want := range pages {
		resp, _ := get(t, anon, e.srv.URL, p)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login" {
			t.Errorf("%s without a session: %d to %q, want 303 to /ui/login", p, resp.StatusCode, resp.Header.Get("Location"))
		}
		checkCSP(t, p, resp)
		resp, body := get(t, alice, e.srv.URL, p)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		checkCSP(t, p, resp)
		if !strings.Contains(body, want) || !strings.Contains(body, `id="mode"`) || !strings.Contains(body, "memory=sqlite model=deterministic") {
			t.Errorf("%s lacks %q or the mode badge:\n%s", p, want, body)
		}
		if strings.Contains(body, "<style") || strings.Contains(body, " style=") || strings.Contains(body, "<script>") {
			t.Errorf("%s has inline style or script", p)
		}
	}
	for _, p := range []string{"/ui/login", "/"} {
		resp, _ := get(t, anon, e.srv.URL, p)
		checkCSP(t, p, resp)
	}
	for p, code := range map[string]int{"/ui/review/nope": 404, "/ui/analysis/nope": 404, "/ui/memory?id=nope": 404, "/ui/nope": 404} {
		if resp, _ := get(t, alice, e.srv.URL, p); resp.StatusCode != code {
			t.Errorf("%s: %d, want %d", p, resp.StatusCode, code)
		}
	}
}

func TestRootRedirectsToTheCockpit(t *testing.T) {
	e := newEnv(t)
	resp, _ := get(t, e.client(t), e.srv.URL, "/")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("/: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestCostPageShowsTheCurveAndSavingsBySource(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pts := []openrecall.CostPoint{
		{Batch: "run-a", Index: 0, AlertID: "a", Tier: openrecall.TierNone, Bypassed: true, Cost: 0, Baseline: 5000},
		{Batch: "run-a", Index: 1, AlertID: "b", Tier: openrecall.TierStrong, Cost: 5000, Baseline: 5000},
	}
	if err := e.store.AppendCostPoints(ctx, pts, audit.NewSealer(trailKey).SealCosts); err != nil {
		t.Fatal(err)
	}
	alice := e.session(t, "alice-secret")
	resp, body := get(t, alice, e.srv.URL, "/ui/cost")
	if resp.StatusCode != 200 || !strings.Contains(body, `id="curve"`) || !strings.Contains(body, "bypass") {
		t.Errorf("cost page: %d\n%s", resp.StatusCode, body)
	}
	resp, body = get(t, alice, e.srv.URL, "/ui/cost.svg?batch=run-a")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, "<svg") {
		t.Errorf("cost.svg: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkCSP(t, "cost.svg", resp)
	// A run asked by name that has no points is a 404 saying so, not an
	// empty page.
	if resp, body := get(t, alice, e.srv.URL, "/ui/cost?batch=nope"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "No run named &#34;nope&#34; has cost points") {
		t.Errorf("cost?batch=nope: %d, want 404 naming the run", resp.StatusCode)
	}
}

func TestDecideOtherwiseLeavesTheQueueOnceAudited(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "disk full on db-1", map[string]string{"alertname": "DiskFull", "service": "db"}, "", t0)
	other := e.waiting(t, 2, "disk full on db-2", map[string]string{"alertname": "DiskFull2", "service": "db"}, "", t0.Add(time.Minute))
	alice := e.session(t, "alice-secret")
	form := url.Values{"action": {"decide"}, "decision": {"known_benign"}, "note": {"log rotation lagged"},
		"dead_end": {"checked inode usage", "", "restarted the exporter", ""}}
	resp, _ := post(t, alice, e.srv.URL, "/ui/review/"+id, form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/queue?done=decided" {
		t.Fatalf("decide: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, body := get(t, alice, e.srv.URL, "/ui/queue?done=decided")
	if strings.Contains(body, id) || !strings.Contains(body, other) || !strings.Contains(body, `id="flash"`) {
		t.Errorf("the decided analysis is still queued, or the other is gone:\n%s", body)
	}
	rc, err := e.app.Recall(context.Background(), usecase.Subject{AnalysisID: id}, 10)
	if err != nil || len(rc.Matches) != 1 {
		t.Fatalf("recall: %v %+v", err, rc)
	}
	inc := rc.Matches[0].Incident
	if inc.Analyst != "alice" || inc.Note != "log rotation lagged" || strings.Join(inc.DeadEnds, "|") != "checked inode usage|restarted the exporter" {
		t.Errorf("memory %+v", inc)
	}
	entries := e.auditEntries(t, id)
	last := entries[len(entries)-1]
	if last.Step != usecase.StepAnalystDecision || !strings.Contains(last.Reason, "alice decided known_benign") {
		t.Errorf("last audit entry %+v, want alice's decision", last)
	}
	// A resubmit changes nothing: no memory, no audit entry.
	resp, _ = post(t, alice, e.srv.URL, "/ui/review/"+id, form)
	if resp.Header.Get("Location") != "/ui/queue?done=already" {
		t.Errorf("resubmit: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := len(e.auditEntries(t, id)); n != len(entries) {
		t.Errorf("resubmit audited: %d entries, were %d", n, len(entries))
	}
	v, err := e.app.VerifyAudit(context.Background(), "")
	if err != nil || !v.Intact {
		t.Errorf("audit verify: %v %+v", err, v)
	}
	_, body = get(t, alice, e.srv.URL, "/ui/review/"+id)
	if !strings.Contains(body, `id="decided"`) || strings.Contains(body, `id="decide-form"`) {
		t.Errorf("a decided review still offers the forms")
	}
}

func TestDecideValidates(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "cpu high", map[string]string{"alertname": "CPU"}, "", t0)
	alice := e.session(t, "alice-secret")
	for name, form := range map[string]url.Values{
		"no note":          {"action": {"decide"}, "decision": {"real"}, "note": {"  "}},
		"bad decision":     {"action": {"decide"}, "decision": {"escalated"}, "note": {"x"}},
		"nothing proposed": {"action": {"approve"}},
		"unknown decision": {"action": {"decide"}, "decision": {"<b>"}, "note": {"x"}},
	} {
		resp, body := post(t, alice, e.srv.URL, "/ui/review/"+id, form)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `id="error"`) {
			t.Errorf("%s: %d, want 400 with the reason", name, resp.StatusCode)
		}
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/review/nope", url.Values{"action": {"decide"}, "decision": {"real"}, "note": {"x"}}); resp.StatusCode != 404 {
		t.Errorf("unknown analysis: %d", resp.StatusCode)
	}
	if ws, _ := e.app.Queue(context.Background(), openrecall.WaitingFilter{}); len(ws) != 1 {
		t.Errorf("a refused decision changed the queue: %d waiting", len(ws))
	}
}

func TestApproveAsProposedAndInBulk(t *testing.T) {
	e := newEnv(t)
	a := e.waiting(t, 1, "a", map[string]string{"alertname": "A"}, openrecall.DecisionFalsePositive, t0)
	b := e.waiting(t, 2, "b", map[string]string{"alertname": "B"}, openrecall.DecisionDuplicate, t0.Add(time.Second))
	c := e.waiting(t, 3, "c", map[string]string{"alertname": "C"}, openrecall.DecisionKnownBenign, t0.Add(2*time.Second))
	alice := e.session(t, "alice-secret")
	resp, _ := post(t, alice, e.srv.URL, "/ui/review/"+a, url.Values{"action": {"approve"}})
	if resp.Header.Get("Location") != "/ui/queue?done=decided" {
		t.Fatalf("approve: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A bulk approval asks first (TestBulkApproveConfirmsFirst), then acts.
	resp, body := post(t, alice, e.srv.URL, "/ui/queue/approve", url.Values{"id": {b, c}, "confirm": {"1"}})
	if resp.StatusCode != http.StatusOK || strings.Count(body, `class="bulk-item decided"`) != 2 {
		t.Fatalf("bulk approve: %d\n%s", resp.StatusCode, body)
	}
	if ws, _ := e.app.Queue(context.Background(), openrecall.WaitingFilter{}); len(ws) != 0 {
		t.Errorf("%d still waiting", len(ws))
	}
	for id, want := range map[string]openrecall.Decision{a: "false_positive", b: "duplicate", c: "known_benign"} {
		w, err := e.store.WaitingFor(context.Background(), id)
		if err != nil || w.Decision != want || w.DecidedBy != "alice" {
			t.Errorf("%s: %v %+v", id, err, w)
		}
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/queue/approve", url.Values{}); resp.Header.Get("Location") != "/ui/queue?done=none" {
		t.Errorf("empty bulk approve: %q", resp.Header.Get("Location"))
	}
}

func TestQueueSortsOldestFirstAndFilters(t *testing.T) {
	e := newEnv(t)
	late := e.waiting(t, 1, "late", map[string]string{"alertname": "Late", "service": "api"}, "", t0.Add(time.Hour))
	early := e.waiting(t, 2, "early", map[string]string{"alertname": "Early", "service": "api"}, "", t0)
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/queue?sort=oldest")
	if i, j := strings.Index(body, early), strings.Index(body, late); i < 0 || j < 0 || i > j {
		t.Errorf("queue not oldest first (%d, %d)", i, j)
	}
	rule := e.app.Fingerprinter.Identify(openrecall.Alert{Labels: map[string]string{"alertname": "Late", "service": "api"}}).Rule
	_, body = get(t, alice, e.srv.URL, "/ui/queue?rule="+url.QueryEscape(rule))
	if !strings.Contains(body, late) || strings.Contains(body, early) {
		t.Errorf("rule filter %q", rule)
	}
	_, body = get(t, alice, e.srv.URL, "/ui/queue?severity=critical")
	if strings.Contains(body, late) || strings.Contains(body, early) {
		t.Errorf("severity filter let high alerts through")
	}
}

func TestActionsNeedTheRetainScopeAndTheSameOrigin(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "x", map[string]string{"alertname": "X"}, openrecall.DecisionFalsePositive, t0)
	rita := e.session(t, "rita-secret")
	alice := e.session(t, "alice-secret")
	anon := e.client(t)
	actions := map[string]url.Values{
		"/ui/review/" + id:        {"action": {"approve"}},
		"/ui/queue/approve":       {"id": {id}},
		"/ui/memory/inc_x/forget": {"reason": {"r"}},
	}
	for p, form := range actions {
		for who, c := range map[string]*http.Client{"read session": rita, "no session": anon} {
			if resp, _ := post(t, c, e.srv.URL, p, form); resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d, want 403", p, who, resp.StatusCode)
			}
		}
		for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
			resp, _ := post(t, alice, e.srv.URL, p, form, h...)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d, want 403", p, h[0]+": "+h[1], resp.StatusCode)
			}
			checkCSP(t, "403", resp)
		}
	}
	if ws, _ := e.app.Queue(context.Background(), openrecall.WaitingFilter{}); len(ws) != 1 {
		t.Errorf("a refused request decided: %d waiting", len(ws))
	}
	_, body := get(t, rita, e.srv.URL, "/ui/review/"+id)
	if strings.Contains(body, `id="decide"`) || !strings.Contains(body, "(read only)") {
		t.Errorf("a read session is offered the decision forms")
	}
}

func TestForgetNeedsAReasonAndIsAudited(t *testing.T) {
	e := newEnv(t)
	out, err := e.app.Retain(context.Background(), usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive, Note: "n", Analyst: "bob"},
		Subject:  usecase.Subject{Alerts: []openrecall.Alert{{ID: "x", Title: "t", Labels: map[string]string{"alertname": "T"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := out[0].Incident.ID
	alice := e.session(t, "alice-secret")
	if resp, _ := post(t, alice, e.srv.URL, "/ui/memory/"+id+"/forget", url.Values{"reason": {" "}}); resp.StatusCode != 400 {
		t.Errorf("forget without a reason: %d", resp.StatusCode)
	}
	resp, _ := post(t, alice, e.srv.URL, "/ui/memory/"+id+"/forget", url.Values{"reason": {"wrong call"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("forget: %d", resp.StatusCode)
	}
	_, body := get(t, alice, e.srv.URL, resp.Header.Get("Location"))
	if !strings.Contains(body, `id="forgotten"`) || strings.Contains(body, `id="forget"`) {
		t.Errorf("forgotten memory page:\n%s", body)
	}
	es := e.auditEntries(t, "forget-"+id)
	if len(es) != 1 || !strings.Contains(es[0].Reason, "by alice: wrong call") {
		t.Errorf("forget audit %+v", es)
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	e := newEnv(t)
	alice := e.session(t, "alice-secret")
	if resp, _ := post(t, alice, e.srv.URL, "/ui/logout", nil); resp.Header.Get("Location") != "/ui/login" {
		t.Fatalf("logout: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get(t, alice, e.srv.URL, "/ui/queue"); resp.Header.Get("Location") != "/ui/login" {
		t.Errorf("after logout the queue answers %d", resp.StatusCode)
	}
}

// TestEmbeddedAssets walks every embedded asset: served under its hashed
// name with its type and a year of caching; its plain name is not served.
func TestEmbeddedAssets(t *testing.T) {
	e := newEnv(t)
	names := e.ck.AssetNames()
	if len(names) < 2 {
		t.Fatalf("assets %v", names)
	}
	c := e.client(t)
	for _, n := range names {
		resp, body := get(t, c, e.srv.URL, "/ui/assets/"+n)
		want := mime.TypeByExtension(path.Ext(n))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want || resp.Header.Get("Cache-Control") != cockpit.AssetCacheControl || body == "" {
			t.Errorf("%s: %d %q %q", n, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
		}
		checkCSP(t, n, resp)
		parts := strings.Split(n, ".")
		plain := parts[0] + "." + parts[len(parts)-1]
		if resp, _ := get(t, c, e.srv.URL, "/ui/assets/"+plain); resp.StatusCode != 404 {
			t.Errorf("plain name %s: %d, want 404", plain, resp.StatusCode)
		}
	}
}

func TestMemorySearch(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	retain := func(rule, service string, d openrecall.Decision, note string) string {
		out, err := e.app.Retain(ctx, usecase.RetainRequest{
			Decision: usecase.Decision{Decision: d, Note: note, Analyst: "bob"},
			Subject:  usecase.Subject{Alerts: []openrecall.Alert{{ID: note, Title: note, Labels: map[string]string{"alertname": rule, "service": service}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return out[0].Incident.ID
	}
	disk := retain("DiskFull", "db", openrecall.DecisionKnownBenign, "rotation lag")
	lat := retain("CheckoutLatency", "checkout", openrecall.DecisionReal, "slow db")
	pct := retain("Rate100%", "edge", openrecall.DecisionFalsePositive, "percent rule")
	gone := retain("DiskFullOld", "db", openrecall.DecisionKnownBenign, "old rotation")
	if _, err := e.app.Forget(ctx, gone, "obsolete", "alice"); err != nil {
		t.Fatal(err)
	}
	alice := e.session(t, "alice-secret")
	for q, want := range map[string][]string{
		"rule=diskfull":                 {disk},
		"rule=diskfull&forgotten=1":     {disk, gone},
		"service=db":                    {disk},
		"decision=real":                 {lat},
		"rule=100%25":                   {pct},
		"rule=_":                        {},
		"search=1":                      {disk, lat, pct},
		"decision=false_positive&rule=": {pct},
	} {
		resp, body := get(t, alice, e.srv.URL, "/ui/memory?"+q)
		if resp.StatusCode != 200 || !strings.Contains(body, `id="memories"`) {
			t.Errorf("%s: %d", q, resp.StatusCode)
			continue
		}
		for _, id := range []string{disk, lat, pct, gone} {
			if strings.Contains(body, "id="+id) != slices.Contains(want, id) {
				t.Errorf("%s: memory %s listed %v, want %v", q, id, !slices.Contains(want, id), slices.Contains(want, id))
			}
		}
	}
}

// TestTheDeciderIsTheSessionsAnalyst: two firings of one alert approved
// as proposed by two analysts share one memory (the same decision and
// note), yet each analysis is settled and audited by its own analyst.
func TestTheDeciderIsTheSessionsAnalyst(t *testing.T) {
	e := newEnv(t)
	labels := map[string]string{"alertname": "DiskFull", "service": "db"}
	first := e.waiting(t, 1, "disk full", labels, openrecall.DecisionKnownBenign, t0)
	second := e.waiting(t, 2, "disk full", labels, openrecall.DecisionKnownBenign, t0.Add(time.Minute))
	for id, who := range map[string]string{first: "alice", second: "bob"} {
		c := e.session(t, who+"-secret")
		if resp, _ := post(t, c, e.srv.URL, "/ui/review/"+id, url.Values{"action": {"approve"}}); resp.Header.Get("Location") != "/ui/queue?done=decided" {
			t.Fatalf("%s approves %s: %d %q", who, id, resp.StatusCode, resp.Header.Get("Location"))
		}
		w, err := e.store.WaitingFor(context.Background(), id)
		if err != nil || w.DecidedBy != who {
			t.Errorf("%s: decided by %q, want %s (%v)", id, w.DecidedBy, who, err)
		}
		es := e.auditEntries(t, id)
		if last := es[len(es)-1]; !strings.HasPrefix(last.Reason, who+" decided known_benign") {
			t.Errorf("%s: audited %q, want %s's decision", id, last.Reason, who)
		}
	}
}
