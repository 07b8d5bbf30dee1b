package workflow

import (
	"context"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
)

// Session analyses records one at a time, in order, keeping alert groups
// between them as a queue run does on one worker (DESIGN §6a): eval's
// replay, where a simulated analyst acts between alerts. Nothing is
// persisted. It is not safe for concurrent use.
type Session struct {
	w   *Workflow
	rs  runState
	pos int
}

// NewSession starts a session; with grouping on it groups within itself
// (and continues the store's open groups when Grouping.Store is set).
func (w *Workflow) NewSession(ctx context.Context) (*Session, error) {
	g, err := w.newGrouper(ctx)
	if err != nil {
		return nil, err
	}
	return &Session{w: w, rs: runState{groups: g}}, nil
}

// AnalyzeRecord runs one intake record as analysis seq, after every record
// the session ran before.
func (s *Session) AnalyzeRecord(ctx context.Context, rec intake.Record, seq int) openrecall.Result {
	r := s.w.process(ctx, rec, s.pos, seq, s.rs)
	s.pos++
	return r
}

// CloseGroup closes group id, as a person's decision does: later firings
// of its alert start a new group.
func (s *Session) CloseGroup(id string) {
	g := s.rs.groups
	if g == nil {
		return
	}
	for _, list := range g.open {
		for _, og := range list {
			if og.id == id {
				g.drop(og)
				return
			}
		}
	}
}
