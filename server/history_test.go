package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

// closedByMemory stores a memory and a result memory bypassed on its
// vote, through a sink that records what was closed without a person as
// serve's does, and returns the analysis id and the memory.
func (e *env) closedByMemory(n int, title string) (string, openrecall.Incident) {
	e.t.Helper()
	ctx := context.Background()
	id := openrecall.Identity{Rule: fmt.Sprintf("DiskFull%d", n), Service: "db"}
	inc, _, err := e.store.Retain(ctx, openrecall.Incident{Identity: id, Decision: openrecall.DecisionFalsePositive, Analyst: "carol",
		Note: "cron noise", SourceAlertID: fmt.Sprintf("old-%d", n)})
	if err != nil {
		e.t.Fatal(err)
	}
	r := openrecall.Result{AnalysisID: fmt.Sprintf("run-h-%06d", n), Batch: "run-h", Outcome: openrecall.ResultTriaged, Identity: id,
		Alert:    openrecall.Alert{ID: fmt.Sprintf("alert-h-%d", n), Title: title, Status: openrecall.StatusFiring},
		Decision: openrecall.DecisionFalsePositive, Bypassed: true, Matches: []openrecall.Match{{Incident: inc, Score: 1}},
		Triage: openrecall.TriageResult{Decision: openrecall.DecisionFalsePositive, Supporting: []string{inc.ID}}}
	r.Audit = audit.Entries(r, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	sink := memory.Sink{Store: e.store, Seal: audit.NewSealer(trailKey).Seal, Waits: usecase.WaitingFor, Closes: usecase.ClosedBy}
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{r}, nil); err != nil {
		e.t.Fatal(err)
	}
	return r.AnalysisID, inc
}

// TestHistoryAPI: GET /api/v1/history lists what was closed without a
// person for a read token, filtered and paged; POST
// /api/v1/history/{analysis_id}/wrong needs the retain scope and a
// reason, writes as the token's name, returns the analysis to the queue
// and forgets the memory that vouched; a second time answers changed
// false.
func TestHistoryAPI(t *testing.T) {
	e := newEnv(t, options{tokens: outboxTokens, noServe: true})
	viewer, alice, sender := outboxTokens[0].Secret, outboxTokens[1].Secret, outboxTokens[2].Secret
	first, _ := e.closedByMemory(1, "Disk full on db-1")
	second, inc := e.closedByMemory(2, "Memory pressure")

	list := func(query, token string, want int) openrecall.ClosurePage {
		t.Helper()
		var got openrecall.ClosurePage
		resp, b := e.do(http.MethodGet, "/api/v1/history"+query, token, nil, nil, nil)
		if resp.StatusCode != want {
			t.Fatalf("GET /api/v1/history%s: %d, want %d: %s", query, resp.StatusCode, want, b)
		}
		if want == http.StatusOK {
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
		}
		return got
	}
	all := list("", viewer, http.StatusOK)
	if len(all.Closures) != 2 || all.Closures[0].AnalysisID != second || all.Closures[1].AnalysisID != first ||
		len(all.Closures[0].Voters) != 1 || all.Closures[0].Voters[0].Analyst != "carol" || all.Next != "" {
		t.Errorf("the history, newest first: %+v", all)
	}
	page := list("?limit=1", viewer, http.StatusOK)
	if len(page.Closures) != 1 || page.Next == "" {
		t.Fatalf("a page of one: %+v", page)
	}
	if rest := list("?limit=1&after="+page.Next, viewer, http.StatusOK); len(rest.Closures) != 1 || rest.Closures[0].AnalysisID != first || rest.Next != "" {
		t.Errorf("the page after: %+v", rest)
	}
	if got := list("?search=disk+FULL&kind=bypass", viewer, http.StatusOK); len(got.Closures) != 1 || got.Closures[0].AnalysisID != first {
		t.Errorf("a search: %+v", got)
	}
	for q, code := range map[string]int{"?kind=model": 400, "?limit=0": 400, "?after=nope": 400} {
		list(q, viewer, code)
	}
	list("", "", http.StatusUnauthorized)
	list("", sender, http.StatusForbidden)

	wrong := func(id, token, body string, want int) usecase.Wronged {
		t.Helper()
		var out usecase.Wronged
		resp := e.post("/api/v1/history/"+id+"/wrong", token, body, &out)
		if resp.StatusCode != want {
			t.Fatalf("wrong %s with %s: %d, want %d (%+v)", id, body, resp.StatusCode, want, out)
		}
		return out
	}
	wrong(second, viewer, `{"reason":"outage"}`, http.StatusForbidden)
	wrong(second, alice, `{"reason":" "}`, http.StatusBadRequest)
	wrong(second, alice, `{"reason":"outage","analyst":"mallory"}`, http.StatusForbidden)
	wrong("run-nope", alice, `{"reason":"outage"}`, http.StatusNotFound)
	out := wrong(second, alice, `{"reason":"it was the outage"}`, http.StatusOK)
	if !out.Changed || len(out.Forgotten) != 1 || out.Forgotten[0] != inc.ID || out.Closure.WrongBy != "alice" || out.Closure.WrongReason != "it was the outage" {
		t.Errorf("wrong: %+v", out)
	}
	ctx := context.Background()
	q, err := e.app.Queue(ctx, openrecall.WaitingFilter{})
	if err != nil || len(q) != 1 || q[0].AnalysisID != second || q[0].Reason != openrecall.WaitWrong {
		t.Errorf("the queue after: %+v, %v", q, err)
	}
	if m, err := e.store.Recall(ctx, inc.Identity, inc.Fingerprint, 10); err != nil || len(m) != 0 {
		t.Errorf("recall after: %+v, %v; want nothing", m, err)
	}
	if again := wrong(second, alice, `{"reason":"again"}`, http.StatusOK); again.Changed || again.Closure.WrongReason != "it was the outage" {
		t.Errorf("a second time: %+v", again)
	}
	if got := list("", viewer, http.StatusOK); !got.Closures[0].Wrong || got.Closures[0].WrongBy != "alice" || got.Closures[1].Wrong {
		t.Errorf("the history after: %+v", got)
	}
}
