package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// fakeHistory is the record of what was closed without a person
// (usecase.HistoryStore).
type fakeHistory struct {
	log     *calls
	by      map[string]openrecall.Closure
	waiting *fakeWaiting
}

func (h *fakeHistory) History(_ context.Context, f openrecall.ClosureFilter) (openrecall.ClosurePage, error) {
	out := openrecall.ClosurePage{Closures: []openrecall.Closure{}}
	for _, c := range h.by {
		if f.Kind == "" || c.Kind == f.Kind {
			out.Closures = append(out.Closures, c)
		}
	}
	return out, nil
}

func (h *fakeHistory) Closure(_ context.Context, id string) (openrecall.Closure, error) {
	c, ok := h.by[id]
	if !ok {
		return c, fmt.Errorf("history %s: %w", id, openrecall.ErrNotFound)
	}
	return c, nil
}

func (h *fakeHistory) MarkWrong(_ context.Context, c openrecall.Closure, w openrecall.Waiting) (bool, error) {
	h.log.add("mark wrong %s", c.AnalysisID)
	held := h.by[c.AnalysisID]
	if held.Wrong {
		return false, nil
	}
	held.Wrong, held.WrongAt, held.WrongBy, held.WrongReason = true, c.WrongAt, c.WrongBy, c.WrongReason
	h.by[c.AnalysisID] = held
	h.waiting.by[w.AnalysisID] = w
	return true, nil
}

// TestClosedBy: what was closed without a person, how, and by which
// memories; nothing that waits for a person or was not triaged.
func TestClosedBy(t *testing.T) {
	matches := []openrecall.Match{
		{Incident: openrecall.Incident{ID: "inc_1", Decision: openrecall.DecisionFalsePositive, Analyst: "alice", Note: "noise"}, Score: 0.9},
		{Incident: openrecall.Incident{ID: "inc_2", Decision: openrecall.DecisionFalsePositive, Analyst: "bob"}, Score: 0.9, Related: true},
		{Incident: openrecall.Incident{ID: "inc_3", Decision: openrecall.DecisionReal}, Score: 0.9},
	}
	base := openrecall.Result{AnalysisID: "a-1", Outcome: openrecall.ResultTriaged, Alert: openrecall.Alert{ID: "x", Text: "disk full\nmore"},
		Decision: openrecall.DecisionFalsePositive, Matches: matches,
		Triage: openrecall.TriageResult{Decision: openrecall.DecisionFalsePositive, Supporting: []string{"inc_1", "inc_2"}}}
	with := func(f func(r *openrecall.Result)) openrecall.Result {
		r := base
		f(&r)
		return r
	}
	tests := []struct {
		name   string
		r      openrecall.Result
		kind   string
		voters string
	}{
		{"bypassed", with(func(r *openrecall.Result) { r.Bypassed = true }), openrecall.ClosedBypass, "inc_1"},
		{"grouped under a bypassed head", with(func(r *openrecall.Result) {
			r.Group = &openrecall.GroupRef{ID: "g-h", Role: openrecall.GroupRoleMember}
			r.Guard.Bypass = true
		}), openrecall.ClosedGrouped, "inc_1"},
		{"grouped under a head memory did not bypass", with(func(r *openrecall.Result) {
			r.Group = &openrecall.GroupRef{ID: "g-h", Role: openrecall.GroupRoleMember}
		}), "", ""},
		{"excepted", with(func(r *openrecall.Result) { r.Exception = &openrecall.ExceptionRef{ID: "exc_1"} }), openrecall.ClosedException, ""},
		{"a model's benign verdict", base, "", ""},
		{"escalated: it waits", with(func(r *openrecall.Result) { r.Decision = openrecall.DecisionEscalated }), "", ""},
		{"an excepted detection whose triage asked approval", with(func(r *openrecall.Result) {
			r.Exception = &openrecall.ExceptionRef{ID: "exc_1"}
			r.Triage.RequiresHumanApproval = true
		}), openrecall.ClosedException, ""},
		{"not triaged", with(func(r *openrecall.Result) { r.Bypassed, r.Outcome = true, openrecall.ResultResolved }), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := usecase.ClosedBy(tt.r)
			if ok != (tt.kind != "") || c.Kind != tt.kind {
				t.Fatalf("ClosedBy = %q, %v; want %q", c.Kind, ok, tt.kind)
			}
			if !ok {
				return
			}
			var ids string
			for _, v := range c.Voters {
				ids += v.ID
			}
			if ids != tt.voters || c.Title != "disk full" {
				t.Errorf("voters %q title %q, want %q and the text's first line", ids, c.Title, tt.voters)
			}
			if tt.voters != "" && (c.Voters[0].Analyst != "alice" || c.Voters[0].Note != "noise") {
				t.Errorf("voter %+v, want alice's note", c.Voters[0])
			}
		})
	}
}

// TestWrongForgetsQueuesAndAuditsOnce: "this was wrong" forgets each
// memory that vouched, revokes the exception that matched, returns the
// analysis to the queue with the analyst and the reason, audits it, and a
// second time changes nothing; the reason and the analyst are required.
func TestWrongForgetsQueuesAndAuditsOnce(t *testing.T) {
	ctx := context.Background()
	d := newDesk(t)
	h := &fakeHistory{log: d.log, by: map[string]openrecall.Closure{}, waiting: d.waiting}
	d.app.Closures = h
	d.store.incidents = []openrecall.Incident{{ID: "inc_1", Decision: openrecall.DecisionFalsePositive}, {ID: "inc_2", Decision: openrecall.DecisionFalsePositive}}
	res := &openrecall.Result{AnalysisID: "a-1", Alert: openrecall.Alert{ID: "x"}}
	h.by["a-1"] = openrecall.Closure{AnalysisID: "a-1", Kind: openrecall.ClosedBypass, AlertID: "x", Title: "disk full",
		Voters: []openrecall.Voter{{ID: "inc_1"}, {ID: "inc_2"}, {ID: "inc_gone"}}, Result: res}
	if _, err := d.app.Wrong(ctx, "a-1", " ", "carol"); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("without a reason: %v, want ErrInvalid", err)
	}
	if _, err := d.app.Wrong(ctx, "a-1", "real outage", ""); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("without an analyst: %v, want ErrInvalid", err)
	}
	if _, err := d.app.Wrong(ctx, "nope", "real outage", "carol"); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("an analysis never closed: %v, want ErrNotFound", err)
	}
	out, err := d.app.Wrong(ctx, "a-1", "real outage", "carol")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Changed || fmt.Sprint(out.Forgotten) != "[inc_1 inc_2]" || !out.Closure.Wrong || out.Closure.WrongBy != "carol" {
		t.Errorf("wrong = %+v", out)
	}
	w, ok := d.waiting.by["a-1"]
	if !ok || w.Reason != openrecall.WaitWrong || w.Result != res || w.Proposed != "" {
		t.Errorf("queued %+v, want a-1 waiting as wrong with its result, nothing proposed", w)
	}
	if want := "carol said memory was wrong to close it (bypass  vouched by inc_1, inc_2, inc_gone): real outage"; w.Why != want {
		t.Errorf("why %q, want %q", w.Why, want)
	}
	if d.log.index("mark wrong") < d.log.index("forget inc_2") || d.log.index("audit history-wrong a-1") < d.log.index("mark wrong") {
		t.Errorf("order %v: forget, then queue, then audit", *d.log)
	}
	n := len(d.audit)
	again, err := d.app.Wrong(ctx, "a-1", "again", "dave")
	if err != nil || again.Changed || len(d.audit) != n || again.Closure.WrongBy != "carol" {
		t.Errorf("a second time: %+v, %v (%d audit entries, were %d)", again, err, len(d.audit), n)
	}
}
