package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/openrecall/openrecall"
)

// Decision is what an analyst decided, before it is about anything.
type Decision struct {
	Decision      openrecall.Decision
	Note          string
	DeadEnds      []string
	Analyst       string
	ImpactMinutes int
	// AlertID names the source alert; empty takes each alert's own id.
	AlertID string
	// ExpiresAt, when not zero, is when the memory stops voting.
	ExpiresAt time.Time
	// Origin names where the decision was taken when it was not the
	// cockpit, the CLI or the API ("slack"): the audit entries say it
	// ("alice decided real from slack").
	Origin string
}

// Subject is what a decision is about: exactly one of some alerts (each
// one retained), an analysis of the server, or a canonical fingerprint
// (with the identity and severity of its alert, when known).
type Subject struct {
	Alerts     []openrecall.Alert
	AnalysisID string
	// Fingerprint, when not nil, is the canonical fingerprint.
	Fingerprint *openrecall.Fingerprint
	Identity    openrecall.Identity
	Severity    openrecall.Severity
}

// RetainRequest asks to retain a decision about a subject.
type RetainRequest struct {
	Decision Decision
	Subject  Subject
	// Supersedes, when not empty, is the id of the memory the decision
	// replaces: it is taken back (audited) and this one stored in its
	// place. The subject must then be one alert, analysis or fingerprint.
	Supersedes string
	// IdentityHint says, in the warning of a memory without identity, how
	// to give one (the adapter knows its own flags and fields).
	IdentityHint string
}

// Retained is one retain's outcome, as `retain -o json` prints it and
// POST /api/v1/retain answers it.
type Retained struct {
	// Created is false for a decision memory already held.
	Created  bool                `json:"created"`
	Incident openrecall.Incident `json:"incident"`
	// Superseded is the memory this one replaced, taken back.
	Superseded *openrecall.Incident `json:"superseded,omitempty"`
	// Warning says why the memory will never vote (no identity).
	Warning string `json:"warning,omitempty"`
	// Group is the alert group the decision closed, when it was about a
	// firing of one (DESIGN §6a).
	Group *openrecall.Group `json:"group,omitempty"`
}

// Incidents returns the memories a decision about subject would store,
// one per alert: each carries its alert's fingerprint, identity (only
// memories of the same identity vote for a bypass), severity and id. An
// analysis that does not exist is an error wrapping openrecall.ErrNotFound,
// one of a rejected record (it has no alert) one wrapping
// openrecall.ErrInvalid.
func (a *App) Incidents(ctx context.Context, d Decision, s Subject) ([]openrecall.Incident, error) {
	given := 0
	for _, set := range []bool{len(s.Alerts) > 0, s.AnalysisID != "", s.Fingerprint != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, fmt.Errorf("a decision is about alerts, an analysis or a fingerprint, exactly one: %w", openrecall.ErrInvalid)
	}
	base := openrecall.Incident{
		Decision: d.Decision, Note: d.Note, DeadEnds: d.DeadEnds, Analyst: d.Analyst,
		ImpactMinutes: d.ImpactMinutes, SourceAlertID: d.AlertID, ExpiresAt: d.ExpiresAt,
	}
	switch {
	case s.Fingerprint != nil:
		inc := base
		inc.Fingerprint, inc.Identity, inc.Severity = *s.Fingerprint, s.Identity, s.Severity
		return []openrecall.Incident{inc}, nil
	case s.AnalysisID != "":
		sv, err := a.Store.Served(ctx, s.AnalysisID)
		if (errors.Is(err, openrecall.ErrNotFound) || err == nil && sv.Pruned) && a.Waiting != nil {
			// An analysis of an analyze run is not in the server's
			// inbox, and a pruned one no longer holds its alert; the
			// record of what waited holds it.
			if w, werr := a.Waiting.WaitingFor(ctx, s.AnalysisID); werr == nil {
				return []openrecall.Incident{a.about(base, w.Result.Alert)}, nil
			}
		}
		if err != nil {
			return nil, err
		}
		if sv.Pruned {
			return nil, &openrecall.PrunedError{AnalysisID: s.AnalysisID, PrunedAt: sv.PrunedAt, Retention: a.Retention}
		}
		if sv.Rejection != "" {
			return nil, fmt.Errorf("analysis %q is of a rejected record (%s): %w", s.AnalysisID, sv.Rejection, openrecall.ErrInvalid)
		}
		return []openrecall.Incident{a.about(base, sv.Alert)}, nil
	}
	incs := make([]openrecall.Incident, len(s.Alerts))
	for i, alert := range s.Alerts {
		incs[i] = a.about(base, alert)
	}
	return incs, nil
}

// about is base about alert.
func (a *App) about(base openrecall.Incident, alert openrecall.Alert) openrecall.Incident {
	inc := base
	inc.Fingerprint = a.Fingerprinter.Extract(alert)
	inc.Identity = a.Fingerprinter.Identify(alert)
	inc.Severity = alert.Severity
	if len(alert.Entities) > 0 {
		inc.Entities = maps.Clone(alert.Entities)
	}
	if inc.SourceAlertID == "" {
		inc.SourceAlertID = alert.ID
	}
	return inc
}

// Retain stores the decision about each alert of the subject (or about its
// analysis or fingerprint), or supersedes a memory with it, and returns one
// outcome per memory, in order. Retaining a decision memory already holds
// stores nothing new (Created is false).
func (a *App) Retain(ctx context.Context, req RetainRequest) ([]Retained, error) {
	if !req.Decision.Decision.Retainable() {
		return nil, fmt.Errorf("decision %q: want %s: %w", req.Decision.Decision, Decisions(), openrecall.ErrInvalid)
	}
	if id := req.Subject.AnalysisID; id != "" && req.Supersedes == "" {
		// A decision about a firing of an open group decides the group:
		// one memory for the storm. Once decided, a decision about one of
		// its firings is about that firing alone.
		g, ok, err := a.GroupOfAnalysis(ctx, id)
		if err != nil {
			return nil, err
		}
		if ok && !g.Decided {
			dg, err := a.DecideGroup(ctx, g.ID, req.Decision)
			if err != nil {
				return nil, err
			}
			return []Retained{{Created: dg.Created, Incident: dg.Incident, Group: &dg.Group}}, nil
		}
	}
	if err := a.RecordExpiries(ctx); err != nil {
		return nil, err
	}
	incs, err := a.Incidents(ctx, req.Decision, req.Subject)
	if err != nil {
		return nil, err
	}
	if req.Supersedes != "" && len(incs) != 1 {
		return nil, fmt.Errorf("a decision supersedes one memory: it is about %d alerts: %w", len(incs), openrecall.ErrInvalid)
	}
	out := make([]Retained, 0, len(incs))
	for _, inc := range incs {
		var r Retained
		if req.Supersedes != "" {
			if r, err = a.supersede(ctx, req.Supersedes, inc); err != nil {
				return out, err
			}
		} else {
			stored, created, err := a.Store.Retain(ctx, inc)
			if err != nil {
				return out, err
			}
			r = Retained{Created: created, Incident: stored}
		}
		if req.Subject.AnalysisID != "" {
			if err := a.settle(ctx, req.Subject.AnalysisID, req.Decision, r.Incident.ID, "memory "+r.Incident.ID); err != nil {
				return out, err
			}
		}
		if r.Incident.Identity.IsZero() {
			r.Warning = "no identity (" + req.IdentityHint + "): this memory is related knowledge only and never votes for a bypass"
		}
		out = append(out, r)
	}
	return out, nil
}

func (a *App) supersede(ctx context.Context, old string, inc openrecall.Incident) (Retained, error) {
	stored, forgotten, created, err := a.Store.Supersede(ctx, old, inc)
	if err != nil {
		return Retained{}, err
	}
	if err := a.auditForget(ctx, forgotten, "superseded by "+stored.ID, inc.Analyst); err != nil {
		return Retained{}, err
	}
	return Retained{Created: created, Incident: stored, Superseded: &forgotten}, nil
}

// Forgotten is the outcome of taking a decision back.
type Forgotten struct {
	Incident openrecall.Incident `json:"incident"`
	// Changed is false when the memory had been taken back already.
	Changed bool `json:"changed"`
}

// Forget takes back the decision of memory id: it is no longer recalled
// and never votes again. The audit trail records who took it back and why.
func (a *App) Forget(ctx context.Context, id, reason, analyst string) (Forgotten, error) {
	if err := a.RecordExpiries(ctx); err != nil {
		return Forgotten{}, err
	}
	inc, changed, err := a.Store.Forget(ctx, id)
	if err != nil {
		return Forgotten{}, err
	}
	if changed {
		if err := a.auditForget(ctx, inc, reason, analyst); err != nil {
			return Forgotten{}, err
		}
	}
	return Forgotten{Incident: inc, Changed: changed}, nil
}

// StepMemoryForget is the audit step of a decision taken back.
const StepMemoryForget = "memory-forget"

// auditForget records in the audit trail that a memory's decision was taken
// back.
func (a *App) auditForget(ctx context.Context, inc openrecall.Incident, reason, analyst string) error {
	if a.Audit == nil {
		return errors.New("usecase: no audit trail to record a decision taken back")
	}
	why := fmt.Sprintf("memory %s (%s for %s, %s) taken back", inc.ID, inc.Decision, inc.Identity, inc.Fingerprint)
	if analyst != "" {
		why += " by " + analyst
	}
	if reason != "" {
		why += ": " + reason
	}
	err := a.Audit(ctx, []openrecall.AuditEntry{{
		AnalysisID: "forget-" + inc.ID, Batch: "memory", AlertID: inc.SourceAlertID,
		Step: StepMemoryForget, Reason: why, Outcome: "forgotten", ProposedDecision: inc.Decision,
	}})
	if err != nil {
		return fmt.Errorf("memory %s was taken back but the audit trail did not record it: %w", inc.ID, err)
	}
	return nil
}

// Recalled is what memory holds for an alert: its identity and
// fingerprint, and the memories recalled for them, best first. It is what
// `recall -o json` prints and GET /api/v1/recall answers.
type Recalled struct {
	Identity    openrecall.Identity    `json:"identity"`
	Fingerprint openrecall.Fingerprint `json:"fingerprint"`
	// Matches is empty, never null, when memory holds nothing.
	Matches []openrecall.Match `json:"matches"`
	// Proposals are the exceptions memory proposed for the identity
	// (DESIGN §6b), approved or not; omitted when none.
	Proposals []openrecall.Proposal `json:"proposals,omitempty"`
}

// Recall returns what memory holds, at most limit memories, for the first
// alert of subject (or its analysis), or for its fingerprint and identity
// (zero when only the fingerprint is known: related knowledge, never a
// vote).
func (a *App) Recall(ctx context.Context, s Subject, limit int) (Recalled, error) {
	if len(s.Alerts) > 1 {
		s.Alerts = s.Alerts[:1]
	}
	incs, err := a.Incidents(ctx, Decision{}, s)
	if err != nil {
		return Recalled{}, err
	}
	r := Recalled{Identity: incs[0].Identity, Fingerprint: incs[0].Fingerprint}
	if r.Matches, err = a.Store.Recall(ctx, r.Identity, r.Fingerprint, limit); err != nil {
		return Recalled{}, err
	}
	if r.Matches == nil {
		r.Matches = []openrecall.Match{}
	}
	if a.Exceptions != nil && !r.Identity.IsZero() {
		if r.Proposals, err = a.Exceptions.ProposalsFor(ctx, r.Identity); err != nil {
			return Recalled{}, err
		}
	}
	return r, nil
}
