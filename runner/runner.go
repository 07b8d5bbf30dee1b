package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// Store is the inbox the runner drains and the cost curve it continues.
// memory.Store satisfies it.
type Store interface {
	// Claim leases pending deliveries to this process; RenewLeases
	// extends the leases of those it holds. The Sink stores each result
	// and completes its delivery under the lease, in one transaction (a
	// delivery another process reclaimed meanwhile gets nothing from this
	// one, counted by LeasesLost).
	Claim(ctx context.Context, limit int) ([]openrecall.Delivery, error)
	RenewLeases(ctx context.Context) error
	LeasesLost() int64
	InboxDepth(ctx context.Context) (int, error)
}

// Pipeline runs a queue of intake records through the workflow the analyze
// command runs, persisting each batch through the sink before emitting it.
// workflow.Workflow satisfies it.
type Pipeline interface {
	usecase.Pipeline
	AnalysisID(seq int) string
	Mode() openrecall.Mode
}

// UseCases are the use cases the runner calls between analyses.
// usecase.App satisfies it.
type UseCases interface {
	// RecordExpiries records the exception expiries due, with actor
	// system: the runner calls it at the start of each run and of each
	// inbox batch.
	RecordExpiries(ctx context.Context) error
	// ArchiveTo moves the verified prefix of the trail older than before
	// to a new file at path (DESIGN §9).
	ArchiveTo(ctx context.Context, before time.Time, path string, removeFailed func(error)) (usecase.Archived, error)
}

// Observer receives what the runner does, for metrics. It observes and
// never steers; implementations must be safe for concurrent use.
// server.Prometheus satisfies it.
type Observer interface {
	// Analysed reports one finished analysis.
	Analysed(r openrecall.Result)
	// Pruned reports inbox rows whose documents one pruning pass emptied.
	Pruned(rows int)
	// Archived reports the audit entries and cost points one pass moved
	// to an archive file; Forgotten the rows it then deleted.
	Archived(entries, costPoints int64)
	Forgotten(f openrecall.Forgotten)
	// LeasesLost reports claimed deliveries another process reclaimed
	// after this one's lease passed: this one wrote nothing for them.
	LeasesLost(n int)
}

// Config wires a Runner. Store, Sink, NewPipeline and UseCases are
// required.
type Config struct {
	Store Store
	// Sink persists each result's audit entries and cost point, and
	// completes its delivery, in one transaction per batch (memory.Sink).
	Sink workflow.Sink
	// NewPipeline builds the pipeline over sink (workflow.Config.Sink: the
	// runner's Sink, retrying storage errors), once, in New: one pipeline
	// for the life of the runner, whose daily model budget is keyed by UTC
	// day inside it (routing.NewDailyBudget).
	NewPipeline func(sink workflow.Sink) (Pipeline, error)
	UseCases    UseCases
	// Workers analyse deliveries concurrently (default 2).
	Workers int
	// Dispatch, when not nil, delivers the outbox's notification intents
	// (DESIGN §12b) beside the analyses: the intents the Sink writes with
	// each result (memory.Sink.Notify) and a person's decisions write.
	Dispatch *DispatchConfig
	// Lease is how long a claim of an inbox delivery lasts (the Store's);
	// the runner renews the claims it holds every third of it. 0 is
	// memory.DefaultLease's minute.
	Lease time.Duration
	// Retention, when positive, is how long the delivery and result
	// documents of a finished inbox row are kept: the runner prunes older
	// ones (Pruner) at start and every PruneEvery. 0 keeps them forever.
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
	// Observer receives events for metrics; nil observes nothing.
	Observer Observer
	Logger   *zap.Logger
	Now      func() time.Time
}

// Runner is the work of `openrecall serve` beside its HTTP receivers: it
// drains the inbox through the analyze use case one UTC day at a time,
// prunes and archives what the retention lets go, renews the leases of
// the deliveries it holds and delivers the outbox's notifications. Its
// methods are safe for concurrent use; Run is called once.
type Runner struct {
	cfg  Config
	log  *zap.Logger
	now  func() time.Time
	obs  Observer
	wake chan struct{}

	pipeline Pipeline

	dispatcher *Dispatcher

	failOnce sync.Once
	failed   chan struct{} // closed by fail, after fatal is set
	fatal    error
}

// New checks cfg, fills defaults, builds the pipeline and returns a
// Runner.
func New(cfg Config) (*Runner, error) {
	if err := check(cfg); err != nil {
		return nil, err
	}
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = PruneInterval(cfg.Retention)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	r := &Runner{cfg: cfg, log: cfg.Logger, now: cfg.Now, obs: cfg.Observer, wake: make(chan struct{}, 1), failed: make(chan struct{})}
	if r.log == nil {
		r.log = zap.NewNop()
	}
	r.log = r.log.Named("runner")
	if r.now == nil {
		r.now = func() time.Time { return time.Now().UTC() }
	}
	if r.obs == nil {
		r.obs = nopObserver{}
	}
	// Built now, so a pipeline that cannot be is an error at start, and
	// receivers can name deliveries before Run.
	p, err := cfg.NewPipeline(retrySink{sink: cfg.Sink, log: r.log})
	if err != nil {
		return nil, fmt.Errorf("runner: pipeline: %w", err)
	}
	r.pipeline = p
	if cfg.Dispatch != nil {
		dc := *cfg.Dispatch
		if dc.Logger == nil {
			dc.Logger = r.log
		}
		if r.dispatcher, err = NewDispatcher(dc); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// check refuses a Config that lacks what it needs.
func check(cfg Config) error {
	switch {
	case cfg.Store == nil, cfg.Sink == nil, cfg.NewPipeline == nil:
		return errors.New("runner: store, sink and pipeline are required")
	case cfg.UseCases == nil:
		return errors.New("runner: use cases are required")
	case cfg.Retention < 0:
		return fmt.Errorf("runner: retention %s must not be negative: %w", cfg.Retention, openrecall.ErrInvalid)
	case cfg.ArchiveDir != "" && cfg.Retention <= 0:
		return fmt.Errorf("runner: an archive directory needs a retention: %w", openrecall.ErrInvalid)
	case cfg.ArchiveDir != "" && cfg.Forgetter == nil:
		return errors.New("runner: an archive directory needs a forgetter")
	case cfg.Retention > 0 && cfg.Pruner == nil:
		return errors.New("runner: a retention needs a pruner")
	}
	return nil
}

// Run drains the inbox, prunes it, renews leases and delivers the
// outbox's notifications until stop is closed, then lets the analyses in
// flight finish and their results be stored, lets the sends in flight end
// and their outcomes be recorded, and returns. ctx bounds all of
// it: once ctx is done the analyses still in flight are abandoned (their
// deliveries stay in the inbox for the next start); a caller that stops
// gracefully cancels ctx at its shutdown deadline, not at stop. Run
// returns nil, or the error that stopped it from within (a claim that met
// openrecall.ErrSchemaMismatch: another openrecall migrated the database),
// after which it claims nothing more and closes Failed at once.
func (r *Runner) Run(ctx context.Context, stop <-chan struct{}) error {
	if n, err := r.cfg.Store.InboxDepth(ctx); err == nil && n > 0 {
		r.log.Info("draining deliveries accepted before this start", zap.Int("pending", n))
	}
	r.log.Info("running", zap.Int("workers", r.cfg.Workers))
	// halt ends claims and pruning passes: at stop, at a fatal error, or
	// when ctx is done.
	halt := make(chan struct{})
	go func() {
		defer close(halt)
		select {
		case <-stop:
		case <-r.failed:
		case <-ctx.Done():
		}
	}()
	drained := goDone(func() { r.drain(ctx, halt) })
	pruned := goDone(func() { r.prune(ctx, halt) })
	renewed := goDone(func() { r.renew(ctx, drained) })
	dispatched := goDone(func() {
		if r.dispatcher != nil {
			r.dispatcher.Run(ctx, halt)
		}
	})
	<-halt
	<-pruned
	select {
	case <-drained:
	case <-ctx.Done():
		r.log.Warn("shutdown deadline passed with analyses in flight; their deliveries stay in the inbox")
		<-drained
	}
	<-renewed
	<-dispatched
	select {
	case <-r.failed:
		return r.fatal
	default:
		return nil
	}
}

// goDone runs f in a goroutine and returns a channel closed when it
// returns.
func goDone(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// Failed returns a channel closed when an error stops the runner from
// within (a database another openrecall migrated); Run then returns that
// error. A server shuts down on it.
func (r *Runner) Failed() <-chan struct{} { return r.failed }

// fail stops the runner with err: the first error is the one Run returns.
func (r *Runner) fail(err error) {
	r.failOnce.Do(func() {
		r.log.Error("stopping", zap.Error(err))
		r.fatal = err
		close(r.failed)
	})
}

// Wake tells the runner deliveries were enqueued, so it claims them now
// rather than at its next look (each second).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// AnalysisID names the analysis of inbox delivery id, as the pipeline
// does.
func (r *Runner) AnalysisID(id int64) string { return r.pipeline.AnalysisID(int(id)) }

// Mode returns the mode of the pipeline.
func (r *Runner) Mode() (openrecall.Mode, error) { return r.pipeline.Mode(), nil }

// CostBatch names the cost curve batch of today ("serve-2006-01-02"),
// which the cost readers prefer.
func (r *Runner) CostBatch() string { return costcurve.DayBatch(CostPrefix, r.now()) }

// CostPrefix begins the name of each UTC day's cost curve batch:
// "serve-2006-01-02" (costcurve.Daily).
const CostPrefix = "serve-"

type nopObserver struct{}

func (nopObserver) Analysed(openrecall.Result)     {}
func (nopObserver) Pruned(int)                     {}
func (nopObserver) LeasesLost(int)                 {}
func (nopObserver) Archived(int64, int64)          {}
func (nopObserver) Forgotten(openrecall.Forgotten) {}
