package cockpit_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestExceptionsPageApprovesAndRevokes drives the exceptions page: a
// proposed exception is announced on the queue and listed with its form;
// approving it makes an exception the session's analyst approved (audited
// by the use case); revoking needs a reason and names the analyst; a
// second revocation changes nothing; the state filter lists each state.
func TestExceptionsPageApprovesAndRevokes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.proposal(t, 1, "TerminalShellInContainer", "shell in container", map[string]string{"user": "root", "process": "sh"}, t0)
	alice := e.session(t, "alice-secret")

	_, body := get(t, alice, e.srv.URL, "/ui/queue")
	if !strings.Contains(body, `id="proposals"`) || !strings.Contains(body, "1 proposed exception waits") {
		t.Errorf("the queue does not announce the proposal:\n%s", body)
	}
	resp, body := get(t, alice, e.srv.URL, "/ui/exceptions")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-proposal="`+p.ID+`"`) ||
		!strings.Contains(body, "process=sh user=root") || !strings.Contains(body, `action="/ui/proposals/`+p.ID+`/approve"`) ||
		!strings.Contains(body, `id="no-exceptions"`) {
		t.Fatalf("exceptions page: %d\n%s", resp.StatusCode, body)
	}
	checkCSP(t, "/ui/exceptions", resp)

	resp, _ = post(t, alice, e.srv.URL, "/ui/proposals/"+p.ID+"/approve", url.Values{"note": {"ops uptime checks"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/exceptions?done=exception" {
		t.Fatalf("approve: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	list, err := e.app.ListExceptions(ctx, openrecall.ExceptionActive)
	if err != nil || len(list) != 1 {
		t.Fatalf("active exceptions after the approval: %v %+v", err, list)
	}
	exc := list[0]
	if exc.Analyst != "alice" || exc.ProposalID != p.ID || exc.Note != "ops uptime checks" || exc.Match["user"] != "root" {
		t.Errorf("approved exception %+v", exc.Exception)
	}
	if pending, _ := e.app.ListProposals(ctx, true); len(pending) != 0 {
		t.Errorf("the approved proposal still waits: %+v", pending)
	}
	_, body = get(t, alice, e.srv.URL, "/ui/exceptions?done=exception")
	if !strings.Contains(body, `id="flash"`) || !strings.Contains(body, `data-exception="`+exc.ID+`"`) ||
		!strings.Contains(body, `id="no-proposals"`) || !strings.Contains(body, `action="/ui/exceptions/`+exc.ID+`/revoke"`) {
		t.Errorf("exceptions page after the approval:\n%s", body)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/queue"); strings.Contains(body, `id="proposals"`) {
		t.Errorf("the queue still announces an approved proposal")
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/proposals/"+p.ID+"/approve", url.Values{}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("approving an approved proposal again: %d, want 400", resp.StatusCode)
	}
	if l, _ := e.app.ListExceptions(ctx, ""); len(l) != 1 {
		t.Errorf("approving again stored another exception: %+v", l)
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/proposals/prop_nope/approve", url.Values{}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("approving an unknown proposal: %d, want 404", resp.StatusCode)
	}

	if resp, _ := post(t, alice, e.srv.URL, "/ui/exceptions/"+exc.ID+"/revoke", url.Values{"reason": {"  "}}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("revoke without a reason: %d, want 400", resp.StatusCode)
	}
	if l, _ := e.app.ListExceptions(ctx, openrecall.ExceptionActive); len(l) != 1 {
		t.Fatalf("a revocation without a reason revoked")
	}
	resp, _ = post(t, alice, e.srv.URL, "/ui/exceptions/"+exc.ID+"/revoke", url.Values{"reason": {"the uptime checks moved to a sidecar"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/exceptions?done=revoked" {
		t.Fatalf("revoke: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	revoked, err := e.app.ListExceptions(ctx, openrecall.ExceptionRevoked)
	if err != nil || len(revoked) != 1 || revoked[0].RevokedBy != "alice" || revoked[0].RevokeReason != "the uptime checks moved to a sidecar" {
		t.Fatalf("revoked exceptions: %v %+v", err, revoked)
	}
	resp, _ = post(t, alice, e.srv.URL, "/ui/exceptions/"+exc.ID+"/revoke", url.Values{"reason": {"again"}})
	if resp.Header.Get("Location") != "/ui/exceptions?done=unchanged" {
		t.Errorf("second revoke: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/exceptions/exc_nope/revoke", url.Values{"reason": {"r"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("revoking an unknown exception: %d, want 404", resp.StatusCode)
	}

	for state, want := range map[string]string{"revoked": `data-exception="` + exc.ID + `"`, "active": `id="no-exceptions"`, "expired": "No exception is expired"} {
		if resp, body := get(t, alice, e.srv.URL, "/ui/exceptions?state="+state); resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("state %s: %d, lacks %q", state, resp.StatusCode, want)
		}
	}
	if resp, _ := get(t, alice, e.srv.URL, "/ui/exceptions?state=bogus"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown state: %d, want 400", resp.StatusCode)
	}

	// Both actions are in the trail with the analyst.
	for _, step := range []string{openrecall.StepExceptionApprove, openrecall.StepExceptionRevoke} {
		es := e.auditEntries(t, step+"-"+exc.ID)
		if len(es) != 1 || !strings.Contains(es[0].Reason, "alice") {
			t.Errorf("%s audit entries %+v, want one naming alice", step, es)
		}
	}
}

// TestExceptionActionsNeedTheRetainScopeAndTheSameOrigin: a read session,
// no session and a cross-origin post are refused, and nothing changes.
func TestExceptionActionsNeedTheRetainScopeAndTheSameOrigin(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.proposal(t, 1, "TerminalShellInContainer", "shell", map[string]string{"user": "root"}, t0)
	ch, err := e.app.AddException(ctx, usecase.AddRequest{Identity: openrecall.Identity{Rule: "Maintenance", Service: "db"},
		MaxSeverity: openrecall.SeverityLow, Decision: openrecall.DecisionKnownBenign, Expiry: 24 * 3600e9, Analyst: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	rita := e.session(t, "rita-secret")
	alice := e.session(t, "alice-secret")
	actions := map[string]url.Values{
		"/ui/proposals/" + p.ID + "/approve":            {},
		"/ui/exceptions/" + ch.Exception.ID + "/revoke": {"reason": {"r"}},
	}
	for path, form := range actions {
		for who, c := range map[string]*http.Client{"read session": rita, "no session": e.client(t)} {
			if resp, _ := post(t, c, e.srv.URL, path, form); resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d, want 403", path, who, resp.StatusCode)
			}
		}
		resp, _ := post(t, alice, e.srv.URL, path, form, "Sec-Fetch-Site", "cross-site")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, resp.StatusCode)
		}
	}
	if pending, _ := e.app.ListProposals(ctx, true); len(pending) != 1 {
		t.Errorf("a refused approval approved: %d pending", len(pending))
	}
	if l, _ := e.app.ListExceptions(ctx, openrecall.ExceptionActive); len(l) != 1 {
		t.Errorf("a refused revocation revoked: %d active", len(l))
	}
	_, body := get(t, rita, e.srv.URL, "/ui/exceptions")
	if strings.Contains(body, "approve-proposal") || strings.Contains(body, `class="revoke"`) || !strings.Contains(body, "(read only)") {
		t.Errorf("a read session is offered the exception forms:\n%s", body)
	}
}
