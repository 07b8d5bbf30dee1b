// Package compose is the composition root: the one place that builds the
// pipeline (workflow.New), the use cases (usecase.App) and the results'
// sink (memory.Sink) over an open memory. analyze, serve, eval, the
// commands that take decisions and the tests that stand in for them all
// build their wiring here, so a caller's wiring cannot drift from the
// product's; what differs between them is an Option.
package compose

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// SealerFunc finds the audit trail's sealer. It is called only when
// something is written to the trail, so commands that only read never need
// the key.
type SealerFunc func(ctx context.Context) (audit.Sealer, error)

// FixedSealer is the SealerFunc of a sealer already at hand.
func FixedSealer(s audit.Sealer) SealerFunc {
	return func(context.Context) (audit.Sealer, error) { return s, nil }
}

// errNoSealer is what writing to the trail returns when the root was
// opened without a Sealer.
var errNoSealer = errors.New("compose: no audit sealer: the trail cannot be written")

// Option is one difference between the callers of Open.
type Option func(*options)

type options struct {
	fingerprinter workflow.Fingerprinter
	sealer        SealerFunc
	keys          usecase.AuditKeys
	retention     time.Duration
	batch         string
	shadow        bool
	groupScope    bool
	noGrouping    bool
	ordered       bool
	continueCurve bool
	notify        memory.NotifyFunc
	noExceptions  bool
	wire          func(*workflow.Config)
}

// Fingerprinter fingerprints and identifies alerts, for the pipeline and
// the use cases that decide about alerts (a *fingerprint.Extractor). A
// root without one has use cases that decide about no alert.
func Fingerprinter(f workflow.Fingerprinter) Option {
	return func(o *options) { o.fingerprinter = f }
}

// Sealer seals what is written to the audit trail.
func Sealer(s SealerFunc) Option { return func(o *options) { o.sealer = s } }

// Keys finds the audit key (verifying the trail, signing its head).
func Keys(k usecase.AuditKeys) Option { return func(o *options) { o.keys = k } }

// Retention is serve's server.retention, named when an analysis was pruned.
func Retention(d time.Duration) Option { return func(o *options) { o.retention = d } }

// Batch names the run the pipeline's results belong to.
func Batch(name string) Option { return func(o *options) { o.batch = name } }

// Shadow makes the guard propose and audit but never bypass (serve --shadow).
func Shadow(on bool) Option { return func(o *options) { o.shadow = on } }

// GroupScope continues the alert groups stored under the batch (serve: a
// restart and every process continue the same groups).
func GroupScope() Option { return func(o *options) { o.groupScope = true } }

// NoGrouping turns alert grouping off whatever the configuration says
// (eval --no-grouping).
func NoGrouping(off bool) Option { return func(o *options) { o.noGrouping = off } }

// OrderedRouting routes alerts in input order (a run with a budget).
func OrderedRouting(on bool) Option { return func(o *options) { o.ordered = on } }

// Continue makes the sink's cost points continue the stored daily curve
// (several serve processes share it).
func Continue() Option { return func(o *options) { o.continueCurve = true } }

// Notify gives each stored result its notification intents, written in
// the sink's transaction with it (the outbox, DESIGN §12b).
func Notify(f memory.NotifyFunc) Option { return func(o *options) { o.notify = f } }

// NoExceptions leaves the pipeline without stored exceptions.
func NoExceptions() Option { return func(o *options) { o.noExceptions = true } }

// Wire lets a test or the eval replace parts of the pipeline's
// configuration (a guard that never refuses, a router that obeys) after
// the product's wiring is made.
func Wire(f func(*workflow.Config)) Option { return func(o *options) { o.wire = f } }

// Root is the wiring of one memory: its use cases, and what builds its
// pipelines and sink.
type Root struct {
	// UseCases is the application layer over the memory, complete.
	UseCases *usecase.App

	cfg config.Config
	st  *memory.Store
	now func() time.Time
	log *zap.Logger
	o   options
}

// Open wires the memory st under the configuration cfg on the clock now
// (nil: time.Now in UTC), logging to log (nil: none).
func Open(cfg config.Config, st *memory.Store, now func() time.Time, log *zap.Logger, opts ...Option) *Root {
	r := &Root{cfg: cfg, st: st, now: now, log: log}
	for _, opt := range opts {
		opt(&r.o)
	}
	if r.now == nil {
		r.now = func() time.Time { return time.Now().UTC() }
	}
	r.UseCases = r.useCases()
	return r
}

func (r *Root) sealer(ctx context.Context) (audit.Sealer, error) {
	if r.o.sealer == nil {
		return audit.Sealer{}, errNoSealer
	}
	return r.o.sealer(ctx)
}

func (r *Root) useCases() *usecase.App {
	st := r.st
	return &usecase.App{
		Store:          st,
		Groups:         st,
		Exceptions:     st,
		ExceptionRules: usecase.ExceptionRules{MaxExpiry: r.cfg.Exceptions.MaxExpiry},
		Now:            r.now,
		Expiries: func(ctx context.Context) error {
			// Most writing commands find none due: they then need neither
			// the audit key nor a write.
			if due, err := st.ExpiriesDue(ctx, r.now()); err != nil || !due {
				return err
			}
			sealer, err := r.sealer(ctx)
			if err != nil {
				return err
			}
			_, err = st.RecordExpiries(ctx, r.now(), sealer.Seal)
			return err
		},
		Audit: func(ctx context.Context, entries []openrecall.AuditEntry) error {
			sealer, err := r.sealer(ctx)
			if err != nil {
				return err
			}
			_, err = st.AppendAudit(ctx, entries, sealer.Seal)
			return err
		},
		ReadTrail: func(ctx context.Context, tr usecase.TrailReader) error {
			return st.ReadTrail(ctx, memory.TrailReader(tr))
		},
		ReadTrailPrefix: func(ctx context.Context, before time.Time, tr usecase.TrailReader) error {
			return st.ReadTrailPrefix(ctx, before, memory.TrailReader(tr))
		},
		AnalysisLinks: st.AnalysisLinks,
		Archives:      st,
		Keys:          r.o.keys,
		Waiting:       st,
		Closures:      st,
		Retention:     r.o.retention,
		// A nil Fingerprinter stays nil: use cases that decide about no alert.
		Fingerprinter: r.o.fingerprinter,
	}
}

// Sink is the results' sink: each batch of results stored with its audit
// entries sealed, its cost points, what waits for a person and what was
// closed without one.
func (r *Root) Sink(ctx context.Context) (sink memory.Sink, err error) {
	sealer, err := r.sealer(ctx)
	if err != nil {
		return sink, err
	}
	return memory.Sink{Store: r.st, Seal: sealer.Seal, SealCosts: sealer.SealCosts, Waits: usecase.WaitingFor, Closes: usecase.ClosedBy, Continue: r.o.continueCurve,
		Notify: r.o.notify}, nil
}

// Pipeline is the workflow over the memory routing with router, in mode,
// storing its results in sink (nil: nothing is stored).
func (r *Root) Pipeline(router workflow.Router, mode openrecall.Mode, sink workflow.Sink) (*workflow.Workflow, error) {
	wc := workflow.Config{
		Fingerprinter:  r.o.fingerprinter,
		Memory:         r.st,
		Router:         router,
		Triage:         r.cfg.TriageConfig(),
		Mode:           mode,
		Batch:          r.o.batch,
		Sink:           sink,
		OrderedRouting: r.o.ordered,
		Grouping:       workflow.Grouping{Enabled: r.cfg.Grouping.Enabled && !r.o.noGrouping, Window: r.cfg.Grouping.Window},
		Exceptions:     r.st,
		Now:            r.now,
		Logger:         r.log,
	}
	if r.o.noExceptions {
		wc.Exceptions = nil
	}
	if r.o.shadow {
		wc.Guard = ShadowGuard
	}
	if r.o.groupScope {
		wc.Grouping.Store = memory.GroupScope{Store: r.st, Batch: r.o.batch}
	}
	if r.o.wire != nil {
		r.o.wire(&wc)
	}
	return workflow.New(wc)
}

// ShadowGuard is the product's guard that never lets the bypass happen: the
// proposal is still made and audited, and the alert goes to analysis.
func ShadowGuard(fp openrecall.Fingerprint, tr openrecall.TriageResult, cfg triage.Config) openrecall.GuardVerdict {
	v := triage.Guard(fp, tr, cfg)
	if v.Bypass {
		v.Bypass = false
		v.Reason = "shadow mode: the guard would bypass (" + v.Reason + "); analysed instead"
	}
	return v
}
