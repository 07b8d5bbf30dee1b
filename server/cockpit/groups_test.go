package cockpit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestQueueListsAnOpenGroupOnceAndDecidesItOnce: an open alert group
// whose firings wait is one item of the queue with its size (its firings
// folded into it), oldest first among what waits; its page decides it once
// through the group decision use case, by the session's analyst (a note
// required, a read session refused); every firing is settled and audited,
// the group leaves the queue, and a second decision changes nothing.
func TestQueueListsAnOpenGroupOnceAndDecidesItOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lone := e.waiting(t, 1, "disk full on db-1", map[string]string{"alertname": "DiskFull"}, "", t0.Add(time.Hour))
	gid, firings := e.storm(t, 1, 3, "crash loop after deploy", t0)

	ws, err := e.app.Queue(ctx, openrecall.WaitingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Reason != openrecall.WaitGroup || ws[0].Group == nil || ws[0].Group.ID != gid ||
		ws[0].Group.Size != 3 || ws[0].Proposed != openrecall.DecisionKnownBenign || ws[1].AnalysisID != lone {
		t.Fatalf("queue: want the group of 3 (oldest) then %s, got %+v", lone, ws)
	}
	if ws, _ := e.app.Queue(ctx, openrecall.WaitingFilter{Limit: 1}); len(ws) != 1 || ws[0].Group == nil {
		t.Errorf("queue with limit 1: %+v", ws)
	}
	if ws, _ := e.app.Queue(ctx, openrecall.WaitingFilter{Rule: "DiskFull"}); len(ws) != 1 || ws[0].AnalysisID != lone {
		t.Errorf("queue filtered to DiskFull: %+v", ws)
	}

	alice := e.session(t, "alice-secret")
	resp, body := get(t, alice, e.srv.URL, "/ui/queue?sort=oldest")
	row := `data-group="` + gid + `"`
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, row) || !strings.Contains(body, `<span class="tag size" title="an alert group: one decision for all its firings">3 firings</span>`) ||
		!strings.Contains(body, `href="/ui/group/`+gid+`"`) || strings.Index(body, row) > strings.Index(body, `data-analysis="`+lone+`"`) {
		t.Fatalf("queue page lacks the group of 3 before the lone alert: %d\n%s", resp.StatusCode, body)
	}
	for _, id := range firings {
		if strings.Contains(body, `data-analysis="`+id+`"`) {
			t.Errorf("firing %s of the group is listed apart from its group", id)
		}
	}
	resp, body = get(t, alice, e.srv.URL, "/ui/group/"+gid)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="group-size">3<`) || !strings.Contains(body, `id="group-form"`) ||
		strings.Count(body, `class="member"`) != 3 || !strings.Contains(body, `<option value="known_benign" selected>`) {
		t.Fatalf("group page: %d\n%s", resp.StatusCode, body)
	}
	checkCSP(t, "/ui/group/"+gid, resp)
	if resp, _ := get(t, alice, e.srv.URL, "/ui/group/g-nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown group page: %d, want 404", resp.StatusCode)
	}

	form := url.Values{"decision": {"known_benign"}, "note": {"deploy storm, rolled back"}, "dead_end": {"checked the pods' logs"}}
	rita := e.session(t, "rita-secret")
	if resp, _ := post(t, rita, e.srv.URL, "/ui/group/"+gid, form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("group decision with a read session: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/group/"+gid, url.Values{"decision": {"known_benign"}}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("group decision without a note: %d, want 400", resp.StatusCode)
	}
	resp, _ = post(t, alice, e.srv.URL, "/ui/group/"+gid, form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/queue?done=group" {
		t.Fatalf("group decision: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	g, _, err := e.app.GroupOfAnalysis(ctx, firings[1])
	if err != nil || !g.Decided || g.Analyst != "alice" || g.Decision != openrecall.DecisionKnownBenign {
		t.Fatalf("group after the decision: %v %+v", err, g)
	}
	for _, id := range firings {
		w, err := e.store.WaitingFor(ctx, id)
		if err != nil || !w.Decided || w.DecidedBy != "alice" || w.MemoryID != g.MemoryID {
			t.Errorf("firing %s: %v %+v, want decided by alice as %s", id, err, w, g.MemoryID)
		}
		var steps []string
		for _, a := range e.auditEntries(t, id) {
			if a.Step == usecase.StepGroupDecision || a.Step == usecase.StepAnalystDecision {
				steps = append(steps, a.Step)
				if !strings.Contains(a.Reason, "alice") {
					t.Errorf("%s %s does not name the analyst: %q", id, a.Step, a.Reason)
				}
			}
		}
		if len(steps) != 2 {
			t.Errorf("firing %s: decision audit steps %v, want one group-decision and one analyst-decision", id, steps)
		}
	}
	if ws, _ := e.app.Queue(ctx, openrecall.WaitingFilter{}); len(ws) != 1 || ws[0].AnalysisID != lone {
		t.Errorf("queue after the group decision: %+v", ws)
	}
	_, body = get(t, alice, e.srv.URL, "/ui/queue?done=group")
	if strings.Contains(body, row) || !strings.Contains(body, `id="flash"`) {
		t.Errorf("queue page after the decision still lists the group or lacks the flash:\n%s", body)
	}
	resp, _ = post(t, alice, e.srv.URL, "/ui/group/"+gid, form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/queue?done=groupdone" {
		t.Errorf("second group decision: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/group/"+gid); !strings.Contains(body, `id="decided"`) || strings.Contains(body, `id="group-form"`) {
		t.Errorf("decided group page:\n%s", body)
	}
}

// TestApprovingAProposalSettlesItsAnalysis: the analysis whose result
// carried a proposed exception waits for a person; approving the proposal
// on the exceptions page settles it through the exception use case, by
// the session's analyst, audited, and it leaves the queue.
func TestApprovingAProposalSettlesItsAnalysis(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p, id := e.proposed(t, 1, "TerminalShellInContainer", "shell in container", map[string]string{"user": "root"}, t0, usecase.WaitingFor)
	other := e.waiting(t, 2, "disk full", map[string]string{"alertname": "DiskFull"}, "", t0)
	if ws, _ := e.app.Queue(ctx, openrecall.WaitingFilter{}); len(ws) != 2 {
		t.Fatalf("queue before the approval: %+v", ws)
	}
	alice := e.session(t, "alice-secret")
	if resp, _ := post(t, alice, e.srv.URL, "/ui/proposals/"+p.ID+"/approve", url.Values{"note": {"ops checks"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	w, err := e.store.WaitingFor(ctx, id)
	if err != nil || !w.Decided || w.DecidedBy != "alice" || w.Decision != p.Decision || w.MemoryID != "" {
		t.Fatalf("the proposal's analysis after the approval: %v %+v", err, w)
	}
	found := false
	for _, a := range e.auditEntries(t, id) {
		if a.Step == usecase.StepAnalystDecision && strings.Contains(a.Reason, "alice") && strings.Contains(a.Reason, "exception") {
			found = true
		}
	}
	if !found {
		t.Errorf("no analyst-decision audit entry names alice and the exception: %+v", e.auditEntries(t, id))
	}
	if ws, _ := e.app.Queue(ctx, openrecall.WaitingFilter{}); len(ws) != 1 || ws[0].AnalysisID != other {
		t.Errorf("queue after the approval: want only %s, got %+v", other, ws)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+id); !strings.Contains(body, "by approving an exception") {
		t.Errorf("review of the settled analysis:\n%s", body)
	}
}

// TestGroupPageListsFiringsWithWhatDiffers: the group page lists a page of
// firings, each with its title, its time and a link to its review, the
// labels whose values differ between them as columns and those they share
// once above; a storm of 80 is two pages by a cursor, none of its firings
// left out.
func TestGroupPageListsFiringsWithWhatDiffers(t *testing.T) {
	e := newEnv(t)
	gid, firings := e.stormOf(t, 1, 80, "disk full on a node", t0, func(i int) map[string]string {
		return map[string]string{"instance": fmt.Sprintf("node-%02d:9100", i), "pod": fmt.Sprintf("exporter-%d", i%3), "job": "node"}
	})
	alice := e.session(t, "alice-secret")
	resp, body := get(t, alice, e.srv.URL, "/ui/group/"+gid)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("group page: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`<th class="varying">instance</th>`, `<th class="varying">pod</th>`, // differ: columns
		`<dt>job</dt><dd>node</dd>`, `<dt>alertname</dt><dd>Storm1</dd>`, // shared: once above
		`<td>node-07:9100</td>`, `href="/ui/review/` + firings[7] + `">disk full on a node</a>`,
		`<time datetime="` + t0.Add(7*time.Second).UTC().Format(time.RFC3339) + `"`,
		`id="pages">Firings 1–50 of 80.`, `Deciding this decides the group: 80 firings`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("first page lacks %s", want)
		}
	}
	if strings.Contains(body, `<th class="varying">job</th>`) || strings.Count(body, `class="member"`) != 50 {
		t.Errorf("first page: %d firings, job as a column: %v", strings.Count(body, `class="member"`), strings.Contains(body, `<th class="varying">job</th>`))
	}
	next := `href="/ui/group/` + gid + `?after=` + firings[49] + `&amp;n=50"`
	if !strings.Contains(body, next) {
		t.Fatalf("first page lacks the link %s:\n%s", next, body)
	}
	resp, body = get(t, alice, e.srv.URL, "/ui/group/"+gid+"?after="+firings[49]+"&n=50")
	if resp.StatusCode != http.StatusOK || strings.Count(body, `class="member"`) != 30 || !strings.Contains(body, `Firings 51–80 of 80.`) ||
		strings.Contains(body, `id="next"`) || !strings.Contains(body, `id="first"`) {
		t.Fatalf("second page: %d, %d firings\n%s", resp.StatusCode, strings.Count(body, `class="member"`), body)
	}
	for _, id := range firings[50:] {
		if !strings.Contains(body, `data-analysis="`+id+`"`) {
			t.Errorf("second page lacks firing %s", id)
		}
	}
	if resp, _ := get(t, alice, e.srv.URL, "/ui/group/"+gid+"?after=run-nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a cursor that is no firing of the group: %d, want 404", resp.StatusCode)
	}
}

// TestAHeadsReviewSaysItDecidesTheGroup: the review page of a group's head
// (and of any of its firings) links to the group and says, where it
// decides, that deciding it decides the group and how many firings; once
// the group is decided it says so and no longer warns.
func TestAHeadsReviewSaysItDecidesTheGroup(t *testing.T) {
	e := newEnv(t)
	gid, firings := e.storm(t, 1, 12, "crash loop after deploy", t0)
	lone := e.waiting(t, 2, "disk full", map[string]string{"alertname": "DiskFull"}, openrecall.DecisionKnownBenign, t0)
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/review/"+firings[0])
	if !strings.Contains(body, `id="group-of">This alert heads <a href="/ui/group/`+gid+`">`) ||
		!strings.Contains(body, `id="decides-group" class="warn">Deciding this decides the group: 12 firings`) {
		t.Errorf("head's review page:\n%s", body)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+firings[3]); !strings.Contains(body, "is a firing of") || !strings.Contains(body, "decides the group: 12 firings") {
		t.Errorf("a member's review page:\n%s", body)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+lone); strings.Contains(body, `id="group-of"`) || strings.Contains(body, `id="decides-group"`) {
		t.Errorf("a lone alert's review page mentions a group:\n%s", body)
	}
	resp, _ := post(t, alice, e.srv.URL, "/ui/review/"+firings[0], url.Values{"action": {"approve"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve the head: %d", resp.StatusCode)
	}
	for _, id := range firings {
		if w, err := e.store.WaitingFor(context.Background(), id); err != nil || !w.Decided {
			t.Errorf("firing %s after its head was approved: %v %+v", id, err, w)
		}
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+firings[0]); !strings.Contains(body, ", decided known_benign by alice.") || strings.Contains(body, `id="decides-group"`) {
		t.Errorf("head's review page once decided:\n%s", body)
	}
}
