package cockpit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// XSSPath holds the hostile texts placed in alert titles, labels, notes
// and dead ends, one a line; the e2e test checks the DOM of a real browser
// with them too.
const XSSPath = "testdata/xss.txt"

// xssPayloads reads XSSPath.
func xssPayloads(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(XSSPath)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(out) < 10 {
		t.Fatalf("%s holds %d payloads, want 10 or more", XSSPath, len(out))
	}
	return out
}

// TestHostileTextIsEscapedOnEveryPage puts every payload in alert titles,
// label names and values, annotations, links, notes and dead ends, and
// checks that no page carries one of them as markup.
func TestHostileTextIsEscapedOnEveryPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	XSSPayloads := xssPayloads(t)
	var ids []string
	for i, p := range XSSPayloads {
		// Every payload in a label, an annotation, a link's kind and a
		// link: the review page's Sources block shows annotations and links.
		alert := openrecall.Alert{
			ID: "alert-" + p, Format: "openrecall", Title: p, Text: p + " (text)", Severity: openrecall.SeverityHigh, Service: "checkout", Status: "firing",
			Labels: map[string]string{"alertname": "Hostile" + fmt.Sprint(i), p: p}, Annotations: map[string]string{p: p},
			Links: map[string]string{openrecall.LinkSource: p, p: "https://hostile.example/" + fmt.Sprint(i)},
		}
		ids = append(ids, e.waitingAlert(t, i, alert, openrecall.DecisionFalsePositive, time.Unix(int64(i), 0)))
	}
	alice := e.session(t, "alice-secret")
	// A memory with every payload as its note and dead ends, recalled on
	// the review of the first alert.
	first, err := e.store.WaitingFor(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := post(t, alice, e.srv.URL, "/ui/review/"+ids[0], url.Values{"action": {"decide"}, "decision": {"real"},
		"note": {strings.Join(XSSPayloads, " ")}, "dead_end": XSSPayloads})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("decide: %d", resp.StatusCode)
	}
	rc, err := e.app.Recall(ctx, usecase.Subject{Alerts: []openrecall.Alert{first.Result.Alert}}, 5)
	if err != nil || len(rc.Matches) == 0 {
		t.Fatalf("recall %v %+v", err, rc)
	}
	// A proposal and an approved exception carrying every payload in their
	// match fields and note.
	for i, x := range XSSPayloads {
		prop := e.proposal(t, i, "Hostile"+fmt.Sprint(i), x, map[string]string{"user": x, x: "v"}, time.Unix(int64(i), 0))
		if i%2 == 0 {
			if _, err := e.app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: prop.ID, Analyst: "alice", Note: x}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An alert group whose firings carry every payload in their title and
	// labels (the group page shows what differs and what is shared).
	gid, _ := e.stormOf(t, 1, len(XSSPayloads), XSSPayloads[0], t0, func(i int) map[string]string {
		return map[string]string{"instance": XSSPayloads[i], XSSPayloads[i]: "v", "shared": XSSPayloads[len(XSSPayloads)-1]}
	})
	pages := []string{"/ui/queue", "/ui/memory?id=" + rc.Matches[0].Incident.ID, "/ui/exceptions", "/ui/group/" + gid}
	for _, id := range ids {
		pages = append(pages, "/ui/review/"+id, "/ui/analysis/"+id)
	}
	sort.Strings(pages)
	// The bulk approval's confirmation and report show titles and ids
	// (hostile ids included) and the note.
	bulk := url.Values{"id": append(append([]string(nil), ids[1:]...), XSSPayloads...), "note": {strings.Join(XSSPayloads, " ")}}
	confirmed := url.Values{"confirm": {"1"}, "id": bulk["id"], "note": bulk["note"]}
	for _, p := range append(pages, "POST /ui/queue/approve", "POST /ui/queue/approve?confirm") {
		var resp *http.Response
		var body string
		switch p {
		case "POST /ui/queue/approve":
			resp, body = post(t, alice, e.srv.URL, "/ui/queue/approve", bulk)
		case "POST /ui/queue/approve?confirm":
			resp, body = post(t, alice, e.srv.URL, "/ui/queue/approve", confirmed)
			if !strings.Contains(body, `class="bulk-item decided"`) || !strings.Contains(body, `class="bulk-item not found"`) {
				t.Errorf("%s: the report lacks a decided or a not-found item", p)
			}
		default:
			resp, body = get(t, alice, e.srv.URL, p)
		}
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
		if p == "/ui/exceptions" && (strings.Count(body, "data-proposal=") != len(XSSPayloads)/2 || strings.Count(body, "data-exception=") != (len(XSSPayloads)+1)/2) {
			t.Errorf("%s lists %d proposals and %d exceptions, want the hostile ones", p, strings.Count(body, "data-proposal="), strings.Count(body, "data-exception="))
		}
		for _, x := range XSSPayloads {
			if strings.Contains(body, x) {
				t.Errorf("%s carries %q unescaped", p, x)
			}
		}
		for _, tag := range []string{"<script>", "<img", "<svg", "<iframe", "<math", "<details", "<b>", "<style", "<a href=\"javascript"} {
			if strings.Contains(body, tag) {
				t.Errorf("%s has %s", p, tag)
			}
		}
	}
}
