package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/openrecall/openrecall"
)

// GroupStore is the storage of alert groups the use cases read and decide
// (DESIGN §6a). memory.Store satisfies it.
type GroupStore interface {
	Group(ctx context.Context, id string) (openrecall.Group, error)
	GroupOf(ctx context.Context, analysisID string) (openrecall.GroupMember, error)
	Groups(ctx context.Context, open bool, limit int) ([]openrecall.Group, error)
	DecideGroup(ctx context.Context, id string, inc openrecall.Incident) (openrecall.Group, openrecall.Incident, bool, []openrecall.GroupMember, error)
	GroupMembers(ctx context.Context, id string) ([]openrecall.GroupMember, error)
	// GroupMembersAfter returns up to limit firings of group id in
	// GroupMembers' order, those after the firing whose analysis id is
	// after ("" for the first).
	GroupMembersAfter(ctx context.Context, id, after string, limit int) ([]openrecall.GroupMember, error)
	// WaitingGroups returns the open groups that wait for a person (as
	// GroupWaits decides), oldest first, as f selects.
	WaitingGroups(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Group, error)
}

// GroupWaits is the product's rule of an alert group that waits for a
// person (DESIGN §6a, §12a): no person decided it, it holds members besides
// its head, and memory did not bypass its head (then memory closed its
// members and nothing waits). Such a group is one item of the queue, and
// the firings of it that wait are folded into it: one decision settles
// them all.
func GroupWaits(g openrecall.Group) bool {
	return !g.Decided && g.Size > 1 && !g.Head.Bypassed
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
	// The memory keeps the head's entity fields, as a retain about the
	// head would: what exception proposals match on (DESIGN §6b).
	if inc.Entities, err = a.headEntities(ctx, g); err != nil {
		return DecidedGroup{}, err
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
	why += fromOrigin(d.Origin)
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
		if err := a.settle(ctx, m.AnalysisID, d, stored.ID, "group "+g.ID+", memory "+stored.ID); err != nil {
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

// headEntities returns the entity fields of group g's head alert, read from
// what waited for a person about it (an attack head always waits); nil
// when the head did not wait or had none.
func (a *App) headEntities(ctx context.Context, g openrecall.Group) (map[string]string, error) {
	if a.Waiting == nil {
		return nil, nil
	}
	w, err := a.Waiting.WaitingFor(ctx, g.Head.AnalysisID)
	switch {
	case errors.Is(err, openrecall.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("group %s: head %s: %w", g.ID, g.Head.AnalysisID, err)
	case w.Result == nil || len(w.Result.Alert.Entities) == 0:
		return nil, nil
	}
	return maps.Clone(w.Result.Alert.Entities), nil
}
