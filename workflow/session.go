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
	return &Session{w: w, rs: runState{groups: g, exceptions: set}}, nil
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
