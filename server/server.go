package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// Store is the durable storage the server consumes: the inbox of accepted
// deliveries with their results, and the audit trail and cost curve it
// reads. memory.Store satisfies it.
type Store interface {
	Enqueue(ctx context.Context, ds []openrecall.Delivery, limit int, name func(id int64) string) ([]openrecall.Delivery, error)
	// Claim leases pending deliveries to this server; RenewLeases extends
	// the leases of those it holds. The Sink stores each result and
	// completes its delivery under the lease, in one transaction (a
	// delivery another server reclaimed meanwhile gets nothing from this
	// one, counted by LeasesLost).
	Claim(ctx context.Context, limit int) ([]openrecall.Delivery, error)
	RenewLeases(ctx context.Context) error
	LeasesLost() int64
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
}

// Pipeline runs a queue of intake records through the workflow the analyze
// command runs, persisting each batch through the sink before emitting it.
// workflow.Workflow satisfies it.
type Pipeline interface {
	usecase.Pipeline
	AnalysisID(seq int) string
	Mode() openrecall.Mode
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
	// ArchiveTo moves the verified prefix of the trail older than before
	// to a new file at path (DESIGN §9).
	ArchiveTo(ctx context.Context, before time.Time, path string, removeFailed func(error)) (usecase.Archived, error)
	// The exceptions people approve (DESIGN §6b).
	ListExceptions(ctx context.Context, state string) ([]usecase.ListedException, error)
	ApproveProposal(ctx context.Context, req usecase.ApproveRequest) (usecase.ExceptionChange, error)
	AddException(ctx context.Context, req usecase.AddRequest) (usecase.ExceptionChange, error)
	RevokeException(ctx context.Context, id, analyst, reason string) (usecase.ExceptionChange, error)
	// RecordExpiries records the exception expiries due, with actor
	// system: the server calls it at the start of each run and of each
	// inbox batch.
	RecordExpiries(ctx context.Context) error
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

// Config wires a Server. Store, Sink, NewPipeline and UseCases are
// required.
type Config struct {
	Store Store
	// Sink persists each result's audit entries and cost point, and
	// completes its delivery, in one transaction per batch (memory.Sink).
	Sink workflow.Sink
	// NewPipeline builds the pipeline for a UTC day ("2006-01-02") over
	// sink (workflow.Config.Sink: the server's Sink, retrying storage
	// errors); the server asks for a new one when the day changes, so a
	// daily model budget starts afresh. Every pipeline must name analyses
	// alike.
	NewPipeline func(day string, sink workflow.Sink) (Pipeline, error)
	// UseCases retains, recalls and verifies the audit trail.
	UseCases UseCases

	Tokens []Token
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
	// Workers analyse deliveries concurrently (default 2).
	Workers         int
	RequestTimeout  time.Duration
	ShutdownTimeout time.Duration
	RecallLimit     int
	// WebhookURL receives a POST for each alert escalated to a person.
	WebhookURL string
	// Lease is how long a claim of an inbox delivery lasts (the Store's);
	// the server renews the claims it holds every third of it. 0 is
	// memory.DefaultLease's minute.
	Lease time.Duration
	// Retention, when positive, is how long the delivery and result
	// documents of a finished inbox row are kept: serve prunes older ones
	// (Pruner) at start and every PruneEvery. 0 keeps them forever.
	Retention time.Duration
	// PruneEvery is the time between pruning passes (default
	// PruneInterval(Retention)).
	PruneEvery time.Duration
	// Pruner prunes the inbox; required when Retention is positive.
	// memory.Store satisfies it.
	Pruner Pruner
	// ArchiveDir, when set with a Retention, is where each pruning pass
	// then archives the audit and cost chains older than the retention
	// (a signed archive file per pass, as `audit archive` writes), after
	// which Forgetter deletes the rows only those analyses needed
	// (DESIGN §11): the database stays the size of a retention's worth of
	// alerts.
	ArchiveDir string
	// Forgetter forgets what an archive took; required with ArchiveDir.
	Forgetter Forgetter
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
	// DefaultPruneEvery is the longest time between pruning passes.
	DefaultPruneEvery = time.Hour
	// MinPruneEvery is the shortest time between pruning passes.
	MinPruneEvery = time.Minute
	// RetryAfterSeconds is the Retry-After of a 503 for a full inbox.
	RetryAfterSeconds = 5
)

// PruneInterval returns the time between pruning passes for a retention:
// a quarter of it, within MinPruneEvery and DefaultPruneEvery, so a row
// outlives the retention by a quarter of it at most (by an hour at most
// for a retention of four hours or more).
func PruneInterval(retention time.Duration) time.Duration {
	return min(max(retention/4, MinPruneEvery), DefaultPruneEvery)
}

// Server is the HTTP receiver and its inbox workers. It is safe for
// concurrent use.
type Server struct {
	cfg  Config
	log  *zap.Logger
	now  func() time.Time
	obs  Observer
	mux  *http.ServeMux
	wake chan struct{}

	pmu      sync.Mutex // guards pipeline and day
	pipeline Pipeline
	day      string

	notifier *notifier
	ready    atomic.Bool
	cockpit  *cockpit.Cockpit

	// fatal receives the error that stops the server from within (a
	// database another binary migrated); Serve returns it.
	fatal chan error
}

// fail stops the server with err: Serve shuts down and returns it.
func (s *Server) fail(err error) {
	s.log.Error("stopping", zap.Error(err))
	select {
	case s.fatal <- err:
	default:
	}
}

// New checks cfg, fills defaults and returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Store == nil, cfg.Sink == nil, cfg.NewPipeline == nil:
		return nil, errors.New("server: store, sink and pipeline are required")
	case cfg.UseCases == nil:
		return nil, errors.New("server: use cases are required")
	case cfg.Retention < 0:
		return nil, fmt.Errorf("server: retention %s must not be negative: %w", cfg.Retention, openrecall.ErrInvalid)
	case cfg.ArchiveDir != "" && cfg.Retention <= 0:
		return nil, fmt.Errorf("server: an archive directory needs a retention: %w", openrecall.ErrInvalid)
	case cfg.ArchiveDir != "" && cfg.Forgetter == nil:
		return nil, errors.New("server: an archive directory needs a forgetter")
	case cfg.Retention > 0 && cfg.Pruner == nil:
		return nil, errors.New("server: a retention needs a pruner")
	}
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = PruneInterval(cfg.Retention)
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
	if cfg.Workers <= 0 {
		cfg.Workers = 2
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
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now, obs: cfg.Observer, wake: make(chan struct{}, 1), fatal: make(chan error, 1)}
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
	if _, err := s.currentPipeline(); err != nil {
		return nil, err
	}
	if cfg.WebhookURL != "" {
		s.notifier = newNotifier(cfg.WebhookURL, s.log)
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
		UseCases: s.cfg.UseCases, Store: s.cfg.Store, Tokens: s.cfg.Tokens, RecallLimit: s.cfg.RecallLimit, Now: s.now,
		Badge: func(ctx context.Context) cockpit.Badge {
			rd := s.readiness(ctx)
			text := rd.Mode.String()
			if rd.Shadow {
				text += " shadow"
			}
			return cockpit.Badge{Ready: rd.Ready, Text: text}
		},
		CostBatch: func() string { return batchOf(s.now()) },
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

// currentPipeline returns today's pipeline, building it on a new UTC day.
func (s *Server) currentPipeline() (Pipeline, error) {
	p, _, err := s.currentPipelineDay()
	return p, err
}

// currentPipelineDay returns today's pipeline and its UTC day
// ("2006-01-02"), building it on a new day.
func (s *Server) currentPipelineDay() (Pipeline, string, error) {
	day := s.now().UTC().Format(time.DateOnly)
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.pipeline == nil || s.day != day {
		p, err := s.cfg.NewPipeline(day, retrySink{sink: s.cfg.Sink, log: s.log})
		if err != nil {
			return nil, day, fmt.Errorf("server: pipeline for %s: %w", day, err)
		}
		s.pipeline, s.day = p, day
	}
	return s.pipeline, day, nil
}

// analysisID names the analysis of inbox delivery id.
func (s *Server) analysisID(id int64) string {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return s.pipeline.AnalysisID(int(id))
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

// Serve answers on ln and runs the inbox workers until ctx is done, then
// shuts down gracefully: it stops accepting, lets in-flight requests and
// analyses finish within the shutdown timeout, and returns nil. Deliveries
// still waiting stay in the inbox for the next start.
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
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		s.drain(workCtx, stop)
	}()
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		s.prune(workCtx, stop)
	}()
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.renew(workCtx, drained)
	}()
	if n, err := s.cfg.Store.InboxDepth(ctx); err == nil && n > 0 {
		s.log.Info("draining deliveries accepted before this start", zap.Int("pending", n))
	}
	s.ready.Store(true)
	serveErr := make(chan error, 1)
	if s.cfg.TLS != nil {
		srv.TLSConfig = s.cfg.TLS.Clone()
		go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { serveErr <- srv.Serve(ln) }()
	}
	s.log.Info("serving", zap.String("addr", ln.Addr().String()), zap.Int("workers", s.cfg.Workers))

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	case err = <-s.fatal:
	}
	s.ready.Store(false)
	s.log.Info("shutting down", zap.Duration("deadline", s.cfg.ShutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		s.log.Warn("http shutdown", zap.Error(serr))
	}
	close(stop)
	<-pruned
	select {
	case <-drained:
	case <-sctx.Done():
		s.log.Warn("shutdown deadline passed with analyses in flight; their deliveries stay in the inbox")
		cancelWork()
		<-drained
	}
	<-renewed
	if s.notifier != nil {
		s.notifier.wait(sctx)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
