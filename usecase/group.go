package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrecall/openrecall"
)

// GroupStore is the storage of alert groups the use cases read and decide
// (DESIGN §6a). memory.Store satisfies it.
type GroupStore interface {
	Group(ctx context.Context, id string) (openrecall.Group, error)
	GroupOf(ctx context.Context, analysisID string) (openrecall.GroupMember, error)
	Groups(ctx context.Context, open bool, limit int) ([]openrecall.Group, error)
	DecideGroup(ctx context.Context, id string, inc openrecall.Incident) (openrecall.Group, openrecall.Incident, bool, []openrecall.GroupMember, error)
}

// DecidedGroup is a person's decision of a group, as `retain --group -o
// json` prints it and POST /api/v1/groups/{id}/decision answers it.
type DecidedGroup struct {
	Group openrecall.Group `json:"group"`
	// Created is false when memory already held the decision.
	Created  bool                     `json:"created"`
	Incident openrecall.Incident      `json:"incident"`
	Members  []openrecall.GroupMember `json:"members"`
}

// StepGroupDecision is the audit step of a person's decision of a group,
// one entry per firing of the group.
const StepGroupDecision = "group-decision"

// DecideGroup records a person's decision of group id (DESIGN §6a): one
// memory keyed by the head's alert id, with the head's identity, Alert DNA
// and severity (a storm is one vote, however many firings), the decision
// on every member, one audit entry per firing, and the group closed, so
// later firings start a new group; every firing that waited for a person
// is settled. A group decided before is refused
// (openrecall.ErrInvalid), an unknown one is openrecall.ErrNotFound.
func (a *App) DecideGroup(ctx context.Context, id string, d Decision) (DecidedGroup, error) {
	if !d.Decision.Retainable() {
		return DecidedGroup{}, fmt.Errorf("decision %q: want %s: %w", d.Decision, Decisions(), openrecall.ErrInvalid)
	}
	if a.Groups == nil {
		return DecidedGroup{}, errors.New("usecase: no group storage")
	}
	if err := a.RecordExpiries(ctx); err != nil {
		return DecidedGroup{}, err
	}
	g, err := a.Groups.Group(ctx, id)
	if err != nil {
		return DecidedGroup{}, err
	}
	fp, err := openrecall.ParseFingerprint(g.Key.Fingerprint)
	if err != nil {
		return DecidedGroup{}, fmt.Errorf("group %s: stored fingerprint: %w", id, err)
	}
	inc := openrecall.Incident{
		Fingerprint: fp, Identity: g.Key.Identity, Severity: g.HeadSeverity, SourceAlertID: g.Head.AlertID,
		Decision: d.Decision, Note: d.Note, DeadEnds: d.DeadEnds, Analyst: d.Analyst,
		ImpactMinutes: d.ImpactMinutes, ExpiresAt: d.ExpiresAt,
	}
	g, stored, created, members, err := a.Groups.DecideGroup(ctx, id, inc)
	if err != nil {
		return DecidedGroup{}, err
	}
	if a.Audit == nil {
		return DecidedGroup{}, fmt.Errorf("group %s was decided but there is no audit trail to record it", id)
	}
	why := fmt.Sprintf("group %s (%d firings of %s, head %s) decided %s", g.ID, len(members), g.Key.Identity, g.Head.AnalysisID, d.Decision)
	if d.Analyst != "" {
		why += " by " + d.Analyst
	}
	if d.Note != "" {
		why += ": " + d.Note
	}
	entries := make([]openrecall.AuditEntry, len(members))
	for i, m := range members {
		entries[i] = openrecall.AuditEntry{
			AnalysisID: m.AnalysisID, Batch: "group", AlertID: m.AlertID, Step: StepGroupDecision,
			Reason: why + "; memory " + stored.ID, Outcome: "decided", ProposedDecision: d.Decision,
		}
	}
	if err := a.Audit(ctx, entries); err != nil {
		return DecidedGroup{}, fmt.Errorf("group %s was decided but the audit trail did not record it: %w", id, err)
	}
	// Every firing of the group that waited for a person is settled by
	// this one decision (DESIGN §12a): the queue no longer lists it.
	for _, m := range members {
		if err := a.settle(ctx, m.AnalysisID, d, stored.ID); err != nil {
			return DecidedGroup{}, err
		}
	}
	return DecidedGroup{Group: g, Created: created, Incident: stored, Members: members}, nil
}

// GroupOfAnalysis returns the group an analysis belongs to; false when
// none (or no group storage).
func (a *App) GroupOfAnalysis(ctx context.Context, analysisID string) (openrecall.Group, bool, error) {
	if a.Groups == nil {
		return openrecall.Group{}, false, nil
	}
	m, err := a.Groups.GroupOf(ctx, analysisID)
	if errors.Is(err, openrecall.ErrNotFound) {
		return openrecall.Group{}, false, nil
	}
	if err != nil {
		return openrecall.Group{}, false, err
	}
	g, err := a.Groups.Group(ctx, m.GroupID)
	if err != nil {
		return openrecall.Group{}, false, err
	}
	return g, true, nil
}

// ListGroups returns up to limit groups, newest first: only those no
// person has decided when open is set (`openrecall groups`, GET
// /api/v1/groups). The list is empty, never nil.
func (a *App) ListGroups(ctx context.Context, open bool, limit int) ([]openrecall.Group, error) {
	if a.Groups == nil {
		return []openrecall.Group{}, nil
	}
	return a.Groups.Groups(ctx, open, limit)
}
