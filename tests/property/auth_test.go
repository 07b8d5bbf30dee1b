package property

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// authProperties are the rules of who speaks and who logs in (issue 33,
// items 7 and 9; DESIGN §12, §12a).
func authProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P130_api_writes_as_the_token",
			"Over the API the analyst recorded for a write (a retain, an exception written, approved or revoked, a group decision) is always the name of the token that authorised it: a body naming another analyst is refused with 403 and writes nothing, the same name (white space aside) or none records the token's name, and a token without a name writes nothing.",
			"ActorPlanGen", actorPlanGen(), checkActor,
			pbt.Pin("an unnamed token that names nobody, on every endpoint", actorPlan{Writes: []actorCase{{Token: 2}, {Token: 2, Endpoint: 1}, {Token: 2, Endpoint: 2}, {Token: 2, Endpoint: 3}}}),
			pbt.Pin("no analyst in the body, and another one", actorPlan{Writes: []actorCase{{}, {Claim: 3, Endpoint: 1}, {Token: 1, Endpoint: 2}}}),
			pbt.Classify(func(p actorPlan) []string {
				var l []string
				for _, c := range p.Writes {
					l = append(l, "token "+actorTokenNames[c.Token], "claim "+actorClaims[c.Claim], "endpoint "+actorEndpoints[c.Endpoint])
				}
				return l
			}),
			pbt.Cover("token unnamed", 10), pbt.Cover("claim another analyst", 10), pbt.Cover("claim none", 10), pbt.Cover("claim the token's name padded", 5),
			pbt.Expensive(3)),
		pbt.ForAll("P131_throttled_address_never_logs_in_early",
			"A throttled address never logs in before its back-off has passed, whatever the token: under any sequence of cockpit logins from a few addresses with wrong or right tokens at any spacing, an attempt from an address told to retry after R seconds is refused until R−1 seconds at least have passed, an address that has failed more than the free failures not yet forgiven (one a Decay) is refused at once after its failure; liveness: the right token from an address without failures since its last login logs in.",
			"LoginPlanGen", loginPlanGen(), checkLoginPlan,
			pbt.Pin("six failures, then the right token at once", loginPlan{Steps: []loginStep{{Repeat: 6}, {Right: true, Repeat: 1}}}),
			pbt.Pin("a failure as each block ends", loginPlan{Steps: []loginStep{{Repeat: 6}, {Advance: 4, Repeat: 1}, {Advance: 5, Repeat: 1}, {Advance: 5, Right: true, Repeat: 1}}}),
			pbt.Classify(func(p loginPlan) []string {
				var l []string
				for _, s := range p.Steps {
					if !s.Right && s.Repeat > cockpit.DefaultPerAddress.Free {
						l = append(l, "a burst past the free failures")
					}
				}
				if len(p.Steps) > 8 {
					l = append(l, "long plan")
				}
				return l
			}),
			pbt.Cover("long plan", 20), pbt.Cover("a burst past the free failures", 10),
			pbt.Expensive(3)),
		pbt.ForAll("P132_session_lives_until_logout_revocation_or_expiry",
			"A cockpit session answers, on every serve process sharing the database, exactly while it is live: from its login until its logout, a revocation of every session, or its expiry, whichever comes first.",
			"SessionPlanGen", sessionPlanGen(), checkSessionPlan,
			// Kinds: 0 login, 1 and 2 page, 3 logout, 4 revoke, 5 advance
			// (Advance 3: 12 h, 4: 13 h).
			pbt.Pin("a session past its expiry, on the other process", sessionPlan{Ops: []sessionOp{{Kind: 0}, {Kind: 1, Process: 1}, {Kind: 5, Advance: 2}, {Kind: 1, Process: 1}, {Kind: 5, Advance: 2}, {Kind: 1, Process: 1}}}),
			pbt.Pin("a logout on one process, a page on the other", sessionPlan{Ops: []sessionOp{{Kind: 0}, {Kind: 0, Who: 1, Process: 1}, {Kind: 3, Who: 0}, {Kind: 1, Who: 0, Process: 1}, {Kind: 2, Who: 1}}}),
			pbt.Pin("a revocation", sessionPlan{Ops: []sessionOp{{Kind: 0}, {Kind: 4}, {Kind: 1, Process: 1}, {Kind: 0, Process: 1}, {Kind: 1, Who: 1}}}),
			pbt.Classify(func(p sessionPlan) []string {
				var l []string
				for _, op := range p.Ops {
					l = append(l, "op "+sessionOps[op.Kind])
				}
				return l
			}),
			pbt.Cover("op revoke", 10), pbt.Cover("op logout", 10), pbt.Cover("op advance", 10),
			pbt.Expensive(3)),
		pbt.ForAll("P133_forwarded_headers_only_from_trusted_proxies",
			"A login's client is its peer and its cookie is Secure exactly when the peer's connection is TLS, unless the peer is a trusted proxy (server.trusted_proxies): then the last X-Forwarded-Proto value says whether the cookie is Secure, and the client is the rightmost X-Forwarded-For address that is not a trusted proxy (the leftmost when all are; the one before an unreadable hop).",
			"ProxyCaseGen", proxyCaseGen(), checkProxy,
			pbt.Classify(func(c proxyCase) []string {
				l := []string{"peer trusted " + fmt.Sprint(proxyTrusted(peerPool[c.Peer]))}
				if c.TLS {
					l = append(l, "tls")
				}
				return l
			}),
			pbt.Cover("peer trusted true", 20), pbt.Cover("peer trusted false", 20),
			pbt.Expensive(3)),
	}
}

// The tokens of the properties: alice's and bob's are named, the third
// is not (as an environment token).
var (
	actorTokenNames = []string{"alice", "bob", "unnamed"}
	actorSecrets    = []string{"alice-secret-0123456789", "bob-secret-0123456789ab", "unnamed-secret-0123456"}
	actorClaims     = []string{"none", "the token's name", "the token's name padded", "another analyst", "a stranger"}
	actorEndpoints  = []string{"retain", "exception", "revoke", "group decision"}
)

func actorServerTokens() []server.Token {
	out := make([]server.Token, len(actorSecrets))
	for i, s := range actorSecrets {
		out[i] = server.Token{Name: actorTokenNames[i], Secret: s, Scopes: []string{server.ScopeRead, server.ScopeRetain}}
		if i < 2 {
			out[i].Analyst = actorTokenNames[i]
		}
	}
	return out
}

// actorCase is one write over the API: which token, what the body claims,
// which endpoint.
type actorCase struct {
	Token, Claim, Endpoint int
}

// actorPlan is a run of writes on one server.
type actorPlan struct{ Writes []actorCase }

func actorPlanGen() gopter.Gen {
	write := gg.Struct(reflect.TypeOf(actorCase{}), map[string]gopter.Gen{
		"Token":    gg.IntRange(0, len(actorTokenNames)-1),
		"Claim":    gg.IntRange(0, len(actorClaims)-1),
		"Endpoint": gg.IntRange(0, len(actorEndpoints)-1),
	})
	return gg.Struct(reflect.TypeOf(actorPlan{}), map[string]gopter.Gen{"Writes": gg.SliceOf(write)})
}

// authDesk is a keyed desk behind a real server handler.
type authDesk struct {
	*hourlyDesk
	h   http.Handler
	app *usecase.App // the server's use cases
}

func openAuthDesk(ctx context.Context, name string, throttle *cockpit.Throttle) (*authDesk, error) {
	h, err := openHourlyDesk(ctx, name)
	if err != nil {
		return nil, err
	}
	handler, app, err := authServer(h.keyedDesk, h.clock.now, throttle)
	if err != nil {
		h.close()
		return nil, err
	}
	return &authDesk{hourlyDesk: h, h: handler, app: app}, nil
}

// authServer is a serve process's handler over desk, with the properties'
// tokens.
func authServer(desk *keyedDesk, now func() time.Time, throttle *cockpit.Throttle, opts ...func(*server.Config)) (http.Handler, *usecase.App, error) {
	// Wired as serve wires it, grouping off as these properties run it.
	root := desk.root(compose.Batch("serve"), compose.GroupScope(), compose.NoGrouping(true))
	app := root.UseCases
	newPipeline := func(sink workflow.Sink) (runner.Pipeline, error) {
		r, err := routing.New(routing.Config{Cheap: local.NewCheap(), Strong: local.NewStrong(), Vet: triage.Vet, Now: now})
		if err != nil {
			return nil, err
		}
		return root.Pipeline(r, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
	}
	// The runner names deliveries and reports the mode; these properties
	// call the handler only, so it never runs.
	daemon, err := runner.New(runner.Config{Store: desk.st, Sink: desk.sink, NewPipeline: newPipeline, UseCases: app, Now: now})
	if err != nil {
		return nil, nil, fmt.Errorf("setup: runner: %v", err)
	}
	cfg := server.Config{Store: desk.st, Daemon: daemon, UseCases: app,
		Tokens: actorServerTokens(), Now: now, LoginThrottle: throttle}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("setup: server: %v", err)
	}
	return srv.Handler(), app, nil
}

// call sends one request through the handler from addr.
func (d *authDesk) call(method, path, secret, body, addr string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = addr + ":40000"
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	d.h.ServeHTTP(w, req)
	return w
}

func checkActor(p actorPlan) error {
	ctx := context.Background()
	d, err := openAuthDesk(ctx, "p130", nil)
	if err != nil {
		return err
	}
	defer d.close()
	for i, c := range p.Writes {
		if err := checkWrite(ctx, d, c, i); err != nil {
			return err
		}
	}
	return nil
}

// checkWrite sends one write and checks what it recorded.
func checkWrite(ctx context.Context, d *authDesk, c actorCase, i int) error {
	name := actorTokenNames[c.Token]
	claim := ""
	switch c.Claim {
	case 1:
		claim = name
	case 2:
		claim = "  " + name + " "
	case 3:
		claim = actorTokenNames[1-min(c.Token, 1)]
	case 4:
		claim = "mallory"
	}
	claimJSON, _ := json.Marshal(claim)
	// What revoke and a group decision act on, written by a person
	// directly.
	ex, err := d.app.AddException(ctx, usecase.AddRequest{Identity: openrecall.Identity{Rule: "DiskAlmostFull", Service: fmt.Sprintf("postgres-%d", i)},
		MaxSeverity: openrecall.SeverityHigh, Decision: openrecall.DecisionKnownBenign, Expiry: 4 * time.Hour, Analyst: "setup"})
	if err != nil {
		return fmt.Errorf("setup: exception: %v", err)
	}
	var path, body string
	switch c.Endpoint {
	case 0:
		path, body = "/api/v1/retain", `{"alert":{"id":"disk-`+fmt.Sprint(i)+`","title":"Disk almost full on db-1","labels":{"alertname":"DiskAlmostFull","service":"postgres"}},"decision":"known_benign","note":"cleanup ran `+fmt.Sprint(i)+`","analyst":`+string(claimJSON)+`}`
	case 1:
		path, body = "/api/v1/exceptions", `{"rule":"KubePodCrashLooping","service":"checkout-`+fmt.Sprint(i)+`","max_severity":"high","decision":"known_benign","expires":"4h","analyst":`+string(claimJSON)+`}`
	case 2:
		path, body = "/api/v1/exceptions/"+ex.Exception.ID+"/revoke", `{"reason":"retired","analyst":`+string(claimJSON)+`}`
	case 3:
		path, body = "/api/v1/groups/g-unknown/decision", `{"decision":"known_benign","note":"n","analyst":`+string(claimJSON)+`}`
	}
	count := func() (int, int, error) {
		incs, err := d.st.SearchIncidents(ctx, openrecall.IncidentFilter{})
		if err != nil {
			return 0, 0, fmt.Errorf("setup: %v", err)
		}
		list, err := d.app.ListExceptions(ctx, "")
		return len(incs), len(list), err
	}
	incsBefore, excBefore, err := count()
	if err != nil {
		return err
	}
	w := d.call(http.MethodPost, path, actorSecrets[c.Token], body, "127.0.0.1", nil)
	refuse := c.Token == 2 || c.Claim >= 3
	if refuse {
		if w.Code != http.StatusForbidden {
			return fmt.Errorf("not refused: %s by %s claiming %q: %d %s", path, name, claim, w.Code, w.Body)
		}
		incs, excs, err := count()
		if err != nil {
			return err
		}
		list, err := d.app.ListExceptions(ctx, "revoked")
		if err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		for _, l := range list {
			if l.ID == ex.Exception.ID {
				return fmt.Errorf("written though refused: %s by %s claiming %q revoked it", path, name, claim)
			}
		}
		if incs != incsBefore || excs != excBefore {
			return fmt.Errorf("written though refused: %s by %s claiming %q: memories %d -> %d, exceptions %d -> %d", path, name, claim, incsBefore, incs, excBefore, excs)
		}
		return nil
	}
	var recorded string
	switch c.Endpoint {
	case 0:
		var ret usecase.Retained
		if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &ret) != nil {
			return fmt.Errorf("refused: %s by %s claiming %q: %d %s", path, name, claim, w.Code, w.Body)
		}
		inc, err := d.st.Get(ctx, ret.Incident.ID)
		if err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		recorded = inc.Analyst
	case 1, 2:
		if w.Code != http.StatusCreated && w.Code != http.StatusOK {
			return fmt.Errorf("refused: %s by %s claiming %q: %d %s", path, name, claim, w.Code, w.Body)
		}
		list, err := d.app.ListExceptions(ctx, "")
		if err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		for _, l := range list {
			if c.Endpoint == 1 && l.Identity.Service == fmt.Sprintf("checkout-%d", i) {
				recorded = l.Analyst
			}
			if c.Endpoint == 2 && l.ID == ex.Exception.ID {
				recorded = l.RevokedBy
			}
		}
	case 3:
		// No such group: the actor check passed, the use case answered.
		if w.Code != http.StatusNotFound {
			return fmt.Errorf("refused: %s by %s claiming %q: %d %s", path, name, claim, w.Code, w.Body)
		}
		return nil
	}
	if recorded != name {
		return fmt.Errorf("recorded analyst: %s by %s's token claiming %q recorded %q", path, name, claim, recorded)
	}
	return nil
}

// loginStep is a burst of login attempts: from which of three addresses,
// with the right token or a wrong one, after how long (an index of
// loginAdvances), how many at once.
type loginStep struct {
	Addr    int
	Right   bool
	Advance int
	Repeat  int
}

type loginPlan struct{ Steps []loginStep }

var loginAdvances = []time.Duration{0, 0, 0, 300 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 30 * time.Second, time.Minute, 16 * time.Minute}

func loginPlanGen() gopter.Gen {
	step := gg.Struct(reflect.TypeOf(loginStep{}), map[string]gopter.Gen{
		"Addr":    gg.IntRange(0, 2),
		"Right":   gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Advance": gg.IntRange(0, len(loginAdvances)-1),
		"Repeat":  gg.Weighted([]gg.WeightedGen{{Weight: 2, Gen: gg.IntRange(1, 3)}, {Weight: 1, Gen: gg.IntRange(4, 9)}}),
	})
	return gg.Struct(reflect.TypeOf(loginPlan{}), map[string]gopter.Gen{"Steps": gg.SliceOf(step)})
}

func checkLoginPlan(p loginPlan) error {
	ctx := context.Background()
	clock := &pruneClock{t: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
	per := cockpit.DefaultPerAddress
	d, err := openAuthDesk(ctx, "p131", cockpit.NewThrottle(per, cockpit.DefaultOverall, clock.now))
	if err != nil {
		return err
	}
	defer d.close()
	type history struct {
		failures    int       // since the last login
		first       time.Time // of those failures
		refuseUntil time.Time // no login before this
	}
	hist := make([]history, 3)
	start := clock.now()
	now := start
	var attempts []loginStep
	for _, s := range p.Steps {
		for r := range max(s.Repeat, 1) {
			a := s
			if r > 0 {
				a.Advance = 0
			}
			attempts = append(attempts, a)
		}
	}
	for i, s := range attempts {
		now = now.Add(loginAdvances[s.Advance])
		clock.set(now)
		addr := fmt.Sprintf("192.0.2.%d", s.Addr+1)
		secret := "wrong-token-0123456789"
		if s.Right {
			secret = actorSecrets[0]
		}
		form := url.Values{"token": {secret}}.Encode()
		w := d.call(http.MethodPost, "/ui/login", "", form, addr, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		h := &hist[s.Addr]
		in := fmt.Sprintf("step %d (%s, right %v, at +%s)", i, addr, s.Right, now.Sub(start))
		loggedIn := w.Code == http.StatusSeeOther && w.Header().Get("Location") == "/ui/queue"
		switch {
		case loggedIn && now.Before(h.refuseUntil):
			return fmt.Errorf("logged in early: %s, refused until %s", in, h.refuseUntil.Sub(now))
		case !s.Right && loggedIn:
			return fmt.Errorf("a wrong token logged in: %s", in)
		case s.Right && h.failures == 0 && !loggedIn:
			return fmt.Errorf("liveness: %s without failures was answered %d", in, w.Code)
		}
		switch w.Code {
		case http.StatusTooManyRequests:
			var secs int
			if _, err := fmt.Sscan(w.Header().Get("Retry-After"), &secs); err != nil || secs < 1 {
				return fmt.Errorf("retry-after: %s: %q", in, w.Header().Get("Retry-After"))
			}
			if until := now.Add(time.Duration(secs-1) * time.Second); until.After(h.refuseUntil) {
				h.refuseUntil = until
			}
		case http.StatusSeeOther:
			if loggedIn {
				*h = history{refuseUntil: h.refuseUntil}
				continue
			}
			if h.failures == 0 {
				h.first = now
			}
			h.failures++
			forgiven := int(now.Sub(h.first) / per.Decay)
			if h.failures-forgiven > per.Free {
				if until := now.Add(per.Base); until.After(h.refuseUntil) {
					h.refuseUntil = until
				}
			}
		default:
			return fmt.Errorf("answer: %s: %d %s", in, w.Code, w.Body)
		}
	}
	return nil
}

// sessionOp is one step of a session plan: a login of one of two analysts
// on one of two processes, a logout or a page of one of the sessions so
// far (on either process), a revocation of every session, or time passing.
type sessionOp struct {
	Kind    int // index of sessionOps
	Who     int // analyst, or session (modulo the sessions so far)
	Process int
	Advance int // index of sessionAdvances
}

type sessionPlan struct{ Ops []sessionOp }

var (
	sessionOps      = []string{"login", "page", "page", "logout", "revoke", "advance"}
	sessionAdvances = []time.Duration{time.Minute, time.Hour, 6 * time.Hour, 12 * time.Hour, 13 * time.Hour}
)

func sessionPlanGen() gopter.Gen {
	op := gg.Struct(reflect.TypeOf(sessionOp{}), map[string]gopter.Gen{
		"Kind":    gg.IntRange(0, len(sessionOps)-1),
		"Who":     gg.IntRange(0, 3),
		"Process": gg.IntRange(0, 1),
		"Advance": gg.IntRange(0, len(sessionAdvances)-1),
	})
	return gg.Struct(reflect.TypeOf(sessionPlan{}), map[string]gopter.Gen{"Ops": gg.SliceOf(op)})
}

func checkSessionPlan(p sessionPlan) error {
	ctx := context.Background()
	a, err := openAuthDesk(ctx, "p132", nil)
	if err != nil {
		return err
	}
	defer a.close()
	// A second serve process on the same database, on the same clock.
	other, err := openKeyedDesk(ctx, a.loc, p101Key, a.clock.now)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = other.st.Close() }()
	b, _, err := authServer(other, a.clock.now, nil)
	if err != nil {
		return err
	}
	st := other.st
	procs := []http.Handler{a.h, b}
	type live struct {
		cookie  string
		expires time.Time
		ended   bool
	}
	var sessions []live
	for i, op := range p.Ops {
		now := a.clock.now()
		h := procs[op.Process]
		send := func(method, path, body, cookie string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.RemoteAddr = "127.0.0.1:40000"
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if cookie != "" {
				req.AddCookie(&http.Cookie{Name: cockpit.SessionCookie, Value: cookie})
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w
		}
		switch sessionOps[op.Kind] {
		case "login":
			w := send(http.MethodPost, "/ui/login", url.Values{"token": {actorSecrets[op.Who%2]}}.Encode(), "")
			var cookie string
			for _, c := range w.Result().Cookies() {
				if c.Name == cockpit.SessionCookie {
					cookie = c.Value
				}
			}
			if cookie == "" {
				return fmt.Errorf("op %d: login gave no cookie: %d", i, w.Code)
			}
			sessions = append(sessions, live{cookie: cookie, expires: now.Add(12 * time.Hour)})
		case "page", "logout":
			if len(sessions) == 0 {
				continue
			}
			s := &sessions[op.Who%len(sessions)]
			want := !s.ended && now.Before(s.expires)
			if sessionOps[op.Kind] == "logout" {
				send(http.MethodPost, "/ui/logout", "", s.cookie)
				s.ended = true
				want = false
			}
			w := send(http.MethodGet, "/ui/queue", "", s.cookie)
			if got := w.Code == http.StatusOK; got != want {
				return fmt.Errorf("op %d (%s on process %d): session %d answered %d, want live %v (expires in %s, ended %v)",
					i, sessionOps[op.Kind], op.Process, op.Who%len(sessions), w.Code, want, s.expires.Sub(now), s.ended)
			}
		case "revoke":
			if _, err := st.RevokeSessions(ctx); err != nil {
				return fmt.Errorf("op %d: revoke: %v", i, err)
			}
			for j := range sessions {
				sessions[j].ended = true
			}
		case "advance":
			a.clock.set(now.Add(sessionAdvances[op.Advance]))
		}
	}
	return nil
}

// proxyCase is one login through a chain of hops: the peer (one of
// peerPool), the X-Forwarded-For addresses (indexes of peerPool) and the
// X-Forwarded-Proto value (index of protoPool), with 127.0.0.0/8 and
// 10.0.0.0/8 the trusted proxies.
type proxyCase struct {
	Peer  int
	Hops  []int
	Proto int
	TLS   bool
}

var (
	peerPool  = []string{"127.0.0.1", "10.1.2.3", "192.0.2.7", "203.0.113.9", "10.9.9.9", "198.51.100.4", "not-an-address"}
	protoPool = []string{"", "https", "http", "HTTPS", "http, https", "https, http"}
)

func proxyTrusted(a string) bool {
	return strings.HasPrefix(a, "127.") || strings.HasPrefix(a, "10.")
}

func proxyCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(proxyCase{}), map[string]gopter.Gen{
		"Peer":  gg.IntRange(0, 5),
		"Hops":  gg.SliceOfN(3, gg.IntRange(0, len(peerPool)-1)),
		"Proto": gg.IntRange(0, len(protoPool)-1),
		"TLS":   gg.Bool(),
	})
}

// checkProxy logs in once and reads the cookie's Secure flag and the
// client address the login's log line names.
func checkProxy(c proxyCase) error {
	// The expected client: the peer, unless it is trusted; then the
	// rightmost hop that is not trusted (stopping at one that is no
	// address), else the leftmost.
	peer := peerPool[c.Peer]
	wantAddr, wantSecure := peer, c.TLS
	if proxyTrusted(peer) {
		if p := protoPool[c.Proto]; p != "" {
			parts := strings.Split(p, ",")
			wantSecure = strings.EqualFold(strings.TrimSpace(parts[len(parts)-1]), "https")
		}
		for i := len(c.Hops) - 1; i >= 0; i-- {
			h := peerPool[c.Hops[i]]
			if h == "not-an-address" {
				break
			}
			wantAddr = h
			if !proxyTrusted(h) {
				break
			}
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(url.Values{"token": {actorSecrets[0]}}.Encode()))
	req.RemoteAddr = peer + ":40000"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.TLS {
		req.TLS = &tls.ConnectionState{HandshakeComplete: true}
	}
	if p := protoPool[c.Proto]; p != "" {
		req.Header.Set("X-Forwarded-Proto", p)
	}
	if len(c.Hops) > 0 {
		hops := make([]string, len(c.Hops))
		for i, h := range c.Hops {
			hops[i] = peerPool[h]
		}
		req.Header.Set("X-Forwarded-For", strings.Join(hops, ", "))
	}
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "p133")
	if err != nil {
		return err
	}
	defer h.close()
	core, logs := observer.New(zapcore.InfoLevel)
	handler, _, err := authServer(h.keyedDesk, h.clock.now, nil, func(cfg *server.Config) {
		cfg.Logger = zap.New(core)
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	})
	if err != nil {
		return err
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, req)
	var secure, found bool
	for _, ck := range w.Result().Cookies() {
		if ck.Name == cockpit.SessionCookie {
			secure, found = ck.Secure, true
		}
	}
	if !found {
		return fmt.Errorf("login: %+v: %d, no cookie", c, w.Code)
	}
	if secure != wantSecure {
		return fmt.Errorf("secure: %+v: cookie Secure %v, want %v", c, secure, wantSecure)
	}
	var got string
	for _, e := range logs.All() {
		if e.Message == "login" {
			got, _ = e.ContextMap()["client"].(string)
		}
	}
	if got != wantAddr {
		return fmt.Errorf("client: %+v: the login's client is %q, want %q", c, got, wantAddr)
	}
	return nil
}
