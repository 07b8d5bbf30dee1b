package probe

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// route is one route serve registers, and what guards it.
type route struct {
	method, path string
	// guard: "ingest", "read", "retain" (a bearer token of that scope),
	// "pd" (bearer or routing_key of the ingest scope), "see" (a cockpit
	// session), "act" (a cockpit session of the retain scope, same origin).
	guard string
	body  string
}

// senders are the names of /api/v1/alerts/{sender} (intake/sender's
// registry as of this probe; pagerduty is answered by the PagerDuty receiver).
var senders = []string{"alertmanager", "grafana", "prometheus", "pagerduty", "openrecall", "sns", "pagerduty-webhook",
	"opsgenie", "datadog", "newrelic", "cloudwatch", "azure-monitor", "google-cloud-monitoring", "sentry", "zabbix",
	"dynatrace", "splunk", "signalfx", "kibana", "graylog", "coralogix", "netdata", "uptime-kuma", "checkly",
	"site24x7", "falcosidekick", "wazuh", "elastic-security", "splunk-es", "suricata", "guardduty"}

// routes is the table of server/ingest.go's and server/cockpit's routes
// that need a credential (/healthz, /readyz, /metrics, the login page and
// the assets are public by design).
func routes() []route {
	rs := []route{
		{"POST", "/api/v1/alerts", "ingest", `{"title":"probe auth"}`},
		{"POST", "/api/v2/alerts", "ingest", `[{"labels":{"alertname":"ProbeAuth"}}]`},
		{"POST", "/v2/enqueue", "pd", `{"routing_key":"%s","event_action":"trigger","payload":{"summary":"probe","source":"x","severity":"info"}}`},
		{"POST", "/api/v1/retain", "retain", `{}`},
		{"GET", "/api/v1/recall?q=disk", "read", ""},
		{"POST", "/api/v1/groups/g1/decision", "retain", `{}`},
		{"GET", "/api/v1/groups", "read", ""},
		{"GET", "/api/v1/results/a1", "read", ""},
		{"GET", "/api/v1/results", "read", ""},
		{"GET", "/api/v1/cost", "read", ""},
		{"GET", "/api/v1/audit/verify", "read", ""},
		{"GET", "/api/v1/exceptions", "read", ""},
		{"POST", "/api/v1/exceptions", "retain", `{}`},
		{"POST", "/api/v1/exceptions/e1/revoke", "retain", `{}`},
		{"GET", "/ui/", "see", ""},
		{"GET", "/ui/queue", "see", ""},
		{"POST", "/ui/queue/approve", "act", "ids=x"},
		{"GET", "/ui/review/r1", "see", ""},
		{"POST", "/ui/review/r1", "act", "decision=benign"},
		{"GET", "/ui/group/g1", "see", ""},
		{"POST", "/ui/group/g1", "act", "decision=benign"},
		{"GET", "/ui/analysis/a1", "see", ""},
		{"GET", "/ui/cost", "see", ""},
		{"GET", "/ui/cost.svg", "see", ""},
		{"GET", "/ui/memory", "see", ""},
		{"POST", "/ui/memory/m1/forget", "act", ""},
		{"GET", "/ui/exceptions", "see", ""},
		{"POST", "/ui/exceptions/e1/revoke", "act", ""},
		{"POST", "/ui/proposals/p1/approve", "act", ""},
	}
	for _, s := range senders {
		r := route{"POST", "/api/v1/alerts/" + s, "ingest", `{"title":"probe auth"}`}
		if s == "pagerduty" {
			r.guard, r.body = "pd", rs[2].body
		}
		rs = append(rs, r)
	}
	return rs
}

// login opens a cockpit session with tok and returns its cookie.
func (p *prober) login(tok string) (*http.Cookie, error) {
	a := p.do("POST", "/ui/login", []byte(url.Values{"token": {tok}}.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if a.err != nil {
		return nil, a.err
	}
	for _, line := range a.hdr.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Value != "" {
			return &http.Cookie{Name: c.Name, Value: c.Value}, nil
		}
	}
	return nil, fmt.Errorf("login gave no cookie: %s", a)
}

// credential is one way a request presents (or fails to present) itself.
type credential struct {
	name    string
	hdr     map[string]string
	query   string
	cookie  *http.Cookie
	bodyKey string // PagerDuty routing_key
	// good: the right credential; the answer must be neither 401/403 nor 5xx.
	good bool
}

// auth is family 1.
func (p *prober) auth() *Family {
	f := &Family{Name: "auth", Expected: "401/403 (303 to login, 404/405) for every bad credential; never 2xx or 5xx; the right one works", Counts: map[string]int{}}
	t := p.srv.tok
	retainCookie, err := p.login(t.retain)
	if err != nil {
		f.Failures = append(f.Failures, "cockpit login failed | "+err.Error())
		return f
	}
	readCookie, err := p.login(t.read)
	if err != nil {
		f.Failures = append(f.Failures, "cockpit login failed | "+err.Error())
		return f
	}
	// An ended session: logged out, its cookie kept.
	ended, err := p.login(t.retain)
	if err == nil {
		p.do("POST", "/ui/logout", []byte{}, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, ended)
	}
	cookieName := retainCookie.Name
	scopeOf := map[string]string{"ingest": t.ingest, "pd": t.ingest, "read": t.read, "retain": t.retain}
	wrongScope := map[string]string{"ingest": t.retain, "pd": t.retain, "read": t.ingest, "retain": t.read}
	i := 0
	for _, r := range routes() {
		var creds []credential
		switch r.guard {
		case "see", "act":
			creds = []credential{
				{name: "no session"},
				{name: "forged cookie", cookie: &http.Cookie{Name: cookieName, Value: strings.Repeat("ab", 32)}},
				{name: "ended session's cookie", cookie: ended},
				{name: "API bearer token instead of a session", hdr: bearerHdr(t.all)},
				{name: "token as the cookie's value", cookie: &http.Cookie{Name: cookieName, Value: t.all}},
			}
			if r.guard == "act" {
				creds = append(creds,
					credential{name: "read-only session", cookie: readCookie},
					credential{name: "cross-origin POST (CSRF)", cookie: retainCookie, hdr: map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}},
					credential{name: "CSRF: foreign Origin, no fetch metadata", cookie: retainCookie, hdr: map[string]string{"Origin": "http://evil.example"}},
				)
				creds = append(creds, credential{name: "right session", cookie: retainCookie, good: true, hdr: map[string]string{"Sec-Fetch-Site": "same-origin"}})
			} else {
				creds = append(creds, credential{name: "right session", cookie: readCookie, good: true})
			}
		default:
			good, wrong := scopeOf[r.guard], wrongScope[r.guard]
			creds = []credential{
				{name: "no credentials"},
				{name: "wrong token", hdr: bearerHdr(secret())},
				{name: "token of the wrong scope", hdr: bearerHdr(wrong)},
				{name: "wrong token in the query", query: "token=" + secret()},
				{name: "wrong-scope token in the query", query: "token=" + wrong},
				{name: "token in X-Api-Key", hdr: map[string]string{"X-Api-Key": good}},
				{name: "token in Authorization without a scheme", hdr: map[string]string{"Authorization": good}},
				{name: "Authorization: Token scheme", hdr: map[string]string{"Authorization": "Token " + good}},
				{name: "Authorization: Bearer (empty)", hdr: map[string]string{"Authorization": "Bearer "}},
				{name: "Authorization: Basic garbage", hdr: map[string]string{"Authorization": "Basic !!!notbase64"}},
				{name: "Authorization: Bearer token with junk appended", hdr: map[string]string{"Authorization": "Bearer " + good + " x"}},
				{name: "Authorization: Bearer token prefix", hdr: map[string]string{"Authorization": "Bearer " + good[:len(good)-1]}},
				{name: "cockpit session cookie instead of a token", cookie: retainCookie},
				{name: "right token", hdr: bearerHdr(good), good: true},
			}
			if r.guard == "pd" {
				creds = append(creds,
					credential{name: "wrong routing_key", bodyKey: secret()},
					credential{name: "routing_key of the wrong scope", bodyKey: wrong},
					credential{name: "right routing_key", bodyKey: good, good: true})
			}
		}
		for _, c := range creds {
			i++
			if !p.keep(i - 1) {
				continue
			}
			f.Probes++
			body := []byte(nil)
			if r.method == "POST" {
				b := r.body
				if strings.Contains(b, "%s") {
					b = fmt.Sprintf(b, c.bodyKey)
				}
				body = []byte(b)
			}
			hdr := map[string]string{}
			for k, v := range c.hdr {
				hdr[k] = v
			}
			if r.guard == "act" {
				hdr["Content-Type"] = "application/x-www-form-urlencoded"
			}
			path := r.path
			if c.query != "" {
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				path += sep + c.query
			}
			var cookies []*http.Cookie
			if c.cookie != nil {
				cookies = append(cookies, c.cookie)
			}
			a := p.do(r.method, path, body, hdr, cookies...)
			where := fmt.Sprintf("%s %s with %s: %s", r.method, r.path, c.name, a)
			switch {
			case a.err != nil:
				f.Failures = append(f.Failures, "no answer | "+where)
			case a.code >= 500:
				f.Failures = append(f.Failures, "5xx | "+where)
			case c.good && (a.code == 401 || a.code == 403 || (a.code == 303 && strings.Contains(a.hdr.Get("Location"), "login"))):
				f.Failures = append(f.Failures, "the right credential was refused | "+where)
			case c.good:
				f.Counts["right credential worked"]++
				if a.code >= 200 && a.code < 300 {
					p.record("auth liveness", a)
				}
			case a.code == 401 || a.code == 403 || a.code == 404 || a.code == 405:
				f.Counts[fmt.Sprintf("refused %d", a.code)]++
			case a.code == 303 && r.guard == "see" && strings.HasSuffix(a.hdr.Get("Location"), "/ui/login"):
				f.Counts["refused 303 to login"]++
			default:
				f.Failures = append(f.Failures, fmt.Sprintf("bad credential not refused (%d) | %s", a.code, where))
			}
		}
	}
	p.actor(f)
	// Wrong methods on the API routes: 405, never 2xx/5xx.
	for _, r := range routes()[:14] {
		m := "DELETE"
		i++
		if !p.keep(i - 1) {
			continue
		}
		f.Probes++
		a := p.do(m, strings.SplitN(r.path, "?", 2)[0], nil, bearerHdr(t.all))
		if a.err != nil || a.code != 405 && a.code != 404 {
			f.Failures = append(f.Failures, "wrong method not 404/405 | "+fmt.Sprintf("%s %s: %s", m, r.path, a))
		} else {
			f.Counts[fmt.Sprintf("wrong method %d", a.code)]++
		}
	}
	return f
}

// actor is the [trust] item 7 probe: over the API the analyst is the
// token's name, so a retain naming another analyst must be refused (403).
func (p *prober) actor(f *Family) {
	body := []byte(`{"alert":{"title":"probe actor: disk full on db-9"},"decision":"known_benign","analyst":"bob","note":"probe"}`)
	f.Probes++
	a := p.do("POST", "/api/v1/retain", body, bearerHdr(p.srv.tok.retain))
	switch a.code {
	case 403:
		f.Counts["retain naming another analyst refused 403"]++
	default:
		f.Failures = append(f.Failures, "a retain token spoke for another analyst | POST /api/v1/retain by alice's token with analyst bob: "+a.String())
	}
}
