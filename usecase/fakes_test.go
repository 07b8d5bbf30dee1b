package usecase_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// The fakes below are small in-memory stand-ins for the storage interfaces
// usecase declares (Store, GroupStore, ExceptionStore, WaitingStore,
// CostStore, ResultStore). They hold what the use cases' rules need and no
// more: memory.Store is tested against the real databases in memory/.

// now is the clock of every App the tests build.
var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// calls records, in order, what the use cases asked of the fakes and of the
// App's functions, so a test can check what happened before what.
type calls []string

func (c *calls) add(format string, args ...any) { *c = append(*c, fmt.Sprintf(format, args...)) }

// index returns the place of the first call starting with prefix, or -1.
func (c calls) index(prefix string) int {
	return slices.IndexFunc(c, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

// fakeStore is the memory of decisions (usecase.Store).
type fakeStore struct {
	log       *calls
	incidents []openrecall.Incident
	served    map[string]openrecall.Served
	matches   []openrecall.Match
}

func (s *fakeStore) key(inc openrecall.Incident) string {
	return fmt.Sprintf("%s|%s|%s|%s", inc.Decision, inc.Identity, inc.Fingerprint, inc.SourceAlertID)
}

func (s *fakeStore) Retain(_ context.Context, inc openrecall.Incident) (openrecall.Incident, bool, error) {
	s.log.add("retain %s", inc.SourceAlertID)
	for _, held := range s.incidents {
		if held.ForgottenAt.IsZero() && s.key(held) == s.key(inc) {
			return held, false, nil
		}
	}
	inc.ID = fmt.Sprintf("inc_%d", len(s.incidents)+1)
	inc.CreatedAt = now
	s.incidents = append(s.incidents, inc)
	return inc, true, nil
}

func (s *fakeStore) Supersede(ctx context.Context, old string, inc openrecall.Incident) (openrecall.Incident, openrecall.Incident, bool, error) {
	forgotten, _, err := s.Forget(ctx, old)
	if err != nil {
		return openrecall.Incident{}, openrecall.Incident{}, false, err
	}
	stored, created, err := s.Retain(ctx, inc)
	return stored, forgotten, created, err
}

func (s *fakeStore) Forget(_ context.Context, id string) (openrecall.Incident, bool, error) {
	s.log.add("forget %s", id)
	for i, inc := range s.incidents {
		if inc.ID != id {
			continue
		}
		if !inc.ForgottenAt.IsZero() {
			return inc, false, nil
		}
		s.incidents[i].ForgottenAt = now
		return s.incidents[i], true, nil
	}
	return openrecall.Incident{}, false, fmt.Errorf("memory %s: %w", id, openrecall.ErrNotFound)
}

func (s *fakeStore) Recall(_ context.Context, id openrecall.Identity, fp openrecall.Fingerprint, limit int) ([]openrecall.Match, error) {
	s.log.add("recall %s %s %d", id, fp, limit)
	return s.matches, nil
}

func (s *fakeStore) Served(_ context.Context, analysisID string) (openrecall.Served, error) {
	sv, ok := s.served[analysisID]
	if !ok {
		return openrecall.Served{}, fmt.Errorf("analysis %s: %w", analysisID, openrecall.ErrNotFound)
	}
	return sv, nil
}

// fakeWaiting keeps what waits for a person (usecase.WaitingStore).
type fakeWaiting struct {
	log *calls
	by  map[string]openrecall.Waiting
}

func (w *fakeWaiting) AwaitingIndex(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	return w.Awaiting(ctx, f)
}

func (w *fakeWaiting) Awaiting(_ context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	var out []openrecall.Waiting
	for _, x := range w.by {
		if !x.Decided {
			x.Result = nil
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b openrecall.Waiting) int { return a.Since.Compare(b.Since) })
	return out, nil
}

func (w *fakeWaiting) WaitingFor(_ context.Context, analysisID string) (openrecall.Waiting, error) {
	x, ok := w.by[analysisID]
	if !ok {
		return openrecall.Waiting{}, fmt.Errorf("analysis %s did not wait: %w", analysisID, openrecall.ErrNotFound)
	}
	return x, nil
}

func (w *fakeWaiting) Decide(_ context.Context, x openrecall.Waiting) (bool, error) {
	held, ok := w.by[x.AnalysisID]
	if !ok || held.Decided {
		return false, nil
	}
	w.log.add("decide %s", x.AnalysisID)
	w.by[x.AnalysisID] = x
	return true, nil
}

func (w *fakeWaiting) AwaitingProposal(_ context.Context, id string) ([]openrecall.Waiting, error) {
	var out []openrecall.Waiting
	for _, x := range w.by {
		if x.Decided || x.Result == nil || x.Result.Proposal == nil || x.Result.Proposal.ID != id {
			continue
		}
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b openrecall.Waiting) int { return strings.Compare(a.AnalysisID, b.AnalysisID) })
	return out, nil
}

// fakeGroups stores alert groups (usecase.GroupStore).
type fakeGroups struct {
	log     *calls
	groups  map[string]openrecall.Group
	members map[string][]openrecall.GroupMember
	memory  *fakeStore
}

func (g *fakeGroups) Group(_ context.Context, id string) (openrecall.Group, error) {
	x, ok := g.groups[id]
	if !ok {
		return openrecall.Group{}, fmt.Errorf("group %s: %w", id, openrecall.ErrNotFound)
	}
	return x, nil
}

func (g *fakeGroups) GroupOf(_ context.Context, analysisID string) (openrecall.GroupMember, error) {
	for _, ms := range g.members {
		for _, m := range ms {
			if m.AnalysisID == analysisID {
				return m, nil
			}
		}
	}
	return openrecall.GroupMember{}, fmt.Errorf("analysis %s: %w", analysisID, openrecall.ErrNotFound)
}

func (g *fakeGroups) Groups(_ context.Context, open bool, limit int) ([]openrecall.Group, error) {
	out := []openrecall.Group{}
	for _, x := range g.groups {
		if !open || !x.Decided {
			out = append(out, x)
		}
	}
	return out, nil
}

func (g *fakeGroups) DecideGroup(ctx context.Context, id string, inc openrecall.Incident) (openrecall.Group, openrecall.Incident, bool, []openrecall.GroupMember, error) {
	x, ok := g.groups[id]
	if !ok {
		return openrecall.Group{}, openrecall.Incident{}, false, nil, fmt.Errorf("group %s: %w", id, openrecall.ErrNotFound)
	}
	if x.Decided {
		return openrecall.Group{}, openrecall.Incident{}, false, nil, fmt.Errorf("group %s was decided already: %w", id, openrecall.ErrInvalid)
	}
	g.log.add("decide group %s", id)
	stored, created, err := g.memory.Retain(ctx, inc)
	if err != nil {
		return openrecall.Group{}, openrecall.Incident{}, false, nil, err
	}
	x.Decided, x.Decision, x.MemoryID, x.Analyst, x.DecidedAt = true, inc.Decision, stored.ID, inc.Analyst, now
	g.groups[id] = x
	ms := g.members[id]
	for i := range ms {
		ms[i].Decision = inc.Decision
	}
	return x, stored, created, slices.Clone(ms), nil
}

func (g *fakeGroups) GroupMembers(_ context.Context, id string) ([]openrecall.GroupMember, error) {
	return slices.Clone(g.members[id]), nil
}

// GroupMembersAfter pages GroupMembers by the cursor after, as memory does.
func (g *fakeGroups) GroupMembersAfter(_ context.Context, id, after string, limit int) ([]openrecall.GroupMember, error) {
	ms := g.members[id]
	if after != "" {
		i := slices.IndexFunc(ms, func(m openrecall.GroupMember) bool { return m.AnalysisID == after })
		if i < 0 {
			return nil, fmt.Errorf("group %s: firing %s: %w", id, after, openrecall.ErrNotFound)
		}
		ms = ms[i+1:]
	}
	return slices.Clone(ms[:min(limit, len(ms))]), nil
}

func (g *fakeGroups) WaitingGroups(_ context.Context, f openrecall.WaitingFilter) ([]openrecall.Group, error) {
	var out []openrecall.Group
	for _, x := range g.groups {
		if usecase.GroupWaits(x) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b openrecall.Group) int { return a.FirstAt.Compare(b.FirstAt) })
	return out, nil
}

// fakeExceptions stores exceptions and proposals (usecase.ExceptionStore).
type fakeExceptions struct {
	log        *calls
	exceptions []openrecall.Exception
	proposals  map[string]openrecall.Proposal
}

func (x *fakeExceptions) AddException(_ context.Context, e openrecall.Exception) (openrecall.Exception, bool, error) {
	for _, held := range x.exceptions {
		if e.ID != "" && held.ID == e.ID || e.ProposalID != "" && held.ProposalID == e.ProposalID {
			return held, false, nil
		}
	}
	x.log.add("add exception %s", e.Identity)
	if e.ID == "" {
		e.ID = fmt.Sprintf("exc_%d", len(x.exceptions)+1)
	}
	x.exceptions = append(x.exceptions, e)
	if p, ok := x.proposals[e.ProposalID]; ok {
		p.ApprovedAs = e.ID
		x.proposals[p.ID] = p
	}
	return e, true, nil
}

func (x *fakeExceptions) Exception(_ context.Context, id string) (openrecall.Exception, error) {
	for _, e := range x.exceptions {
		if e.ID == id {
			return e, nil
		}
	}
	return openrecall.Exception{}, fmt.Errorf("exception %s: %w", id, openrecall.ErrNotFound)
}

func (x *fakeExceptions) Exceptions(context.Context) ([]openrecall.Exception, error) {
	return slices.Clone(x.exceptions), nil
}

func (x *fakeExceptions) RevokeException(_ context.Context, id, analyst, reason string, at time.Time) (openrecall.Exception, bool, error) {
	for i, e := range x.exceptions {
		if e.ID != id {
			continue
		}
		if !e.RevokedAt.IsZero() {
			return e, false, nil
		}
		x.log.add("revoke %s", id)
		e.RevokedAt, e.RevokedBy, e.RevokeReason = at, analyst, reason
		x.exceptions[i] = e
		return e, true, nil
	}
	return openrecall.Exception{}, false, fmt.Errorf("exception %s: %w", id, openrecall.ErrNotFound)
}

func (x *fakeExceptions) Proposal(_ context.Context, id string) (openrecall.Proposal, error) {
	p, ok := x.proposals[id]
	if !ok {
		return openrecall.Proposal{}, fmt.Errorf("proposal %s: %w", id, openrecall.ErrNotFound)
	}
	return p, nil
}

func (x *fakeExceptions) Proposals(_ context.Context, pending bool) ([]openrecall.Proposal, error) {
	var out []openrecall.Proposal
	for _, p := range x.proposals {
		if !pending || p.ApprovedAs == "" {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b openrecall.Proposal) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (x *fakeExceptions) ProposalsFor(_ context.Context, id openrecall.Identity) ([]openrecall.Proposal, error) {
	var out []openrecall.Proposal
	for _, p := range x.proposals {
		if p.Identity == id {
			out = append(out, p)
		}
	}
	return out, nil
}

// fakeFingerprinter takes an alert's DNA and identity from its labels, so
// a test states them plainly.
type fakeFingerprinter struct{}

func (fakeFingerprinter) Extract(a openrecall.Alert) openrecall.Fingerprint {
	return openrecall.Fingerprint{ErrorClass: a.Labels["error_class"], Environment: a.Labels["env"]}
}

func (fakeFingerprinter) Identify(a openrecall.Alert) openrecall.Identity {
	return openrecall.Identity{Rule: a.Labels["alertname"], Service: a.Labels["service"]}
}

// desk is an App over the fakes, with what the App's functions recorded.
type desk struct {
	app        *usecase.App
	log        *calls
	store      *fakeStore
	waiting    *fakeWaiting
	groups     *fakeGroups
	exceptions *fakeExceptions
	audit      []openrecall.AuditEntry
}

// newDesk returns an App wired to empty fakes; Expiries and Audit log
// their calls.
func newDesk(t *testing.T) *desk {
	t.Helper()
	log := &calls{}
	d := &desk{log: log}
	d.store = &fakeStore{log: log, served: map[string]openrecall.Served{}}
	d.waiting = &fakeWaiting{log: log, by: map[string]openrecall.Waiting{}}
	d.groups = &fakeGroups{log: log, groups: map[string]openrecall.Group{}, members: map[string][]openrecall.GroupMember{}, memory: d.store}
	d.exceptions = &fakeExceptions{log: log, proposals: map[string]openrecall.Proposal{}}
	d.app = &usecase.App{
		Store: d.store, Fingerprinter: fakeFingerprinter{}, Groups: d.groups, Exceptions: d.exceptions, Waiting: d.waiting,
		Now: func() time.Time { return now },
		Audit: func(_ context.Context, entries []openrecall.AuditEntry) error {
			for _, e := range entries {
				log.add("audit %s %s", e.Step, e.AnalysisID)
			}
			d.audit = append(d.audit, entries...)
			return nil
		},
		Expiries: func(context.Context) error {
			log.add("expiries")
			return nil
		},
	}
	return d
}

// alert is a firing alert of rule and service with DNA error class ec.
func alert(id, rule, service, ec string) openrecall.Alert {
	return openrecall.Alert{ID: id, Severity: openrecall.SeverityHigh, Title: rule + " on " + service,
		Labels: map[string]string{"alertname": rule, "service": service, "error_class": ec, "env": "prod"}}
}

// waitOn records that analysisID of a waits for a person, proposing p.
func (d *desk) waitOn(analysisID string, a openrecall.Alert, p openrecall.Decision) {
	fp, id := fakeFingerprinter{}.Extract(a), fakeFingerprinter{}.Identify(a)
	r := openrecall.Result{AnalysisID: analysisID, Batch: "b1", Alert: a, Fingerprint: fp, Identity: id}
	d.waiting.by[analysisID] = openrecall.Waiting{
		AnalysisID: analysisID, Batch: "b1", Since: now.Add(-time.Hour), Reason: openrecall.WaitApproval,
		Why: "needs a person's approval", Severity: a.Severity, Identity: id, Title: a.Title, AlertID: a.ID,
		Proposed: p, Result: &r,
	}
}

// steps returns the audit steps recorded, in order.
func (d *desk) steps() []string {
	out := make([]string, len(d.audit))
	for i, e := range d.audit {
		out[i] = e.Step
	}
	return out
}
