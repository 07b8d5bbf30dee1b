package usecase

import (
	"context"
	"errors"

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
	if a.Waiting == nil {
		return nil, errors.New("usecase: no record of what waits for a person")
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
		} else if !w.Proposed.Retainable() {
			it.Outcome, it.Err = BulkFailed, noProposal(id)
		} else if g, ok, err := a.GroupOfAnalysis(ctx, id); err != nil {
			return nil, err
		} else if ok && !g.Decided {
			it.Group = &g
		}
		out = append(out, it)
	}
	return out, nil
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
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
			it.Outcome, it.Err = BulkNotFound, err
		case err != nil:
			it.Outcome, it.Err = BulkFailed, err
		case got.Changed:
			it.Outcome = BulkDecided
		default:
			it.Outcome = BulkAlready
		}
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
