package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
)

// Fingerprinter reduces an alert to its Alert DNA and its identity.
// fingerprint.Extractor satisfies it.
type Fingerprinter interface {
	Extract(a openrecall.Alert) openrecall.Fingerprint
	Identify(a openrecall.Alert) openrecall.Identity
}

// Recaller finds what analysts decided before on the same alert (identity)
// and on similar fingerprints. memory.Store satisfies it.
type Recaller interface {
	Recall(ctx context.Context, id openrecall.Identity, fp openrecall.Fingerprint, limit int) ([]openrecall.Match, error)
}

// Router routes one triaged alert to the memory bypass or the model cascade.
// routing.Router satisfies it.
type Router interface {
	Route(ctx context.Context, in routing.Input) routing.Output
}

// Sink persists the audit trail and the cost curve of a run, in input order.
// Persist receives one result at a time; it returns the audit entries as
// stored (sealed into the hash chain), which replace the result's unsealed
// ones. point is nil for results that are not on the cost curve (rejected
// and resolved records).
type Sink interface {
	Persist(ctx context.Context, r openrecall.Result, point *openrecall.CostPoint) ([]openrecall.AuditEntry, error)
}

// Config wires a Workflow. Fingerprinter, Memory and Router are required.
type Config struct {
	Fingerprinter Fingerprinter
	Memory        Recaller
	Router        Router
	Triage        triage.Config
	Mode          openrecall.Mode
	// Batch names the run; analysis ids are Batch-NNNNNN.
	Batch string
	// Sink persists audit entries and cost points; nil keeps them in results
	// only.
	Sink Sink
	// Guard rules on the memory bypass; nil means triage.Guard, the
	// product's rule. Only tests that prove an unsafe guard gets caught set
	// it.
	Guard func(fp openrecall.Fingerprint, tr openrecall.TriageResult, cfg triage.Config) openrecall.GuardVerdict
	// OrderedRouting makes routing take turns in input order. Set it when a
	// run budget is in force, so that a concurrent run spends the budget as a
	// sequential run does.
	OrderedRouting bool
	Now            func() time.Time
	Logger         *zap.Logger
}

// Workflow runs alerts through the pipeline. It is safe for concurrent use.
type Workflow struct {
	cfg Config
	log *zap.Logger
	now func() time.Time
}

// New checks cfg and returns a Workflow.
func New(cfg Config) (*Workflow, error) {
	switch {
	case cfg.Fingerprinter == nil:
		return nil, errors.New("workflow: a fingerprinter is required")
	case cfg.Memory == nil:
		return nil, errors.New("workflow: a memory is required")
	case cfg.Router == nil:
		return nil, errors.New("workflow: a router is required")
	}
	if err := cfg.Triage.Validate(); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	w := &Workflow{cfg: cfg, log: cfg.Logger, now: cfg.Now}
	if w.log == nil {
		w.log = zap.NewNop()
	}
	w.log = w.log.Named("workflow")
	if w.now == nil {
		w.now = func() time.Time { return time.Now().UTC() }
	}
	return w, nil
}

// CacheReporter is satisfied by a Fingerprinter or Recaller that keeps a
// cache and can say how it did (fingerprint.Extractor does).
type CacheReporter interface {
	CacheStats() string
}

// CacheStats describes the caches of the workflow's fingerprinter and memory,
// such as "fingerprint 19355/20000 hits (96.8%)", joined by "; ", or "no
// caches" when neither keeps one.
func (w *Workflow) CacheStats() string {
	var parts []string
	for _, c := range []any{w.cfg.Fingerprinter, w.cfg.Memory} {
		if r, ok := c.(CacheReporter); ok {
			parts = append(parts, r.CacheStats())
		}
	}
	if len(parts) == 0 {
		return "no caches"
	}
	return strings.Join(parts, "; ")
}

// Mode returns the mode the workflow reports in every result.
func (w *Workflow) Mode() openrecall.Mode { return w.cfg.Mode }

// AnalysisID returns the analysis id of the record at 0-based sequence seq.
func (w *Workflow) AnalysisID(seq int) string {
	return fmt.Sprintf("%s-%06d", w.cfg.Batch, seq)
}

// Analyze runs one alert through the pipeline as record 0 of the batch.
// Its audit entries are attached unsealed; nothing is persisted.
func (w *Workflow) Analyze(ctx context.Context, a openrecall.Alert) openrecall.Result {
	return w.process(ctx, intake.Record{Alert: a}, 0, 0, nil)
}

// AnalyzeRecord runs one intake record (an alert, or a rejected record) as
// record seq of the batch. Nothing is persisted.
func (w *Workflow) AnalyzeRecord(ctx context.Context, rec intake.Record, seq int) openrecall.Result {
	return w.process(ctx, rec, seq, seq, nil)
}

// process runs one record, at position pos of its queue, as analysis seq.
// turn, when not nil, is waited on for pos before routing and released
// after it, in every path, so ordered routing never stalls.
func (w *Workflow) process(ctx context.Context, rec intake.Record, pos, seq int, turn *turnstile) openrecall.Result {
	start := w.now()
	res := openrecall.Result{
		AnalysisID: w.AnalysisID(seq),
		Batch:      w.cfg.Batch,
		Mode:       w.cfg.Mode,
	}
	routed := false
	defer func() {
		if turn != nil && !routed {
			turn.wait(pos)
			turn.done()
		}
	}()

	if rec.Err != nil {
		res.Position = rec.Err.Position
		res.Outcome = openrecall.ResultRejected
		res.Error = rec.Err.Reason
		res.Steps = []openrecall.RouteStep{{
			Step:    openrecall.StepIntake,
			Reason:  "rejected at " + rec.Err.Position.String() + ": " + rec.Err.Reason,
			Outcome: openrecall.OutcomeRejected,
			Latency: w.now().Sub(start),
		}}
		return w.finish(res, start)
	}

	a := rec.Alert
	res.Position = a.Position
	res.Alert = a
	intakeStep := openrecall.RouteStep{
		Step:    openrecall.StepIntake,
		Reason:  fmt.Sprintf("parsed %s record, alert id %s", a.Format, a.ID),
		Outcome: openrecall.OutcomeOK,
		Latency: w.now().Sub(start),
	}

	fpStart := w.now()
	fp := w.cfg.Fingerprinter.Extract(a)
	res.Fingerprint = fp
	res.FingerprintID = fp.ID()
	res.Identity = w.cfg.Fingerprinter.Identify(a)

	if !openrecall.Triaged(a.Status) {
		res.Outcome = openrecall.ResultResolved
		intakeStep.Outcome = openrecall.OutcomeRecorded
		intakeStep.Reason = fmt.Sprintf("%s notification for alert %s: recorded, not triaged", a.Status, a.ID)
		res.Steps = []openrecall.RouteStep{intakeStep}
		return w.finish(res, start)
	}

	res.Outcome = openrecall.ResultTriaged
	fpStep := openrecall.RouteStep{
		Step:    openrecall.StepFingerprint,
		Reason:  "deterministic rules: " + fp.String(),
		Outcome: openrecall.OutcomeOK,
		Latency: w.now().Sub(fpStart),
	}

	id := res.Identity
	var matches []openrecall.Match
	var err error
	memoryNote := ""
	if Recallable(id, fp) {
		matches, err = w.cfg.Memory.Recall(ctx, id, fp, w.cfg.Triage.RecallLimit)
	}
	if !Classified(id) {
		memoryNote = "unclassified alert: it has no identity (no alertname, class or title), so memory cannot vouch for it"
	}
	if err != nil {
		// Memory that cannot answer is weak memory: the alert goes to the
		// strong model, never to the bypass.
		w.log.Warn("recall failed; routing without memory", zap.String("alert", a.ID), zap.Error(err))
		memoryNote = "memory unavailable: " + err.Error()
		matches = nil
	}
	res.Matches = matches
	tr := triage.Triage(fp, a.Severity, matches, w.cfg.Triage)
	if memoryNote != "" {
		tr.EscalationReason = memoryNote
	}
	guard := w.cfg.Guard
	if guard == nil {
		guard = triage.Guard
	}
	verdict := guard(fp, tr, w.cfg.Triage)
	res.Triage = tr
	res.Guard = verdict

	if turn != nil {
		turn.wait(pos)
	}
	out := w.cfg.Router.Route(ctx, routing.Input{Alert: a, Fingerprint: fp, Matches: matches, Triage: tr, Guard: verdict})
	if turn != nil {
		turn.done()
		routed = true
	}

	res.Steps = append([]openrecall.RouteStep{intakeStep, fpStep}, out.Steps...)
	res.Decision = out.Decision
	res.Bypassed = out.Bypassed
	res.EscalatedWithoutAnalysis = out.Unanalysed
	res.Analysis = out.Analysis
	w.log.Debug("analysed",
		zap.String("alert", a.ID),
		zap.String("fingerprint", fp.String()),
		zap.String("identity", id.String()),
		zap.String("decision", string(res.Decision)),
		zap.Bool("bypassed", res.Bypassed))
	return w.finish(res, start)
}

// finish totals cost and baseline over the steps and attaches one unsealed
// audit entry per step.
func (w *Workflow) finish(res openrecall.Result, start time.Time) openrecall.Result {
	for _, s := range res.Steps {
		res.Cost += s.Cost
		res.Baseline += s.Baseline
	}
	res.Latency = w.now().Sub(start)
	res.Audit = audit.Entries(res, w.now())
	return res
}

// Classified reports whether memory may vouch for an alert of this
// identity: only a memory of the same alert votes for a bypass (DESIGN §5),
// so an alert without an identity is unclassified and goes to the strong
// model, whatever its Alert DNA.
func Classified(id openrecall.Identity) bool { return !id.IsZero() }

// Recallable reports whether memory is asked about an alert: when it has an
// identity (even with an empty Alert DNA), or when its DNA names an error
// class or a service role, for related matches whose notes and dead ends
// help the analyst and the model. An alert with neither gets no matches: two
// unrelated unknown alerts would share every empty field.
func Recallable(id openrecall.Identity, fp openrecall.Fingerprint) bool {
	return Classified(id) || fp.ErrorClass != "" || fp.ServiceRole != ""
}
