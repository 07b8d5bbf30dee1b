package workflow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// Grouping groups the firings of one alert under one analysis (DESIGN
	// §6a); the Router must then be a GroupRouter.
	Grouping Grouping
	// Exceptions holds the exceptions people approved (DESIGN §6b); nil
	// matches none. The Router must then be an ExceptionRouter.
	Exceptions ExceptionSource
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
	if _, ok := cfg.Router.(GroupRouter); cfg.Grouping.Enabled && !ok {
		return nil, errors.New("workflow: grouping needs a router that routes group members")
	}
	if _, ok := cfg.Router.(ExceptionRouter); cfg.Exceptions != nil && !ok {
		return nil, errors.New("workflow: exceptions need a router that routes exception matches")
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
	return analysisID(w.cfg.Batch, seq)
}

// analysisID is fmt.Sprintf("%s-%06d", batch, seq) without fmt: one
// allocation, as it runs once per alert.
func analysisID(batch string, seq int) string {
	if seq < 0 {
		return fmt.Sprintf("%s-%06d", batch, seq)
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(seq), 10)
	var b strings.Builder
	b.Grow(len(batch) + 1 + max(6, len(d)))
	b.WriteString(batch)
	b.WriteByte('-')
	for range 6 - len(d) {
		b.WriteByte('0')
	}
	b.Write(d)
	return b.String()
}

// Analyze runs one alert through the pipeline as record 0 of the batch.
// Its audit entries are attached unsealed; nothing is persisted.
func (w *Workflow) Analyze(ctx context.Context, a openrecall.Alert) openrecall.Result {
	return w.process(ctx, intake.Record{Alert: a}, 0, 0, w.singleState(ctx))
}

// AnalyzeRecord runs one intake record (an alert, or a rejected record) as
// record seq of the batch. Nothing is persisted.
func (w *Workflow) AnalyzeRecord(ctx context.Context, rec intake.Record, seq int) openrecall.Result {
	return w.process(ctx, rec, seq, seq, w.singleState(ctx))
}

// singleState is the run state of one record analysed on its own: the
// active exceptions read now (none, logged, when they cannot be read).
func (w *Workflow) singleState(ctx context.Context) runState {
	set, err := w.loadExceptions(ctx)
	if err != nil {
		w.log.Warn("exceptions unavailable; matching none", zap.Error(err))
	}
	return runState{exceptions: set}
}

// runState is what the records of one queue run share: the turns of
// ordered routing (nil without them) and the grouper (nil when grouping is
// off).
type runState struct {
	turn       *turnstile
	groups     *grouper
	exceptions *exceptionSet
}

// process runs one record, at position pos of its queue, as analysis seq.
// The turns of rs, when set, are waited on for pos and released in every
// path, so neither ordered routing nor grouping ever stalls.
func (w *Workflow) process(ctx context.Context, rec intake.Record, pos, seq int, rs runState) (out openrecall.Result) {
	start := w.now()
	res := openrecall.Result{
		AnalysisID: w.AnalysisID(seq),
		Batch:      w.cfg.Batch,
		Mode:       w.cfg.Mode,
	}
	routed, gated := false, false
	defer func() {
		if rs.turn != nil && !routed {
			rs.turn.wait(pos)
			rs.turn.done()
		}
		if rs.groups != nil && !gated {
			rs.groups.gate.wait(pos)
			rs.groups.gate.done()
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
		Reason:  "parsed " + a.Format + " record, alert id " + a.ID,
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
		intakeStep.Reason = a.Status + " notification for alert " + a.ID + ": recorded, not triaged"
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

	var as *assessment
	if rs.exceptions != nil && len(rs.exceptions.list) > 0 {
		// An exception a person approved comes before grouping and model
		// routing: an alert it closes opens no group (DESIGN §6b).
		if e, ok := rs.exceptions.match(a, id, fp); ok {
			as = w.assess(ctx, a, id, fp)
			res.Steps = []openrecall.RouteStep{intakeStep, fpStep}
			if rs.turn != nil {
				rs.turn.wait(pos)
			}
			res = w.excepted(res, fp, as, e)
			if rs.turn != nil {
				rs.turn.done()
				routed = true
			}
			return w.finish(res, start)
		}
	}
	if g := rs.groups; g != nil {
		g.gate.wait(pos)
		member, opened, assessed, at := w.group(ctx, g, rec, res.AnalysisID, id, fp)
		gated = true
		g.gate.done()
		as = assessed
		if member != nil {
			res.Steps = []openrecall.RouteStep{intakeStep, fpStep}
			// A member's step reads the budget in its routing turn, as a
			// sequential run would.
			if rs.turn != nil {
				rs.turn.wait(pos)
			}
			res = w.member(res, fp, member, assessed, at)
			if rs.turn != nil {
				rs.turn.done()
				routed = true
			}
			return w.finish(res, start)
		}
		if opened != nil {
			res.Group = &openrecall.GroupRef{ID: opened.id, Role: openrecall.GroupRoleHead, HeadAnalysisID: res.AnalysisID, HeadAlertID: a.ID, At: at}
			defer func() {
				opened.head = openrecall.HeadOf(out)
				close(opened.done)
			}()
		}
	}
	if as == nil {
		as = w.assess(ctx, a, id, fp)
	}
	res.Matches, res.Triage, res.Guard = as.matches, as.triage, as.verdict
	res.Proposal = propose(a, id, fp, as)

	if rs.turn != nil {
		rs.turn.wait(pos)
	}
	routeOut := w.cfg.Router.Route(ctx, routing.Input{Alert: a, Fingerprint: fp, Matches: as.matches, Triage: as.triage, Guard: as.verdict})
	if rs.turn != nil {
		rs.turn.done()
		routed = true
	}

	res.Steps = append([]openrecall.RouteStep{intakeStep, fpStep}, routeOut.Steps...)
	res.Decision = routeOut.Decision
	res.Bypassed = routeOut.Bypassed
	res.EscalatedWithoutAnalysis = routeOut.Unanalysed
	res.Analysis = routeOut.Analysis
	for _, st := range routeOut.Steps {
		if st.UsageAnomaly != "" {
			w.log.Warn("model usage anomaly: reported usage clamped",
				zap.String("alert", a.ID), zap.String("model", st.Model), zap.String("tier", string(st.Tier)),
				zap.Int("prompt_tokens", st.PromptTokens), zap.Int("completion_tokens", st.CompletionTokens),
				zap.String("why", st.UsageAnomaly))
		}
	}
	// Checked first: the fields (two strings built per alert) are made only
	// when Debug is on.
	if ce := w.log.Check(zap.DebugLevel, "analysed"); ce != nil {
		ce.Write(zap.String("alert", a.ID),
			zap.String("fingerprint", fp.String()),
			zap.String("identity", id.String()),
			zap.String("decision", string(res.Decision)),
			zap.Bool("bypassed", res.Bypassed))
	}
	return w.finish(res, start)
}

// assessment is what memory, triage and the guard say about an alert.
type assessment struct {
	matches []openrecall.Match
	triage  openrecall.TriageResult
	verdict openrecall.GuardVerdict
}

// assess recalls memory for an alert, triages it and asks the guard.
func (w *Workflow) assess(ctx context.Context, a openrecall.Alert, id openrecall.Identity, fp openrecall.Fingerprint) *assessment {
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
	tr := triage.Triage(fp, a.Severity, matches, w.cfg.Triage)
	if memoryNote != "" {
		tr.EscalationReason = memoryNote
	}
	guard := w.cfg.Guard
	if guard == nil {
		guard = triage.Guard
	}
	return &assessment{matches: matches, triage: tr, verdict: guard(fp, tr, w.cfg.Triage)}
}

// group assigns a triaged record to a group, in its turn (DESIGN §6a): the
// open group it joins as a member (its head's outcome known), or the group
// it opens as head, or neither (no identity). A firing that would join the
// group of a head memory bypassed runs the guard again on current memory
// first; when the bypass no longer holds it opens a group of its own, and
// the assessment made is returned for its triage. A storage error leaves
// the record ungrouped: triaged on its own.
func (w *Workflow) group(ctx context.Context, g *grouper, rec intake.Record, analysisID string, id openrecall.Identity, fp openrecall.Fingerprint) (member, opened *openGroup, as *assessment, t time.Time) {
	a := rec.Alert
	key, ok := openrecall.GroupKeyOf(a, id, fp)
	if !ok {
		return nil, nil, nil, t
	}
	t = arrival(rec, w.now)
	if !a.Timestamp.IsZero() {
		// Only a sender's own time moves the run's newest firing: an
		// alert measured by its arrival (now) would put every group of a
		// replayed history a day behind and expire it.
		g.saw(t)
	}
	og, isHead, err := g.prior(ctx, analysisID)
	if err == nil && og == nil && !isHead {
		if err = g.refresh(ctx, key); err == nil {
			g.forgetOwn(key, analysisID)
			og, err = g.joinable(ctx, key, a.Severity, t)
		}
		if err == nil && og == nil {
			// Opened under the lock of its key, in the store other
			// processes share, unless one of them opened its group
			// meanwhile (DESIGN §13).
			og, err = g.claim(ctx, key, analysisID, a.Severity, t, true)
		}
	}
	if err != nil {
		w.log.Warn("grouping failed; triaged on its own", zap.String("alert", a.ID), zap.Error(err))
		return nil, nil, nil, t
	}
	if og != nil {
		if !g.await(ctx, og) {
			if ctx.Err() != nil {
				return nil, nil, nil, t
			}
			w.log.Warn("the head of its group is not known; triaged on its own", zap.String("alert", a.ID), zap.String("group", og.id))
			return nil, nil, nil, t
		}
		if !og.head.Bypassed {
			og.last = later(og.last, t)
			return og, nil, nil, t
		}
		as = w.assess(ctx, a, id, fp)
		if as.verdict.Bypass && sameSupport(og.head, as.triage) {
			og.last = later(og.last, t)
			return og, nil, as, t
		}
		if _, err := g.claim(ctx, key, analysisID, a.Severity, t, false); err != nil {
			w.log.Warn("group not shared: its claim failed", zap.String("alert", a.ID), zap.Error(err))
		}
	}
	opened = &openGroup{id: openrecall.GroupID(analysisID), key: key, headSeverity: a.Severity, last: t, done: make(chan struct{})}
	g.add(opened)
	return nil, opened, as, t
}

// member completes the result of a group member: one grouped route step,
// the head's decision and escalation (DESIGN §6a). as is the guard run
// again for a member of a bypassed head, else nil.
func (w *Workflow) member(res openrecall.Result, fp openrecall.Fingerprint, og *openGroup, as *assessment, at time.Time) openrecall.Result {
	in := routing.Input{Alert: res.Alert, Fingerprint: fp}
	why := ""
	if as != nil {
		in.Matches, in.Triage, in.Guard = as.matches, as.triage, as.verdict
		res.Matches, res.Triage, res.Guard = as.matches, as.triage, as.verdict
		why = "; its head was bypassed by memory and the guard, run again on current memory, still passes"
	}
	out := w.cfg.Router.(GroupRouter).Grouped(in, og.head, why)
	res.Steps = append(res.Steps, out.Steps...)
	res.Decision = out.Decision
	res.EscalatedWithoutAnalysis = out.Unanalysed
	res.Group = &openrecall.GroupRef{ID: og.id, Role: openrecall.GroupRoleMember, HeadAnalysisID: og.head.AnalysisID, HeadAlertID: og.head.AlertID, At: at}
	w.log.Debug("grouped", zap.String("alert", res.Alert.ID), zap.String("group", og.id), zap.String("decision", string(res.Decision)))
	return res
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
