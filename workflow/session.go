package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/intake"
)

// Session analyses records one at a time, in order, keeping alert groups
// between them as a queue run does on one worker (DESIGN §6a): eval's
// replay, where a simulated analyst acts between alerts. Each result is
// stored as a run stores it — its audit entries, its cost point (triaged
// results, on a curve of the workflow's batch), its alert group and
// proposal, what waits for a person — through the workflow's Sink before
// AnalyzeRecord returns it, so the use cases find what a person decides
// about (usecase.App.DecideGroup); without a Sink nothing is stored. With
// Grouping.Store set it continues the store's open groups and takes their
// closure from it (SyncGroups). It is not safe for concurrent use.
type Session struct {
	w     *Workflow
	rs    runState
	pos   int
	curve *costcurve.Curve
}

// NewSession starts a session; with grouping on it groups within itself
// (and continues the store's open groups when Grouping.Store is set). It
// reads the active exceptions once, as a run does (DESIGN §6b).
func (w *Workflow) NewSession(ctx context.Context) (*Session, error) {
	g, err := w.newGrouper(ctx)
	if err != nil {
		return nil, err
	}
	set, err := w.loadExceptions(ctx)
	if err != nil {
		return nil, err
	}
	return &Session{w: w, rs: runState{groups: g, exceptions: set}, curve: costcurve.New(w.cfg.Batch)}, nil
}

// ReloadExceptions reads the active exceptions again, as serve does at the
// start of each inbox batch: the records after it are matched against the
// exceptions a person approved meanwhile (eval's simulated analyst).
func (s *Session) ReloadExceptions(ctx context.Context) error {
	set, err := s.w.loadExceptions(ctx)
	if err != nil {
		return err
	}
	s.rs.exceptions = set
	return nil
}

// AnalyzeRecord runs one intake record as analysis seq, after every record
// the session ran before, and stores its result through the workflow's
// Sink, with its cost point when it is triaged, as AnalyzeQueue does: the
// result returned carries its audit entries as stored. An error is the
// sink's; the result was analysed but not stored then.
func (s *Session) AnalyzeRecord(ctx context.Context, rec intake.Record, seq int) (openrecall.Result, error) {
	r := s.w.process(ctx, rec, s.pos, seq, s.rs)
	s.pos++
	var point *openrecall.CostPoint
	if s.w.cfg.Sink != nil && r.Outcome == openrecall.ResultTriaged {
		p := s.curve.Add(r.Alert.ID, pointTier(r), r.Bypassed, r.Cost, r.Baseline)
		point = &p
	}
	batch := []openrecall.Result{r}
	if err := s.w.persist(ctx, batch, []*openrecall.CostPoint{point}); err != nil {
		return r, err
	}
	return batch[0], nil
}

// SyncGroups takes the closure of the session's groups from the store
// (Grouping.Store), as a run does when a person decides a group between
// batches (usecase.App.DecideGroup): every open group of the session that
// the store holds as decided is dropped, and later firings of its alert
// start a new group. With ids, only the session's open groups of those ids
// are read from the store (the groups a caller has just decided: eval's
// simulated analyst); without, every open group of the session is. A group
// the store does not hold (nothing stored it) stays open. Without grouping
// or a group store it does nothing.
func (s *Session) SyncGroups(ctx context.Context, ids ...string) error {
	g := s.rs.groups
	if g == nil || g.store == nil {
		return nil
	}
	var named map[string]bool
	if len(ids) > 0 {
		named = make(map[string]bool, len(ids))
		for _, id := range ids {
			named[id] = true
		}
	}
	var decided []*openGroup
	for _, list := range g.open {
		for _, og := range list {
			if named != nil && !named[og.id] {
				continue
			}
			sg, err := g.store.Group(ctx, og.id)
			switch {
			case errors.Is(err, openrecall.ErrNotFound):
			case err != nil:
				return fmt.Errorf("group %s: %w", og.id, err)
			case sg.Decided:
				decided = append(decided, og)
			}
		}
	}
	for _, og := range decided {
		g.drop(og)
	}
	return nil
}
