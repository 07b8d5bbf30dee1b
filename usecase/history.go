package usecase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
)

// HistoryStore keeps the record of what was closed without a person.
// memory.Store satisfies it.
type HistoryStore interface {
	History(ctx context.Context, f openrecall.ClosureFilter) (openrecall.ClosurePage, error)
	Closure(ctx context.Context, analysisID string) (openrecall.Closure, error)
	// MarkWrong records a person's "this was wrong" (the closure's Wrong
	// fields) and puts w in the queue, at once; false when it was said
	// already.
	MarkWrong(ctx context.Context, c openrecall.Closure, w openrecall.Waiting) (bool, error)
}

// ClosedBy is the product's rule of what was closed without a person
// (DESIGN §12a, History): a triaged alert that does not wait for a person
// (WaitingFor) and that an exception closed (Kind ClosedException, the
// exception named), memory bypassed (ClosedBypass), or that took the
// decision of a group head memory bypassed (ClosedGrouped: the guard, run
// again on current memory for the member, passed). Voters are the memories
// that vouched: the supporting memories of the bypass, which for a grouped
// firing are its head's (the workflow lets a member take a bypassed head's
// decision only with the same support); none for an exception, whose
// person-approved rule closed the alert, not memory. At is left for the
// store's clock.
func ClosedBy(r openrecall.Result) (openrecall.Closure, bool) {
	if r.Outcome != openrecall.ResultTriaged {
		return openrecall.Closure{}, false
	}
	if _, waits := WaitingFor(r); waits {
		return openrecall.Closure{}, false
	}
	c := openrecall.Closure{
		AnalysisID: r.AnalysisID, Batch: r.Batch, AlertID: r.Alert.ID, Identity: r.Identity, Title: titleOf(r),
		Severity: r.Alert.Severity, Decision: r.Decision, Voters: []openrecall.Voter{},
	}
	if r.Group != nil {
		c.GroupID = r.Group.ID
	}
	switch {
	case r.Excepted():
		c.Kind, c.ExceptionID = openrecall.ClosedException, r.Exception.ID
		return c, true
	case r.Bypassed:
		c.Kind = openrecall.ClosedBypass
	case r.Grouped() && r.Guard.Bypass:
		c.Kind = openrecall.ClosedGrouped
	default:
		return openrecall.Closure{}, false
	}
	for _, m := range r.Matches {
		if !m.Related && slices.Contains(r.Triage.Supporting, m.Incident.ID) {
			inc := m.Incident
			c.Voters = append(c.Voters, openrecall.Voter{ID: inc.ID, Decision: inc.Decision, Analyst: inc.Analyst, Note: inc.Note})
		}
	}
	return c, true
}

// History returns a page of what was closed without a person, newest
// first, as f selects: what `openrecall history` prints, GET
// /api/v1/history answers and the cockpit's History page shows. A kind
// that is not one wraps openrecall.ErrInvalid.
func (a *App) History(ctx context.Context, f openrecall.ClosureFilter) (openrecall.ClosurePage, error) {
	if a.Closures == nil {
		return openrecall.ClosurePage{}, errors.New("usecase: no record of what was closed without a person")
	}
	if f.Kind != "" && !slices.Contains(openrecall.ClosedKinds, f.Kind) {
		return openrecall.ClosurePage{}, fmt.Errorf("history: kind %q is not one of %s: %w", f.Kind,
			strings.Join(openrecall.ClosedKinds, ", "), openrecall.ErrInvalid)
	}
	if f.Limit < 0 {
		return openrecall.ClosurePage{}, fmt.Errorf("history: a negative limit: %w", openrecall.ErrInvalid)
	}
	return a.Closures.History(ctx, f)
}

// ClosureOf returns the record of analysisID closed without a person,
// with its result; an analysis never closed so wraps
// openrecall.ErrNotFound.
func (a *App) ClosureOf(ctx context.Context, analysisID string) (openrecall.Closure, error) {
	if a.Closures == nil {
		return openrecall.Closure{}, errors.New("usecase: no record of what was closed without a person")
	}
	return a.Closures.Closure(ctx, analysisID)
}

// Wronged is the outcome of a person's "this was wrong", as `openrecall
// history wrong -o json` prints it and POST
// /api/v1/history/{analysis_id}/wrong answers it.
type Wronged struct {
	Closure openrecall.Closure `json:"closure"`
	// Changed is false when a person had said so already: nothing was
	// forgotten, revoked, queued or audited again.
	Changed bool `json:"changed"`
	// Forgotten are the memories that vouched and were taken back now
	// (not those taken back before).
	Forgotten []string `json:"forgotten"`
	// Revoked is the exception revoked now, empty when none was.
	Revoked string `json:"revoked,omitempty"`
}

// StepHistoryWrong is the audit step of a person's "this was wrong" about
// an analysis closed without a person.
const StepHistoryWrong = "history-wrong"

// Wrong is a person's "this was wrong" about analysisID, which openrecall
// closed without a person (DESIGN §12a, History): each memory that vouched
// for it (Closure.Voters) is forgotten with the reason (Forget), or the
// exception that matched is revoked with it (RevokeException), each
// audited with the analyst; then the analysis returns to the queue (Reason
// WaitWrong, its Why naming the analyst and the reason, no proposal) and
// the history row says who said it, when and why, and one history-wrong
// audit entry records it. The analyst and the reason are required
// (openrecall.ErrInvalid); an analysis never closed without a person wraps
// openrecall.ErrNotFound. Saying it again changes nothing (Changed false).
// A memory or exception gone from the database is skipped.
func (a *App) Wrong(ctx context.Context, analysisID, reason, analyst string) (Wronged, error) {
	reason, analyst = strings.TrimSpace(reason), strings.TrimSpace(analyst)
	switch {
	case analyst == "":
		return Wronged{}, fmt.Errorf("this was wrong: the analyst who says so is required: %w", openrecall.ErrInvalid)
	case reason == "":
		return Wronged{}, fmt.Errorf("this was wrong: the reason is required: %w", openrecall.ErrInvalid)
	case a.Closures == nil:
		return Wronged{}, errors.New("usecase: no record of what was closed without a person")
	case a.Audit == nil:
		return Wronged{}, errors.New("usecase: no audit trail to record that a closure was wrong")
	}
	c, err := a.Closures.Closure(ctx, analysisID)
	if err != nil {
		return Wronged{}, err
	}
	out := Wronged{Closure: c, Forgotten: []string{}}
	if c.Wrong {
		return out, nil
	}
	why := fmt.Sprintf("this was wrong: analysis %s closed without a person (%s), said %s: %s", analysisID, c.Kind, analyst, reason)
	for _, v := range c.Voters {
		f, err := a.Forget(ctx, v.ID, why, analyst)
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
			continue
		case err != nil:
			return out, fmt.Errorf("this was wrong about %s: forget memory %s: %w", analysisID, v.ID, err)
		case f.Changed:
			out.Forgotten = append(out.Forgotten, v.ID)
		}
	}
	if c.ExceptionID != "" && a.Exceptions != nil {
		ch, err := a.RevokeException(ctx, c.ExceptionID, analyst, why)
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
		case err != nil:
			return out, fmt.Errorf("this was wrong about %s: revoke exception %s: %w", analysisID, c.ExceptionID, err)
		case ch.Changed:
			out.Revoked = c.ExceptionID
		}
	}
	now := a.clock()().UTC()
	c.WrongAt, c.WrongBy, c.WrongReason = now, analyst, reason
	w := openrecall.Waiting{
		AnalysisID: c.AnalysisID, Batch: c.Batch, Since: now, Reason: openrecall.WaitWrong,
		Why:      fmt.Sprintf("%s said memory was wrong to close it (%s): %s", analyst, closedHow(c), reason),
		Severity: c.Severity, Identity: c.Identity, Title: c.Title, AlertID: c.AlertID, Result: c.Result,
	}
	if out.Changed, err = a.Closures.MarkWrong(ctx, c, w); err != nil || !out.Changed {
		return out, err
	}
	err = a.Audit(ctx, []openrecall.AuditEntry{{
		AnalysisID: analysisID, Batch: c.Batch, AlertID: c.AlertID, Step: StepHistoryWrong,
		Reason:  fmt.Sprintf("%s said closing it without a person was wrong (%s): %s; back in the queue", analyst, closedHow(c), reason),
		Outcome: "returned", ProposedDecision: c.Decision, Time: now,
	}})
	if err != nil {
		return out, fmt.Errorf("analysis %s returned to the queue but the audit trail did not record it: %w", analysisID, err)
	}
	out.Closure, err = a.Closures.Closure(ctx, analysisID)
	return out, err
}

// closedHow says how c was closed, in a few words.
func closedHow(c openrecall.Closure) string {
	var ids []string
	for _, v := range c.Voters {
		ids = append(ids, v.ID)
	}
	switch {
	case c.Kind == openrecall.ClosedException:
		return "exception " + c.ExceptionID
	case len(ids) == 0:
		return c.Kind
	}
	return c.Kind + " " + string(c.Decision) + " vouched by " + strings.Join(ids, ", ")
}
