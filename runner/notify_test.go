package runner_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/openrecall/openrecall/runner"
)

// TestEscalationWebhook: an alert escalated to a person is posted to the
// outbound webhook, and Run returns only once the post is made.
func TestEscalationWebhook(t *testing.T) {
	var mu sync.Mutex
	var got []runner.Escalation
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e runner.Escalation
		if err := json.NewDecoder(r.Body).Decode(&e); err == nil {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		}
	}))
	defer hook.Close()
	e := newEnv(t, options{webhook: hook.URL})
	sv := e.wait(e.enqueue(`{"id":"ssh-1","title":"Brute force: 500 failed ssh logins for root from 203.0.113.9","service":"bastion","severity":"high"}`))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].AnalysisID != sv.AnalysisID || got[0].Decision != sv.Result.Decision ||
		got[0].ResultPath != "/api/v1/results/"+sv.AnalysisID {
		t.Fatalf("webhook got %+v for decision %s", got, sv.Result.Decision)
	}
}
