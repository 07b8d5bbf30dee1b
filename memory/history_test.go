package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// closesBypassed is a stand-in for usecase.ClosedBy: a bypassed result was
// closed by memory, vouched by its supporting memories.
func closesBypassed(r openrecall.Result) (openrecall.Closure, bool) {
	if !r.Bypassed {
		return openrecall.Closure{}, false
	}
	c := openrecall.Closure{AnalysisID: r.AnalysisID, Batch: r.Batch, Kind: openrecall.ClosedBypass, AlertID: r.Alert.ID,
		Identity: r.Identity, Title: r.Alert.Title, Severity: r.Alert.Severity, Decision: r.Decision}
	for _, id := range r.Triage.Supporting {
		c.Voters = append(c.Voters, openrecall.Voter{ID: id, Decision: r.Decision, Analyst: "alice", Note: "benign"})
	}
	return c, true
}

func historyResult(id, title string, bypassed bool) openrecall.Result {
	return openrecall.Result{AnalysisID: id, Batch: "b", Outcome: openrecall.ResultTriaged, Bypassed: bypassed,
		Alert:    openrecall.Alert{ID: "alert-" + id, Title: title, Severity: openrecall.SeverityLow},
		Identity: openrecall.Identity{Rule: "DiskFull", Service: "db"}, Decision: openrecall.DecisionFalsePositive,
		Triage: openrecall.TriageResult{Supporting: []string{"inc_1", "inc_2"}},
		Audit:  []openrecall.AuditEntry{{AnalysisID: id, Batch: "b", AlertID: "alert-" + id, Step: "intake", Reason: "parsed", Outcome: "ok"}}}
}

// TestHistoryRecordedWithItsResult: the sink records what Closes says was
// closed without a person in the transaction of its result, once; the
// listing is newest first, pages by cursor to the end, selects by kind
// and by text ignoring case; one closure reads back with its result.
func TestHistoryRecordedWithItsResult(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal, Closes: closesBypassed}
	for _, r := range []openrecall.Result{
		historyResult("h-1", "Disk full on db-1", true),
		historyResult("h-2", "escalated one", false),
		historyResult("h-3", "disk FULL on db-2", true),
		historyResult("h-4", "Memory pressure", true),
	} {
		if _, err := sink.Persist(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Stored again (a redelivery): the first row stays.
	if _, err := sink.Persist(ctx, historyResult("h-1", "changed", true), nil); err != nil {
		t.Fatal(err)
	}
	all, err := st.History(ctx, openrecall.ClosureFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := closureIDs(all.Closures); got != "h-4 h-3 h-1" || all.Next != "" {
		t.Fatalf("history = %q next %q, want h-4 h-3 h-1, newest first, no next", got, all.Next)
	}
	var paged []openrecall.Closure
	f := openrecall.ClosureFilter{Limit: 2}
	for range 5 {
		p, err := st.History(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, p.Closures...)
		if p.Next == "" {
			break
		}
		f.After = p.Next
	}
	if got := closureIDs(paged); got != "h-4 h-3 h-1" {
		t.Errorf("paged by 2: %q, want h-4 h-3 h-1", got)
	}
	found, err := st.History(ctx, openrecall.ClosureFilter{Search: "dISk fULL", Kind: openrecall.ClosedBypass})
	if err != nil {
		t.Fatal(err)
	}
	if got := closureIDs(found.Closures); got != "h-3 h-1" {
		t.Errorf("search: %q, want h-3 h-1", got)
	}
	if none, err := st.History(ctx, openrecall.ClosureFilter{Kind: openrecall.ClosedException}); err != nil || len(none.Closures) != 0 {
		t.Errorf("exceptions: %v %v, want none", none, err)
	}
	if _, err := st.History(ctx, openrecall.ClosureFilter{After: "nope"}); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("a bad cursor: %v, want ErrInvalid", err)
	}
	c, err := st.Closure(ctx, "h-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Disk full on db-1" || c.Result == nil || c.Result.Alert.Title != "Disk full on db-1" || len(c.Result.Audit) != 0 ||
		len(c.Voters) != 2 || c.Voters[0].ID != "inc_1" || c.Voters[1].Analyst != "alice" {
		t.Errorf("closure h-1 = %+v", c)
	}
	if _, err := st.Closure(ctx, "h-2"); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("an escalated analysis in the history: %v, want ErrNotFound", err)
	}
}

// TestMarkWrongQueuesOnce: a person's "this was wrong" marks the history
// row and puts the analysis in the queue at once; a second changes
// nothing; an analysis never closed without a person is not found.
func TestMarkWrongQueuesOnce(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	r := historyResult("h-1", "Disk full", true)
	if err := st.RecordClosures(ctx, []openrecall.Result{r}, closesBypassed); err != nil {
		t.Fatal(err)
	}
	c, err := st.Closure(ctx, "h-1")
	if err != nil {
		t.Fatal(err)
	}
	c.WrongAt, c.WrongBy, c.WrongReason = st.now(), "bob", "it was a real outage"
	w := openrecall.Waiting{AnalysisID: "h-1", Batch: "b", Since: c.WrongAt, Reason: openrecall.WaitWrong, Why: "bob said so",
		Title: c.Title, AlertID: c.AlertID, Identity: c.Identity, Result: c.Result}
	for i, want := range []bool{true, false} {
		changed, err := st.MarkWrong(ctx, c, w)
		if err != nil || changed != want {
			t.Fatalf("MarkWrong #%d = %v, %v; want %v", i+1, changed, err, want)
		}
	}
	got, err := st.Closure(ctx, "h-1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Wrong || got.WrongBy != "bob" || got.WrongReason != "it was a real outage" || !got.WrongAt.Equal(c.WrongAt) {
		t.Errorf("closure after wrong = %+v", got)
	}
	queue, err := st.Awaiting(ctx, openrecall.WaitingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(queue) != 1 || queue[0].AnalysisID != "h-1" || queue[0].Reason != openrecall.WaitWrong {
		t.Errorf("queue = %+v, want h-1 waiting as wrong", queue)
	}
	if rv, err := st.WaitingFor(ctx, "h-1"); err != nil || rv.Result == nil || rv.Result.Alert.ID != "alert-h-1" {
		t.Errorf("waiting for h-1 = %+v, %v: want its result", rv, err)
	}
	if _, err := st.MarkWrong(ctx, openrecall.Closure{AnalysisID: "nope", WrongAt: c.WrongAt}, w); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("MarkWrong of an unknown analysis: %v, want ErrNotFound", err)
	}
}

func closureIDs(cs []openrecall.Closure) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += " "
		}
		s += c.AnalysisID
	}
	return s
}
