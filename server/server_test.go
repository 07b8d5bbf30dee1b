package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/usecase"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(fixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAlertmanagerWebhook: a real captured webhook is accepted with one
// analysis per alert, triaged once; its redelivery is answered with the same
// analyses and not triaged again; the resolved notice is recorded; the
// audit trail verifies and the cost curve counts each triage once.
func TestAlertmanagerWebhook(t *testing.T) {
	e := newEnv(t, options{})
	var first accepted
	if resp := e.post("/api/v1/alerts/alertmanager", "", fixture(t, "alertmanager_payload.json"), &first); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("webhook: %d", resp.StatusCode)
	}
	if first.Accepted != 2 || len(first.Analyses) != 2 || first.RequestID == "" {
		t.Fatalf("first delivery: %+v", first)
	}
	for _, a := range first.Analyses {
		sv := e.wait(a.AnalysisID, "")
		if sv.Result.Outcome != openrecall.ResultTriaged || sv.Result.AnalysisID != a.AnalysisID || len(sv.Result.Audit) != len(sv.Result.Steps) {
			t.Errorf("%s: outcome %s, analysis %s, %d audit entries for %d steps", a.AnalysisID, sv.Result.Outcome, sv.Result.AnalysisID, len(sv.Result.Audit), len(sv.Result.Steps))
		}
		if sv.Result.Audit[0].Sequence == 0 || sv.Result.Audit[0].Hash == "" {
			t.Errorf("%s: audit entries not sealed: %+v", a.AnalysisID, sv.Result.Audit[0])
		}
	}
	var again accepted
	e.post("/api/v1/alerts/alertmanager", "", fixture(t, "alertmanager_payload.json"), &again)
	if again.Accepted != 0 || again.Duplicates != 2 {
		t.Fatalf("redelivery: %+v", again)
	}
	for i, a := range again.Analyses {
		if !a.Duplicate || a.AnalysisID != first.Analyses[i].AnalysisID {
			t.Errorf("redelivered alert %d answered %+v, want the first analysis %s", i, a, first.Analyses[i].AnalysisID)
		}
	}
	var resolved accepted
	e.post("/api/v1/alerts/alertmanager", "", fixture(t, "alertmanager_payload_resolved.json"), &resolved)
	if resolved.Accepted != 2 {
		t.Fatalf("resolved: %+v", resolved)
	}
	for i, a := range resolved.Analyses {
		if a.State != openrecall.AlertResolved || a.AlertID != first.Analyses[i].AlertID {
			t.Errorf("resolved %d: %+v, want state resolved for alert %s", i, a, first.Analyses[i].AlertID)
		}
		if sv := e.wait(a.AnalysisID, ""); sv.Result.Outcome != openrecall.ResultResolved {
			t.Errorf("resolved %s: outcome %s", a.AnalysisID, sv.Result.Outcome)
		}
	}
	// A firing notification of the same episode arriving after the resolve
	// is a late redelivery (Alertmanager ids name the episode).
	var late accepted
	if e.post("/api/v1/alerts/alertmanager", "", fixture(t, "alertmanager_payload.json"), &late); late.Duplicates != 2 {
		t.Errorf("late redelivery after the resolve: %+v", late)
	}
	var ready map[string]any
	if resp, b := e.do(http.MethodGet, "/readyz", "", nil, nil, &ready); resp.StatusCode != http.StatusOK || ready["ready"] != true ||
		ready["database"] != "writable" || ready["shadow"] != false {
		t.Errorf("readyz: %d %s", resp.StatusCode, b)
	}
	var rep usecase.Verified
	if resp, b := e.do(http.MethodGet, "/api/v1/audit/verify", "", nil, nil, &rep); resp.StatusCode != http.StatusOK || !rep.Intact || rep.CostPoints == 0 || rep.KeyID != trailKey.ID() {
		t.Fatalf("audit verify: %d %s", resp.StatusCode, b)
	}
	var cost struct {
		Alerts int `json:"alerts"`
	}
	if e.do(http.MethodGet, "/api/v1/cost", "", nil, nil, &cost); cost.Alerts != 2 {
		t.Errorf("cost curve has %d alerts, want the 2 triaged", cost.Alerts)
	}
	var list struct {
		Results []openrecall.Served `json:"results"`
		Next    int64               `json:"next"`
	}
	// Go's client asks for gzip and says when it unzipped the answer.
	if resp, _ := e.do(http.MethodGet, "/api/v1/results?since=0", "", nil, nil, &list); !resp.Uncompressed || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("results: gzipped %v, CSP %q", resp.Uncompressed, resp.Header.Get("Content-Security-Policy"))
	}
	if len(list.Results) != 4 || list.Next != list.Results[3].Cursor {
		t.Fatalf("results since 0: %d results, next %d", len(list.Results), list.Next)
	}
	e.do(http.MethodGet, fmt.Sprintf("/api/v1/results?since=%d", list.Next), "", nil, nil, &list)
	if len(list.Results) != 0 {
		t.Errorf("results past the last cursor: %d", len(list.Results))
	}
	if got := e.metric(`openrecall_alerts_redelivered_total{endpoint="alertmanager"}`); got != "4" {
		t.Errorf("redelivered metric %s, want 4", got)
	}
	if got := e.metric(`openrecall_alerts_analysed_total{decision="",outcome="resolved"}`); got != "2" {
		t.Errorf("resolved metric %s, want 2", got)
	}
}

// TestSeverityRiseTriagedAgain: the same alert id re-sent at a higher
// severity is triaged again; at the same severity it is not.
func TestSeverityRiseTriagedAgain(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	body := func(sev string) string {
		return `{"id":"db-7-disk","title":"Disk 91% full on db-7","service":"postgres","severity":"` + sev + `"}`
	}
	var a, b, c accepted
	e.post("/api/v1/alerts", "", body("warning"), &a)
	e.post("/api/v1/alerts", "", body("warning"), &b)
	e.post("/api/v1/alerts", "", body("critical"), &c)
	if a.Accepted != 1 || b.Duplicates != 1 || c.Accepted != 1 || c.Analyses[0].AnalysisID == a.Analyses[0].AnalysisID {
		t.Fatalf("warning %+v, warning again %+v, critical %+v", a, b, c)
	}
}

// TestTokens: without a token 401, with a token lacking the scope 403, with
// the right scope the request passes; PagerDuty's routing_key is an ingest
// token.
func TestTokens(t *testing.T) {
	e := newEnv(t, options{noServe: true, tokens: []server.Token{
		{Name: "am", Secret: "ingest-secret", Scopes: []string{server.ScopeIngest}},
		{Name: "ro", Secret: "read-secret", Scopes: []string{server.ScopeRead}},
	}})
	alert := `{"title":"checkout 5xx spike","service":"checkout"}`
	tests := []struct {
		name, method, path, token, body string
		want                            int
	}{
		{"no token", http.MethodPost, "/api/v1/alerts", "", alert, http.StatusUnauthorized},
		{"unknown token", http.MethodPost, "/api/v1/alerts", "guess", alert, http.StatusUnauthorized},
		{"read token ingests", http.MethodPost, "/api/v1/alerts", "read-secret", alert, http.StatusForbidden},
		{"ingest token ingests", http.MethodPost, "/api/v1/alerts", "ingest-secret", alert, http.StatusAccepted},
		{"ingest token reads", http.MethodGet, "/api/v1/results?since=0", "ingest-secret", "", http.StatusForbidden},
		{"read token reads", http.MethodGet, "/api/v1/results?since=0", "read-secret", "", http.StatusOK},
		{"read token retains", http.MethodPost, "/api/v1/retain", "read-secret", `{}`, http.StatusForbidden},
		{"routing key", http.MethodPost, "/v2/enqueue", "", `{"routing_key":"ingest-secret","event_action":"trigger","dedup_key":"k1","payload":{"summary":"disk full","source":"db-1","severity":"warning"}}`, http.StatusAccepted},
		{"bad routing key", http.MethodPost, "/v2/enqueue", "", `{"routing_key":"nope","event_action":"trigger","dedup_key":"k2","payload":{"summary":"disk full","source":"db-1","severity":"warning"}}`, http.StatusUnauthorized},
		{"healthz is open", http.MethodGet, "/healthz", "", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			var got map[string]any
			resp, b := e.do(tt.method, tt.path, tt.token, body, map[string]string{"X-Request-Id": "req-" + strings.ReplaceAll(tt.name, " ", "-")}, &got)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, b)
			}
			if rid := resp.Header.Get("X-Request-Id"); rid != "req-"+strings.ReplaceAll(tt.name, " ", "-") {
				t.Errorf("request id header %q", rid)
			}
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				if _, ok := got["error"]; !ok && tt.path != "/v2/enqueue" {
					t.Errorf("error answer without an error field: %s", b)
				}
				if got["request_id"] == nil {
					t.Errorf("error answer without the request id: %s", b)
				}
			}
		})
	}
}

// TestBodyLimit: a body past the limit is refused with 413, whether it
// announces its length or streams in chunks; nothing is stored.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t, options{noServe: true, maxBody: 2048})
	big := `{"title":"` + strings.Repeat("x", 4096) + `"}`
	for _, path := range []string{"/api/v1/alerts", "/api/v1/alerts/alertmanager", "/v2/enqueue"} {
		var out map[string]any
		if resp, b := e.do(http.MethodPost, path, "", strings.NewReader(big), nil, &out); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s with Content-Length: %d %s", path, resp.StatusCode, b)
		}
		// io.MultiReader hides the length: the body is sent chunked.
		if resp, b := e.do(http.MethodPost, path, "", io.MultiReader(strings.NewReader(big)), nil, &out); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s chunked: %d %s", path, resp.StatusCode, b)
		}
	}
	if n, _ := e.store.InboxDepth(t.Context()); n != 0 {
		t.Errorf("inbox depth %d after refused bodies", n)
	}
}

// TestInboxFull: past the inbox limit the receivers answer 503 with
// Retry-After (Alertmanager retries 5xx), and readiness says not ready.
func TestInboxFull(t *testing.T) {
	e := newEnv(t, options{noServe: true, inboxLimit: 1})
	var out map[string]any
	if resp := e.post("/api/v1/alerts", "", `{"title":"one","service":"a"}`, &out); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	resp := e.post("/api/v1/alerts", "", `{"title":"two","service":"b"}`, &out)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp = e.post("/v2/enqueue", "", `{"event_action":"trigger","dedup_key":"z","payload":{"summary":"three","source":"x","severity":"info"}}`, &out)
	if resp.StatusCode != http.StatusServiceUnavailable || out["status"] == nil {
		t.Fatalf("pagerduty into a full inbox: %d %v", resp.StatusCode, out)
	}
	if resp, b := e.do(http.MethodGet, "/readyz", "", nil, nil, &out); resp.StatusCode != http.StatusServiceUnavailable || out["inbox_depth"] != 1.0 || out["ready"] != false {
		t.Errorf("readyz with a full inbox: %d %s", resp.StatusCode, b)
	}
}

// TestPagerDuty: answers have PagerDuty's shape; acknowledge and resolve
// move the alert's state; a trigger without dedup_key gets one that later
// events can name.
func TestPagerDuty(t *testing.T) {
	e := newEnv(t, options{})
	event := func(action, key string) string {
		k := ""
		if key != "" {
			k = `"dedup_key":"` + key + `",`
		}
		return `{"routing_key":"r","event_action":"` + action + `",` + k + `"payload":{"summary":"Replication lag 40s on db-2","source":"db-2","severity":"error","component":"postgres"}}`
	}
	var ans map[string]any
	for _, path := range []string{"/v2/enqueue", "/api/v1/alerts/pagerduty"} {
		if resp := e.post(path, "", event("trigger", "lag-1"), &ans); resp.StatusCode != http.StatusAccepted ||
			ans["status"] != "success" || ans["message"] != "Event processed" || ans["dedup_key"] != "lag-1" {
			t.Fatalf("%s trigger: %d %v", path, resp.StatusCode, ans)
		}
	}
	if got := e.metric(`openrecall_alerts_redelivered_total{endpoint="pagerduty"}`); got != "1" {
		t.Errorf("the second trigger is a redelivery: metric %s", got)
	}
	e.post("/v2/enqueue", "", event("acknowledge", "lag-1"), &ans)
	e.post("/v2/enqueue", "", event("resolve", "lag-1"), &ans)
	var list struct {
		Results []openrecall.Served `json:"results"`
	}
	for len(list.Results) < 3 {
		e.do(http.MethodGet, "/api/v1/results?since=0", "", nil, nil, &list)
	}
	states := map[string]int{}
	for _, sv := range list.Results {
		states[sv.State+"/"+sv.Result.Outcome]++
	}
	if states["firing/triaged"] != 1 || states["acknowledged/resolved"] != 1 || states["resolved/resolved"] != 1 {
		t.Errorf("states and outcomes: %v", states)
	}
	if resp := e.post("/v2/enqueue", "", event("trigger", ""), &ans); resp.StatusCode != http.StatusAccepted || ans["dedup_key"] == "" {
		t.Fatalf("trigger without dedup_key: %v", ans)
	}
	key := ans["dedup_key"].(string)
	resp := e.post("/v2/enqueue", "", event("resolve", key), &ans)
	if resp.StatusCode != http.StatusAccepted || ans["dedup_key"] != key {
		t.Fatalf("resolve by the given key: %v", ans)
	}
	if resp := e.post("/v2/enqueue", "", `{"event_action":"explode","dedup_key":"x"}`, &ans); resp.StatusCode != http.StatusBadRequest ||
		ans["status"] != "invalid event" || ans["errors"] == nil {
		t.Errorf("invalid event: %d %v", resp.StatusCode, ans)
	}
}

// TestRetainByAnalysisTeachesBypass: decisions retained by analysis id on
// five firings of one alert let memory vouch for the sixth: it is bypassed,
// except in shadow mode, which proposes the same decision and still
// analyses.
func TestRetainByAnalysisTeachesBypass(t *testing.T) {
	for _, shadow := range []bool{false, true} {
		t.Run(fmt.Sprintf("shadow=%v", shadow), func(t *testing.T) {
			e := newEnv(t, options{shadow: shadow})
			firing := func(i int) string {
				return fmt.Sprintf(`{"id":"etl-%d","title":"Nightly ETL batch-worker OOMKilled","text":"container etl OOMKilled, exit 137","service":"etl-batch-worker","environment":"prod","severity":"warning","labels":{"alertname":"KubeContainerOOMKilled","service":"etl-batch-worker"}}`, i)
			}
			for i := range 5 {
				var acc accepted
				e.post("/api/v1/alerts", "", firing(i), &acc)
				id := acc.Analyses[0].AnalysisID
				e.wait(id, "")
				var ret map[string]any
				resp := e.post("/api/v1/retain", "", `{"analysis_id":"`+id+`","decision":"known_benign","note":"nightly ETL peak; limit is fine","analyst":"alice"}`, &ret)
				if resp.StatusCode != http.StatusCreated || ret["warning"] != nil {
					t.Fatalf("retain %s: %d %v", id, resp.StatusCode, ret)
				}
				if resp := e.post("/api/v1/retain", "", `{"analysis_id":"`+id+`","decision":"known_benign","note":"nightly ETL peak; limit is fine"}`, &ret); resp.StatusCode != http.StatusOK || ret["created"] != false {
					t.Fatalf("retain again: %d %v", resp.StatusCode, ret)
				}
			}
			var acc accepted
			e.post("/api/v1/alerts", "", firing(5), &acc)
			sv := e.wait(acc.Analyses[0].AnalysisID, "")
			if sv.Result.Bypassed == shadow {
				t.Fatalf("sixth firing bypassed=%v in shadow=%v: %s", sv.Result.Bypassed, shadow, sv.Result.Guard.Reason)
			}
			if shadow && sv.Result.Triage.Decision != openrecall.DecisionKnownBenign {
				t.Errorf("shadow mode lost the proposal: %+v", sv.Result.Triage)
			}
			var rec struct {
				Matches []openrecall.Match `json:"matches"`
			}
			e.do(http.MethodGet, "/api/v1/recall?analysis_id="+acc.Analyses[0].AnalysisID, "", nil, nil, &rec)
			if len(rec.Matches) != 5 {
				t.Errorf("recall by analysis id: %d matches, want 5", len(rec.Matches))
			}
			want := "1"
			if shadow {
				want = "0"
			}
			if got := e.metric("openrecall_alerts_bypassed_total"); got != want {
				t.Errorf("bypassed metric %s, want %s", got, want)
			}
			// A decision by fingerprint alone has no identity: stored,
			// with a warning that it never votes.
			var ret map[string]any
			fp := sv.Result.Fingerprint.String()
			if resp := e.post("/api/v1/retain", "", `{"fingerprint":"`+fp+`","decision":"real","note":"by fingerprint"}`, &ret); resp.StatusCode != http.StatusCreated || ret["warning"] == nil {
				t.Errorf("retain by fingerprint: %d %v", resp.StatusCode, ret)
			}
		})
	}
}

// TestRestartDrainsInbox: deliveries accepted while nothing drained the
// inbox (a process killed after its 202) are analysed by the next server on
// the same file.
func TestRestartDrainsInbox(t *testing.T) {
	db := storetest.Location(t)
	e := newEnv(t, options{noServe: true, db: db})
	var acc accepted
	e.post("/api/v1/alerts/alertmanager", "", fixture(t, "alertmanager_payload_from_prometheus.json"), &acc)
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(t, options{db: db})
	if sv := e2.wait(acc.Analyses[0].AnalysisID, ""); sv.Result.Outcome != openrecall.ResultTriaged {
		t.Fatalf("after restart: %+v", sv.Result)
	}
}

// TestEscapingAndErrors: alert text comes back HTML-escaped; unknown
// endpoints and bad input answer JSON errors.
func TestEscapingAndErrors(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	var acc accepted
	e.post("/api/v1/alerts", "", `{"id":"x","title":"<script>alert(1)</script>"}`, &acc)
	_, b := e.do(http.MethodGet, "/api/v1/results/"+acc.Analyses[0].AnalysisID, "", nil, nil, nil)
	if bytes.Contains(b, []byte("<script>")) || !bytes.Contains(b, []byte(`\u003cscript\u003e`)) {
		t.Errorf("alert text not escaped: %s", b)
	}
	tests := []struct {
		method, path, body string
		want               int
	}{
		{http.MethodGet, "/nope", "", http.StatusNotFound},
		{http.MethodGet, "/api/v1/alerts/alertmanager", "", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/api/v1/results/serve-000001", "", http.StatusMethodNotAllowed},
		{http.MethodGet, "/api/v1/results/serve-999999", "", http.StatusNotFound},
		{http.MethodPost, "/api/v1/alerts", `{"title": broken`, http.StatusBadRequest},
		{http.MethodPost, "/api/v1/alerts/alertmanager", `{"title":"not a webhook"}`, http.StatusBadRequest},
		{http.MethodPost, "/api/v1/retain", `{"analysis_id":"serve-000001","decision":"maybe"}`, http.StatusBadRequest},
		{http.MethodPost, "/api/v1/retain", `{"decision":"real"}`, http.StatusBadRequest},
		{http.MethodGet, "/api/v1/recall?fingerprint=nonsense", "", http.StatusBadRequest},
		{http.MethodGet, "/api/v1/results?since=-1", "", http.StatusBadRequest},
	}
	for _, tt := range tests {
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		var out map[string]any
		resp, raw := e.do(tt.method, tt.path, "", body, nil, &out)
		if resp.StatusCode != tt.want || out["error"] == nil {
			t.Errorf("%s %s: %d %s, want %d with an error field", tt.method, tt.path, resp.StatusCode, raw, tt.want)
		}
	}
}
