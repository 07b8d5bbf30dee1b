package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/usecase"
)

// Store is the durable storage the server consumes: the inbox it writes
// accepted deliveries to and reads results from, the audit trail and cost
// curve it reads, and the outbox whose dead letters it lists and retries.
// memory.Store satisfies it.
type Store interface {
	Enqueue(ctx context.Context, ds []openrecall.Delivery, limit int, name func(id int64) string) ([]openrecall.Delivery, error)
	Served(ctx context.Context, analysisID string) (openrecall.Served, error)
	ServedSince(ctx context.Context, cursor int64, limit int) ([]openrecall.Served, error)
	InboxDepth(ctx context.Context) (int, error)
	Writable(ctx context.Context) error
	AuditByAnalysis(ctx context.Context, analysisID string) ([]openrecall.AuditEntry, error)
	CostPoints(ctx context.Context, batch string) ([]openrecall.CostPoint, error)
	LatestBatch(ctx context.Context) (string, error)
	// Get and SearchIncidents read memories, for the cockpit's memory
	// page.
	Get(ctx context.Context, id string) (openrecall.Incident, error)
	SearchIncidents(ctx context.Context, f openrecall.IncidentFilter) ([]openrecall.Incident, error)
	// The cockpit's sessions (DESIGN §12a).
	CreateSession(ctx context.Context, s openrecall.Session) error
	Session(ctx context.Context, idHash string, now time.Time) (openrecall.Session, error)
	DeleteSession(ctx context.Context, idHash string) error
	// The outbox (DESIGN §12b), for GET /api/v1/outbox, POST
	// /api/v1/outbox/{id}/retry and the cockpit's dead letters
	// (cockpit.Outbox).
	Intents(ctx context.Context, f openrecall.IntentFilter) ([]openrecall.OutboxIntent, error)
	RetryIntent(ctx context.Context, id int64) error
	OutboxCounts(ctx context.Context) (openrecall.OutboxCounts, error)
}

// Daemon is the work beside the HTTP server: it drains the inbox the
// receivers fill (and prunes it, renews its leases, posts escalations),
// and names what they accept. runner.Runner satisfies it.
type Daemon interface {
	// Run works until stop is closed, then lets the analyses in flight
	// finish and returns; once ctx is done it abandons them (their
	// deliveries stay in the inbox). It returns the error that stopped it
	// from within, if one did.
	Run(ctx context.Context, stop <-chan struct{}) error
	// Failed is closed when an error stops the daemon from within (a
	// database another openrecall migrated): Serve then shuts down.
	Failed() <-chan struct{}
	// Wake says deliveries were just enqueued.
	Wake()
	// AnalysisID names the analysis of inbox delivery id.
	AnalysisID(id int64) string
	// Mode is the mode of the pipeline, or why it cannot be built.
	Mode() (openrecall.Mode, error)
	// CostBatch names the cost curve batch of today's run, which the cost
	// endpoint and page prefer.
	CostBatch() string
}

// UseCases answers retain, recall and audit verification: the
// application layer the command line calls too. usecase.App satisfies it.
type UseCases interface {
	Retain(ctx context.Context, req usecase.RetainRequest) ([]usecase.Retained, error)
	Recall(ctx context.Context, s usecase.Subject, limit int) (usecase.Recalled, error)
	// DecideGroup records a person's decision of an alert group once;
	// ListGroups lists groups, newest first (DESIGN §6a).
	DecideGroup(ctx context.Context, id string, d usecase.Decision) (usecase.DecidedGroup, error)
	ListGroups(ctx context.Context, open bool, limit int) ([]openrecall.Group, error)
	// VerifyAudit verifies the whole trail, against checkpoint (a value
	// `openrecall audit head` printed) when it is not empty; a checkpoint
	// that is malformed or not signed with the trail's key is an error
	// wrapping openrecall.ErrInvalid.
	VerifyAudit(ctx context.Context, checkpoint string) (usecase.Verified, error)
	// The exceptions people approve (DESIGN §6b).
	ListExceptions(ctx context.Context, state string) ([]usecase.ListedException, error)
	ApproveProposal(ctx context.Context, req usecase.ApproveRequest) (usecase.ExceptionChange, error)
	AddException(ctx context.Context, req usecase.AddRequest) (usecase.ExceptionChange, error)
	RevokeException(ctx context.Context, id, analyst, reason string) (usecase.ExceptionChange, error)
	// The cockpit's: what waits for a person, a review, a decision, a
	// memory taken back.
	cockpit.UseCases
}

// Token is openrecall.Token, one accepted bearer token and the scopes it
// grants (the name is kept for the server's callers).
type Token = openrecall.Token

// Token scopes (openrecall's).
const (
	ScopeIngest = openrecall.ScopeIngest
	ScopeRetain = openrecall.ScopeRetain
	ScopeRead   = openrecall.ScopeRead
)

// Config wires a Server. Store, UseCases and Daemon are required.
type Config struct {
	Store Store
	// Daemon drains the inbox beside the HTTP server (runner.Runner):
	// Serve starts it and stops it after the HTTP server.
	Daemon Daemon
	// UseCases retains, recalls and verifies the audit trail.
	UseCases UseCases

	Tokens []Token
	// Senders read the bodies of the intake endpoints: POST
	// /api/v1/alerts/{name} serves each of them, POST /api/v1/alerts
	// detects them. The zero Set is the built-in senders; serve merges the
	// mapping files of senders.dir over them.
	Senders sender.Set
	// MaxBodyBytes bounds a request body (default 32 MiB).
	MaxBodyBytes int64
	// InboxLimit is the backlog of pending deliveries past which receivers
	// answer 503 with Retry-After (default 10000): back-pressure, not a
	// ceiling on one body, which is stored whole while the backlog is under
	// it.
	InboxLimit int
	// RoutingKeyWithin is how many bytes of a PagerDuty event the receiver
	// reads to find its routing_key when the headers carry no ingest token
	// (default intake.DefaultRoutingKeyWithin, 64 KiB); an event whose key
	// comes later is refused with 401.
	RoutingKeyWithin int64
	RequestTimeout   time.Duration
	ShutdownTimeout  time.Duration
	RecallLimit      int
	// Retention is how long the documents of a finished analysis are
	// kept (the Daemon prunes them): a reader of a pruned one names it.
	Retention time.Duration
	// TLS, when set, makes Serve answer with TLS on its listener (the
	// cockpit's session cookie is then Secure).
	TLS *tls.Config
	// TrustedProxies are the reverse proxies whose X-Forwarded-Proto and
	// X-Forwarded-For headers are believed (client).
	TrustedProxies []netip.Prefix
	// LoginThrottle limits the cockpit's logins (default: per address
	// and overall, cockpit.DefaultPerAddress and DefaultOverall over Now).
	LoginThrottle *cockpit.Throttle
	// Shadow says the pipelines never bypass (their guard refuses); readyz
	// reports it.
	Shadow bool
	// ModelHealth, when set, returns each model tier's circuit for /readyz
	// (routing.Circuit's state: serve wires it).
	ModelHealth func() []ModelHealth
	// Slack, when set, serves POST /api/v1/slack/interactions: deciding
	// from Slack (DESIGN §12c).
	Slack *SlackConfig
	// Observer receives events for metrics; nil observes nothing.
	Observer Observer
	Logger   *zap.Logger
	Now      func() time.Time
}

// Defaults.
const (
	DefaultMaxBodyBytes    = 32 << 20
	DefaultInboxLimit      = 10000
	DefaultRequestTimeout  = 30 * time.Second
	DefaultShutdownTimeout = 20 * time.Second
	// RetryAfterSeconds is the Retry-After of a 503 for a full inbox.
	RetryAfterSeconds = 5
)

// Server is the HTTP receiver: the receivers, the API, the cockpit and
// the operators' endpoints, beside a Daemon that drains what they accept.
// It is safe for concurrent use.
type Server struct {
	cfg Config
	log *zap.Logger
	now func() time.Time
	obs Observer
	mux *http.ServeMux
	// patterns are the mux's routes, in registration order (Routes).
	patterns []string
	daemon   Daemon
	ready    atomic.Bool
	cockpit  *cockpit.Cockpit
	slack    *slackChat // nil when Config.Slack is
}

// New checks cfg, fills defaults and returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("server: a store is required")
	case cfg.Daemon == nil:
		return nil, errors.New("server: a daemon is required")
	case cfg.UseCases == nil:
		return nil, errors.New("server: use cases are required")
	case cfg.Retention < 0:
		return nil, fmt.Errorf("server: retention %s must not be negative: %w", cfg.Retention, openrecall.ErrInvalid)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.RoutingKeyWithin <= 0 {
		cfg.RoutingKeyWithin = intake.DefaultRoutingKeyWithin
	}
	if cfg.InboxLimit <= 0 {
		cfg.InboxLimit = DefaultInboxLimit
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.RecallLimit <= 0 {
		cfg.RecallLimit = 10
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now, obs: cfg.Observer, daemon: cfg.Daemon}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.log = s.log.Named("server")
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC() }
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	var err error
	if s.slack, err = newSlackChat(cfg.Slack); err != nil {
		return nil, err
	}
	if err := s.newCockpit(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// newCockpit builds the web UI over the same use cases, logged in with the
// server's tokens, its mode badge from the function behind /readyz.
func (s *Server) newCockpit() error {
	c, err := cockpit.New(cockpit.Config{
		UseCases: s.cfg.UseCases, Store: s.cfg.Store, Outbox: s.cfg.Store, Inbox: s.cfg.Store, Tokens: s.cfg.Tokens, RecallLimit: s.cfg.RecallLimit, Now: s.now,
		Badge: func(ctx context.Context) cockpit.Badge {
			rd := s.readiness(ctx)
			text := rd.Mode.String()
			if rd.Shadow {
				text += " shadow"
			}
			return cockpit.Badge{Ready: rd.Ready, Text: text}
		},
		CostBatch: s.daemon.CostBatch,
		ErrorLog: func(r *http.Request, err error) {
			s.log.Error("cockpit request failed", zap.String("request_id", requestID(r)), zap.Error(err))
		},
		Client:   s.client,
		Logins:   s.login,
		Throttle: s.cfg.LoginThrottle,
	})
	s.cockpit = c
	return err
}

// Handler returns the HTTP handler: every endpoint behind request ids,
// access logs, panic recovery and authentication.
func (s *Server) Handler() http.Handler { return s.middleware(s.mux) }

// CheckListen refuses to serve on an address that is not loopback when no
// token is configured: an open receiver on the network would let anyone
// feed it alerts and teach its memory.
func CheckListen(addr string, tokens int) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w: %w", addr, err, openrecall.ErrInvalid)
	}
	if tokens > 0 || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("listen address %q is not loopback and no token is configured: configure server.tokens or OPENRECALL_INGEST_TOKEN, or listen on 127.0.0.1: %w", addr, openrecall.ErrInvalid)
}

// Serve answers on ln and runs the Daemon until ctx is done (or the
// Daemon fails), then shuts down gracefully: it stops accepting, lets
// in-flight requests finish, then stops the Daemon, whose analyses in
// flight finish within what is left of the shutdown timeout; it returns
// nil, or the error that stopped it. Deliveries still waiting stay in the
// inbox for the next start.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.cfg.RequestTimeout,
		WriteTimeout:      s.cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          zap.NewStdLog(s.log.Named("http")),
	}
	stop := make(chan struct{})
	// Analyses outlive ctx: an in-flight one finishes after SIGTERM, within
	// the shutdown deadline.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	ran := make(chan error, 1)
	go func() { ran <- s.daemon.Run(workCtx, stop) }()
	s.ready.Store(true)
	serveErr := make(chan error, 1)
	if s.cfg.TLS != nil {
		srv.TLSConfig = s.cfg.TLS.Clone()
		go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { serveErr <- srv.Serve(ln) }()
	}
	s.log.Info("serving", zap.String("addr", ln.Addr().String()))

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	case <-s.daemon.Failed():
	}
	s.ready.Store(false)
	s.log.Info("shutting down", zap.Duration("deadline", s.cfg.ShutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	// At the deadline the daemon abandons what is still in flight.
	context.AfterFunc(sctx, cancelWork)
	if serr := srv.Shutdown(sctx); serr != nil {
		s.log.Warn("http shutdown", zap.Error(serr))
	}
	// What a cockpit page started in the background ends before the
	// caller closes the store.
	if s.cockpit != nil {
		s.cockpit.Close()
	}
	// The message updates after their answers: each is bounded.
	s.waitSlack()
	close(stop)
	if derr := <-ran; err == nil {
		err = derr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
