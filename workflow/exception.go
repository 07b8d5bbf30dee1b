package workflow

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

// ExceptionSource holds the exceptions people approved (DESIGN §6b).
// memory.Store satisfies it.
type ExceptionSource interface {
	// Exceptions returns every exception, oldest first: active, expired
	// and revoked (Exception.Active tells them apart).
	Exceptions(ctx context.Context) ([]openrecall.Exception, error)
}

// ExceptionRouter is the part of the router an alert that matched an
// exception takes: the exception route step. routing.Router satisfies it.
type ExceptionRouter interface {
	Excepted(in routing.Input, e openrecall.Exception) routing.Output
}

// exceptionSet is the active exceptions of one run, read once at its start
// so that every worker sees the same set (--workers N stays equivalent to a
// sequential run), and the time they were read at, which decides expiry.
type exceptionSet struct {
	list []openrecall.Exception
	at   time.Time
}

// loadExceptions reads the active exceptions for a run; nil when the
// workflow has no exception source.
func (w *Workflow) loadExceptions(ctx context.Context) (*exceptionSet, error) {
	if w.cfg.Exceptions == nil {
		return nil, nil
	}
	at := w.now()
	all, err := w.cfg.Exceptions.Exceptions(ctx)
	if err != nil {
		return nil, fmt.Errorf("exceptions: %w", err)
	}
	set := &exceptionSet{at: at}
	for _, e := range all {
		if e.Active(at) {
			set.list = append(set.list, e)
		}
	}
	return set, nil
}

// match returns the first exception of the set, oldest first, that covers
// alert a of identity id and Alert DNA fp.
func (s *exceptionSet) match(a openrecall.Alert, id openrecall.Identity, fp openrecall.Fingerprint) (openrecall.Exception, bool) {
	if s == nil {
		return openrecall.Exception{}, false
	}
	for _, e := range s.list {
		if e.Matches(a, id, fp, s.at) {
			return e, true
		}
	}
	return openrecall.Exception{}, false
}

// excepted completes the result of an alert that matched exception e: one
// exception route step, the exception's decision, no model call.
func (w *Workflow) excepted(res openrecall.Result, fp openrecall.Fingerprint, as *assessment, e openrecall.Exception) openrecall.Result {
	res.Matches, res.Triage, res.Guard = as.matches, as.triage, as.verdict
	in := routing.Input{Alert: res.Alert, Fingerprint: fp, Matches: as.matches, Triage: as.triage, Guard: as.verdict}
	out := w.cfg.Router.(ExceptionRouter).Excepted(in, e)
	res.Steps = append(res.Steps, out.Steps...)
	res.Decision = out.Decision
	res.Exception = &openrecall.ExceptionRef{ID: e.ID, Analyst: e.Analyst, ExpiresAt: e.ExpiresAt}
	w.log.Debug("excepted", zap.String("alert", res.Alert.ID), zap.String("exception", e.ID), zap.String("decision", string(res.Decision)))
	return res
}

// propose returns the exception memory proposes for an alert the guard
// refused only by clause (d), or nil (openrecall.Propose).
func propose(a openrecall.Alert, id openrecall.Identity, fp openrecall.Fingerprint, as *assessment) *openrecall.Proposal {
	if !openrecall.ProposalEligible(fp, as.triage, as.verdict) {
		return nil
	}
	var supporting []openrecall.Incident
	for _, m := range as.matches {
		for _, sid := range as.triage.Supporting {
			if m.Incident.ID == sid && !m.Related {
				supporting = append(supporting, m.Incident)
				break
			}
		}
	}
	p := openrecall.Propose(a, id, fp, as.triage, as.verdict, supporting)
	if p != nil {
		p.CreatedAt = a.Timestamp
	}
	return p
}
