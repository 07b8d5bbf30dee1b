package cockpit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/server/routemux"
	"github.com/openrecall/openrecall/usecase"
)

// UseCases is the application layer the cockpit presents. usecase.App
// satisfies it.
type UseCases interface {
	QueuePage(ctx context.Context, f openrecall.WaitingFilter) (usecase.QueuePage, error)
	ReviewOf(ctx context.Context, analysisID string, limit int) (usecase.Review, error)
	Decide(ctx context.Context, req usecase.DecideRequest) (usecase.Decided, error)
	// A bulk approval (DESIGN §12a): what it would take, for a person to
	// confirm, then one outcome per analysis.
	PlanApproval(ctx context.Context, ids []string) ([]usecase.BulkItem, error)
	ApproveAll(ctx context.Context, ids []string, d usecase.Decision) []usecase.BulkItem
	// Settling what resolved while it waited as "resolved by itself"
	// (DESIGN §12a), confirmed first as a bulk approval is.
	PlanSettle(ctx context.Context, ids []string) ([]usecase.BulkItem, error)
	SettleResolved(ctx context.Context, ids []string, d usecase.Decision) []usecase.BulkItem
	Forget(ctx context.Context, id, reason, analyst string) (usecase.Forgotten, error)
	VerifyAudit(ctx context.Context, checkpoint string) (usecase.Verified, error)
	// VerifyAnalysisLinks checks one analysis's audit entries in place,
	// without reading the whole trail (the analysis page's check).
	VerifyAnalysisLinks(ctx context.Context, analysisID string) (usecase.Links, error)
	// Alert groups (DESIGN §6a): a person reviews an open group and
	// decides it once, as `retain --group` does.
	ReviewGroup(ctx context.Context, id string, limit int) (usecase.GroupReview, error)
	GroupFirings(ctx context.Context, id, after string, limit int) (usecase.Firings, error)
	GroupOfAnalysis(ctx context.Context, analysisID string) (openrecall.Group, bool, error)
	DecideGroup(ctx context.Context, id string, d usecase.Decision) (usecase.DecidedGroup, error)
	// The exceptions page (DESIGN §6b): what people approved, the
	// proposals memory made, approval and revocation.
	ListExceptions(ctx context.Context, state string) ([]usecase.ListedException, error)
	ListProposals(ctx context.Context, pending bool) ([]openrecall.Proposal, error)
	ProposalOf(ctx context.Context, id string) (openrecall.Proposal, error)
	ApproveProposal(ctx context.Context, req usecase.ApproveRequest) (usecase.ExceptionChange, error)
	RevokeException(ctx context.Context, id, analyst, reason string) (usecase.ExceptionChange, error)
	// RetryIntent puts a dead letter of the outbox back to pending,
	// audited with the analyst (DESIGN §12b).
	RetryIntent(ctx context.Context, st usecase.IntentStore, id int64, analyst string) (openrecall.OutboxIntent, error)
	// History lists what was closed without a person, ClosureOf reads
	// one, and Wrong is a person's "this was wrong" about one (DESIGN
	// §12a).
	History(ctx context.Context, f openrecall.ClosureFilter) (openrecall.ClosurePage, error)
	ClosureOf(ctx context.Context, analysisID string) (openrecall.Closure, error)
	Wrong(ctx context.Context, analysisID, reason, analyst string) (usecase.Wronged, error)
}

// Store is what the cockpit reads directly: audit entries, the cost curve
// and single memories. memory.Store satisfies it.
type Store interface {
	usecase.CostStore
	AuditByAnalysis(ctx context.Context, analysisID string) ([]openrecall.AuditEntry, error)
	Get(ctx context.Context, id string) (openrecall.Incident, error)
	SearchIncidents(ctx context.Context, f openrecall.IncidentFilter) ([]openrecall.Incident, error)
	// Sessions live in the database, shared by every serve process and
	// kept across restarts; only the hash of a session id is stored.
	CreateSession(ctx context.Context, s openrecall.Session) error
	Session(ctx context.Context, idHash string, now time.Time) (openrecall.Session, error)
	DeleteSession(ctx context.Context, idHash string) error
}

// Client is what the server knows of a request's client: its address
// and whether its request reached the server over TLS (directly, or
// through a trusted proxy that says so).
type Client struct {
	Addr   string
	Secure bool
}

// Login outcomes.
const (
	LoginOK         = "ok"
	LoginUnknown    = "unknown_token"
	LoginNotAllowed = "cannot_log_in"
	LoginThrottled  = "throttled"
)

// Login is one login attempt, as Config.Logins receives it: never the
// token.
type Login struct {
	Addr    string
	Outcome string
	// Analyst is the name of a token that logged in, or of a known token
	// that cannot (it lacks the read and retain scopes).
	Analyst string
	// RetryAfter is how long a throttled client waits.
	RetryAfter time.Duration
}

// Token is openrecall.Token, a bearer token of server.tokens. Only a token
// with an analyst's name (Token.Analyst) and the read or retain scope logs
// in; that name is the analyst.
type Token = openrecall.Token

// Scopes of the cockpit (openrecall's): read sees, retain acts.
const (
	ScopeRead   = openrecall.ScopeRead
	ScopeRetain = openrecall.ScopeRetain
)

// Badge is the mode badge on every page: what GET /readyz says.
type Badge struct {
	Ready bool
	// Text is the mode ("memory=sqlite model=deterministic", shadow).
	Text string
}

// Config wires a Cockpit. UseCases, Store and Badge are required.
type Config struct {
	UseCases UseCases
	Store    Store
	Tokens   []Token
	// Badge reports the mode, from the function behind /readyz.
	Badge func(ctx context.Context) Badge
	// CostBatch names the run the cost page prefers (the server's run of
	// the day), when it has points.
	CostBatch func() string
	// RecallLimit caps the memories shown for an alert (default 10).
	RecallLimit int
	// SessionTTL is how long a login lasts (default 12h).
	SessionTTL time.Duration
	// ErrorLog receives errors a page hides behind "internal error".
	ErrorLog func(r *http.Request, err error)
	// Client tells a request's client address and whether it came over
	// TLS (default: the peer's address, and r.TLS); the session cookie is
	// Secure when it did.
	Client func(r *http.Request) Client
	// Logins receives every login attempt (for logs and metrics).
	Logins func(r *http.Request, l Login)
	// Throttle limits login attempts (default: DefaultPerAddress and
	// DefaultOverall over Now).
	Throttle *Throttle
	// Outbox, when set, gives the dead letters page and the header's
	// count of notifications not delivered (DESIGN §12b).
	Outbox Outbox
	// Inbox, when set, gives the review page the time an alert's delivery
	// was received.
	Inbox Inbox
	Now   func() time.Time
	// ChainEvery is how old the last verification of the whole audit trail
	// may be before an analysis page asks for another, run in the
	// background (default 10 min): the page shows the last one's result
	// and time.
	ChainEvery time.Duration
}

// Prefix is where the cockpit is mounted.
const Prefix = "/ui/"

// SessionCookie is the name of the session cookie.
const SessionCookie = "openrecall_session"

// CSP is the Content-Security-Policy of every response: scripts, styles
// and images from the cockpit's own origin only, the script's requests
// (the live queue's poll) only back to it, nothing inline, no frames,
// forms posted only back to it.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SecurityHeaders sets the headers every response of the server carries
// (the JSON API too): the CSP, no framing, no sniffing, no referrer.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// Cockpit serves the web UI. It is safe for concurrent use.
type Cockpit struct {
	cfg    Config
	now    func() time.Time
	assets assetSet
	pages  map[string]*template.Template
	mux    *http.ServeMux
	// patterns are the mux's routes, in registration order (Routes).
	patterns []string
	chain    chainBadge
	// bg is the work a page started in the background (the trail's
	// verification), under bgCtx, which Close cancels before waiting for it.
	bg     sync.WaitGroup
	bgCtx  context.Context
	bgStop context.CancelFunc
}

type session struct {
	analyst string
	scopes  []string
}

// New checks cfg and returns a Cockpit.
func New(cfg Config) (*Cockpit, error) {
	if cfg.UseCases == nil || cfg.Store == nil || cfg.Badge == nil {
		return nil, errors.New("cockpit: use cases, store and badge are required")
	}
	if cfg.RecallLimit <= 0 {
		cfg.RecallLimit = 10
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.ChainEvery <= 0 {
		cfg.ChainEvery = 10 * time.Minute
	}
	if cfg.CostBatch == nil {
		cfg.CostBatch = func() string { return "" }
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = func(*http.Request, error) {}
	}
	if cfg.Client == nil {
		cfg.Client = PeerClient
	}
	if cfg.Logins == nil {
		cfg.Logins = func(*http.Request, Login) {}
	}
	c := &Cockpit{cfg: cfg, now: cfg.Now}
	c.bgCtx, c.bgStop = context.WithCancel(context.Background())
	if c.now == nil {
		c.now = func() time.Time { return time.Now().UTC() }
	}
	if c.cfg.Throttle == nil {
		c.cfg.Throttle = NewThrottle(DefaultPerAddress, DefaultOverall, c.now)
	}
	var err error
	if c.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if c.pages, err = c.parsePages(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

// parsePages parses each page template with the layout.
func (c *Cockpit) parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"asset": func(name string) string { return c.assets.url(Prefix, name) },
		"usd":   func(n openrecall.NanoUSD) string { return n.String() },
		"when":  func(t time.Time) template.HTML { return renderMoment(c.now(), t) },
		"score": func(f float64) string { return formatFloat(f) },
	}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, err
		}
		pages[n[len("templates/"):len(n)-len(".html")]] = t
	}
	return pages, nil
}

// AssetNames returns the hashed names of every embedded asset, for tests
// that walk them.
func (c *Cockpit) AssetNames() []string { return c.assets.names() }

// Handler returns the cockpit's handler, to mount at Prefix (and "/",
// which redirects to it). Cross-origin writes get 403; every answer
// carries SecurityHeaders; pages are gzipped for clients that accept it
// (Compress).
func (c *Cockpit) Handler() http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, http.StatusForbidden, "cross-origin request refused")
	}))
	h := cop.Handler(c.mux)
	return Compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SecurityHeaders(w.Header())
		h.ServeHTTP(w, r)
	}))
}

func (c *Cockpit) routes() {
	m := routemux.New()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
	})
	m.HandleFunc("GET "+Prefix+"assets/{name}", c.assets.serve)
	m.HandleFunc("GET "+Prefix+"login", c.loginPage)
	m.HandleFunc("POST "+Prefix+"login", c.login)
	m.HandleFunc("POST "+Prefix+"logout", c.logout)
	m.HandleFunc("GET "+Prefix+"{$}", c.seeing(c.queuePage))
	m.HandleFunc("GET "+Prefix+"queue", c.seeing(c.queuePage))
	m.HandleFunc("GET "+Prefix+"queue/live", c.seeing(c.queueLive))
	m.HandleFunc("POST "+Prefix+"queue/approve", c.acting(c.bulkApprove))
	m.HandleFunc("POST "+Prefix+"queue/settle", c.acting(c.bulkSettle))
	m.HandleFunc("GET "+Prefix+"review/{id}", c.seeing(c.reviewPage))
	m.HandleFunc("POST "+Prefix+"review/{id}", c.acting(c.decide))
	m.HandleFunc("GET "+Prefix+"group/{id}", c.seeing(c.groupPage))
	m.HandleFunc("POST "+Prefix+"group/{id}", c.acting(c.decideGroup))
	m.HandleFunc("GET "+Prefix+"analysis/{id}", c.seeing(c.analysisPage))
	m.HandleFunc("GET "+Prefix+"cost", c.seeing(c.costPage))
	m.HandleFunc("GET "+Prefix+"cost.svg", c.seeing(c.costSVG))
	m.HandleFunc("GET "+Prefix+"memory", c.seeing(c.memoryPage))
	m.HandleFunc("POST "+Prefix+"memory/{id}/forget", c.acting(c.forget))
	m.HandleFunc("GET "+Prefix+"exceptions", c.seeing(c.exceptionsPage))
	m.HandleFunc("POST "+Prefix+"exceptions/{id}/revoke", c.acting(c.revokeException))
	m.HandleFunc("POST "+Prefix+"proposals/{id}/approve", c.acting(c.approveProposal))
	m.HandleFunc("GET "+Prefix+"outbox", c.seeing(c.outboxPage))
	m.HandleFunc("POST "+Prefix+"outbox/{id}/retry", c.acting(c.retryIntent))
	m.HandleFunc("GET "+Prefix+"history", c.seeing(c.historyPage))
	m.HandleFunc("POST "+Prefix+"history/{id}/wrong", c.acting(c.wrong))
	m.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, http.StatusNotFound, "no such page")
	})
	c.mux, c.patterns = m.ServeMux, m.Patterns()
}

// Routes returns the pattern of every route the cockpit serves (net/http
// ServeMux patterns, under Prefix), in the order they were registered.
func (c *Cockpit) Routes() []string { return slices.Clone(c.patterns) }

// digest hides a secret's length from the timing of comparisons.
func digest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// tokenFor returns the configured token whose secret is secret.
func (c *Cockpit) tokenFor(secret string) (Token, bool) {
	if secret == "" {
		return Token{}, false
	}
	got := digest(secret)
	var found Token
	ok := false
	for _, t := range c.cfg.Tokens {
		want := digest(t.Secret)
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 && !ok {
			found, ok = t, true
		}
	}
	return found, ok
}

// PeerClient is the default Config.Client: the peer's address, and
// whether the connection is TLS.
func PeerClient(r *http.Request) Client {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return Client{Addr: host, Secure: r.TLS != nil}
}

// sessionHash is what the store keeps of a session id.
func sessionHash(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:])
}

// newSession stores a session for t and returns its id, the cookie's
// value (the store keeps only its hash).
func (c *Cockpit) newSession(ctx context.Context, t Token) (string, error) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := c.now()
	err := c.cfg.Store.CreateSession(ctx, openrecall.Session{IDHash: sessionHash(id), Analyst: t.Analyst,
		Scopes: slices.Clone(t.Scopes), CreatedAt: now, ExpiresAt: now.Add(c.cfg.SessionTTL)})
	return id, err
}

// sessionOf returns r's live session. Its scopes are those it logged in
// with that the configuration still gives a token of its analyst's name:
// a token taken out of the configuration ends its sessions at the next
// start.
func (c *Cockpit) sessionOf(r *http.Request) (session, bool) {
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return session{}, false
	}
	ss, err := c.cfg.Store.Session(r.Context(), sessionHash(ck.Value), c.now())
	if err != nil {
		if !errors.Is(err, openrecall.ErrNotFound) {
			c.cfg.ErrorLog(r, err)
		}
		return session{}, false
	}
	var granted []string
	for _, t := range c.cfg.Tokens {
		if t.Analyst == ss.Analyst {
			granted = append(granted, t.Scopes...)
		}
	}
	s := session{analyst: ss.Analyst}
	for _, sc := range ss.Scopes {
		if slices.Contains(granted, sc) {
			s.scopes = append(s.scopes, sc)
		}
	}
	if !s.can(ScopeRead) && !s.can(ScopeRetain) {
		return session{}, false
	}
	return s, true
}

func (s session) can(scope string) bool { return slices.Contains(s.scopes, scope) }

// seeing wraps a page that needs a logged-in analyst (read or retain).
func (c *Cockpit) seeing(h func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.sessionOf(r)
		if !ok {
			http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
			return
		}
		h(w, r, s)
	}
}

// acting wraps an action: a logged-in analyst whose token has the retain
// scope, else 403.
func (c *Cockpit) acting(h func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.sessionOf(r)
		switch {
		case !ok:
			c.fail(w, r, http.StatusForbidden, "log in to act")
			return
		case !s.can(ScopeRetain):
			c.fail(w, r, http.StatusForbidden, "your token lacks the retain scope: it sees, it does not act")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		if err := r.ParseForm(); err != nil {
			c.fail(w, r, http.StatusBadRequest, "unreadable form: "+err.Error())
			return
		}
		h(w, r, s)
	}
}

func (c *Cockpit) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "login", session{}, "Log in", loginData{Failed: r.URL.Query().Get("failed") != ""})
}

type loginData struct{ Failed bool }

// login exchanges a named token with the read or retain scope for a
// session cookie. Attempts are throttled per client address and overall
// (Throttle): a throttled client is answered 429 with Retry-After and its
// token is not even looked at. Every attempt goes to Config.Logins.
func (c *Cockpit) login(w http.ResponseWriter, r *http.Request) {
	cl := c.cfg.Client(r)
	if wait, ok := c.cfg.Throttle.Allow(cl.Addr); !ok {
		secs := int((wait + time.Second - 1) / time.Second)
		c.cfg.Logins(r, Login{Addr: cl.Addr, Outcome: LoginThrottled, RetryAfter: wait})
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		c.fail(w, r, http.StatusTooManyRequests, fmt.Sprintf("Too many failed logins from your address or from everywhere: try again in %d s.", secs))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	t, ok := c.tokenFor(r.PostFormValue("token"))
	switch {
	case !ok:
		c.cfg.Throttle.Fail(cl.Addr)
		c.cfg.Logins(r, Login{Addr: cl.Addr, Outcome: LoginUnknown})
		http.Redirect(w, r, Prefix+"login?failed=1", http.StatusSeeOther)
		return
	case t.Analyst == "" || !slices.Contains(t.Scopes, ScopeRead) && !slices.Contains(t.Scopes, ScopeRetain):
		c.cfg.Throttle.Fail(cl.Addr)
		c.cfg.Logins(r, Login{Addr: cl.Addr, Outcome: LoginNotAllowed, Analyst: t.Analyst})
		http.Redirect(w, r, Prefix+"login?failed=1", http.StatusSeeOther)
		return
	}
	id, err := c.newSession(r.Context(), t)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.cfg.Throttle.Succeed(cl.Addr)
	c.cfg.Logins(r, Login{Addr: cl.Addr, Outcome: LoginOK, Analyst: t.Analyst})
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: id, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: cl.Secure, MaxAge: int(c.cfg.SessionTTL / time.Second),
	})
	http.Redirect(w, r, Prefix+"queue", http.StatusSeeOther)
}

func (c *Cockpit) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(SessionCookie); err == nil && ck.Value != "" {
		if err := c.cfg.Store.DeleteSession(r.Context(), sessionHash(ck.Value)); err != nil {
			c.failErr(w, r, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.cfg.Client(r).Secure, MaxAge: -1})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
