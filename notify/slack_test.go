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

	"github.com/openrecall/openrecall"
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

// slackBlocks are a message's blocks as the tests read them.
type slackBlocks []struct {
	Type     string `json:"type"`
	BlockID  string `json:"block_id"`
	Text     struct{ Text string }
	Elements []slackButton `json:"elements"`
	// Accessory is a section's button.
	Accessory *slackButton `json:"accessory"`
}

// slackButton is a block's element: a button, or a context's text.
type slackButton struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Value    string          `json:"value"`
	URL      string          `json:"url"`
	Text     json.RawMessage `json:"text"`
}

// label returns a button's text.
func (e slackButton) label() string {
	var t struct{ Text string }
	_ = json.Unmarshal(e.Text, &t)
	return t.Text
}

func blocksOf(t *testing.T, body []byte) slackBlocks {
	t.Helper()
	var msg struct{ Blocks slackBlocks }
	decodeInto(t, body, &msg)
	return msg.Blocks
}

// actions returns the buttons of the block block_id, as "action_id=value"
// (a link button: "action_id→url"), and whether the message has it.
func (bs slackBlocks) actions(blockID string) ([]string, bool) {
	for _, b := range bs {
		if b.Type != "actions" || b.BlockID != blockID {
			continue
		}
		var out []string
		for _, e := range b.Elements {
			if e.URL != "" {
				out = append(out, e.ActionID+"→"+e.URL)
			} else {
				out = append(out, e.ActionID+"="+e.Value)
			}
		}
		return out, true
	}
	return nil, false
}

// texts returns the sections' texts, one a line.
func (bs slackBlocks) texts() string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Text.Text)
	}
	return strings.Join(out, "\n")
}

// TestSlackDecisionButtons: an interactive receiver's message left to a
// person carries the decision buttons in the block openrecall:actions,
// each valued with the analysis id (the interaction endpoint's contract);
// approve as proposed only when the analysis proposes a decision; a group
// firing says its buttons decide the group; a detection with a proposed
// exception has approve exception, valued with the proposal's id, and
// says its expiry. A receiver without interactivity, and a message of
// what does not await a person, have none.
func TestSlackDecisionButtons(t *testing.T) {
	const id = "run1-000007"
	link := "openrecall:review→" + reviewURL
	decide := []string{"openrecall:decide:real=" + id, "openrecall:decide:known_benign=" + id,
		"openrecall:decide:false_positive=" + id, "openrecall:note=" + id}
	proposal := &openrecall.Proposal{ID: "prop-5e1f0a", Identity: openrecall.Identity{Rule: "DiskFull", Service: "postgres"},
		Decision: openrecall.DecisionKnownBenign, MaxSeverity: openrecall.SeverityHigh, Expiry: openrecall.DefaultProposalExpiry,
		Match: map[string]string{"host": "db-1"}}
	tests := []struct {
		name        string
		interactive bool
		n           func() notify.Notification
		want        []string // nil: no openrecall:actions block
		says        []string
	}{
		{"not interactive", false, trigger, nil, nil},
		{"escalated with a proposal", true, trigger,
			append([]string{link, "openrecall:approve=" + id}, decide...), nil},
		{"no analysis: nothing to approve", true, func() notify.Notification {
			n := trigger()
			n.Result.Analysis = nil
			return n
		}, append([]string{link}, decide...), nil},
		{"no review link", true, func() notify.Notification {
			n := trigger()
			n.ReviewURL = ""
			return n
		}, append([]string{"openrecall:approve=" + id}, decide...), nil},
		{"group head", true, func() notify.Notification {
			n := trigger()
			n.Result.Group = &openrecall.GroupRef{ID: "g-" + id, Role: openrecall.GroupRoleHead, HeadAnalysisID: id, HeadAlertID: "am-5f1c"}
			return n
		}, append([]string{link, "openrecall:approve=" + id}, decide...),
			[]string{"*Alert group g-run1-000007*", "This firing heads the group.", "decides the whole group"}},
		{"group member", true, func() notify.Notification {
			n := trigger()
			n.Result.Group = &openrecall.GroupRef{ID: "g-run1-000003", Role: openrecall.GroupRoleMember, HeadAnalysisID: "run1-000003", HeadAlertID: "am-0001"}
			return n
		}, append([]string{link, "openrecall:approve=" + id}, decide...),
			[]string{"joined the group of alert am-0001", "decides the whole group"}},
		{"detection with a proposed exception", true, func() notify.Notification {
			n := trigger()
			n.Result.Proposal = proposal
			return n
		}, append(append([]string{link, "openrecall:approve=" + id}, decide...), "openrecall:approve_exception=prop-5e1f0a"),
			[]string{"*Proposed exception* prop-5e1f0a", "DiskFull @ postgres", "as known_benign, up to severity high, matching host=db-1",
				"it expires 30 days after approval"}},
		{"an approved proposal is not offered again", true, func() notify.Notification {
			n := trigger()
			p := *proposal
			p.ApprovedAs = "exc-1"
			n.Result.Proposal = &p
			return n
		}, append([]string{link, "openrecall:approve=" + id}, decide...), nil},
		{"closed by memory", true, func() notify.Notification {
			n := trigger()
			n.Result = bypassedResult()
			return n
		}, nil, nil},
		{"the update after a decision", true, func() notify.Notification { return decided(nil) }, nil, nil},
		{"a resolve", true, func() notify.Notification { return resolve(nil) }, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newSlackAPI(t)
			if _, err := botSlack(t, api, tt.interactive).Send(context.Background(), tt.n()); err != nil {
				t.Fatal(err)
			}
			bs := blocksOf(t, api.Only(t).Body)
			got, ok := bs.actions(notify.SlackBlockActions)
			if tt.want == nil {
				if ok {
					t.Errorf("a block %s: %v", notify.SlackBlockActions, got)
				}
				for _, b := range bs {
					for _, e := range b.Elements {
						if e.Value != "" || strings.HasPrefix(e.ActionID, "openrecall:decide") {
							t.Errorf("a decision button %+v outside the actions block", e)
						}
					}
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("buttons (-want +got):\n%s", diff)
			}
			for _, b := range bs {
				if len(b.Elements) > 25 {
					t.Errorf("block %s has %d elements, Slack takes 25", b.BlockID, len(b.Elements))
				}
				for _, e := range b.Elements {
					if n := len([]rune(e.label())); e.Type == "button" && n > 75 {
						t.Errorf("button %q: %d characters, Slack takes 75", e.label(), n)
					}
				}
			}
			texts := bs.texts()
			for _, s := range tt.says {
				if !strings.Contains(texts, s) {
					t.Errorf("the message does not say %q:\n%s", s, texts)
				}
			}
		})
	}
}

// TestSlackUpdateDropsTheButtons: the trigger's message carries the
// buttons; the chat.update of the same message after a person's decision
// does not, and says who decided.
func TestSlackUpdateDropsTheButtons(t *testing.T) {
	api := newSlackAPI(t)
	s := botSlack(t, api, true)
	first, err := s.Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(context.Background(), decided(first.State)); err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if len(reqs) != 2 || reqs[1].Path != "/api/chat.update" {
		t.Fatalf("requests %d, want a post then a chat.update", len(reqs))
	}
	if _, ok := blocksOf(t, reqs[0].Body).actions(notify.SlackBlockActions); !ok {
		t.Errorf("the trigger's message has no decision buttons")
	}
	upd := blocksOf(t, reqs[1].Body)
	if got, ok := upd.actions(notify.SlackBlockActions); ok {
		t.Errorf("the updated message keeps the decision buttons: %v", got)
	}
	if !strings.Contains(upd.texts(), "Decided known_benign by alice") {
		t.Errorf("the updated message does not say the decision:\n%s", upd.texts())
	}
	if got, _ := upd.actions(""); len(got) != 1 || !strings.HasPrefix(got[0], notify.SlackActionReview) {
		t.Errorf("the updated message's buttons %v, want the review link alone", got)
	}
}
