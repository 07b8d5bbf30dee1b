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
	"github.com/openrecall/openrecall/usecase"
)

// bypassed stores two memories of alert n's identity and a result memory
// bypassed on their vote, as serve's sink stores one (the history row is
// written with it), and returns its analysis id and the memories.
func (e *env) bypassed(t testing.TB, n int, title string, at time.Time) (string, []openrecall.Incident) {
	t.Helper()
	ctx := context.Background()
	alert := openrecall.Alert{ID: fmt.Sprintf("alert-by-%d", n), Format: "openrecall", Title: title, Severity: openrecall.SeverityLow,
		Status: openrecall.StatusFiring, Labels: map[string]string{"alertname": fmt.Sprintf("DiskFull%d", n), "service": "db"}}
	fp, id := e.app.Fingerprinter.Extract(alert), e.app.Fingerprinter.Identify(alert)
	var incs []openrecall.Incident
	var matches []openrecall.Match
	var supporting []string
	for i, who := range []string{"carol", "dave"} {
		inc, _, err := e.store.Retain(ctx, openrecall.Incident{Fingerprint: fp, Identity: id, Decision: openrecall.DecisionFalsePositive,
			Analyst: who, Note: fmt.Sprintf("cron <b>noise</b> %d", i), SourceAlertID: fmt.Sprintf("old-%d-%d", n, i), Severity: openrecall.SeverityLow})
		if err != nil {
			t.Fatal(err)
		}
		incs = append(incs, inc)
		matches = append(matches, openrecall.Match{Incident: inc, Score: 0.95})
		supporting = append(supporting, inc.ID)
	}
	res := openrecall.Result{
		AnalysisID: fmt.Sprintf("run-by-%06d", n), Batch: "run-by", Outcome: openrecall.ResultTriaged, Alert: alert,
		Fingerprint: fp, Identity: id, Matches: matches, Decision: openrecall.DecisionFalsePositive, Bypassed: true,
		Triage: openrecall.TriageResult{Decision: openrecall.DecisionFalsePositive, Supporting: supporting, StrongCount: 2, ConsistentCount: 2},
		Guard:  openrecall.GuardVerdict{Bypass: true, Reason: "unanimous"},
		Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK},
			{Step: openrecall.StepMemoryBypass, Reason: "memory vouched", Outcome: openrecall.OutcomeOK, Skipped: true}},
	}
	res.Audit = audit.Entries(res, at)
	if _, err := e.sink.PersistBatch(ctx, []openrecall.Result{res}, nil); err != nil {
		t.Fatal(err)
	}
	return res.AnalysisID, incs
}

// TestHistoryPageListsWhatMemoryClosed: the History page lists a bypassed
// analysis with its title (linked to its analysis page), identity and the
// memories that voted with their analysts and notes (escaped), and the
// "this was wrong" form for a session that acts only; the search ignores
// case; a filter that finds nothing says so and shows itself.
func TestHistoryPageListsWhatMemoryClosed(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id, incs := e.bypassed(t, 1, "Disk full on db-1", at)
	alice := e.session(t, "alice-secret")
	resp, body := get(t, alice, e.srv.URL, "/ui/history")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /ui/history: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{`href="/ui/analysis/` + id + `"`, "Disk full on db-1", "DiskFull1", incs[0].ID, "by carol",
		"cron &lt;b&gt;noise&lt;/b&gt; 0", "by dave", `action="/ui/history/` + id + `/wrong"`, `<time datetime=`, `href="/ui/history">History</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the history page lacks %q:\n%s", want, body)
		}
	}
	rita := e.session(t, "rita-secret")
	if _, body := get(t, rita, e.srv.URL, "/ui/history"); !strings.Contains(body, "Disk full on db-1") || strings.Contains(body, "/wrong\"") {
		t.Errorf("a read-only session: want the row without the form:\n%s", body)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/history?search=DISK+FULL&kind=bypass"); !strings.Contains(body, id) {
		t.Errorf("a search ignoring case does not find %s:\n%s", id, body)
	}
	_, body = get(t, alice, e.srv.URL, "/ui/history?kind=exception&search=zzz")
	if !strings.Contains(body, `id="empty"`) || !strings.Contains(body, "kind exception") || !strings.Contains(body, "zzz") || strings.Contains(body, id) {
		t.Errorf("an empty filter result: want it said with the filter:\n%s", body)
	}
	if resp, _ := get(t, alice, e.srv.URL, "/ui/history?kind=bogus"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown kind: %d, want 400", resp.StatusCode)
	}
	// The bypassed analysis's own page names the alert and the memories.
	_, body = get(t, alice, e.srv.URL, "/ui/analysis/"+id)
	for _, want := range []string{"Disk full on db-1", `id="closure"`, incs[1].ID, "by dave", "memory-bypass"} {
		if !strings.Contains(body, want) {
			t.Errorf("the analysis page lacks %q:\n%s", want, body)
		}
	}
}

// TestHistoryPagesByCursor: with more closures than a page holds, the
// "older" link reaches every one, newest first, none twice.
func TestHistoryPagesByCursor(t *testing.T) {
	e := newEnv(t)
	n := 0
	results := make([]openrecall.Result, 0)
	for i := range 60 {
		alert := openrecall.Alert{ID: fmt.Sprintf("alert-p-%d", i), Title: fmt.Sprintf("page row %02d", i), Labels: map[string]string{"alertname": "Paged"}}
		results = append(results, openrecall.Result{AnalysisID: fmt.Sprintf("run-p-%06d", i), Batch: "run-p", Outcome: openrecall.ResultTriaged,
			Alert: alert, Identity: openrecall.Identity{Rule: "Paged"}, Decision: openrecall.DecisionFalsePositive, Bypassed: true})
	}
	if err := e.store.RecordClosures(context.Background(), results, usecase.ClosedBy); err != nil {
		t.Fatal(err)
	}
	alice := e.session(t, "alice-secret")
	seen := map[string]bool{}
	path := "/ui/history"
	for path != "" && n < 5 {
		n++
		_, body := get(t, alice, e.srv.URL, path)
		for _, r := range results {
			if strings.Contains(body, `data-analysis="`+r.AnalysisID+`"`) {
				if seen[r.AnalysisID] {
					t.Errorf("%s on two pages", r.AnalysisID)
				}
				seen[r.AnalysisID] = true
			}
		}
		path = ""
		if i := strings.Index(body, `<a href="/ui/history?after=`); i >= 0 {
			rest := body[i+len(`<a href="`):]
			path = strings.ReplaceAll(rest[:strings.Index(rest, `"`)], "&amp;", "&")
		}
	}
	if len(seen) != len(results) || n != 2 {
		t.Errorf("%d of %d closures seen over %d pages, want all over 2", len(seen), len(results), n)
	}
}

// TestThisWasWrong: "this was wrong" needs a reason, the retain scope and
// the same origin; it returns the analysis to the queue, takes back the
// memories that vouched (recall no longer finds them), audits it with the
// analyst, and says so; a second time changes nothing.
func TestThisWasWrong(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id, incs := e.bypassed(t, 1, "Disk full on db-1", at)
	alice := e.session(t, "alice-secret")
	rita := e.session(t, "rita-secret")
	path := "/ui/history/" + id + "/wrong"
	if resp, _ := post(t, alice, e.srv.URL, path, url.Values{"reason": {"  "}}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("without a reason: %d, want 400", resp.StatusCode)
	}
	if resp, _ := post(t, rita, e.srv.URL, path, url.Values{"reason": {"outage"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a read-only session: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, alice, e.srv.URL, path, url.Values{"reason": {"outage"}}, "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, alice, e.srv.URL, "/ui/history/run-nope/wrong", url.Values{"reason": {"outage"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an analysis never closed: %d, want 404", resp.StatusCode)
	}
	if q, _ := e.app.Queue(ctx, openrecall.WaitingFilter{}); len(q) != 0 {
		t.Fatalf("nothing waits yet, queue %+v", q)
	}
	resp, _ := post(t, alice, e.srv.URL, path, url.Values{"reason": {"it was the real outage"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/history?done=wrong" {
		t.Fatalf("this was wrong: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	q, err := e.app.Queue(ctx, openrecall.WaitingFilter{})
	if err != nil || len(q) != 1 || q[0].AnalysisID != id || q[0].Reason != openrecall.WaitWrong ||
		!strings.Contains(q[0].Why, "alice") || !strings.Contains(q[0].Why, "it was the real outage") {
		t.Fatalf("queue after wrong = %+v, %v", q, err)
	}
	for _, inc := range incs {
		got, err := e.store.Get(ctx, inc.ID)
		if err != nil || got.ForgottenAt.IsZero() {
			t.Errorf("memory %s after wrong: %+v, %v; want taken back", inc.ID, got, err)
		}
	}
	if m, err := e.store.Recall(ctx, incs[0].Identity, incs[0].Fingerprint, 10); err != nil || len(m) != 0 {
		t.Errorf("recall after wrong: %+v, %v; want nothing", m, err)
	}
	entries, err := e.store.AuditByAnalysis(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if last := entries[len(entries)-1]; last.Step != usecase.StepHistoryWrong || !strings.Contains(last.Reason, "alice") {
		t.Errorf("the last audit entry of %s is %+v, want history-wrong by alice", id, last)
	}
	_, body := get(t, alice, e.srv.URL, "/ui/history?done=wrong")
	if !strings.Contains(body, `id="flash"`) || !strings.Contains(body, "wrong, said alice") || strings.Contains(body, `action="`+path+`"`) {
		t.Errorf("the page after: want the flash and the row marked wrong by alice, no form:\n%s", body)
	}
	if _, body := get(t, alice, e.srv.URL, "/ui/review/"+id); !strings.Contains(body, "Disk full on db-1") {
		t.Errorf("the review page of the returned analysis lacks its title:\n%s", body)
	}
	resp, _ = post(t, alice, e.srv.URL, path, url.Values{"reason": {"again"}})
	if resp.Header.Get("Location") != "/ui/history?done=already" {
		t.Errorf("a second time: to %q, want done=already", resp.Header.Get("Location"))
	}
}
