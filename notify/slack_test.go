package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/notify"
)

const slackToken = "xoxb-1234-5678-sEcReTtOkEn"

// slackAPI is a local server that speaks the Web API's chat.postMessage
// and chat.update as https://docs.slack.dev/reference/methods/chat.postMessage
// and https://docs.slack.dev/reference/methods/chat.update document them:
// a JSON body with a bearer token; HTTP 200 with {"ok": true, "channel",
// "ts", …} or {"ok": false, "error": code}. refuse, when set, answers
// instead for the method it names.
type slackAPI struct {
	*notify.FakeAPI
	refuse func(method string, w http.ResponseWriter) bool
}

func newSlackAPI(t *testing.T) *slackAPI {
	api := &slackAPI{}
	api.FakeAPI = notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if api.refuse != nil && api.refuse(method, w) {
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+slackToken {
			_, _ = fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
			return
		}
		var msg struct {
			Channel, TS, Text string
			Blocks            []any
		}
		if err := json.Unmarshal(body, &msg); err != nil || msg.Channel == "" {
			_, _ = fmt.Fprint(w, `{"ok":false,"error":"invalid_arguments"}`)
			return
		}
		switch method {
		case "chat.postMessage":
			// The answer names the channel by its id whatever the request
			// named it by; chat.update takes only the id.
			_, _ = fmt.Fprintf(w, `{"ok":true,"channel":"C024BE91L","ts":"1773454623.000200","message":{"text":%q}}`, msg.Text)
		case "chat.update":
			_, _ = fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q,"text":%q}`, msg.Channel, msg.TS, msg.Text)
		default:
			_, _ = fmt.Fprint(w, `{"ok":false,"error":"unknown_method"}`)
		}
	})
	return api
}

func newSlack(t *testing.T, cfg notify.SlackConfig) *notify.Slack {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "oncall-chat"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	s, err := notify.NewSlack(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func botSlack(t *testing.T, api *slackAPI, interactive bool) *notify.Slack {
	return newSlack(t, notify.SlackConfig{Token: secret(t, slackToken), Channel: "#oncall", APIURL: api.URL + "/api", Interactive: interactive})
}

func TestSlackTriggerPostsMessage(t *testing.T) {
	api := newSlackAPI(t)
	d, err := botSlack(t, api, true).Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	req := api.Only(t)
	if req.Method != http.MethodPost || req.Path != "/api/chat.postMessage" {
		t.Errorf("request %s %s, want POST /api/chat.postMessage", req.Method, req.Path)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer "+slackToken {
		t.Errorf("Authorization = %q", got)
	}
	if got := req.Header.Get("Content-Type"); got != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	golden(t, "slack_trigger.json", indented(t, req.Body))
	want := map[string]string{"channel": "C024BE91L", "ts": "1773454623.000200", "decision": "escalated", "route": "strong",
		"reason": "severity critical above the memories' medium: a person decides"}
	if diff := cmp.Diff(want, d.State); diff != "" {
		t.Errorf("delivery state (-want +got):\n%s", diff)
	}
}

func TestSlackWithoutInteractivityHasOnlyTheLink(t *testing.T) {
	api := newSlackAPI(t)
	if _, err := botSlack(t, api, false).Send(context.Background(), trigger()); err != nil {
		t.Fatal(err)
	}
	body := string(api.Only(t).Body)
	if strings.Contains(body, notify.SlackActionDecide) || strings.Contains(body, notify.SlackActionApprove) {
		t.Errorf("decision buttons without interactivity: %s", body)
	}
	if !strings.Contains(body, `"url":"`+reviewURL+`"`) {
		t.Errorf("no review link: %s", body)
	}
}

// TestSlackResolveAndUpdateEditTheMessage follows an episode: the
// trigger's delivery is the Prior of its resolve and its update, which
// edit that same message.
func TestSlackResolveAndUpdateEditTheMessage(t *testing.T) {
	api := newSlackAPI(t)
	s := botSlack(t, api, true)
	first, err := s.Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		golden string
		n      notify.Notification
	}{
		{"slack_update.json", decided(first.State)},
		{"slack_resolve.json", resolve(first.State)},
	}
	for i, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			d, err := s.Send(context.Background(), tt.n)
			if err != nil {
				t.Fatal(err)
			}
			req := api.Requests()[i+1]
			if req.Path != "/api/chat.update" {
				t.Fatalf("request to %s, want /api/chat.update", req.Path)
			}
			var msg struct{ Channel, TS string }
			_ = json.Unmarshal(req.Body, &msg)
			if msg.Channel != "C024BE91L" || msg.TS != "1773454623.000200" {
				t.Errorf("chat.update of channel %q ts %q, want the trigger's message", msg.Channel, msg.TS)
			}
			golden(t, tt.golden, indented(t, req.Body))
			if d.State["channel"] != "C024BE91L" || d.State["ts"] != "1773454623.000200" {
				t.Errorf("delivery state %v does not name the message", d.State)
			}
		})
	}
}

func TestSlackWithoutPriorPostsNewMessage(t *testing.T) {
	for _, n := range []notify.Notification{resolve(nil), decided(nil), resolve(map[string]string{"decision": "escalated"})} {
		api := newSlackAPI(t)
		d, err := botSlack(t, api, false).Send(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		if req := api.Only(t); req.Path != "/api/chat.postMessage" {
			t.Errorf("%s without a message: request to %s, want chat.postMessage", n.Kind, req.Path)
		}
		if d.State["ts"] == "" {
			t.Errorf("%s: delivery %v names no message", n.Kind, d.State)
		}
	}
}

// TestSlackPostsWhenTheMessageIsGone: chat.update refuses a message that
// was deleted or can no longer be edited; the resolve is then posted.
func TestSlackPostsWhenTheMessageIsGone(t *testing.T) {
	for _, code := range []string{"message_not_found", "cant_update_message", "edit_window_closed"} {
		api := newSlackAPI(t)
		api.refuse = func(method string, w http.ResponseWriter) bool {
			if method != "chat.update" {
				return false
			}
			_, _ = fmt.Fprintf(w, `{"ok":false,"error":%q}`, code)
			return true
		}
		_, err := botSlack(t, api, false).Send(context.Background(), resolve(map[string]string{"channel": "C024BE91L", "ts": "1.2"}))
		if err != nil {
			t.Fatalf("%s: %v", code, err)
		}
		var paths []string
		for _, r := range api.Requests() {
			paths = append(paths, r.Path)
		}
		if diff := cmp.Diff([]string{"/api/chat.update", "/api/chat.postMessage"}, paths); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", code, diff)
		}
	}
}

// TestSlackAPIErrors: the Web API answers what it refuses with HTTP 200
// and {"ok": false, "error": code}; a refused token, channel or message
// is never retried, a rate limit or a server fault is.
func TestSlackAPIErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     string
		body       string
		permanent  bool
		retryAfter time.Duration
	}{
		{"invalid_auth", 200, "", `{"ok":false,"error":"invalid_auth"}`, true, 0},
		{"not_authed", 200, "", `{"ok":false,"error":"not_authed"}`, true, 0},
		{"channel_not_found", 200, "", `{"ok":false,"error":"channel_not_found"}`, true, 0},
		{"invalid_blocks", 200, "", `{"ok":false,"error":"invalid_blocks","response_metadata":{"messages":["[ERROR] must be more than 0 characters [json-pointer:/blocks/0/text/text]"]}}`, true, 0},
		{"ratelimited", 429, "30", `{"ok":false,"error":"ratelimited"}`, false, 30 * time.Second},
		{"internal_error", 200, "", `{"ok":false,"error":"internal_error"}`, false, 0},
		{"a code Slack adds later", 200, "", `{"ok":false,"error":"something_new"}`, false, 0},
		{"HTTP 500", 500, "", `upstream connect error`, false, 0},
		{"HTTP 503 with Retry-After", 503, "120", ``, false, 2 * time.Minute},
		{"not JSON", 200, "", `<html>captive portal</html>`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newSlackAPI(t)
			api.Handle(func(w http.ResponseWriter, r *http.Request, body []byte) {
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				w.WriteHeader(tt.status)
				_, _ = fmt.Fprint(w, tt.body)
			})
			_, err := botSlack(t, api, false).Send(context.Background(), trigger())
			var se *notify.SendError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *SendError", err, err)
			}
			if se.Permanent != tt.permanent || se.RetryAfter != tt.retryAfter || se.Status != tt.status {
				t.Errorf("status %d permanent %v retry after %s, want %d %v %s (%v)", se.Status, se.Permanent, se.RetryAfter,
					tt.status, tt.permanent, tt.retryAfter, err)
			}
			if tt.status == 200 && strings.Contains(tt.body, `"error"`) && !strings.Contains(err.Error(), strings.Split(tt.body, `"`)[5]) {
				t.Errorf("error %q does not name Slack's code", err)
			}
			noSecret(t, err, slackToken)
		})
	}
}

// TestSlackIncomingWebhook: the webhook takes the same message without a
// channel and answers "ok"; it cannot edit, so a resolve is a new
// message.
func TestSlackIncomingWebhook(t *testing.T) {
	srv := notify.NewFakeAPI(t, nil)
	hook := srv.URL + slackHookPath
	s := newSlack(t, notify.SlackConfig{WebhookURL: secret(t, hook)})
	d, err := s.Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	if d.State["channel"] != "" || d.State["decision"] != "escalated" {
		t.Errorf("delivery state %v: want the decision kept and no message", d.State)
	}
	if _, err := s.Send(context.Background(), resolve(d.State)); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for _, req := range got {
		if req.Path != slackHookPath || req.Header.Get("Authorization") != "" {
			t.Errorf("request %s with Authorization %q", req.Path, req.Header.Get("Authorization"))
		}
	}
	golden(t, "slack_webhook_trigger.json", indented(t, got[0].Body))
	if !strings.Contains(string(got[1].Body), "Resolved at 2026-03-14 02:57 UTC") {
		t.Errorf("the resolve's message does not say resolved: %s", got[1].Body)
	}
}

// TestSlackEscapesAlertText: an alert's title and text are the sender's,
// so they are escaped: no @channel, no link, no mark-up of their own.
func TestSlackEscapesAlertText(t *testing.T) {
	api := newSlackAPI(t)
	n := trigger()
	n.Result.Alert.Title = "<!channel> click <https://evil.example|here> & pay"
	n.Result.Steps[1].Reason = "<@U024BE7LH> said so"
	if _, err := botSlack(t, api, false).Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Text   string
		Blocks []struct {
			Type string
			Text struct{ Type, Text string }
		}
	}
	if err := json.Unmarshal(api.Only(t).Body, &msg); err != nil {
		t.Fatal(err)
	}
	texts := []string{msg.Text}
	for _, b := range msg.Blocks {
		if b.Text.Type == "mrkdwn" {
			texts = append(texts, b.Text.Text)
		}
		if b.Type == "header" && b.Text.Text != n.Result.Alert.Title {
			t.Errorf("header (plain text) %q, want the title as it is", b.Text.Text)
		}
	}
	for _, s := range texts {
		if strings.Contains(s, "<!channel>") || strings.Contains(s, "<https://evil") || strings.Contains(s, "<@U024") {
			t.Errorf("unescaped mrkdwn: %q", s)
		}
	}
	if !strings.Contains(msg.Text, "&lt;!channel&gt; click &lt;https://evil.example|here&gt; &amp; pay") {
		t.Errorf("fallback text %q", msg.Text)
	}
}

func TestSlackConfig(t *testing.T) {
	tok := secret(t, slackToken)
	hook := secret(t, "https://hooks.slack.com"+slackHookPath)
	tests := []struct {
		name string
		cfg  notify.SlackConfig
		want string
	}{
		{"no name", notify.SlackConfig{Token: tok, Channel: "#c"}, "name is required"},
		{"neither", notify.SlackConfig{Name: "s", Channel: "#c"}, "exactly one of token"},
		{"both", notify.SlackConfig{Name: "s", Token: tok, Channel: "#c", WebhookURL: hook}, "exactly one of token"},
		{"no channel", notify.SlackConfig{Name: "s", Token: tok}, "channel is required"},
		{"plain http webhook", notify.SlackConfig{Name: "s", WebhookURL: secret(t, "http://hooks.slack.com"+slackHookPath)}, "webhook_url must be https"},
		{"not a URL", notify.SlackConfig{Name: "s", WebhookURL: secret(t, "hooks.slack.com"+slackHookPath)}, "webhook_url is not an absolute"},
		{"plain http API", notify.SlackConfig{Name: "s", Token: tok, Channel: "#c", APIURL: "http://slack.example/api/"}, "api_url"},
		{"negative timeout", notify.SlackConfig{Name: "s", Token: tok, Channel: "#c", Timeout: -time.Second}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := notify.NewSlack(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
			noSecret(t, err, slackToken, slackHookSecret)
		})
	}
	if _, err := notify.NewSlack(notify.SlackConfig{Name: "s", WebhookURL: hook}); err != nil {
		t.Errorf("a webhook alone: %v", err)
	}
}

// noSecret fails when err shows any of secrets, in any verb.
func noSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	shown := fmt.Sprintf("%v | %+v | %s | %q", err, err, err, err)
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		shown += " | " + e.Error()
	}
	for _, s := range secrets {
		if strings.Contains(shown, s) {
			t.Errorf("the error shows a secret: %s", shown)
		}
	}
}
