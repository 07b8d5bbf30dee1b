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
	"github.com/openrecall/openrecall/audit"
)

// notifyPager gives every result one intent to the receiver pager, keyed
// by its alert: a trigger, or a resolve for a resolved alert.
func notifyPager(r openrecall.Result, _ string) []openrecall.Intent {
	kind := openrecall.IntentTrigger
	if r.Alert.Status == openrecall.StatusResolved {
		kind = openrecall.IntentResolve
	}
	return []openrecall.Intent{{Receiver: "pager", Kind: kind, Key: "openrecall-" + r.Alert.ID}}
}

// notified stores a triaged result about alert n through the sink with
// notifyPager, as serve stores one, and returns its analysis id.
func (e *env) notified(t testing.TB, n int, at time.Time) string {
	t.Helper()
	alert := openrecall.Alert{ID: fmt.Sprintf("alert-out-%d", n), Title: fmt.Sprintf("outbound %d", n), Status: openrecall.StatusFiring,
		Severity: openrecall.SeverityHigh, Labels: map[string]string{"alertname": "Outbound"}}
	res := openrecall.Result{AnalysisID: fmt.Sprintf("run-out-%06d", n), Batch: "run-out", Outcome: openrecall.ResultTriaged,
		Alert: alert, Decision: openrecall.DecisionEscalated}
	res.Audit = audit.Entries(res, at)
	sink := e.sink
	sink.Notify = notifyPager
	if _, err := sink.PersistBatch(context.Background(), []openrecall.Result{res}, nil); err != nil {
		t.Fatal(err)
	}
	return res.AnalysisID
}

// killAll claims every pending intent and makes it a dead letter with
// errText, as the dispatcher gives up on one, and returns their ids.
func (e *env) killAll(t testing.TB, errText string) []int64 {
	t.Helper()
	ctx := context.Background()
	claimed, err := e.store.ClaimIntents(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, in := range claimed {
		if err := e.store.IntentDead(ctx, in.ID, errText); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	return ids
}

func TestDeadLettersPage(t *testing.T) {
	e := newEnv(t)
	hostile := xssPayloads(t)
	first := e.notified(t, 1, t0)
	e.notified(t, 2, t0)
	dead := e.killAll(t, "PagerDuty answered 400: "+strings.Join(hostile, " "))
	if len(dead) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dead))
	}
	e.notified(t, 3, t0) // pending
	alice := e.session(t, "alice-secret")
	rita := e.session(t, "rita-secret")

	resp, body := get(t, alice, e.srv.URL, "/ui/outbox")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/ui/outbox: %d\n%s", resp.StatusCode, body)
	}
	checkCSP(t, "/ui/outbox", resp)
	for _, want := range []string{
		`id="outbox"`, "1 pending, 2 dead",
		fmt.Sprintf(`data-intent="%d"`, dead[0]), fmt.Sprintf(`data-intent="%d"`, dead[1]),
		`href="/ui/analysis/` + first + `"`, fmt.Sprintf(`action="/ui/outbox/%d/retry"`, dead[0]),
		`data-receiver="pager"`, "PagerDuty answered 400",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/ui/outbox lacks %s", want)
		}
	}
	for _, x := range hostile {
		if strings.Contains(body, x) {
			t.Errorf("/ui/outbox carries %q unescaped", x)
		}
	}
	// Every page's header counts them.
	if _, body := get(t, alice, e.srv.URL, "/ui/queue"); !strings.Contains(body, "1 pending, 2 dead") {
		t.Errorf("the queue's header lacks the outbox's counts")
	}

	// A read session sees, and cannot retry.
	if _, body := get(t, rita, e.srv.URL, "/ui/outbox"); strings.Contains(body, `class="retry"`) || !strings.Contains(body, `data-intent=`) {
		t.Errorf("a read session is offered Retry, or sees no dead letter")
	}
	path := fmt.Sprintf("/ui/outbox/%d/retry", dead[0])
	if resp, _ := post(t, rita, e.srv.URL, path, url.Values{}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("retry by a read session: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, alice, e.srv.URL, path, url.Values{}, "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site retry: %d, want 403", resp.StatusCode)
	}

	resp, _ = post(t, alice, e.srv.URL, path, url.Values{})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/outbox?done=retried" {
		t.Fatalf("retry: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if es := e.auditEntries(t, fmt.Sprintf("notify-retry-%d", dead[0])); len(es) != 1 || !strings.HasSuffix(es[0].Reason, "retried by alice") {
		t.Errorf("the retry's audit entry: %+v", es)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/outbox?done=retried"); !strings.Contains(body, "pending again") ||
		strings.Contains(body, fmt.Sprintf(`data-intent="%d"`, dead[0])) || !strings.Contains(body, "2 pending, 1 dead") {
		t.Errorf("after the retry the page still lists it, or says nothing:\n%s", body)
	}
	for _, tt := range []struct {
		path string
		want int
	}{
		{path, http.StatusConflict}, // pending now: not a dead letter
		{"/ui/outbox/999999/retry", http.StatusNotFound},
		{"/ui/outbox/x/retry", http.StatusNotFound},
	} {
		if resp, body := post(t, alice, e.srv.URL, tt.path, url.Values{}); resp.StatusCode != tt.want {
			t.Errorf("POST %s: %d, want %d\n%s", tt.path, resp.StatusCode, tt.want, body)
		}
	}
}

func TestDeadLettersPageWhenNothingWaits(t *testing.T) {
	e := newEnv(t)
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/outbox")
	if !strings.Contains(body, "No dead letters") || strings.Contains(body, `id="outbox"`) {
		t.Errorf("an empty outbox: the page says otherwise, or the header counts it:\n%s", body)
	}
}

// TestDeadDigestIsNoAnalysisLink: a dead digest names its window, not an
// analysis: the page shows its id without a link to an analysis page that
// does not exist.
func TestDeadDigestIsNoAnalysisLink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	from := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := openrecall.DigestID(from, from.Add(30*time.Minute))
	if n, err := e.store.AddDigest(ctx, id, "openrecall-"+id, []string{"chat"}); err != nil || n != 1 {
		t.Fatalf("add digest: %d, %v", n, err)
	}
	e.killAll(t, "slack answered 404 channel_not_found")
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/outbox")
	if !strings.Contains(body, id) {
		t.Fatalf("the dead digest %s is not listed:\n%s", id, body)
	}
	if strings.Contains(body, `href="/ui/analysis/`+id) {
		t.Errorf("the dead digest links to an analysis page:\n%s", body)
	}
}
