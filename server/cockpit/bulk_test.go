package cockpit_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestBulkApproveConfirmsFirst: approving a selection answers, first, a
// page that says how many and which (title, identity, proposed decision)
// and decides nothing; its Confirm form posts the same ids with
// confirm=1, without JavaScript.
func TestBulkApproveConfirmsFirst(t *testing.T) {
	e := newEnv(t)
	a := e.waiting(t, 1, "disk full on db-1", map[string]string{"alertname": "DiskFull"}, openrecall.DecisionKnownBenign, t0)
	b := e.waiting(t, 2, "cert expires soon", map[string]string{"alertname": "CertExpiry"}, openrecall.DecisionDuplicate, t0.Add(time.Second))
	alice := e.session(t, "alice-secret")
	resp, body := post(t, alice, e.srv.URL, "/ui/queue/approve", url.Values{"id": {a, b, a}, "note": {"weekly noise"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bulk approve, first submit: %d\n%s", resp.StatusCode, body)
	}
	checkCSP(t, "/ui/queue/approve", resp)
	for _, want := range []string{
		"Approve 2 as proposed?", "Nothing is decided until you confirm.", `with the note “weekly noise”`,
		`data-analysis="` + a + `"`, ">disk full on db-1</a>", ">cert expires soon</a>", "<td>known_benign</td>", "<td>duplicate</td>",
		`<input type="hidden" name="confirm" value="1">`, `<input type="hidden" name="id" value="` + a + `">`,
		`<input type="hidden" name="id" value="` + b + `">`, `<input type="hidden" name="note" value="weekly noise">`,
		`id="confirm">Confirm: approve 2</button>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("confirmation page lacks %s", want)
		}
	}
	if n := strings.Count(body, `class="bulk-item waits"`); n != 2 {
		t.Errorf("confirmation lists %d items, want 2 (a repeated id once)", n)
	}
	ctx := context.Background()
	for _, id := range []string{a, b} {
		if w, err := e.store.WaitingFor(ctx, id); err != nil || w.Decided {
			t.Errorf("%s after the first submit: %v decided=%v, want it to wait", id, err, w.Decided)
		}
	}
	if ws, _ := e.app.Queue(ctx, openrecall.WaitingFilter{}); len(ws) != 2 {
		t.Errorf("queue after the first submit: %d waiting, want 2", len(ws))
	}
	rita := e.session(t, "rita-secret")
	if resp, _ := post(t, rita, e.srv.URL, "/ui/queue/approve", url.Values{"id": {a}, "confirm": {"1"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("confirm with a read session: %d, want 403", resp.StatusCode)
	}
}

// TestBulkApproveReportsEachItem: confirmed, a bulk approval decides what
// waits and reports each id: decided, decided already, not found (an
// unknown id named, the others decided all the same); the summary says
// what was and was not done.
func TestBulkApproveReportsEachItem(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.waiting(t, 1, "disk full on db-1", map[string]string{"alertname": "DiskFull"}, openrecall.DecisionKnownBenign, t0)
	b := e.waiting(t, 2, "cert expires soon", map[string]string{"alertname": "CertExpiry"}, openrecall.DecisionDuplicate, t0)
	done := e.waiting(t, 3, "fan noise", map[string]string{"alertname": "Fan"}, openrecall.DecisionFalsePositive, t0)
	none := e.waiting(t, 4, "no proposal", map[string]string{"alertname": "Odd"}, "", t0)
	alice := e.session(t, "alice-secret")
	if resp, _ := post(t, alice, e.srv.URL, "/ui/review/"+done, url.Values{"action": {"approve"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve %s: %d", done, resp.StatusCode)
	}

	// The confirmation names the unknown id and what was decided before.
	_, body := post(t, alice, e.srv.URL, "/ui/queue/approve", url.Values{"id": {a, "run-nope-1", b, done}})
	if !strings.Contains(body, "Approve 2 as proposed?") || !strings.Contains(body, "1 decided already will not change.") ||
		!strings.Contains(body, "1 not found.") || !strings.Contains(body, `<input type="hidden" name="id" value="run-nope-1">`) {
		t.Errorf("confirmation with an unknown and a decided id:\n%s", body)
	}

	resp, body := post(t, alice, e.srv.URL, "/ui/queue/approve", url.Values{"id": {a, "run-nope-1", b, done, none}, "confirm": {"1"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirmed bulk approve: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`id="summary">2 decided, 1 decided already (nothing changed), 1 not found, 1 failed. Those not decided still wait, as they were; the others were decided.`,
		`class="bulk-item decided" data-analysis="` + a + `"`, `class="bulk-item decided" data-analysis="` + b + `"`,
		`class="bulk-item already decided" data-analysis="` + done + `"`,
		`class="bulk-item not found" data-analysis="run-nope-1"`, `<td class="mono">run-nope-1</td>`,
		`class="bulk-item failed" data-analysis="` + none + `"`, "has no proposed decision to approve",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	for id, want := range map[string]bool{a: true, b: true, done: true, none: false} {
		if w, err := e.store.WaitingFor(ctx, id); err != nil || w.Decided != want {
			t.Errorf("%s after the approval: %v decided=%v, want %v", id, err, w.Decided, want)
		}
	}
	if w, _ := e.store.WaitingFor(ctx, a); w.DecidedBy != "alice" || w.Decision != openrecall.DecisionKnownBenign {
		t.Errorf("%s decided %s by %q, want known_benign by alice", a, w.Decision, w.DecidedBy)
	}
}
