package cockpit_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestDecideOtherwiseChoosesNoDecisionForAPerson: the review page's
// "decide otherwise" select starts on an empty, required "choose…"
// option, and the server refuses a decision left empty, saying so, and
// decides nothing.
func TestDecideOtherwiseChoosesNoDecisionForAPerson(t *testing.T) {
	e := newEnv(t)
	id := e.waiting(t, 1, "disk full", map[string]string{"alertname": "DiskFull"}, openrecall.DecisionKnownBenign, t0)
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/review/"+id)
	if !strings.Contains(body, `<select id="decision" name="decision" required><option value="">choose…</option><option value="false_positive">`) {
		t.Errorf("decide-otherwise select does not start on an empty choice:\n%s", body)
	}
	if i := strings.Index(body, `id="decide-form"`); i < 0 || strings.Contains(body[i:], " selected") {
		t.Errorf("decide-otherwise form preselects a decision")
	}
	for _, v := range []url.Values{
		{"action": {"decide"}, "note": {"looked at it"}},
		{"action": {"decide"}, "decision": {""}, "note": {"looked at it"}},
		{"action": {"decide"}, "decision": {"  "}, "note": {"looked at it"}},
	} {
		resp, body := post(t, alice, e.srv.URL, "/ui/review/"+id, v)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "choose a decision: none was chosen, so nothing was decided") {
			t.Errorf("decide otherwise with %v: %d\n%s", v, resp.StatusCode, body)
		}
	}
	if w, err := e.store.WaitingFor(context.Background(), id); err != nil || w.Decided {
		t.Errorf("after the refused decisions: %v decided=%v", err, w.Decided)
	}
}

// TestReviewOfADetectionOffersItsProposal: the review page of an analysis
// whose result carries a proposed exception says so, with the exception
// it would make, when it would expire if approved now and the approval
// form (the exceptions page's); approved, it names the exception.
func TestReviewOfADetectionOffersItsProposal(t *testing.T) {
	e := newEnv(t)
	p, id := e.proposed(t, 1, "TerminalShellInContainer", "shell in container", map[string]string{"user": "root"}, t0, usecase.WaitingFor)
	alice := e.session(t, "alice-secret")
	resp, body := get(t, alice, e.srv.URL, "/ui/review/"+id)
	expires := time.Now().UTC().Add(p.Expiry)
	for _, want := range []string{
		`<section id="proposal">`, "proposes an exception: known_benign", "user=root", `id="proposal-waits"`,
		`action="/ui/proposals/` + p.ID + `/approve"`, `id="approve-proposal"`, `datetime="` + expires.Format("2006-01-02T"),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("review of the detection lacks %s", want)
		}
	}
	if !strings.Contains(body, ">in 29 d</time>") && !strings.Contains(body, ">in 30 d</time>") {
		t.Errorf("review does not say the exception would expire in 30 days")
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("review: %d", resp.StatusCode)
	}
	rita := e.session(t, "rita-secret")
	if _, body := get(t, rita, e.srv.URL, "/ui/review/"+id); !strings.Contains(body, `id="proposal-waits"`) || strings.Contains(body, `id="proposal-form"`) {
		t.Errorf("a read session sees the proposal without its form:\n%s", body)
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/proposals/"+p.ID+"/approve", url.Values{}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+id); !strings.Contains(body, `id="proposal-approved">Approved already: exception exc_`) || strings.Contains(body, `id="proposal-form"`) {
		t.Errorf("review once the proposal was approved:\n%s", body)
	}
	other := e.waiting(t, 2, "disk full", map[string]string{"alertname": "DiskFull"}, openrecall.DecisionKnownBenign, t0)
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+other); strings.Contains(body, `id="proposal"`) {
		t.Errorf("a review without a proposal mentions one")
	}
}
