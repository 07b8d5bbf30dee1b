package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
)

// Analyzer runs one intake record through the pipeline, after the records
// before it, and stores its result as a run does. workflow.Session
// satisfies it. An error (the result could not be stored) ends the replay.
type Analyzer interface {
	AnalyzeRecord(ctx context.Context, rec intake.Record, seq int) (openrecall.Result, error)
}

// GroupDecider records a person's decision of an alert group as 'openrecall
// retain --group' does (DESIGN §6a): the use case, not a copy of it — one
// memory keyed by the head, the decision on every firing, one audit entry
// per firing, the group closed in storage. *usecase.App satisfies it.
type GroupDecider interface {
	DecideGroup(ctx context.Context, id string, d usecase.Decision) (usecase.DecidedGroup, error)
}

// GroupSyncer is an Analyzer that keeps alert groups between records
// (workflow.Session) and takes their closure from storage: once the
// analyst has decided the groups ids, later firings of their alerts start
// new groups.
type GroupSyncer interface {
	SyncGroups(ctx context.Context, ids ...string) error
}

// DefaultAnalystLag is how long, in the alerts' own time, the simulated
// analyst takes to decide a group after its head arrived: the firings
// within it join the group and take its head's outcome.
const DefaultAnalystLag = 30 * time.Minute

// Retainer records an analyst decision as 'openrecall retain' does: the
// use case, not a copy of it. *usecase.App satisfies it.
type Retainer interface {
	Retain(ctx context.Context, req usecase.RetainRequest) ([]usecase.Retained, error)
}

// Identifier gives an alert its identity (rule, service), as the pipeline
// does. fingerprint.Extractor satisfies it.
type Identifier interface {
	Identify(a openrecall.Alert) openrecall.Identity
}

// Approver approves the exception memory proposed in a result, as a
// person does with 'openrecall exception approve' (DESIGN §6b): it stores
// the proposal as a run does and approves it through the application
// layer (usecase.App.ApproveProposal), audited, and returns the exception.
type Approver interface {
	Approve(ctx context.Context, res openrecall.Result, analyst string) (openrecall.Exception, error)
}

// ExceptionReloader is an Analyzer that reads the active exceptions again
// (workflow.Session), as serve does at the start of each batch: the alerts
// after an approval are matched against it.
type ExceptionReloader interface {
	ReloadExceptions(ctx context.Context) error
}

// Analyst is the name the simulated analyst retains its decisions under.
const Analyst = "eval-analyst"

// Config configures a Replay.
type Config struct {
	// Analyzer and Memory are required. Memory should start empty: the
	// replay measures how memory learns from the corpus.
	Analyzer Analyzer
	Memory   Retainer
	// Groups decides the alert groups the Analyzer forms, over the storage
	// the Analyzer stores them in; required when it forms any.
	Groups GroupDecider
	// Identifier is required: the analyst's decisions are retained with the
	// alert's identity and severity, as 'retain' does.
	Identifier Identifier
	// Mode is reported as is.
	Mode openrecall.Mode
	// LearnAfter is how many analyst decisions on a benign family memory
	// needs before it can vouch for the family; 0 means
	// DecisionsToVouch(triage.DefaultBypassConfidence), 5.
	LearnAfter int
	// AnalystLag is how long the analyst takes to decide a group (on the
	// alerts' time); 0 means DefaultAnalystLag.
	AnalystLag time.Duration
	// Exceptions, when set, is where the simulated analyst approves the
	// exceptions memory proposes for alerts whose truth is benign; nil
	// approves none. The Analyzer should be an ExceptionReloader, or an
	// approval changes nothing for the alerts after it.
	Exceptions Approver
	// Now is the clock throughput is measured with; nil means time.Now.
	Now func() time.Time
	// Route is the route tree the report's pages are counted with (a
	// configuration's notify route); nil means notify.DefaultPagingRoute.
	Route *notify.Route
}

// pendingGroup is a group the analyst has yet to decide, as its head's
// truth says (made real by any real firing it took meanwhile).
type pendingGroup struct {
	id       string
	at       time.Time
	decision usecase.Decision
	family   string
	benign   bool
}

// DecisionsToVouch returns the fewest unanimous strong matches n whose
// triage confidence (n+1)/(n+2) reaches bypassConfidence: 5 for the default
// 0.85 (6/7 ≈ 0.857). A family's benign repeats count towards bypass recall
// from the one after its first n analyst decisions. A threshold of 1 or more
// can never be reached; it returns 0 then, and no repeat counts.
func DecisionsToVouch(bypassConfidence float64) int {
	if bypassConfidence >= 1 {
		return 0
	}
	for n := 1; ; n++ {
		if float64(n+1)/float64(n+2) >= bypassConfidence {
			return n
		}
	}
}

// Replay runs the corpus in order through cfg.Analyzer, one alert at a time,
// and after each triaged alert that was not bypassed retains its ground-truth
// decision into cfg.Memory, as an analyst would. A group is decided once,
// through cfg.Groups (usecase.App.DecideGroup), AnalystLag after its head
// arrived (its members took its outcome in the meantime and are never
// retained on their own: a storm is one vote), real when any firing the
// group took by then was; the decision closes the group in storage, and an
// Analyzer that is a GroupSyncer takes that closure from it before the next
// alert. A proposed exception is approved (with
// cfg.Exceptions) when the alert's truth is benign and declined when it is
// real or a security case; alerts an exception closed are never retained,
// as bypassed ones are not. It returns the report, or an
// error when truth and alerts do not line up (wrapping ErrMismatch), when a
// result cannot be stored, a retain or a group decision fails, or when ctx
// is done.
func Replay(ctx context.Context, c Corpus, cfg Config) (Report, error) {
	if cfg.Analyzer == nil || cfg.Memory == nil || cfg.Identifier == nil {
		return Report{}, errors.New("eval: an analyzer, a memory and an identifier are required")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	learnAfter := cfg.LearnAfter
	if learnAfter <= 0 {
		learnAfter = DecisionsToVouch(triage.DefaultBypassConfidence)
	}
	acc := newAccumulator(c.Name, cfg.Mode, learnAfter, cfg.Route)
	rd := intake.NewReader(bytes.NewReader(c.Alerts), intake.Options{Source: AlertsFile})
	// decided counts the analyst's retained decisions per benign family.
	decided := map[string]int{}
	lag := cfg.AnalystLag
	if lag <= 0 {
		lag = DefaultAnalystLag
	}
	syncer, _ := cfg.Analyzer.(GroupSyncer)
	reloader, _ := cfg.Analyzer.(ExceptionReloader)
	approved := map[string]bool{}
	var pending []pendingGroup
	// decide records the analyst's decision of the pending groups whose
	// lag has passed at now (all of them when now is zero) through the
	// group use case, which closes them in storage; the analyzer then
	// takes their closure from storage, as serve does when a person
	// decides a group between batches.
	decide := func(now time.Time) error {
		var ids []string
		for len(pending) > 0 && (now.IsZero() || !now.Before(pending[0].at.Add(lag))) {
			p := pending[0]
			pending = pending[1:]
			if _, err := cfg.Groups.DecideGroup(ctx, p.id, p.decision); err != nil {
				return fmt.Errorf("eval: the analyst's decision of group %s: %w", p.id, err)
			}
			acc.r.Retained++
			if p.benign {
				decided[p.family]++
			}
			ids = append(ids, p.id)
		}
		if len(ids) > 0 && syncer != nil {
			if err := syncer.SyncGroups(ctx, ids...); err != nil {
				return fmt.Errorf("eval: take the closure of the decided groups: %w", err)
			}
		}
		return nil
	}
	next := 0
	start := now()
	var analysing time.Duration
	for seq := 0; ; seq++ {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Report{}, fmt.Errorf("eval: read alerts: %w", err)
		}
		if rec.Err != nil {
			acc.reject(rec.Err)
			// A truth line written for a record intake refuses is skipped
			// with it, so one bad line does not shift every later one.
			if next < len(c.Truth) && samePosition(c.Truth[next].Position(), rec.Err.Position) {
				next++
			}
			continue
		}
		a := rec.Alert
		if next >= len(c.Truth) {
			return Report{}, fmt.Errorf("eval: %s holds an alert at %s but %s has only %d lines: %w",
				AlertsFile, a.Position, TruthFile, len(c.Truth), ErrMismatch)
		}
		t := c.Truth[next]
		if !samePosition(t.Position(), a.Position) {
			return Report{}, fmt.Errorf("eval: %s entry %d is for %s, but the next alert of %s is at %s: %w",
				TruthFile, next+1, t.Position(), AlertsFile, a.Position, ErrMismatch)
		}
		if t.ID != "" && t.ID != a.ID {
			return Report{}, fmt.Errorf("eval: %s entry %d names alert %q, but the alert at %s has id %q: %w",
				TruthFile, next+1, t.ID, a.Position, a.ID, ErrMismatch)
		}
		next++

		if err := decide(a.Timestamp); err != nil {
			return Report{}, err
		}
		eligible := t.Kind == KindBenignRepeat && learnAfter > 0 && decided[t.Family] >= learnAfter
		began := now()
		res, err := cfg.Analyzer.AnalyzeRecord(ctx, rec, seq)
		analysing += now().Sub(began)
		if err != nil {
			return Report{}, fmt.Errorf("eval: %s: %w", a.Position, err)
		}
		if res.Outcome != openrecall.ResultTriaged {
			acc.untriaged(res)
			continue
		}
		acc.add(t, res, eligible)
		if err := review(ctx, cfg, reloader, approved, t, res, &acc.r.Exceptions); err != nil {
			return Report{}, fmt.Errorf("eval: %s: %w", a.Position, err)
		}
		if res.Grouped() {
			// The analyst decides the group once, having seen its
			// firings: one of them real makes the storm real.
			for i := range pending {
				if d := &pending[i].decision; pending[i].id == res.Group.ID && t.Decision == openrecall.DecisionReal && d.Decision != openrecall.DecisionReal {
					d.Decision = openrecall.DecisionReal
					d.Note = "storm of " + t.Family + ": one of its firings was a real incident (" + a.ID + ")"
					pending[i].benign = false
				}
			}
			continue
		}
		if res.Bypassed || res.Excepted() {
			continue
		}
		note := t.Note
		if note == "" {
			note = "family " + t.Family + ": " + string(t.Decision)
		}
		d := usecase.Decision{Decision: t.Decision, Note: note, DeadEnds: t.DeadEnds, Analyst: Analyst}
		if res.Group != nil {
			// The head of a group: the analyst decides the group later,
			// as 'openrecall retain --group' does.
			if cfg.Groups == nil {
				return Report{}, fmt.Errorf("eval: %s opened alert group %s, but no group decider is configured", a.Position, res.Group.ID)
			}
			at := a.Timestamp
			if at.IsZero() {
				at = time.Time{}.Add(1) // no time of its own: decided at the next alert
			}
			pending = append(pending, pendingGroup{id: res.Group.ID, at: at, decision: d, family: t.Family, benign: t.Kind == KindBenignRepeat})
			continue
		}
		// As 'openrecall retain' decides about an alert: the use case
		// makes the memory (fingerprint, identity, severity and the entity
		// fields an exception proposal compares; DESIGN §6b).
		req := usecase.RetainRequest{Decision: d, Subject: usecase.Subject{Alerts: []openrecall.Alert{a}}}
		if _, err := cfg.Memory.Retain(ctx, req); err != nil {
			return Report{}, fmt.Errorf("eval: retain the analyst decision on %s: %w", a.Position, err)
		}
		acc.r.Retained++
		if t.Kind == KindBenignRepeat {
			decided[t.Family]++
		}
	}
	if err := decide(time.Time{}); err != nil {
		return Report{}, err
	}
	if next < len(c.Truth) {
		return Report{}, fmt.Errorf("eval: %s has %d lines but %s holds only %d alerts; entry %d (%s) has no alert: %w",
			TruthFile, len(c.Truth), AlertsFile, next, next+1, c.Truth[next].Position(), ErrMismatch)
	}
	return acc.report(now().Sub(start), analysing), nil
}

// review is the simulated analyst reading the exception a result proposes:
// approved when the alert's truth is benign (a proposal approved before is
// not approved again), after which the analyzer reads the active
// exceptions again; declined when the truth is real or a security case.
func review(ctx context.Context, cfg Config, reloader ExceptionReloader, approved map[string]bool, t Truth, res openrecall.Result, c *ExceptionCheck) error {
	p := res.Proposal
	if p == nil {
		return nil
	}
	c.Proposals++
	if t.Decision == openrecall.DecisionReal || t.Kind.Security() {
		c.Declined++
		return nil
	}
	if cfg.Exceptions == nil || approved[p.ID] {
		return nil
	}
	if _, err := cfg.Exceptions.Approve(ctx, res, Analyst); err != nil {
		return fmt.Errorf("approve proposal %s: %w", p.ID, err)
	}
	approved[p.ID] = true
	c.Approved++
	if reloader != nil {
		if err := reloader.ReloadExceptions(ctx); err != nil {
			return fmt.Errorf("read the exceptions after approving %s: %w", p.ID, err)
		}
	}
	return nil
}

func samePosition(a, b openrecall.Position) bool {
	return a.Line == b.Line && a.HasIndex == b.HasIndex && (!a.HasIndex || a.Index == b.Index)
}
