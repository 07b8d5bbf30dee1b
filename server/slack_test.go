package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/chat/slack"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/usecase"
)

// slackCall is one Web API call the fake Slack received.
type slackCall struct {
	Method string
	Auth   string
	Body   map[string]any
}

// fakeSlack is a loopback server speaking the Web API methods the
// interaction endpoint calls (views.open, chat.update,
// chat.postEphemeral): each answers {"ok": true}, as
// https://docs.slack.dev/reference/methods/chat.update and the others
// document, and is recorded.
type fakeSlack struct {
	url   string
	mu    sync.Mutex
	calls []slackCall
}

func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_json"}`)
			return
		}
		f.mu.Lock()
		f.calls = append(f.calls, slackCall{Method: method, Auth: r.Header.Get("Authorization"), Body: body})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/api"
	return f
}

// await returns the first call of method whose body has field = value,
// waiting for it until the test's deadline nears.
func (f *fakeSlack) await(t *testing.T, method, field, value string) slackCall {
	t.Helper()
	var got slackCall
	if !testenv.Poll(t, 10*time.Millisecond, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.calls {
			if c.Method == method && fmt.Sprint(c.Body[field]) == value {
				got = c
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no %s call with %s %q: %+v", method, field, value, f.calls)
	}
	return got
}

// slackTokens: alice may decide, viewer may only read.
var slackTokens = []server.Token{
	{Name: "viewer", Analyst: "viewer", Secret: "viewer-secret-0123456789", Scopes: []string{server.ScopeRead}},
	{Name: "alice", Analyst: "alice", Secret: "alice-secret-0123456789", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
}

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// slackEnv is a server deciding from Slack with the fake Slack, users
// UALICE (alice) and UVIEWER (viewer).
func slackEnv(t *testing.T) (*env, *fakeSlack) {
	t.Helper()
	fs := newFakeSlack(t)
	e := newEnv(t, options{tokens: slackTokens, noServe: true, slack: &server.SlackConfig{
		SigningSecret: slackSecret,
		Users:         map[string]string{"UALICE": "alice", "UVIEWER": "viewer"},
		API:           slack.NewClient(fs.url, "xoxb-test", nil),
	}})
	return e, fs
}

// waitingSlack stores an analysis escalated to a person (proposed
// known_benign by the model), as serve's sink stores one, and returns its
// id and alert.
func (e *env) waitingSlack(n int) (string, openrecall.Alert) {
	e.t.Helper()
	alert := openrecall.Alert{ID: fmt.Sprintf("alert-s-%d", n), Format: "openrecall", Title: fmt.Sprintf("Disk full %d", n),
		Severity: openrecall.SeverityHigh, Service: "db", Status: openrecall.StatusFiring, Labels: map[string]string{"alertname": fmt.Sprintf("DiskFull%d", n)}}
	r := openrecall.Result{AnalysisID: fmt.Sprintf("run-s-%06d", n), Batch: "run-s", Outcome: openrecall.ResultTriaged, Alert: alert,
		Fingerprint: e.app.Fingerprinter.Extract(alert), Identity: e.app.Fingerprinter.Identify(alert), Decision: openrecall.DecisionEscalated,
		Triage:   openrecall.TriageResult{Decision: openrecall.DecisionEscalated, RequiresHumanApproval: true, EscalationReason: "no memory matches"},
		Analysis: &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Confidence: 0.7, Summary: "backup job", Model: "local-strong"}}
	r.Audit = audit.Entries(r, time.Now().UTC())
	sink := memory.Sink{Store: e.store, Seal: audit.NewSealer(trailKey).Seal, Waits: usecase.WaitingFor, Closes: usecase.ClosedBy}
	if _, err := sink.PersistBatch(context.Background(), []openrecall.Result{r}, nil); err != nil {
		e.t.Fatal(err)
	}
	return r.AnalysisID, alert
}

// slackRequest is a signed interaction as Slack sends it: the form field
// payload, signed with secret at ts
// (https://docs.slack.dev/authentication/verifying-requests-from-slack).
type slackRequest struct {
	body   string
	header map[string]string
}

func signed(secret string, ts time.Time, payload string) slackRequest {
	body := "payload=" + url.QueryEscape(payload)
	return slackRequest{body: body, header: map[string]string{
		"Content-Type":        "application/x-www-form-urlencoded",
		slack.HeaderTimestamp: strconv.FormatInt(ts.Unix(), 10),
		slack.HeaderSignature: slack.Sign(secret, ts.Unix(), []byte(body)),
	}}
}

// click is a block_actions payload of a button on message C0CHAN/ts,
// shaped as https://docs.slack.dev/reference/interaction-payloads/block_actions-payload.
func click(user, actionID, value string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": user, "username": "u", "team_id": "T0"},
		"api_app_id": "A0", "trigger_id": "13345224609.738474920.8088930838d88f008e0", "team": map[string]any{"id": "T0", "domain": "acme"},
		"container": map[string]any{"type": "message", "message_ts": "1548261231.000200", "channel_id": "C0CHAN", "is_ephemeral": false},
		"channel":   map[string]any{"id": "C0CHAN", "name": "oncall"}, "message": map[string]any{"type": "message", "ts": "1548261231.000200"},
		"response_url": "https://hooks.slack.com/actions/T0/1/x",
		"actions": []map[string]any{{"type": "button", "block_id": "openrecall", "action_id": actionID, "value": value,
			"text": map[string]any{"type": "plain_text", "text": "x"}, "action_ts": "1548426417.840180"}},
	})
	return string(b)
}

// submit is the note modal submitted, shaped as
// https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload.
func submit(user, metadata, decision, note string, deadEnds ...string) string {
	values := map[string]any{
		"note": map[string]any{"note": map[string]any{"type": "plain_text_input", "value": note}},
	}
	if decision != "" {
		values["decision"] = map[string]any{"decision": map[string]any{"type": "static_select", "selected_option": map[string]any{"value": decision, "text": map[string]any{"type": "plain_text", "text": decision}}}}
	}
	for i, d := range deadEnds {
		values[slack.DeadEndBlock(i+1)] = map[string]any{"dead_end": map[string]any{"type": "plain_text_input", "value": d}}
	}
	b, _ := json.Marshal(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": "T0", "domain": "acme"}, "user": map[string]any{"id": user, "username": "u", "team_id": "T0"},
		"api_app_id": "A0", "trigger_id": "12466734323.1395872398",
		"view": map[string]any{"id": "VNHU13V36", "type": "modal", "callback_id": slack.CallbackNote, "private_metadata": metadata,
			"state": map[string]any{"values": values}, "hash": "156663117.cd33ad1f"},
	})
	return string(b)
}

func (e *env) slackPost(req slackRequest) (int, []byte) {
	e.t.Helper()
	hreq, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/slack/interactions", strings.NewReader(req.body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range req.header {
		hreq.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestSlackDecideFromButton: a click on "real" is Decide by the mapped
// analyst with the note "decided from Slack by alice": the waiting row is
// decided, memory holds the note, the audit says alice decided from
// slack and verifies, and the message is updated in place.
func TestSlackDecideFromButton(t *testing.T) {
	e, fs := slackEnv(t)
	ctx := context.Background()
	id, alert := e.waitingSlack(1)
	if code, b := e.slackPost(signed(slackSecret, time.Now(), click("UALICE", "openrecall:decide:real", id))); code != http.StatusOK {
		t.Fatalf("click: %d %s", code, b)
	}
	w, err := e.store.WaitingFor(ctx, id)
	if err != nil || !w.Decided || w.DecidedBy != "alice" || w.Decision != openrecall.DecisionReal {
		t.Fatalf("the waiting row: %+v, %v", w, err)
	}
	rc, err := e.app.Recall(ctx, usecase.Subject{Alerts: []openrecall.Alert{alert}}, 10)
	if err != nil || len(rc.Matches) != 1 || rc.Matches[0].Incident.Note != "decided from Slack by alice" || rc.Matches[0].Incident.Analyst != "alice" {
		t.Fatalf("recall: %+v, %v", rc, err)
	}
	up := fs.await(t, "chat.update", "ts", "1548261231.000200")
	if up.Body["channel"] != "C0CHAN" || !strings.Contains(fmt.Sprint(up.Body["text"]), "Decided real by alice at ") || up.Auth != "Bearer xoxb-test" {
		t.Errorf("chat.update: %+v", up)
	}
	if blocks := fmt.Sprint(up.Body["blocks"]); strings.Contains(blocks, "button") {
		t.Errorf("the updated message keeps buttons: %s", blocks)
	}
	entries, err := e.store.AuditByAnalysis(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, en := range entries {
		if en.Step == usecase.StepAnalystDecision && strings.HasPrefix(en.Reason, "alice decided real from slack (") {
			found = true
		}
	}
	if !found {
		t.Errorf("no analyst-decision entry from slack: %+v", entries)
	}
	if v, err := e.app.VerifyAudit(ctx, ""); err != nil || !v.Intact {
		t.Errorf("audit verify: %+v, %v", v, err)
	}
	// Approving it as proposed now changes nothing.
	if code, _ := e.slackPost(signed(slackSecret, time.Now(), click("UALICE", "openrecall:approve", id))); code != http.StatusOK {
		t.Errorf("approve after: %d", code)
	}
	if w, err := e.store.WaitingFor(ctx, id); err != nil || w.Decision != openrecall.DecisionReal || w.DecidedBy != "alice" {
		t.Errorf("approving a decided analysis changed it: %+v, %v", w, err)
	}
}

// TestSlackNoteModal: the note button opens the modal with the analysis
// and the message in private_metadata; its submission retains the note
// and two dead ends (recall shows them) and updates the message; a
// submission without a note or a decision keeps the modal open with
// errors.
func TestSlackNoteModal(t *testing.T) {
	e, fs := slackEnv(t)
	ctx := context.Background()
	id, alert := e.waitingSlack(2)
	if code, b := e.slackPost(signed(slackSecret, time.Now(), click("UALICE", slack.ActionNote, id))); code != http.StatusOK {
		t.Fatalf("note: %d %s", code, b)
	}
	open := fs.await(t, "views.open", "trigger_id", "13345224609.738474920.8088930838d88f008e0")
	view, _ := open.Body["view"].(map[string]any)
	meta := id + "|C0CHAN|1548261231.000200"
	if view["callback_id"] != slack.CallbackNote || view["private_metadata"] != meta {
		t.Fatalf("views.open: %+v", open.Body)
	}
	for _, tt := range []struct{ decision, note, want string }{{"", "why", `"decision"`}, {"real", " ", `"note"`}} {
		code, b := e.slackPost(signed(slackSecret, time.Now(), submit("UALICE", meta, tt.decision, tt.note)))
		if code != http.StatusOK || !strings.Contains(string(b), `"response_action":"errors"`) || !strings.Contains(string(b), tt.want) {
			t.Errorf("submission %+v: %d %s", tt, code, b)
		}
	}
	code, b := e.slackPost(signed(slackSecret, time.Now(), submit("UALICE", meta, "real", "the backup filled it", "restarted the agent", "checked cron")))
	if code != http.StatusOK || len(strings.TrimSpace(string(b))) != 0 {
		t.Fatalf("submission: %d %s", code, b)
	}
	rc, err := e.app.Recall(ctx, usecase.Subject{Alerts: []openrecall.Alert{alert}}, 10)
	if err != nil || len(rc.Matches) != 1 {
		t.Fatalf("recall: %+v, %v", rc, err)
	}
	if inc := rc.Matches[0].Incident; inc.Note != "the backup filled it" || strings.Join(inc.DeadEnds, "|") != "restarted the agent|checked cron" || inc.Decision != openrecall.DecisionReal || inc.Analyst != "alice" {
		t.Errorf("the memory: %+v", inc)
	}
	up := fs.await(t, "chat.update", "channel", "C0CHAN")
	if !strings.Contains(fmt.Sprint(up.Body["text"]), "note: the backup filled it") {
		t.Errorf("chat.update: %+v", up.Body)
	}
	if v, err := e.app.VerifyAudit(ctx, ""); err != nil || !v.Intact {
		t.Errorf("audit verify: %+v, %v", v, err)
	}
}

// TestSlackRefusals: a forged signature, a stale timestamp, a replay, an
// unmapped user and a read-only analyst are each refused with 401,
// counted by reason, and store nothing; the last two are told so.
func TestSlackRefusals(t *testing.T) {
	e, fs := slackEnv(t)
	ctx := context.Background()
	id, alert := e.waitingSlack(3)
	other, _ := e.waitingSlack(4)
	good := signed(slackSecret, time.Now(), click("UALICE", "openrecall:decide:false_positive", other))
	if code, b := e.slackPost(good); code != http.StatusOK {
		t.Fatalf("the first time: %d %s", code, b)
	}
	// The same request with its signature's hex in upper case: it
	// verifies (hex is read either way), so it must count as the same
	// signature — it was a way round the replay check.
	upper := slackRequest{body: good.body, header: maps.Clone(good.header)}
	upper.header[slack.HeaderSignature] = "v0=" + strings.ToUpper(strings.TrimPrefix(good.header[slack.HeaderSignature], "v0="))
	tests := []struct {
		name, reason string
		req          slackRequest
	}{
		{"forged", slack.ReasonBadSignature, signed("not-the-secret", time.Now(), click("UALICE", "openrecall:decide:real", id))},
		{"stale", slack.ReasonStale, signed(slackSecret, time.Now().Add(-6*time.Minute), click("UALICE", "openrecall:decide:real", id))},
		{"from the future", slack.ReasonStale, signed(slackSecret, time.Now().Add(6*time.Minute), click("UALICE", "openrecall:decide:real", id))},
		{"replay", slack.ReasonReplay, good},
		{"replay, signature in upper case", slack.ReasonReplay, upper},
		{"unmapped", slack.ReasonUnmapped, signed(slackSecret, time.Now(), click("UNOBODY", "openrecall:decide:real", id))},
		{"read-only", slack.ReasonReadOnly, signed(slackSecret, time.Now(), click("UVIEWER", "openrecall:decide:real", id))},
		{"read-only modal", slack.ReasonReadOnly, signed(slackSecret, time.Now(), submit("UVIEWER", id+"|C0CHAN|1.2", "real", "no"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, b := e.slackPost(tt.req); code != http.StatusUnauthorized || !strings.Contains(string(b), tt.reason) {
				t.Errorf("%d %s, want 401 %s", code, b, tt.reason)
			}
		})
	}
	if w, err := e.store.WaitingFor(ctx, id); err != nil || w.Decided {
		t.Errorf("the waiting row after refusals: %+v, %v", w, err)
	}
	rc, err := e.app.Recall(ctx, usecase.Subject{Alerts: []openrecall.Alert{alert}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rc.Matches {
		if m.Incident.SourceAlertID == alert.ID {
			t.Errorf("a memory of the refused alert: %+v", m.Incident)
		}
	}
	for reason, want := range map[string]string{slack.ReasonBadSignature: "1", slack.ReasonStale: "2", slack.ReasonReplay: "2", slack.ReasonUnmapped: "1", slack.ReasonReadOnly: "2"} {
		if got := e.metric(`openrecall_slack_refused_total{reason="` + reason + `"}`); got != want {
			t.Errorf("refused %s: %s, want %s", reason, got, want)
		}
	}
	if c := fs.await(t, "chat.postEphemeral", "user", "UNOBODY"); !strings.Contains(fmt.Sprint(c.Body["text"]), "UNOBODY to chat.slack.users") || c.Body["channel"] != "C0CHAN" {
		t.Errorf("the unmapped user was told: %+v", c.Body)
	}
	if c := fs.await(t, "chat.postEphemeral", "user", "UVIEWER"); !strings.Contains(fmt.Sprint(c.Body["text"]), "not decide") {
		t.Errorf("the read-only analyst was told: %+v", c.Body)
	}
}

// TestSlackOffWithoutConfig: without chat.slack the endpoint does not
// exist.
func TestSlackOffWithoutConfig(t *testing.T) {
	e := newEnv(t, options{tokens: slackTokens, noServe: true})
	if code, _ := e.slackPost(signed(slackSecret, time.Now(), click("UALICE", "openrecall:approve", "x"))); code != http.StatusNotFound {
		t.Errorf("%d, want 404", code)
	}
}

// TestSlackDecidesAGroupFiring: a click on a firing of an open alert group
// (served as serve groups a storm) decides the group — every firing, one
// memory — and the message says so with the group's size (DESIGN §12c).
func TestSlackDecidesAGroupFiring(t *testing.T) {
	fs := newFakeSlack(t)
	const token = "alice-secret-0123456789"
	e := newEnv(t, options{grouping: true,
		tokens: []server.Token{{Name: "alice", Analyst: "alice", Secret: token, Scopes: []string{server.ScopeIngest, server.ScopeRead, server.ScopeRetain}}},
		slack:  &server.SlackConfig{SigningSecret: slackSecret, Users: map[string]string{"UALICE": "alice"}, API: slack.NewClient(fs.url, "xoxb-test", nil)}})
	var items []string
	for i := range 4 {
		items = append(items, fmt.Sprintf(`{"status":"firing","labels":{"alertname":"NodeFilesystemAlmostOutOfSpace","job":"node-exporter","severity":"warning","instance":"node-%d:9100"},"annotations":{"summary":"Filesystem on node-%d has less than 5%% space left"},"startsAt":"2026-11-30T03:%02d:00Z"}`, i, i, i))
	}
	var ack accepted
	if resp := e.post("/api/v1/alerts/alertmanager", token, `{"version":"4","status":"firing","alerts":[`+strings.Join(items, ",")+`]}`, &ack); resp.StatusCode != http.StatusAccepted || len(ack.Analyses) != 4 {
		t.Fatalf("post: %d %+v", resp.StatusCode, ack)
	}
	for _, a := range ack.Analyses {
		e.wait(a.AnalysisID, token)
	}
	firing := ack.Analyses[2].AnalysisID
	if code, b := e.slackPost(signed(slackSecret, time.Now(), click("UALICE", "openrecall:decide:known_benign", firing))); code != http.StatusOK {
		t.Fatalf("click: %d %s", code, b)
	}
	var groups []openrecall.Group
	if resp, b := e.do(http.MethodGet, "/api/v1/groups?all=true", token, nil, nil, &groups); resp.StatusCode != http.StatusOK {
		t.Fatalf("groups: %d %s", resp.StatusCode, b)
	}
	decided := 0
	for _, g := range groups {
		if g.Decided && g.Size == 4 && g.Decision == openrecall.DecisionKnownBenign && g.Analyst == "alice" {
			decided++
		}
	}
	if decided != 1 {
		t.Fatalf("want the group of 4 decided known_benign by alice, got %+v", groups)
	}
	up := fs.await(t, "chat.update", "ts", "1548261231.000200")
	if text := fmt.Sprint(up.Body["text"]); !strings.Contains(text, "Decided known_benign by alice") || !strings.Contains(text, "for its alert group") || !strings.Contains(text, "(4 firings)") {
		t.Errorf("chat.update says %q: want the decision and its group of 4", text)
	}
	if v, err := e.app.VerifyAudit(context.Background(), ""); err != nil || !v.Intact {
		t.Errorf("audit verify: %+v, %v", v, err)
	}
}
