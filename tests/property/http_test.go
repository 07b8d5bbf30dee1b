package property

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// httpProperties are the HTTP rules over every route (issue 40, point 6;
// DESIGN §12, §12a): who may do what, from where, and that alert text
// never comes back as markup.
func httpProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P162_refused_requests_change_nothing",
			"Over every route the server serves (its own route table, the cockpit's included), a request that lacks what the route needs changes nothing in the database and is refused: an API route answers 401 without a known bearer token and 403 with a token lacking the route's scope (a cockpit session is no credential there); a cockpit action answers 403 when it comes from another origin, without a live session or with a session whose token lacks retain; a cockpit page without a live session redirects (303) to the login page; the login and logout forms answer 403 from another origin; a Slack interaction without Slack's signature answers 401; a known path with another method answers 404 or 405. Liveness: with the scope (or a retain session) and the same origin no route refuses, and each write route with something to act on acts (the database changes) the first time.",
			"HTTPPlanGen", httpPlanGen(), checkHTTPPlan,
			pbt.Pin("every route with every credential, from the same origin", httpEveryRoute(httpTokenAll, httpSessionAll, 1)),
			pbt.Pin("every route with nothing", httpEveryRoute(httpTokenNone, httpSessionNone, 0)),
			pbt.Pin("every route with read only, from another origin", httpEveryRoute(2+2, httpSessionRead, 2)),
			pbt.Pin("every route with a retain session and a cross-site fetch", httpEveryRoute(2+4, httpSessionRetain, 3)),
			pbt.Classify(func(p httpPlan) []string {
				var l []string
				for _, r := range p.Reqs {
					l = append(l, "origin "+httpOrigins[r.Origin], "session "+httpSessions[r.Session])
					if r.OtherMethod {
						l = append(l, "another method")
					}
				}
				slices.Sort(l)
				return slices.Compact(l)
			}),
			pbt.Cover("origin other", 10), pbt.Cover("session retain", 10), pbt.Cover("session logged out", 10), pbt.Cover("another method", 10),
			pbt.Expensive(6)),
		pbt.ForAll("P163_alert_text_never_comes_back_as_markup",
			"No answer of the server carries a '<', '>' or '&' of alert text raw: alerts whose title, text, labels (names and values), service and rule, and a note, a dead end and an analyst's name, carry markup (script and event-handler injections, attribute breakouts, entity tricks, Unicode around markup) are ingested through POST /api/v1/alerts and drained by the real pipeline, decided in the cockpit and retained and excepted over the API; then every page and API read the server serves (its route table, each wildcard filled with each analysis) and every write's answer shows them escaped: HTML as html/template escapes (&lt; &gt; &amp;), JSON as Go's encoder does (\\u003c \\u003e \\u0026), so neither a browser nor a page that embeds the JSON reads markup from alert text; and every title is shown by some answer, so the check is not vacuous.",
			"MarkupCaseGen", markupCaseGen(), checkMarkup,
			pbt.Pin("every shape in every field", markupCase{Alerts: []markupAlert{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 0, 1}}, Note: 1, DeadEnd: 2, Analyst: 3}),
			pbt.Classify(func(c markupCase) []string {
				var l []string
				for _, a := range c.Alerts {
					l = append(l, fmt.Sprintf("title shape %d", a.Title))
				}
				slices.Sort(l)
				return slices.Compact(l)
			}),
			pbt.Expensive(10)),
		pbt.ForAll("P164_session_cookie_is_guarded_and_never_stored",
			"A cockpit login's session cookie is HttpOnly, SameSite=Strict, scoped to /ui/, Secure exactly when the login came over TLS, and lasts as long as its session (Max-Age 12 h); no table of the database holds its value (only its hash), so whoever reads the database holds no session; a logout answers a cookie that ends it at once (empty, Max-Age < 0, same path).",
			"CookiePlanGen", cookiePlanGen(), checkCookies,
			pbt.Classify(func(p cookiePlan) []string {
				var l []string
				for _, c := range p.Logins {
					l = append(l, fmt.Sprintf("tls %v", c.TLS))
				}
				slices.Sort(l)
				return slices.Compact(l)
			}),
			pbt.Cover("tls true", 20), pbt.Cover("tls false", 20),
			pbt.Expensive(15)),
	}
}

// Scope sets: a token's scopes are the bits of its index (1 ingest, 2
// read, 4 retain); every token is named.
var httpScopeBits = []string{server.ScopeIngest, server.ScopeRead, server.ScopeRetain}

func httpScopes(mask int) []string {
	var out []string
	for b, s := range httpScopeBits {
		if mask&(1<<b) != 0 {
			out = append(out, s)
		}
	}
	return out
}

func httpSecret(mask int) string { return fmt.Sprintf("http-secret-%d-0123456789abcdef", mask) }

func httpTokens() []server.Token {
	var out []server.Token
	for m := range 8 {
		out = append(out, server.Token{Name: fmt.Sprintf("t%d", m), Analyst: fmt.Sprintf("analyst-%d", m), Secret: httpSecret(m), Scopes: httpScopes(m)})
	}
	return out
}

// A request's token: none, an unknown one, or the token of scope set
// Token-2 (2+2 is read's, 2+4 retain's).
const (
	httpTokenNone    = 0
	httpTokenUnknown = 1
	httpTokenAll     = 2 + 7
)

// Its cookie: none, a made-up one, a logged-out session's, or a live
// session logged in with a token of the scopes named.
const (
	httpSessionNone   = 0
	httpSessionRead   = 3
	httpSessionRetain = 4
	httpSessionAll    = 6
)

var (
	httpSessions     = []string{"none", "made up", "logged out", "read", "retain", "read and retain", "every scope"}
	httpSessionMasks = []int{-1, -1, -1, 2, 4, 6, 7}
	// Origins: no Origin header, the server's, another site's, or a
	// browser's Sec-Fetch-Site: cross-site without Origin.
	httpOrigins = []string{"absent", "same", "other", "cross-site fetch"}
	httpCreds   = []string{"bearer", "basic", "query"}
)

// httpReq is one generated request: a route (modulo the routes served),
// its method or another, a known target or an unknown one, a token and
// how it travels, a cookie and an origin.
type httpReq struct {
	Route       int
	OtherMethod bool
	Unknown     bool
	Token       int
	Cred        int
	Session     int
	Origin      int
}

type httpPlan struct{ Reqs []httpReq }

func httpPlanGen() gopter.Gen {
	req := gg.Struct(reflect.TypeOf(httpReq{}), map[string]gopter.Gen{
		"Route":       gg.IntRange(0, 99),
		"OtherMethod": gg.Weighted([]gg.WeightedGen{{Weight: 5, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Unknown":     gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Token":       gg.IntRange(0, httpTokenAll),
		"Cred":        gg.IntRange(0, len(httpCreds)-1),
		"Session":     gg.IntRange(0, len(httpSessions)-1),
		"Origin":      gg.IntRange(0, len(httpOrigins)-1),
	})
	return gg.Struct(reflect.TypeOf(httpPlan{}), map[string]gopter.Gen{"Reqs": gg.SliceOf(req)})
}

// httpEveryRoute is a plan that sends one request to each route (the
// served routes are fewer than 100).
func httpEveryRoute(token, session, origin int) httpPlan {
	var p httpPlan
	for i := range 100 {
		p.Reqs = append(p.Reqs, httpReq{Route: i, Token: token, Session: session, Origin: origin, Cred: i % len(httpCreds)})
	}
	return p
}

// What a route needs, in the model (written from README's endpoint table
// and DESIGN §12, §12a, not from the handlers).
type httpKind int

const (
	kindAPI      httpKind = iota // a bearer token with the route's scope
	kindPublic                   // anyone (health, readiness, metrics, assets, the login page)
	kindFallback                 // a known path with another method, or no route: 404 or 405
	kindPage                     // a cockpit page: a live session (read or retain)
	kindAction                   // a cockpit action: same origin, a live session with retain
	kindLogin                    // same origin; the form's token opens a session
	kindLogout                   // same origin; ends the cookie's session
	kindSlack                    // Slack's signature
)

// httpRoute is the model of one route: what it needs, how its path and
// body are written, whether it acts on the desk's fixtures.
type httpRoute struct {
	kind  httpKind
	scope string // kindAPI
	// target names the fixture a wildcard stands for ("" for none).
	target string
	// body is the request's body (JSON for the API, a form for the
	// cockpit); i makes it unique in the plan.
	body func(f httpFixtures, i int) string
	// acts: with what the route needs, the first request changes the
	// database.
	acts bool
}

func jsonBody(s string) func(httpFixtures, int) string {
	return func(_ httpFixtures, i int) string { return strings.ReplaceAll(s, "#", fmt.Sprint(i)) }
}

// The bodies of the intake routes: an Alertmanager webhook, what
// Prometheus posts to an Alertmanager, a PagerDuty event.
const (
	amWebhook = `{"version":"4","status":"firing","receiver":"openrecall","groupKey":"g#","alerts":[{"status":"firing","labels":{"alertname":"DiskFull","service":"db","severity":"warning","instance":"db-#"},"annotations":{"summary":"Disk full on db-#"},"startsAt":"2026-03-01T00:00:00Z","fingerprint":"fp#"}]}`
	promPost  = `[{"labels":{"alertname":"DiskFull","service":"db","severity":"warning","instance":"db-#"},"annotations":{"summary":"Disk full on db-#"},"startsAt":"2026-03-01T00:00:00Z"}]`
	pdEvent   = `{"event_action":"trigger","dedup_key":"k-#","payload":{"summary":"Disk full on db-#","source":"db-#","severity":"warning"}}`
)

// httpModel is the scope table, keyed by the ServeMux pattern. A route the
// server serves that is missing here fails the property: a new route must
// state what it needs.
var httpModel = map[string]httpRoute{
	// The intake (scope ingest).
	"POST /api/v1/alerts":          {kind: kindAPI, scope: server.ScopeIngest, body: jsonBody(amWebhook), acts: true},
	"POST /api/v2/alerts":          {kind: kindAPI, scope: server.ScopeIngest, body: jsonBody(promPost), acts: true},
	"POST /api/v1/alerts/{sender}": {kind: kindAPI, scope: server.ScopeIngest, target: "sender", body: jsonBody(amWebhook), acts: true},
	"POST /v2/enqueue":             {kind: kindAPI, scope: server.ScopeIngest, body: jsonBody(pdEvent), acts: true},
	// Writes (scope retain).
	"POST /api/v1/retain": {kind: kindAPI, scope: server.ScopeRetain, acts: true,
		body: jsonBody(`{"alert":{"id":"live-#","title":"Disk almost full on db-1","labels":{"alertname":"DiskAlmostFull","service":"postgres"}},"decision":"known_benign","note":"cleanup ran #"}`)},
	"POST /api/v1/groups/{id}/decision": {kind: kindAPI, scope: server.ScopeRetain, target: "group", body: jsonBody(`{"decision":"known_benign","note":"n"}`)},
	"POST /api/v1/exceptions": {kind: kindAPI, scope: server.ScopeRetain, acts: true,
		body: jsonBody(`{"rule":"KubePodCrashLooping","service":"checkout-#","max_severity":"high","decision":"known_benign","expires":"4h"}`)},
	"POST /api/v1/exceptions/{id}/revoke":      {kind: kindAPI, scope: server.ScopeRetain, target: "exception api", body: jsonBody(`{"reason":"retired"}`), acts: true},
	"POST /api/v1/outbox/{id}/retry":           {kind: kindAPI, scope: server.ScopeRetain, target: "intent", body: jsonBody(`{}`)},
	"POST /api/v1/history/{analysis_id}/wrong": {kind: kindAPI, scope: server.ScopeRetain, target: "closure api", body: jsonBody(`{"reason":"it was real"}`), acts: true},
	"GET /api/v1/recall":                       {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/groups":                       {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/results/{analysis_id}":        {kind: kindAPI, scope: server.ScopeRead, target: "waiting"},
	"GET /api/v1/results":                      {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/cost":                         {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/audit/verify":                 {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/exceptions":                   {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/outbox":                       {kind: kindAPI, scope: server.ScopeRead},
	"GET /api/v1/history":                      {kind: kindAPI, scope: server.ScopeRead},
	"POST /api/v1/slack/interactions":          {kind: kindSlack, body: jsonBody(`payload=%7B%22type%22%3A%22block_actions%22%7D`)},
	"GET /healthz":                             {kind: kindPublic},
	"GET /readyz":                              {kind: kindPublic},
	"GET /metrics":                             {kind: kindPublic},
	"GET /{$}":                                 {kind: kindPublic},
	"/ui/":                                     {kind: kindFallback},
	"/":                                        {kind: kindFallback},
	"/api/v1/alerts":                           {kind: kindFallback},
	"/api/v1/alerts/{sender}":                  {kind: kindFallback, target: "sender"},
	"/v2/enqueue":                              {kind: kindFallback},
	"/api/v2/alerts":                           {kind: kindFallback},
	"/api/v1/retain":                           {kind: kindFallback},
	"/api/v1/recall":                           {kind: kindFallback},
	"/api/v1/groups":                           {kind: kindFallback},
	"/api/v1/groups/{id}/decision":             {kind: kindFallback, target: "group"},
	"/api/v1/results/{analysis_id}":            {kind: kindFallback, target: "waiting"},
	"/api/v1/results":                          {kind: kindFallback},
	"/api/v1/cost":                             {kind: kindFallback},
	"/api/v1/audit/verify":                     {kind: kindFallback},
	"/api/v1/exceptions":                       {kind: kindFallback},
	"/api/v1/exceptions/{id}/revoke":           {kind: kindFallback, target: "exception api"},
	"/healthz":                                 {kind: kindFallback},
	"/readyz":                                  {kind: kindFallback},
	"/metrics":                                 {kind: kindFallback},
	"/api/v1/outbox":                           {kind: kindFallback},
	"/api/v1/outbox/{id}/retry":                {kind: kindFallback, target: "intent"},
	"/api/v1/history":                          {kind: kindFallback},
	"/api/v1/history/{analysis_id}/wrong":      {kind: kindFallback, target: "closure api"},
	"GET /ui/assets/{name}":                    {kind: kindPublic, target: "asset"},
	"GET /ui/login":                            {kind: kindPublic},
	"POST /ui/login":                           {kind: kindLogin},
	"POST /ui/logout":                          {kind: kindLogout},
	"GET /ui/{$}":                              {kind: kindPage},
	"GET /ui/queue":                            {kind: kindPage},
	"GET /ui/queue/live":                       {kind: kindPage},
	"POST /ui/queue/approve":                   {kind: kindAction, target: "bulk", body: func(f httpFixtures, _ int) string { return "confirm=1&note=ok&id=" + f["bulk"] }, acts: true},
	"POST /ui/queue/settle":                    {kind: kindAction, target: "bulk", body: func(f httpFixtures, _ int) string { return "confirm=1&id=" + f["bulk"] }},
	"GET /ui/review/{id}":                      {kind: kindPage, target: "waiting"},
	"POST /ui/review/{id}":                     {kind: kindAction, target: "waiting", body: jsonBody("action=approve"), acts: true},
	"GET /ui/group/{id}":                       {kind: kindPage, target: "group"},
	"POST /ui/group/{id}":                      {kind: kindAction, target: "group", body: jsonBody("decision=known_benign&note=n")},
	"GET /ui/analysis/{id}":                    {kind: kindPage, target: "waiting"},
	"GET /ui/cost":                             {kind: kindPage},
	"GET /ui/cost.svg":                         {kind: kindPage},
	"GET /ui/memory":                           {kind: kindPage},
	"POST /ui/memory/{id}/forget":              {kind: kindAction, target: "memory", body: jsonBody("reason=wrong"), acts: true},
	"GET /ui/exceptions":                       {kind: kindPage},
	"POST /ui/exceptions/{id}/revoke":          {kind: kindAction, target: "exception ui", body: jsonBody("reason=retired"), acts: true},
	"POST /ui/proposals/{id}/approve":          {kind: kindAction, target: "proposal", body: jsonBody("note=ok")},
	"GET /ui/outbox":                           {kind: kindPage},
	"POST /ui/outbox/{id}/retry":               {kind: kindAction, target: "intent"},
	"GET /ui/history":                          {kind: kindPage},
	"POST /ui/history/{id}/wrong":              {kind: kindAction, target: "closure ui", body: jsonBody("reason=it+was+real"), acts: true},
}

// httpFixtures are the ids a route's wildcard stands for, by target.
type httpFixtures map[string]string

// httpUnknown is the id of an unknown target.
const httpUnknown = "999999"

// httpDesk is a keyed desk behind a real server handler with the
// properties' tokens (every scope set), Slack on, and its routes.
type httpDesk struct {
	*hourlyDesk
	h      http.Handler
	app    *usecase.App
	routes []string
	snap   *snapshots
}

func openHTTPDesk(ctx context.Context, name string) (*httpDesk, error) {
	h, err := openHourlyDesk(ctx, name)
	if err != nil {
		return nil, err
	}
	var routes []string
	// Failures never throttle these properties' logins.
	lenient := cockpit.Backoff{Free: 1 << 20, Base: time.Second, Max: time.Second, Decay: time.Second}
	handler, app, err := authServer(h.keyedDesk, h.clock.now, cockpit.NewThrottle(lenient, lenient, h.clock.now), func(cfg *server.Config) {
		cfg.Tokens = httpTokens()
		cfg.Slack = &server.SlackConfig{SigningSecret: "slack-signing-secret-0123456789", API: nopSlack{}}
	}, func(cfg *server.Config) {
		// Routes of the server exactly as configured.
		srv, err := server.New(*cfg)
		if err == nil {
			routes = srv.Routes()
		}
	})
	if err != nil {
		h.close()
		return nil, err
	}
	snap, err := openSnapshots(ctx, h.loc)
	if err != nil {
		h.close()
		return nil, err
	}
	return &httpDesk{hourlyDesk: h, h: handler, app: app, routes: routes, snap: snap}, nil
}

func (d *httpDesk) close() {
	d.snap.close()
	d.hourlyDesk.close()
}

// nopSlack is a Slack Web API that is never called here.
type nopSlack struct{}

func (nopSlack) OpenView(context.Context, string, any) error                 { return nil }
func (nopSlack) Update(context.Context, string, string, string) error        { return nil }
func (nopSlack) PostEphemeral(context.Context, string, string, string) error { return nil }

// snapshots reads every row of every table of a store through a
// connection of its own. On SQLite a change is seen first by PRAGMA
// data_version (which moves when another connection commits), so a
// request that wrote nothing costs one query.
type snapshots struct {
	db       *sql.DB
	conn     *sql.Conn // SQLite: the connection data_version is read on
	postgres bool
	version  int64
	last     map[string]string
}

func openSnapshots(ctx context.Context, loc string) (*snapshots, error) {
	s := &snapshots{postgres: strings.Contains(loc, "://")}
	var err error
	if s.postgres {
		s.db, err = sql.Open("pgx", loc)
	} else {
		s.db, err = sql.Open("sqlite3", "file:"+loc+"?mode=ro")
	}
	if err == nil && !s.postgres {
		s.conn, err = s.db.Conn(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("setup: snapshot: %v", err)
	}
	return s, nil
}

func (s *snapshots) close() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	_ = s.db.Close()
}

// take returns the rows of every table, as text by table.
func (s *snapshots) take(ctx context.Context) (map[string]string, error) {
	if !s.postgres {
		var v int64
		if err := s.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
			return nil, fmt.Errorf("setup: snapshot: %v", err)
		}
		if s.last != nil && v == s.version {
			return s.last, nil
		}
		s.version = v
	}
	q := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if s.postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("setup: snapshot: %v", err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("setup: snapshot: %v", err)
		}
		tables = append(tables, n)
	}
	_ = rows.Close()
	out := map[string]string{}
	for _, t := range tables {
		if out[t], err = s.table(ctx, t); err != nil {
			return nil, err
		}
	}
	s.last = out
	return out, nil
}

// table returns the rows of table t, sorted, one a line.
func (s *snapshots) table(ctx context.Context, t string) (string, error) {
	rs, err := s.db.QueryContext(ctx, `SELECT * FROM "`+t+`"`)
	if err != nil {
		return "", fmt.Errorf("setup: snapshot %s: %v", t, err)
	}
	defer func() { _ = rs.Close() }()
	cols, _ := rs.Columns()
	var lines []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return "", fmt.Errorf("setup: snapshot %s: %v", t, err)
		}
		var b strings.Builder
		for i, v := range vals {
			if raw, ok := v.([]byte); ok {
				v = string(raw)
			}
			fmt.Fprintf(&b, "%s=%v|", cols[i], v)
		}
		lines = append(lines, b.String())
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), rs.Err()
}

// changed names the tables whose rows differ between two snapshots.
func changed(before, after map[string]string) []string {
	var out []string
	for t, b := range before {
		if after[t] != b {
			out = append(out, t)
		}
	}
	for t := range after {
		if _, ok := before[t]; !ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// fixtures writes what the acting routes act on: exceptions, a memory,
// analyses that wait for a person and closures without one.
func (d *httpDesk) fixtures(ctx context.Context) (httpFixtures, error) {
	f := httpFixtures{"sender": "alertmanager", "group": "g-run-p162-000000", "intent": "42", "proposal": "p-unknown", "asset": "no-such.css"}
	for i, k := range []string{"exception api", "exception ui"} {
		ex, err := d.app.AddException(ctx, usecase.AddRequest{Identity: openrecall.Identity{Rule: "DiskAlmostFull", Service: fmt.Sprintf("postgres-%d", i)},
			MaxSeverity: openrecall.SeverityHigh, Decision: openrecall.DecisionKnownBenign, Expiry: 4 * time.Hour, Analyst: "setup"})
		if err != nil {
			return nil, fmt.Errorf("setup: exception: %v", err)
		}
		f[k] = ex.Exception.ID
	}
	mem, _, err := d.st.Retain(ctx, openrecall.Incident{Fingerprint: d.ex.Extract(openrecall.Alert{Title: "memory", Labels: map[string]string{"alertname": "Mem", "service": "db"}}), Identity: openrecall.Identity{Rule: "Mem", Service: "db"},
		Decision: openrecall.DecisionFalsePositive, Analyst: "setup", Note: "memory", SourceAlertID: "mem-1"})
	if err != nil {
		return nil, fmt.Errorf("setup: memory: %v", err)
	}
	f["memory"] = mem.ID
	for i, k := range []string{"waiting", "bulk", "closure api", "closure ui"} {
		name := fmt.Sprintf("Fixture%d", i)
		alert := openrecall.Alert{ID: "a-" + name, Title: "alert " + name, Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring,
			Labels: map[string]string{"alertname": name, "service": "db"}}
		r := openrecall.Result{AnalysisID: fmt.Sprintf("run-p162-%06d", i+1), Batch: "run-p162", Outcome: openrecall.ResultTriaged, Alert: alert,
			Fingerprint: d.ex.Extract(alert), Identity: d.ex.Identify(alert),
			Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK}}}
		if strings.HasPrefix(k, "closure") {
			voter, _, err := d.st.Retain(ctx, openrecall.Incident{Fingerprint: r.Fingerprint, Identity: r.Identity, Decision: openrecall.DecisionFalsePositive,
				Analyst: "setup", Note: "vouched", SourceAlertID: "old-" + name})
			if err != nil {
				return nil, fmt.Errorf("setup: voter: %v", err)
			}
			r.Matches = []openrecall.Match{{Incident: voter, Score: 1}}
			r.Decision = openrecall.DecisionFalsePositive
			r.Triage = openrecall.TriageResult{Decision: openrecall.DecisionFalsePositive, Supporting: []string{voter.ID}}
			r.Guard = openrecall.GuardVerdict{Bypass: true}
			r.Bypassed = true
		} else {
			r.Decision = openrecall.DecisionEscalated
			r.Triage = openrecall.TriageResult{Decision: openrecall.DecisionEscalated, RequiresHumanApproval: true}
			r.Analysis = &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Model: "local-strong"}
		}
		r.Audit = audit.Entries(r, d.clock.now())
		if _, err := d.sink.Persist(ctx, r, nil); err != nil {
			return nil, fmt.Errorf("setup: persist: %v", err)
		}
		f[k] = r.AnalysisID
	}
	return f, nil
}

// login logs the token of scope set mask in and returns the cookie.
func (d *httpDesk) login(mask int) (string, error) {
	req := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(url.Values{"token": {httpSecret(mask)}}.Encode()))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	d.h.ServeHTTP(w, req)
	for _, c := range w.Result().Cookies() {
		if c.Name == cockpit.SessionCookie && c.Value != "" {
			return c.Value, nil
		}
	}
	return "", fmt.Errorf("setup: login of scope set %d: %d, no cookie", mask, w.Code)
}

var wildcard = regexp.MustCompile(`\{[a-z_]+\}`)

// httpMethods are the methods tried on a route without one: no route
// serves them.
var httpMethods = []string{http.MethodPut, http.MethodDelete, http.MethodPatch}

func checkHTTPPlan(p httpPlan) error {
	ctx := context.Background()
	d, err := openHTTPDesk(ctx, "p162")
	if err != nil {
		return err
	}
	defer d.close()
	for _, pat := range d.routes {
		if _, ok := httpModel[pat]; !ok {
			return fmt.Errorf("route %q is served but the model does not say what it needs: add it to httpModel", pat)
		}
	}
	f, err := d.fixtures(ctx)
	if err != nil {
		return err
	}
	// The cookies of the session kinds; a logged-out one logged in first.
	cookies := make([]string, len(httpSessions))
	cookies[1] = strings.Repeat("ab", 32)
	if cookies[2], err = d.login(6); err != nil {
		return err
	}
	req := httptest.NewRequest(http.MethodPost, "/ui/logout", nil)
	req.AddCookie(&http.Cookie{Name: cockpit.SessionCookie, Value: cookies[2]})
	d.h.ServeHTTP(httptest.NewRecorder(), req)
	live := make([]bool, len(httpSessions))
	for k, m := range httpSessionMasks {
		if m >= 0 {
			if cookies[k], err = d.login(m); err != nil {
				return err
			}
			live[k] = true
		}
	}
	acted := map[string]bool{}
	for i, rq := range p.Reqs {
		pat := d.routes[rq.Route%len(d.routes)]
		if err := d.checkRequest(ctx, f, cookies, live, acted, pat, rq, i); err != nil {
			return err
		}
	}
	return nil
}

// checkRequest sends one request and checks its answer and what it
// changed against the model.
func (d *httpDesk) checkRequest(ctx context.Context, f httpFixtures, cookies []string, live []bool, acted map[string]bool, pat string, rq httpReq, i int) error {
	m := httpModel[pat]
	method, path, _ := strings.Cut(pat, " ")
	if path == "" {
		method, path = httpMethods[i%len(httpMethods)], pat
	}
	if rq.OtherMethod {
		method = httpMethods[i%len(httpMethods)]
	}
	target := f[m.target]
	if m.target != "" && (rq.Unknown || target == "") {
		target = httpUnknown
	}
	path = strings.TrimSuffix(wildcard.ReplaceAllString(path, url.PathEscape(target)), "{$}")
	if m.kind == kindFallback && strings.HasSuffix(path, "/") {
		path += "no-such-page"
	}
	body := ""
	if m.body != nil {
		body = m.body(f, i)
	}
	// The token travels as a bearer, as basic authentication or in the
	// query; on the login form it is the form's.
	secret := ""
	switch {
	case rq.Token == httpTokenUnknown:
		secret = "unknown-secret-0123456789abcdef"
	case rq.Token >= 2:
		secret = httpSecret(rq.Token - 2)
	}
	if m.kind == kindLogin {
		body = url.Values{"token": {secret}}.Encode()
	} else if secret != "" && rq.Cred == 2 {
		path += "?token=" + url.QueryEscape(secret)
	}
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
		req.Header.Set("Content-Type", "application/json")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if secret != "" && m.kind != kindLogin {
		switch rq.Cred {
		case 0:
			req.Header.Set("Authorization", "Bearer "+secret)
		case 1:
			req.SetBasicAuth("openrecall", secret)
		}
	}
	if rq.Session > 0 {
		req.AddCookie(&http.Cookie{Name: cockpit.SessionCookie, Value: cookies[rq.Session]})
	}
	switch httpOrigins[rq.Origin] {
	case "same":
		req.Header.Set("Origin", "http://"+req.Host)
	case "other":
		req.Header.Set("Origin", "https://evil.example")
	case "cross-site fetch":
		req.Header.Set("Sec-Fetch-Site", "cross-site")
	}
	before, err := d.snap.take(ctx)
	if err != nil {
		return err
	}
	w := httptest.NewRecorder()
	d.h.ServeHTTP(w, req)
	after, err := d.snap.take(ctx)
	if err != nil {
		return err
	}
	diff := changed(before, after)
	in := fmt.Sprintf("request %d: %s %s (route %q, token %d, session %s, origin %s)", i, method, path, pat, rq.Token, httpSessions[rq.Session], httpOrigins[rq.Origin])
	got := fmt.Sprintf("%d %s", w.Code, strings.TrimSpace(w.Body.String()))
	if len(got) > 300 {
		got = got[:300]
	}
	unsafe := method != http.MethodGet && method != http.MethodHead
	cross := rq.Origin >= 2
	sessionMask := -1
	if live[rq.Session] {
		sessionMask = httpSessionMasks[rq.Session]
	}
	tokenMask := -1
	if rq.Token >= 2 {
		tokenMask = rq.Token - 2
	}
	// want is the status the model expects when the request is refused
	// (0: it is not refused).
	want := 0
	kind := m.kind
	if rq.OtherMethod && kind != kindFallback {
		kind = kindFallback
	}
	switch kind {
	case kindAPI:
		switch {
		case tokenMask < 0:
			want = http.StatusUnauthorized
		case !slices.Contains(httpScopes(tokenMask), m.scope):
			want = http.StatusForbidden
		}
	case kindSlack:
		want = http.StatusUnauthorized
	case kindFallback:
		// The cockpit's origin check comes before its routes.
		crossRefused := unsafe && cross && strings.HasPrefix(path, cockpit.Prefix) && w.Code == http.StatusForbidden
		if w.Code != http.StatusNotFound && w.Code != http.StatusMethodNotAllowed && !crossRefused {
			return fmt.Errorf("%s: answered %s, want 404 or 405", in, got)
		}
		if len(diff) > 0 {
			return fmt.Errorf("%s: answered %d and changed %v", in, w.Code, diff)
		}
		return nil
	case kindPage:
		if sessionMask < 0 {
			if w.Code != http.StatusSeeOther || w.Header().Get("Location") != cockpit.Prefix+"login" {
				return fmt.Errorf("%s: without a live session answered %s, want 303 to the login page", in, got)
			}
		} else if w.Code == http.StatusSeeOther && strings.HasSuffix(w.Header().Get("Location"), "/login") || w.Code == 401 || w.Code == 403 {
			return fmt.Errorf("%s: a live session was refused: %s", in, got)
		}
		if len(diff) > 0 {
			return fmt.Errorf("%s: a page changed %v", in, diff)
		}
		return nil
	case kindAction:
		if cross || sessionMask < 0 || !slices.Contains(httpScopes(sessionMask), server.ScopeRetain) {
			want = http.StatusForbidden
		}
	case kindLogin, kindLogout:
		if cross {
			want = http.StatusForbidden
		}
	case kindPublic:
		if len(diff) > 0 {
			return fmt.Errorf("%s: a public route changed %v", in, diff)
		}
		return nil
	}
	if want != 0 {
		if w.Code != want {
			return fmt.Errorf("%s: refused with %s, want %d", in, got, want)
		}
		if len(diff) > 0 {
			return fmt.Errorf("%s: refused with %d but changed %v", in, w.Code, diff)
		}
		return nil
	}
	// Not refused: the liveness side.
	if w.Code == http.StatusUnauthorized || w.Code == http.StatusForbidden {
		return fmt.Errorf("%s: refused though the model allows it: %s", in, got)
	}
	switch kind {
	case kindLogin:
		ok := tokenMask >= 0 && (tokenMask&6) != 0
		loc := w.Header().Get("Location")
		switch {
		case ok && (loc != cockpit.Prefix+"queue" || len(diff) == 0):
			return fmt.Errorf("%s: a login with scopes %v answered %s (Location %q), changed %v", in, httpScopes(tokenMask), got, loc, diff)
		case !ok && len(diff) > 0:
			return fmt.Errorf("%s: a refused login changed %v", in, diff)
		}
		return nil
	case kindLogout:
		if live[rq.Session] {
			if len(diff) == 0 {
				return fmt.Errorf("%s: the logout of a live session changed nothing: %s", in, got)
			}
			live[rq.Session] = false
		} else if len(diff) > 0 {
			return fmt.Errorf("%s: the logout of no live session changed %v", in, diff)
		}
		return nil
	}
	if unsafe && m.acts && (m.target == "" || target != httpUnknown) && !acted[pat] {
		acted[pat] = true
		if len(diff) == 0 {
			return fmt.Errorf("%s: allowed, but did not act: %s", in, got)
		}
	}
	if !unsafe && len(diff) > 0 {
		return fmt.Errorf("%s: a read changed %v", in, diff)
	}
	return nil
}

// markupShapes are hostile texts, each with %s where the case's marker
// goes: script and event-handler injections, attribute breakouts, entity
// tricks that a double unescape would turn into markup, and Unicode
// around markup.
var markupShapes = []string{
	`<script>alert(%s)</script>`,
	`"><img src=x onerror=alert(%s)>`,
	`&amp;lt;b&amp;gt;%s`,
	`&lt;i&gt;%s&lt;/i&gt;`,
	`&#60;svg onload=alert(%s)&#62;`,
	`'><svg/onload=alert(%s)>`,
	`<a href="javascript:alert(%s)">x</a>`,
	`</textarea><b>%s</b>`,
	`Ω&Ж<%s>¡`,
	"＜script＞%s＜/script＞ <u>",
	`%s & co <3`,
	`]]><!--%s-->`,
	"\u2028<b>%s</b>\u202e",
}

// markupAlert is one alert whose fields carry shapes (indexes of
// markupShapes).
type markupAlert struct {
	Title, Text, Label, Service, Rule int
}

// markupCase is alerts ingested, then a note, a dead end and an
// analyst's name carrying shapes.
type markupCase struct {
	Alerts                 []markupAlert
	Note, DeadEnd, Analyst int
}

func markupCaseGen() gopter.Gen {
	shape := gg.IntRange(0, len(markupShapes)-1)
	alert := gg.Struct(reflect.TypeOf(markupAlert{}), map[string]gopter.Gen{
		"Title": shape, "Text": shape, "Label": shape, "Service": shape, "Rule": shape,
	})
	return gg.Struct(reflect.TypeOf(markupCase{}), map[string]gopter.Gen{
		"Alerts": gg.SliceOfN(2, alert), "Note": shape, "DeadEnd": shape, "Analyst": shape,
	})
}

// hostile is a shape with a marker before it (marker+"a"), in its middle
// (marker+"m") and after it (marker+"z"), so a piece of it that reaches an
// answer unescaped can be told from the page's own markup around the
// text.
func hostile(shape int, marker string) string {
	return marker + "a" + fmt.Sprintf(markupShapes[shape], marker+"m") + marker + "z"
}

// rawPieces are the pieces of p that an answer must never carry: p
// itself, and for each '<' or '>' the prefix through it and the suffix
// from it, for each '&' the suffix from it (the escaped '&', "&amp;",
// starts with '&' too). Escaped, in HTML (&lt; &gt; &amp; &#34;) or in
// Go's JSON (\u003c \u003e \u0026), none of them occurs.
func rawPieces(p string) []string {
	var out []string
	for i, r := range p {
		switch r {
		case '<', '>':
			out = append(out, p[:i+1], p[i:])
		case '&':
			out = append(out, p[i:])
		}
	}
	if len(out) > 0 {
		out = append(out, p)
	}
	return out
}

func checkMarkup(c markupCase) error {
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "p163")
	if err != nil {
		return err
	}
	defer h.close()
	var payloads, markers []string
	mark := func(shape int, field string) string {
		m := fmt.Sprintf("zq%s%d", field, len(payloads))
		payloads, markers = append(payloads, hostile(shape, m)), append(markers, m)
		return payloads[len(payloads)-1]
	}
	analyst := mark(c.Analyst, "an")
	secret := "markup-secret-0123456789abcdef"
	var daemon server.Daemon
	handler, _, err := authServer(h.keyedDesk, h.clock.now, nil, func(cfg *server.Config) {
		cfg.Tokens = []server.Token{{Name: "hostile", Analyst: analyst, Secret: secret,
			Scopes: []string{server.ScopeIngest, server.ScopeRead, server.ScopeRetain}}}
		daemon = cfg.Daemon
	})
	if err != nil {
		return err
	}
	var routes []string
	if srv, err := server.New(server.Config{Store: h.st, Daemon: daemon, UseCases: h.app}); err == nil {
		routes = srv.Routes()
	}
	send := func(method, path, ctype, body, cookie string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Authorization", "Bearer "+secret)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: cockpit.SessionCookie, Value: cookie})
		}
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		return w
	}
	// The alerts through the real intake: an Alertmanager webhook.
	type amAlert struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		StartsAt    string            `json:"startsAt"`
		Fingerprint string            `json:"fingerprint"`
	}
	var alerts []amAlert
	for i, a := range c.Alerts {
		alerts = append(alerts, amAlert{Status: "firing", StartsAt: "2026-03-01T00:00:00Z", Fingerprint: fmt.Sprintf("fp%d", i),
			Labels: map[string]string{"alertname": mark(a.Rule, "ru"), "service": mark(a.Service, "se"), "severity": "critical",
				"instance": mark(a.Label, "la"), mark(a.Label, "ke"): "v"},
			Annotations: map[string]string{"summary": mark(a.Title, "ti"), "description": mark(a.Text, "te")}})
	}
	webhook, _ := json.Marshal(map[string]any{"version": "4", "status": "firing", "receiver": "openrecall", "groupKey": "g", "alerts": alerts})
	// Every answer is checked, the writes' too.
	type answer struct {
		what string
		w    *httptest.ResponseRecorder
	}
	var answers []answer
	w := send(http.MethodPost, "/api/v1/alerts", "application/json", string(webhook), "")
	answers = append(answers, answer{"POST /api/v1/alerts", w})
	var acc server.Accepted
	if w.Code != http.StatusAccepted || json.Unmarshal(w.Body.Bytes(), &acc) != nil || len(acc.Analyses) == 0 {
		return fmt.Errorf("setup: ingest: %d %s", w.Code, w.Body)
	}
	if err := drain(ctx, daemon, h.st, acc.Analyses); err != nil {
		return err
	}
	var ids []string
	for _, a := range acc.Analyses {
		ids = append(ids, a.AnalysisID)
	}
	// A note, a dead end and the analyst's name: a decision from the
	// cockpit, a retain and an exception over the API.
	form := url.Values{"token": {secret}}.Encode()
	lw := send(http.MethodPost, "/ui/login", "application/x-www-form-urlencoded", form, "")
	var cookie string
	for _, ck := range lw.Result().Cookies() {
		if ck.Name == cockpit.SessionCookie {
			cookie = ck.Value
		}
	}
	if cookie == "" {
		return fmt.Errorf("setup: login: %d", lw.Code)
	}
	note, deadEnd := mark(c.Note, "no"), mark(c.DeadEnd, "de")
	decide := url.Values{"action": {"decide"}, "decision": {"real"}, "note": {note}, "dead_end": {deadEnd}}.Encode()
	answers = append(answers, answer{"POST /ui/review/{id}", send(http.MethodPost, "/ui/review/"+url.PathEscape(ids[0]), "application/x-www-form-urlencoded", decide, cookie)})
	retain, _ := json.Marshal(map[string]any{"analysis_id": ids[len(ids)-1], "decision": "known_benign", "note": note, "dead_ends": []string{deadEnd}})
	answers = append(answers, answer{"POST /api/v1/retain", send(http.MethodPost, "/api/v1/retain", "application/json", string(retain), "")})
	exc, _ := json.Marshal(map[string]any{"rule": alerts[0].Labels["alertname"], "service": alerts[0].Labels["service"], "max_severity": "high",
		"decision": "known_benign", "expires": "4h", "note": note})
	answers = append(answers, answer{"POST /api/v1/exceptions", send(http.MethodPost, "/api/v1/exceptions", "application/json", string(exc), "")})
	mems, err := h.st.SearchIncidents(ctx, openrecall.IncidentFilter{})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	// Every page and API read the server serves, each wildcard filled
	// with each analysis, and the reads that take the shown ids as
	// queries.
	var gets []string
	for _, pat := range routes {
		method, path, ok := strings.Cut(pat, " ")
		if !ok || method != http.MethodGet || strings.Contains(path, "/assets/") {
			continue
		}
		path = strings.TrimSuffix(path, "{$}")
		if !wildcard.MatchString(path) {
			gets = append(gets, path)
			continue
		}
		for _, id := range ids {
			gets = append(gets, wildcard.ReplaceAllString(path, url.PathEscape(id)))
		}
	}
	for _, id := range ids {
		gets = append(gets, "/api/v1/recall?analysis_id="+url.QueryEscape(id))
	}
	for _, m := range mems {
		gets = append(gets, "/ui/memory?id="+url.QueryEscape(m.ID))
	}
	gets = append(gets, "/api/v1/groups?all=true", "/api/v1/exceptions?state=active", "/ui/history?search=zq")
	// An id of alert text names what was not found, on a page and over
	// the API.
	for _, a := range alerts {
		id := url.PathEscape(a.Annotations["summary"])
		gets = append(gets, "/ui/review/"+id, "/ui/analysis/"+id, "/api/v1/results/"+id)
	}
	for _, g := range gets {
		answers = append(answers, answer{"GET " + g, send(http.MethodGet, g, "", "", cookie)})
	}
	shown := map[string]bool{}
	for _, a := range answers {
		body := a.w.Body.String()
		for i, p := range payloads {
			if strings.Contains(body, markers[i]+"a") {
				shown[p] = true
			}
			for _, piece := range rawPieces(p) {
				if k := strings.Index(body, piece); k >= 0 {
					return fmt.Errorf("%s (%d, %s) carries %q of %q unescaped: …%s…", a.what, a.w.Code, a.w.Header().Get("Content-Type"),
						piece, p, body[max(0, k-60):min(len(body), k+len(piece)+60)])
				}
			}
		}
	}
	// The check has teeth only where the text is shown: every title is.
	for _, a := range alerts {
		if t := a.Annotations["summary"]; !shown[t] {
			return fmt.Errorf("title %q is shown by no answer: the check would be vacuous", t)
		}
	}
	return nil
}

// drain runs the daemon until every analysis of as is done.
func drain(ctx context.Context, daemon server.Daemon, st server.Store, as []server.Analysis) (err error) {
	stop := make(chan struct{})
	ran := make(chan error, 1)
	go func() { ran <- daemon.Run(ctx, stop) }()
	defer func() {
		close(stop)
		if rerr := <-ran; rerr != nil && err == nil {
			err = fmt.Errorf("setup: the daemon stopped: %v", rerr)
		}
	}()
	daemon.Wake()
	deadline := time.Now().Add(time.Minute)
	for _, a := range as {
		for {
			sv, err := st.Served(ctx, a.AnalysisID)
			if err != nil {
				return fmt.Errorf("setup: served %s: %v", a.AnalysisID, err)
			}
			if sv.Done {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("setup: analysis %s not done within a minute", a.AnalysisID)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// cookieLogin is one login: by the token of scope set Token (of those
// that log in: a name and read or retain), over TLS or not, then a
// logout or not.
type cookieLogin struct {
	Token  int
	TLS    bool
	Logout bool
}

type cookiePlan struct{ Logins []cookieLogin }

// cookieMasks are the scope sets whose named tokens log in.
var cookieMasks = []int{2, 3, 4, 5, 6, 7}

func cookiePlanGen() gopter.Gen {
	l := gg.Struct(reflect.TypeOf(cookieLogin{}), map[string]gopter.Gen{
		"Token": gg.IntRange(0, len(cookieMasks)-1), "TLS": gg.Bool(), "Logout": gg.Bool(),
	})
	return gg.Struct(reflect.TypeOf(cookiePlan{}), map[string]gopter.Gen{"Logins": gg.SliceOfN(3, l)})
}

// sessionTTL is the cockpit's default session lifetime (DESIGN §12a).
const sessionTTL = 12 * time.Hour

func checkCookies(p cookiePlan) error {
	ctx := context.Background()
	d, err := openHTTPDesk(ctx, "p164")
	if err != nil {
		return err
	}
	defer d.close()
	for i, l := range p.Logins {
		req := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(url.Values{"token": {httpSecret(cookieMasks[l.Token])}}.Encode()))
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if l.TLS {
			req.TLS = &tls.ConnectionState{HandshakeComplete: true}
		}
		w := httptest.NewRecorder()
		d.h.ServeHTTP(w, req)
		var ck *http.Cookie
		for _, c := range w.Result().Cookies() {
			if c.Name == cockpit.SessionCookie {
				ck = c
			}
		}
		in := fmt.Sprintf("login %d (%+v)", i, l)
		switch {
		case ck == nil || ck.Value == "":
			return fmt.Errorf("%s: no session cookie: %d", in, w.Code)
		case !ck.HttpOnly:
			return fmt.Errorf("%s: the session cookie is not HttpOnly: scripts could read it", in)
		case ck.SameSite != http.SameSiteStrictMode:
			return fmt.Errorf("%s: the session cookie's SameSite is %v, want Strict", in, ck.SameSite)
		case ck.Path != cockpit.Prefix:
			return fmt.Errorf("%s: the session cookie's path is %q, want %q", in, ck.Path, cockpit.Prefix)
		case ck.Secure != l.TLS:
			return fmt.Errorf("%s: the session cookie's Secure is %v over TLS %v", in, ck.Secure, l.TLS)
		case time.Duration(ck.MaxAge)*time.Second != sessionTTL:
			return fmt.Errorf("%s: the session cookie lasts %ds, want its session's %s", in, ck.MaxAge, sessionTTL)
		}
		rows, err := d.snap.take(ctx)
		if err != nil {
			return err
		}
		for t, text := range rows {
			if strings.Contains(text, ck.Value) {
				return fmt.Errorf("%s: table %s holds the session cookie's value: whoever reads the database holds the session", in, t)
			}
		}
		if !l.Logout {
			continue
		}
		out := httptest.NewRequest(http.MethodPost, "/ui/logout", nil)
		out.RemoteAddr = req.RemoteAddr
		out.AddCookie(&http.Cookie{Name: cockpit.SessionCookie, Value: ck.Value})
		w = httptest.NewRecorder()
		d.h.ServeHTTP(w, out)
		var gone *http.Cookie
		for _, c := range w.Result().Cookies() {
			if c.Name == cockpit.SessionCookie {
				gone = c
			}
		}
		if gone == nil || gone.MaxAge >= 0 || gone.Value != "" || gone.Path != cockpit.Prefix {
			return fmt.Errorf("%s: the logout answered %d without a cookie that ends the session's now (%+v)", in, w.Code, gone)
		}
	}
	return nil
}
