package usecase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// stormGroup stores an open group g1 of three firings of disk_full @ db,
// headed by b1-1; each firing waits for a person.
func (d *desk) stormGroup() {
	head := alert("a1", "disk_full", "db", "disk_full")
	head.Entities = map[string]string{"host": "db-1"}
	fp := fakeFingerprinter{}.Extract(head)
	d.groups.groups["g1"] = openrecall.Group{
		ID: "g1", Batch: "b1", HeadSeverity: openrecall.SeverityHigh, Size: 3, FirstAt: now.Add(-2 * time.Hour),
		Key:  openrecall.GroupKey{Identity: openrecall.Identity{Rule: "disk_full", Service: "db"}, Fingerprint: fp.String(), Status: "firing"},
		Head: openrecall.GroupHead{AnalysisID: "b1-1", AlertID: "a1", Decision: openrecall.DecisionEscalated},
	}
	for i, id := range []string{"b1-1", "b1-2", "b1-3"} {
		role := "member"
		if i == 0 {
			role = "head"
		}
		a := head
		a.ID = "a" + id[len(id)-1:]
		d.groups.members["g1"] = append(d.groups.members["g1"], openrecall.GroupMember{GroupID: "g1", AnalysisID: id, AlertID: a.ID, Role: role})
		d.waitOn(id, a, openrecall.DecisionFalsePositive)
	}
}

// Deciding a group decides every member with one memory keyed by the head,
// audits one entry per firing and says so, and settles every firing that
// waited.
func TestDecideGroupDecidesEveryMember(t *testing.T) {
	d := newDesk(t)
	d.stormGroup()
	dg, err := d.app.DecideGroup(context.Background(), "g1", usecase.Decision{
		Decision: openrecall.DecisionFalsePositive, Analyst: "ana", Note: "disk cleaned nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if !dg.Group.Decided || !dg.Created || len(dg.Members) != 3 {
		t.Fatalf("DecideGroup = %+v, want the group decided, one memory created, 3 members", dg)
	}
	for _, m := range dg.Members {
		if m.Decision != openrecall.DecisionFalsePositive {
			t.Errorf("member %s decided %q, want false_positive", m.AnalysisID, m.Decision)
		}
	}
	inc := dg.Incident
	if inc.SourceAlertID != "a1" || inc.Identity.Rule != "disk_full" || inc.Severity != openrecall.SeverityHigh ||
		inc.Analyst != "ana" || inc.Entities["host"] != "db-1" {
		t.Errorf("memory %+v is not the head's (alert a1, disk_full, high, host db-1) by ana", inc)
	}
	if len(d.store.incidents) != 1 {
		t.Errorf("a storm of 3 firings stored %d memories, want 1", len(d.store.incidents))
	}
	var group, decided []string
	for _, e := range d.audit {
		switch e.Step {
		case usecase.StepGroupDecision:
			group = append(group, e.AnalysisID)
			if !strings.Contains(e.Reason, "group g1 (3 firings of disk_full @ db, head b1-1) decided false_positive by ana: disk cleaned nightly; memory "+inc.ID) {
				t.Errorf("group entry reason %q does not say what was decided", e.Reason)
			}
		case usecase.StepAnalystDecision:
			decided = append(decided, e.AnalysisID)
		}
	}
	want := []string{"b1-1", "b1-2", "b1-3"}
	if diff := cmp.Diff(want, group); diff != "" {
		t.Errorf("group-decision entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, decided); diff != "" {
		t.Errorf("firings settled (-want +got):\n%s", diff)
	}
	for _, id := range want {
		if w := d.waiting.by[id]; !w.Decided || w.MemoryID != inc.ID {
			t.Errorf("firing %s still waits: %+v", id, w)
		}
	}
	if i, j := d.log.index("expiries"), d.log.index("decide group"); i < 0 || i > j {
		t.Errorf("expiries not recorded before the group was decided: %v", *d.log)
	}

	// The group is closed: deciding it again is refused, and a decision
	// about one of its firings is about that firing alone.
	if _, err := d.app.DecideGroup(context.Background(), "g1", usecase.Decision{Decision: openrecall.DecisionReal}); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("deciding a decided group: %v, want ErrInvalid", err)
	}
}

func TestDecideGroupRefuses(t *testing.T) {
	d := newDesk(t)
	d.stormGroup()
	ctx := context.Background()
	if _, err := d.app.DecideGroup(ctx, "g1", usecase.Decision{Decision: openrecall.DecisionEscalated}); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("deciding a group escalated: %v, want ErrInvalid", err)
	}
	if _, err := d.app.DecideGroup(ctx, "g404", usecase.Decision{Decision: openrecall.DecisionReal}); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("deciding an unknown group: %v, want ErrNotFound", err)
	}
	if len(d.audit) != 0 || d.groups.groups["g1"].Decided {
		t.Errorf("a refused decision changed something: audit %v", d.steps())
	}
}

// A retain about a firing of an open group decides the group: one memory
// for the storm.
func TestRetainAboutAFiringDecidesItsGroup(t *testing.T) {
	d := newDesk(t)
	d.stormGroup()
	out, err := d.app.Retain(context.Background(), usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Analyst: "ana"},
		Subject:  usecase.Subject{AnalysisID: "b1-3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Group == nil || out[0].Group.ID != "g1" || out[0].Incident.SourceAlertID != "a1" {
		t.Fatalf("Retain = %+v, want group g1 decided with the head's memory", out)
	}
	if !d.groups.groups["g1"].Decided {
		t.Error("group g1 is still open")
	}
}

// The queue holds a waiting group as one item, its firings folded into it,
// oldest first, capped by the filter's limit.
func TestQueueFoldsAGroup(t *testing.T) {
	d := newDesk(t)
	d.stormGroup()
	// The group's firings wait too, but as the group.
	for _, id := range []string{"b1-1", "b1-2", "b1-3"} {
		w := d.waiting.by[id]
		w.Decided = true // folded: the store lists only what is not in a group
		d.waiting.by[id] = w
	}
	d.waitOn("b2-9", alert("a9", "oom", "api", "oom"), "")
	ws, err := d.app.Queue(context.Background(), openrecall.WaitingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("queue of %d items, want 2: %+v", len(ws), ws)
	}
	g := ws[0]
	if g.Reason != openrecall.WaitGroup || g.Group == nil || g.Group.Size != 3 || g.AnalysisID != "b1-1" ||
		!strings.Contains(g.Why, "an alert group of 3 firings waits for one decision") {
		t.Errorf("first item %+v is not group g1 of 3 firings", g)
	}
	if ws[1].AnalysisID != "b2-9" {
		t.Errorf("second item %s, want b2-9", ws[1].AnalysisID)
	}
	ws, err = d.app.Queue(context.Background(), openrecall.WaitingFilter{Limit: 1})
	if err != nil || len(ws) != 1 {
		t.Errorf("queue with limit 1: %d items, %v", len(ws), err)
	}
}

func TestGroupWaits(t *testing.T) {
	tests := []struct {
		name string
		g    openrecall.Group
		want bool
	}{
		{"open with members", openrecall.Group{Size: 2}, true},
		{"decided", openrecall.Group{Size: 2, Decided: true}, false},
		{"a head alone", openrecall.Group{Size: 1}, false},
		{"memory bypassed the head", openrecall.Group{Size: 5, Head: openrecall.GroupHead{Bypassed: true}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := usecase.GroupWaits(tt.g); got != tt.want {
				t.Errorf("GroupWaits = %v, want %v", got, tt.want)
			}
		})
	}
}

// Decide settles an analysis that waits: a named analyst is required, a
// decision other than the proposed one needs a note, and deciding a
// decided analysis changes nothing.
func TestDecide(t *testing.T) {
	ctx := context.Background()
	d := newDesk(t)
	d.waitOn("b1-1", alert("a1", "oom", "api", "oom"), openrecall.DecisionFalsePositive)
	d.waitOn("b1-2", alert("a2", "oom", "web", "oom"), "")
	refused := []struct {
		name string
		req  usecase.DecideRequest
	}{
		{"no analyst", usecase.DecideRequest{AnalysisID: "b1-1", AsProposed: true, Decision: usecase.Decision{Analyst: "  "}}},
		{"otherwise without a note", usecase.DecideRequest{AnalysisID: "b1-1", Decision: usecase.Decision{Decision: openrecall.DecisionReal, Analyst: "ana"}}},
		{"as proposed when nothing was", usecase.DecideRequest{AnalysisID: "b1-2", AsProposed: true, Decision: usecase.Decision{Analyst: "ana"}}},
	}
	for _, tt := range refused {
		if _, err := d.app.Decide(ctx, tt.req); !errors.Is(err, openrecall.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tt.name, err)
		}
	}
	if len(d.audit) != 0 {
		t.Fatalf("refused decisions audited %v", d.steps())
	}
	got, err := d.app.Decide(ctx, usecase.DecideRequest{AnalysisID: "b1-1", AsProposed: true,
		Decision: usecase.Decision{Analyst: " ana ", DeadEnds: []string{" ", " logs "}}})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Changed || got.Waiting.DecidedBy != "ana" || got.Retained == nil || got.Retained.Incident.Decision != openrecall.DecisionFalsePositive {
		t.Errorf("Decide = %+v, want decided false_positive by ana", got)
	}
	if diff := cmp.Diff([]string{"logs"}, got.Retained.Incident.DeadEnds); diff != "" {
		t.Errorf("dead ends (-want +got):\n%s", diff)
	}
	again, err := d.app.Decide(ctx, usecase.DecideRequest{AnalysisID: "b1-1", AsProposed: true, Decision: usecase.Decision{Analyst: "bob"}})
	if err != nil || again.Changed || again.Waiting.DecidedBy != "ana" || again.Retained != nil {
		t.Errorf("deciding again = %+v, %v, want unchanged, decided by ana, nothing retained", again, err)
	}
	if len(d.audit) != 1 {
		t.Errorf("audit steps %v, want one analyst-decision", d.steps())
	}
	if _, err := d.app.Decide(ctx, usecase.DecideRequest{AnalysisID: "b9-9", AsProposed: true, Decision: usecase.Decision{Analyst: "ana"}}); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("deciding an analysis that never waited: %v, want ErrNotFound", err)
	}
}

// TestGroupFiringsPagesAndSpreads: a group's firings come a page at a
// time by a cursor, head first, each with its alert's title, time and
// labels; a label whose value differs (or that some firings lack) is a
// column, the others are shared; a firing that did not wait is listed by
// its ids alone and counts in no spread.
func TestGroupFiringsPagesAndSpreads(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	d.stormGroup()
	for i, id := range []string{"b1-1", "b1-2", "b1-3"} {
		w := d.waiting.by[id]
		r := *w.Result
		r.Alert.Labels = map[string]string{"alertname": "disk_full", "instance": "db-" + id[len(id)-1:]}
		if i == 2 {
			r.Alert.Labels["pod"] = "p-3"
		}
		r.Alert.Annotations = map[string]string{"summary": "disk full"}
		r.Group = &openrecall.GroupRef{ID: "g1", At: now.Add(time.Duration(i) * time.Minute)}
		w.Result = &r
		d.waiting.by[id] = w
	}
	d.groups.members["g1"] = append(d.groups.members["g1"], openrecall.GroupMember{GroupID: "g1", AnalysisID: "b1-4", AlertID: "a4", Role: "member"})

	page, err := d.app.GroupFirings(ctx, "g1", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Firings) != 2 || page.Firings[0].Role != "head" || page.Next != "b1-2" || !page.Firings[1].At.Equal(now.Add(time.Minute)) {
		t.Fatalf("first page: %+v", page)
	}
	if diff := cmp.Diff([]usecase.Field{{Name: "instance"}}, page.Varying); diff != "" {
		t.Errorf("varying on the first page (-want +got):\n%s", diff)
	}
	want := []usecase.FieldValue{{Field: usecase.Field{Name: "alertname"}, Value: "disk_full"}, {Field: usecase.Field{Annotation: true, Name: "summary"}, Value: "disk full"}}
	if diff := cmp.Diff(want, page.Shared); diff != "" {
		t.Errorf("shared on the first page (-want +got):\n%s", diff)
	}
	page, err = d.app.GroupFirings(ctx, "g1", page.Next, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Firings) != 2 || page.Next != "" || page.Firings[0].AnalysisID != "b1-3" || !page.Firings[0].Known || page.Firings[1].Known {
		t.Fatalf("second page: %+v", page)
	}
	if diff := cmp.Diff([]usecase.Field(nil), page.Varying); diff != "" {
		t.Errorf("one known firing has nothing that differs (-want +got):\n%s", diff)
	}
	if _, err := d.app.GroupFirings(ctx, "g1", "b9-9", 2); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("unknown cursor: %v, want ErrNotFound", err)
	}
	if _, err := d.app.GroupFirings(ctx, "g-nope", "", 2); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("unknown group: %v, want ErrNotFound", err)
	}
}
