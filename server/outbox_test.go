package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/server"
)

// outboxTokens are the tokens of the outbox tests: one that reads, one
// that retains, one that ingests.
var outboxTokens = []server.Token{
	{Name: "viewer", Analyst: "viewer", Secret: "viewer-secret-0123456789", Scopes: []string{server.ScopeRead}},
	{Name: "alice", Analyst: "alice", Secret: "alice-secret-0123456789", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
	{Name: "sender", Secret: "sender-secret-0123456789", Scopes: []string{server.ScopeIngest}},
}

// notifyPager gives every result one intent to the receiver pager, keyed
// by its alert: a trigger, or a resolve for a resolved alert.
func notifyPager(r openrecall.Result, _ string) []openrecall.Intent {
	kind := openrecall.IntentTrigger
	if r.Alert.Status == openrecall.StatusResolved {
		kind = openrecall.IntentResolve
	}
	return []openrecall.Intent{{Receiver: "pager", Kind: kind, Key: "openrecall-" + r.Alert.ID}}
}

// notified stores a result about alert (resolved: its recovery) through a
// sink with notifyPager, as serve stores one, and returns its analysis id.
func (e *env) notified(id, alert string, resolved bool) string {
	e.t.Helper()
	r := openrecall.Result{AnalysisID: id, Batch: "run-out", Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionEscalated,
		Alert: openrecall.Alert{ID: alert, Title: "outbound " + alert, Status: openrecall.StatusFiring}}
	if resolved {
		r.Outcome, r.Alert.Status, r.Decision = openrecall.ResultResolved, openrecall.StatusResolved, ""
	}
	r.Audit = audit.Entries(r, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	sink := memory.Sink{Store: e.store, Seal: audit.NewSealer(trailKey).Seal, Notify: notifyPager}
	if _, err := sink.PersistBatch(context.Background(), []openrecall.Result{r}, nil); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// claimAll claims every pending intent and records outcome for each (the
// dispatcher's report), returning their ids.
func (e *env) claimAll(outcome func(ctx context.Context, id int64) error) []int64 {
	e.t.Helper()
	ctx := context.Background()
	claimed, err := e.store.ClaimIntents(ctx, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	var ids []int64
	for _, in := range claimed {
		if err := outcome(ctx, in.ID); err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	return ids
}

func TestOutboxAPI(t *testing.T) {
	e := newEnv(t, options{tokens: outboxTokens, noServe: true})
	viewer, alice, sender := outboxTokens[0].Secret, outboxTokens[1].Secret, outboxTokens[2].Secret
	e.notified("run-out-000001", "a1", false)
	e.notified("run-out-000002", "a2", false)
	dead := e.claimAll(func(ctx context.Context, id int64) error {
		return e.store.IntentDead(ctx, id, "PagerDuty answered 400")
	})
	e.notified("run-out-000003", "a3", false) // pending

	list := func(query, token string, want int) []openrecall.OutboxIntent {
		t.Helper()
		var got []openrecall.OutboxIntent
		resp, b := e.do(http.MethodGet, "/api/v1/outbox"+query, token, nil, nil, nil)
		if resp.StatusCode != want {
			t.Fatalf("GET /api/v1/outbox%s: %d, want %d: %s", query, resp.StatusCode, want, b)
		}
		if want == http.StatusOK {
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
		}
		return got
	}
	all := list("", viewer, http.StatusOK)
	if len(all) != 3 || all[0].AnalysisID != "run-out-000003" || all[0].State != openrecall.IntentPending || all[2].State != openrecall.IntentDead {
		t.Errorf("the whole outbox, newest first: %+v", all)
	}
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"?state=dead", 2}, {"?state=pending", 1}, {"?state=sent", 0}, {"?receiver=pager", 3}, {"?receiver=nobody", 0},
		{"?analysis=run-out-000002", 1}, {"?limit=1", 1}, {"?state=dead&receiver=pager&analysis=run-out-000001", 1},
	} {
		if got := list(tt.query, viewer, http.StatusOK); len(got) != tt.want {
			t.Errorf("GET /api/v1/outbox%s: %d intents, want %d", tt.query, len(got), tt.want)
		}
	}
	for q, code := range map[string]int{"?state=lost": 400, "?limit=0": 400, "?limit=x": 400} {
		list(q, viewer, code)
	}
	list("", "", http.StatusUnauthorized)
	list("", sender, http.StatusForbidden)

	retry := func(id, token string, want int) openrecall.OutboxIntent {
		t.Helper()
		resp, b := e.do(http.MethodPost, "/api/v1/outbox/"+id+"/retry", token, nil, nil, nil)
		if resp.StatusCode != want {
			t.Fatalf("retry %s: %d, want %d: %s", id, resp.StatusCode, want, b)
		}
		var in openrecall.OutboxIntent
		if want == http.StatusOK {
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
		}
		return in
	}
	first := fmt.Sprint(dead[0])
	retry(first, viewer, http.StatusForbidden)
	in := retry(first, alice, http.StatusOK)
	if in.ID != dead[0] || in.State != openrecall.IntentPending || in.AnalysisID != "run-out-000001" || !in.DeadAt.IsZero() || in.LastError == "" {
		t.Errorf("the retried intent: %+v", in)
	}
	if es, err := e.store.AuditByAnalysis(context.Background(), "notify-retry-"+first); err != nil || len(es) != 1 || !strings.HasSuffix(es[0].Reason, "retried by alice") {
		t.Errorf("the retry's audit entry: %+v, %v", es, err)
	}
	if got := list("?state=dead", viewer, http.StatusOK); len(got) != 1 || got[0].ID != dead[1] {
		t.Errorf("dead after the retry: %+v", got)
	}
	retry(first, alice, http.StatusConflict) // pending now
	retry("999999", alice, http.StatusNotFound)
	retry("x", alice, http.StatusBadRequest)

	// A dead trigger whose episode's resolve went out since is refused.
	e.claimAll(func(ctx context.Context, id int64) error { return e.store.IntentSent(ctx, id, nil) })
	e.notified("run-out-000004", "a4", false)
	late := e.claimAll(func(ctx context.Context, id int64) error { return e.store.IntentDead(ctx, id, "timeout") })
	e.notified("run-out-000005", "a4", true)
	e.claimAll(func(ctx context.Context, id int64) error { return e.store.IntentSent(ctx, id, nil) })
	resp, b := e.do(http.MethodPost, fmt.Sprintf("/api/v1/outbox/%d/retry", late[0]), alice, nil, nil, nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "later notification") {
		t.Errorf("retry of a trigger whose resolve was sent: %d %s, want 409 saying why", resp.StatusCode, b)
	}

	if resp, _ := e.do(http.MethodPut, "/api/v1/outbox", viewer, nil, nil, nil); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("PUT /api/v1/outbox: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestNotifyMetrics: the dispatcher's events and the outbox's counts, read
// at the scrape from a real store, are in the exposition.
func TestNotifyMetrics(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	e.notified("run-out-000001", "a1", false)
	e.notified("run-out-000002", "a2", false)
	e.claimAll(func(ctx context.Context, id int64) error { return e.store.IntentDead(ctx, id, "refused") })
	e.notified("run-out-000003", "a3", false)

	p := server.NewPrometheus(func() float64 { return 0 })
	p.WatchOutbox(func() (openrecall.OutboxCounts, error) { return e.store.OutboxCounts(context.Background()) })
	p.Sent("pager", openrecall.IntentTrigger, 1500*time.Millisecond)
	p.Sent("pager", openrecall.IntentResolve, 100*time.Millisecond)
	p.Failed("pager", true)
	p.Failed("chat", false)
	p.Dead("chat")
	p.LeaseLost("pager")
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`openrecall_notify_sent_total{kind="trigger",receiver="pager"} 1`,
		`openrecall_notify_sent_total{kind="resolve",receiver="pager"} 1`,
		`openrecall_notify_failed_total{receiver="pager"} 1`,
		`openrecall_notify_failed_total{receiver="chat"} 1`,
		`openrecall_notify_retried_total{receiver="pager"} 1`,
		`openrecall_notify_dead_total{receiver="chat"} 1`,
		`openrecall_notify_lease_lost_total{receiver="pager"} 1`,
		`openrecall_notify_latency_seconds_count{receiver="pager"} 2`,
		`openrecall_notify_latency_seconds_bucket{receiver="pager",le="2.5"} 2`,
		`openrecall_outbox_pending{receiver="pager"} 1`,
		`openrecall_outbox_dead{receiver="pager"} 2`,
		`openrecall_outbox_oldest_pending_seconds `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the exposition lacks %s", want)
		}
	}
	if strings.Contains(body, `openrecall_notify_retried_total{receiver="chat"}`) {
		t.Errorf("a failure not retried is counted as retried")
	}
}
