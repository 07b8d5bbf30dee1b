package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openrecall/openrecall"
)

// Outcomes of one analysis in a bulk approval (ApproveAll).
const (
	// BulkDecided: its proposed decision was retained and it left the
	// queue (with its whole group when it is a firing of an open one).
	BulkDecided = "decided"
	// BulkAlready: it was decided already (perhaps with its group, by an
	// earlier analysis of the same approval); nothing changed.
	BulkAlready = "already decided"
	// BulkNotFound: no analysis of that id waited for a person.
	BulkNotFound = "not found"
	// BulkFailed: it waits still; Err says why it was not decided.
	BulkFailed = "failed"
)

// BulkItem is one analysis of a bulk approval, as a person confirms it
// (PlanApproval) and as the approval reports it (ApproveAll).
type BulkItem struct {
	AnalysisID string
	// Waiting is what waits about it, without its result; zero when it was
	// not found.
	Waiting openrecall.Waiting
	// Group is the open group it is a firing of: approving it decides
	// the group, every firing.
	Group *openrecall.Group
	// Outcome is one of the Bulk constants: for a plan, BulkNotFound,
	// BulkAlready or "" (it waits); Err says why for BulkFailed (and for
	// BulkNotFound).
	Outcome string
	Err     error
}

// PlanApproval returns the analyses ids as a bulk approval would take
// them, once each, in the order given (a repeated id counts once): what
// waits, with its proposal and group, what does not wait any more, what
// has no proposal to approve (BulkFailed), and what is not found. It changes nothing; an error is one of reading, not
// of an id.
func (a *App) PlanApproval(ctx context.Context, ids []string) ([]BulkItem, error) {
	return a.plan(ctx, ids, func(w openrecall.Waiting) error {
		if !w.Proposed.Retainable() {
			return noProposal(w.AnalysisID)
		}
		return nil
	})
}

// PlanSettle is PlanApproval for SettleResolved: what a bulk settling of
// ids as "resolved by itself" would take (BulkFailed for one whose alert
// still fires).
func (a *App) PlanSettle(ctx context.Context, ids []string) ([]BulkItem, error) {
	return a.plan(ctx, ids, stillFires)
}

// plan takes ids as a bulk action would, once each in the order given:
// not found, decided already, failed when can refuses it, else waiting
// (with its open group). It changes nothing.
func (a *App) plan(ctx context.Context, ids []string, can func(openrecall.Waiting) error) ([]BulkItem, error) {
	if a.Waiting == nil {
		return nil, errNoWaiting
	}
	var out []BulkItem
	for _, id := range uniqueIDs(ids) {
		it := BulkItem{AnalysisID: id}
		w, err := a.Waiting.WaitingFor(ctx, id)
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
			it.Outcome, it.Err = BulkNotFound, err
			out = append(out, it)
			continue
		case err != nil:
			return nil, err
		}
		w.Result = nil
		it.Waiting = w
		if w.Decided {
			it.Outcome = BulkAlready
		} else if err := can(w); err != nil {
			it.Outcome, it.Err = BulkFailed, err
		} else if g, ok, err := a.GroupOfAnalysis(ctx, id); err != nil {
			return nil, err
		} else if ok && !g.Decided {
			it.Group = &g
		}
		out = append(out, it)
	}
	return out, nil
}

// stillFires refuses to settle an analysis as resolved by itself while
// its alert fires.
func stillFires(w openrecall.Waiting) error {
	if w.Resolved() {
		return nil
	}
	return fmt.Errorf("analysis %s: its alert still fires; only an alert whose recovery arrived while it waited settles as resolved by itself: %w",
		w.AnalysisID, openrecall.ErrInvalid)
}

// ResolvedByItself is the decision a person retains when settling an
// alert that resolved while it waited (DESIGN §12a): it needed no action.
// Memory learns it as any decision — with the note saying why — so the
// guard may one day close the same alert's repeats, never an attack's.
const ResolvedByItself = openrecall.DecisionKnownBenign

// resolvedNote is the note of an analysis settled as resolved by itself.
func resolvedNote(w openrecall.Waiting, note string) string {
	n := "resolved by itself: the sender's recovery arrived " + w.ResolvedAt.UTC().Format(time.RFC3339) +
		" while it waited, and a person settled it as needing no action"
	if note != "" {
		n += " (" + note + ")"
	}
	return n
}

// SettleResolved settles each analysis of ids whose alert resolved while it
// waited as "resolved by itself" (ResolvedByItself, with a note saying so
// and d.Note), by d's analyst, through Decide, one at a time; it returns one
// item per distinct id, in the order given: decided, decided already, not
// found, or failed (one that still fires, with why). A failure of one does
// not stop the others.
func (a *App) SettleResolved(ctx context.Context, ids []string, d Decision) []BulkItem {
	var out []BulkItem
	for _, id := range uniqueIDs(ids) {
		it := BulkItem{AnalysisID: id}
		w, err := a.waitingFor(ctx, id)
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
			it.Outcome, it.Err = BulkNotFound, err
		case err != nil:
			it.Outcome, it.Err = BulkFailed, err
		case w.Decided:
			it.Outcome = BulkAlready
		default:
			if err := stillFires(w); err != nil {
				it.Outcome, it.Err = BulkFailed, err
				break
			}
			dd := d
			dd.Decision, dd.Note = ResolvedByItself, resolvedNote(w, d.Note)
			got, err := a.Decide(ctx, DecideRequest{AnalysisID: id, Decision: dd})
			it.Outcome, it.Err = outcomeOf(got, err)
			w = got.Waiting
		}
		w.Result = nil
		it.Waiting = w
		out = append(out, it)
	}
	return out
}

// outcomeOf is the bulk outcome of one Decide.
func outcomeOf(got Decided, err error) (string, error) {
	switch {
	case errors.Is(err, openrecall.ErrNotFound):
		return BulkNotFound, err
	case err != nil:
		return BulkFailed, err
	case got.Changed:
		return BulkDecided, nil
	}
	return BulkAlready, nil
}

// waitingFor is WaitingFor of the store, or an error when there is none.
func (a *App) waitingFor(ctx context.Context, id string) (openrecall.Waiting, error) {
	if a.Waiting == nil {
		return openrecall.Waiting{}, errNoWaiting
	}
	return a.Waiting.WaitingFor(ctx, id)
}

// ApproveAll approves the proposed decision of each analysis of ids by
// d's analyst (d.Note is the note of each; empty says "approved as
// proposed"), through Decide, one at a time, and returns one item per
// distinct id, in the order given, with its outcome: a failure of one does
// not stop the others, and says why.
func (a *App) ApproveAll(ctx context.Context, ids []string, d Decision) []BulkItem {
	var out []BulkItem
	for _, id := range uniqueIDs(ids) {
		it := BulkItem{AnalysisID: id}
		if g, ok, err := a.GroupOfAnalysis(ctx, id); err == nil && ok && !g.Decided {
			it.Group = &g
		}
		got, err := a.Decide(ctx, DecideRequest{AnalysisID: id, AsProposed: true, Decision: d})
		it.Outcome, it.Err = outcomeOf(got, err)
		it.Waiting = got.Waiting
		it.Waiting.Result = nil
		out = append(out, it)
	}
	return out
}

// uniqueIDs returns ids without repeats or empty ones, in the order given.
func uniqueIDs(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}
