package cockpit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/server/cockpit"
)

// rowIDs are the analysis ids of a queue page's rows, in order.
func rowIDs(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`data-(?:analysis|group)="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// nextPage is the href of a queue page's "Next page" link, unescaped;
// empty on the last page.
func nextPage(body string) string {
	m := regexp.MustCompile(`href="([^"]+)" id="next-page"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return strings.ReplaceAll(m[1], "&amp;", "&")
}

// alertOf is an alert of severity sev titled title.
func alertOf(title string, sev openrecall.Severity, labels map[string]string) openrecall.Alert {
	return openrecall.Alert{ID: "alert-" + title, Format: "openrecall", Title: title, Text: title, Labels: labels,
		Severity: sev, Service: "checkout", Status: openrecall.StatusFiring}
}

// TestQueueIsMostUrgentFirst: attacks first, then what still fires,
// then severity with unknown as critical, then the newest — a critical
// that arrives last is on top of the criticals, above an older high
// alert.
func TestQueueIsMostUrgentFirst(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	info := e.waitingAlert(t, 1, alertOf("info oldest", openrecall.SeverityInfo, nil), "", t0)
	high := e.waitingAlert(t, 2, alertOf("high older", openrecall.SeverityHigh, nil), "", t0.Add(time.Minute))
	crit := e.waitingAlert(t, 3, alertOf("critical newest", openrecall.SeverityCritical, nil), "", t0.Add(time.Hour))
	unknown := e.waitingAlert(t, 4, alertOf("unknown severity", openrecall.SeverityUnknown, nil), "", t0.Add(2*time.Hour))
	attack := e.waitingAlert(t, 5, alertOf("Failed password for root from 203.0.113.9: ssh brute force", openrecall.SeverityLow, nil), "", t0.Add(3*time.Hour))
	if w, err := e.store.WaitingFor(ctx, attack); err != nil || w.Attack == "" {
		t.Fatalf("the brute force alert has no attack pattern (%v): pick another", err)
	}
	_, body := get(t, e.session(t, "alice-secret"), e.srv.URL, "/ui/queue")
	want := []string{attack, unknown, crit, high, info}
	if got := rowIDs(body); !slices.Equal(got, want) {
		t.Errorf("queue order %v, want %v", got, want)
	}
	if !strings.Contains(body, `<span class="attack">1 attack</span>`) || !strings.Contains(body, `<strong>5 waiting</strong>`) {
		t.Errorf("the counts at the top do not say 5 waiting, 1 attack")
	}
	if i, j := strings.Index(body, `id="count"`), strings.Index(body, `id="queue"`); i < 0 || i > j || strings.Index(body, `id="bulk-approve"`) > j {
		t.Errorf("the counts and the bulk action are not above the list")
	}
	_, body = get(t, e.session(t, "alice-secret"), e.srv.URL, "/ui/queue?sort=newest")
	if got := rowIDs(body); !slices.Equal(got, []string{attack, unknown, crit, high, info}) {
		t.Errorf("newest first: %v", got)
	}
}

// TestQueueFindsIgnoringCase: rule and service filters are substrings,
// the search reads titles, identities and labels, all ignoring case; an
// empty answer names the filter.
func TestQueueFindsIgnoringCase(t *testing.T) {
	e := newEnv(t)
	lat := e.waiting(t, 1, "checkout latency high", map[string]string{"alertname": "HighLatency", "pod": "checkout-7d9f-q8k2"}, "", t0)
	disk := e.waiting(t, 2, "disk full on db-1", map[string]string{"alertname": "DiskFull", "service": "db"}, "", t0)
	alice := e.session(t, "alice-secret")
	for q, want := range map[string][]string{
		"rule=latency":     {lat},
		"rule=DISKFULL":    {disk},
		"q=Q8K2":           {lat},
		"q=pod%3Dcheckout": {lat},
		"q=disk+empty":     nil,
		"q=disk+full+ON":   {disk},
		"service=DB":       {disk},
		"q=checkout":       {lat}, // disk's identity is DiskFull on db
	} {
		_, body := get(t, alice, e.srv.URL, "/ui/queue?sort=oldest&"+q)
		got := rowIDs(body)
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v", q, got, w)
		}
		if len(want) == 0 && !strings.Contains(body, "Nothing waiting matches the filter: search “disk empty”") {
			t.Errorf("%s: the empty answer does not name the filter", q)
		}
	}
	for _, q := range []string{"severity=bogus", "sort=sideways", "state=gone", "after=not-a-cursor"} {
		if resp, body := get(t, alice, e.srv.URL, "/ui/queue?"+q); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is not") && !strings.Contains(body, "cursor") {
			t.Errorf("%s: %d, want 400 saying why", q, resp.StatusCode)
		}
	}
}

// TestQueuePagesEveryItemOnce: the queue pages with a cursor and no cap:
// following "Next page" shows every item once, in order, even when an
// item of a page already seen is decided in between.
func TestQueuePagesEveryItemOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	n := 2*cockpit.QueuePageSize + 7
	ws := make([]openrecall.Waiting, n)
	sevs := []openrecall.Severity{openrecall.SeverityLow, openrecall.SeverityCritical, openrecall.SeverityHigh}
	for i := range ws {
		ws[i] = openrecall.Waiting{AnalysisID: fmt.Sprintf("run-x-%06d", i), Batch: "run-x", Since: t0.Add(time.Duration(i%50) * time.Second),
			Reason: openrecall.WaitEscalated, Why: "escalated", Title: "t", Severity: sevs[i%3], Result: &openrecall.Result{}}
	}
	if err := e.store.RecordWaiting(ctx, ws); err != nil {
		t.Fatal(err)
	}
	alice := e.session(t, "alice-secret")
	var seen []string
	path := "/ui/queue"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than the items need")
		}
		resp, body := get(t, alice, e.srv.URL, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		ids := rowIDs(body)
		if len(ids) > cockpit.QueuePageSize {
			t.Fatalf("%s: %d rows", path, len(ids))
		}
		seen = append(seen, ids...)
		if pages == 0 {
			// Decide the first page's first item: the next pages go on
			// from where this one ended all the same.
			if _, err := e.store.Decide(ctx, openrecall.Waiting{AnalysisID: ids[0], DecidedAt: t0.Add(time.Hour), DecidedBy: "alice", Decision: openrecall.DecisionKnownBenign}); err != nil {
				t.Fatal(err)
			}
		}
		path = strings.TrimPrefix(nextPage(body), e.srv.URL)
	}
	if len(seen) != n {
		t.Fatalf("%d rows over the pages, want %d", len(seen), n)
	}
	if slices.Sort(seen); len(slices.Compact(seen)) != n {
		t.Errorf("an item was shown twice")
	}
}

// TestQueueMarksWhatResolvedWhileItWaited: the sender's recovery of the
// firing an analysis waits about marks it on the queue and the review
// page, and the state filter finds it; a firing alert is not marked.
func TestQueueMarksWhatResolvedWhileItWaited(t *testing.T) {
	e := newEnv(t)
	goneID, stillID := e.resolvedPair(t)
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/queue")
	if got := rowIDs(body); !slices.Equal(got, []string{stillID, goneID}) {
		t.Errorf("queue %v: what still fires comes before what resolved", got)
	}
	if !regexp.MustCompile(`class="item resolved" data-analysis="`+goneID+`"`).MatchString(body) || strings.Contains(body, `class="item resolved" data-analysis="`+stillID+`"`) {
		t.Errorf("the resolved alert is not marked, or the firing one is")
	}
	if !strings.Contains(body, `1 resolved while waiting`) {
		t.Errorf("the counts do not say one resolved")
	}
	for state, want := range map[string][]string{"resolved": {goneID}, "firing": {stillID}} {
		if _, body := get(t, alice, e.srv.URL, "/ui/queue?state="+state); !slices.Equal(rowIDs(body), want) {
			t.Errorf("state=%s: %v, want %v", state, rowIDs(body), want)
		}
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+goneID); !strings.Contains(body, `id="resolved"`) {
		t.Errorf("the review page does not say the alert resolved")
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+stillID); strings.Contains(body, `id="resolved"`) {
		t.Errorf("the review page of a firing alert says it resolved")
	}
}

// resolvedPair records two analyses that wait, as serve does (the alert's
// firing delivery named as its analysis): the first one's alert resolved
// since (its recovery arrived), the second one's still fires.
func (e *env) resolvedPair(t *testing.T) (goneID, stillID string) {
	t.Helper()
	ctx := context.Background()
	gone := alertOf("disk full on db-1", openrecall.SeverityCritical, nil)
	still := alertOf("latency high", openrecall.SeverityHigh, nil)
	names := map[int64]string{1: "run-test-000001", 2: "run-test-000002", 3: "serve-recovery"}
	name := func(id int64) string { return names[id] }
	if _, err := e.store.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alerts", Alert: gone}, {Endpoint: "alerts", Alert: still}}, 0, name); err != nil {
		t.Fatal(err)
	}
	goneID = e.waitingAlert(t, 1, gone, "", t0)
	stillID = e.waitingAlert(t, 2, still, "", t0)
	recovery := gone
	recovery.Status = openrecall.StatusResolved
	if out, err := e.store.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alerts", Alert: recovery}}, 0, name); err != nil || out[0].State != openrecall.AlertResolved {
		t.Fatalf("recovery: %+v, %v", out, err)
	}
	return goneID, stillID
}

// TestSettleResolvedInBulk: what resolved while it waited is settled in
// bulk as "resolved by itself" — confirmed first (nothing decided), then
// reported per item: the resolved one decided known_benign with a note
// saying so (a memory learns it), the firing one refused and still
// waiting.
func TestSettleResolvedInBulk(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	goneID, stillID := e.resolvedPair(t)
	alice := e.session(t, "alice-secret")
	if _, body := get(t, alice, e.srv.URL, "/ui/queue"); !strings.Contains(body, `id="bulk-settle"`) ||
		!strings.Contains(body, `value="`+goneID+`" class="pick"`) {
		t.Fatalf("the queue offers no settling of the resolved alert")
	}
	form := url.Values{"id": {goneID, stillID}}
	resp, body := post(t, alice, e.srv.URL, "/ui/queue/settle", form)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Settle 1 as resolved by itself?") ||
		!strings.Contains(body, `action="/ui/queue/settle"`) || !strings.Contains(body, "its alert still fires") {
		t.Fatalf("confirmation: %d\n%s", resp.StatusCode, body)
	}
	if w, _ := e.store.WaitingFor(ctx, goneID); w.Decided {
		t.Fatal("the confirmation page decided")
	}
	form.Set("confirm", "1")
	resp, body = post(t, alice, e.srv.URL, "/ui/queue/settle", form)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Settling report") || !strings.Contains(body, "1 decided") || !strings.Contains(body, "1 failed") {
		t.Fatalf("report: %d\n%s", resp.StatusCode, body)
	}
	w, err := e.store.WaitingFor(ctx, goneID)
	if err != nil || !w.Decided || w.Decision != openrecall.DecisionKnownBenign || w.DecidedBy != "alice" || w.MemoryID == "" {
		t.Fatalf("the resolved alert: %+v, %v", w, err)
	}
	inc, err := e.store.Get(ctx, w.MemoryID)
	if err != nil || !strings.Contains(inc.Note, "resolved by itself") {
		t.Errorf("memory %s: note %q, %v", w.MemoryID, inc.Note, err)
	}
	if w, _ := e.store.WaitingFor(ctx, stillID); w.Decided {
		t.Error("the firing alert was settled as resolved by itself")
	}
}

// TestQueueLiveAnswersOnlyChanges: the script's poll gets 204 while
// the queue is as it has it, and the list alone — with a critical that
// arrived since on top — once it changed.
func TestQueueLiveAnswersOnlyChanges(t *testing.T) {
	e := newEnv(t)
	e.waitingAlert(t, 1, alertOf("high first", openrecall.SeverityHigh, nil), "", t0)
	alice := e.session(t, "alice-secret")
	_, body := get(t, alice, e.srv.URL, "/ui/queue")
	m := regexp.MustCompile(`data-version="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the queue page has no version")
	}
	live := "/ui/queue/live?sort=urgency&v=" + m[1]
	if resp, body := get(t, alice, e.srv.URL, live); resp.StatusCode != http.StatusNoContent || body != "" {
		t.Fatalf("unchanged queue: %d %q, want 204", resp.StatusCode, body)
	}
	crit := e.waitingAlert(t, 2, alertOf("critical later", openrecall.SeverityCritical, nil), "", t0.Add(time.Hour))
	resp, body := get(t, alice, e.srv.URL, live)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(body, `id="queue"`) {
		t.Fatalf("changed queue: %d, want the list alone:\n%s", resp.StatusCode, body)
	}
	if ids := rowIDs(body); len(ids) != 2 || ids[0] != crit {
		t.Errorf("the new critical is not on top: %v", ids)
	}
	if resp, _ := get(t, e.client(t), e.srv.URL, live); resp.StatusCode == http.StatusOK {
		t.Errorf("the live list answered without a session")
	}
}
