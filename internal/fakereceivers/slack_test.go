package fakereceivers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

// slackCall calls the fake Web API's method with token and a body of
// contentType, and returns its answer.
func slackCall(t *testing.T, f *fakereceivers.Fakes, method, token, contentType, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.Addrs().Slack+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var ans map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d, %v", method, resp.StatusCode, err)
	}
	return ans
}

const jsonType = "application/json; charset=utf-8"

// TestSlackViewsOpen: views.open takes a trigger and a modal view, as a
// JSON object or a JSON-encoded string in a form; it answers the view with
// an id, records it, and refuses a trigger used before, a call without a
// trigger or a view, and a wrong token.
func TestSlackViewsOpen(t *testing.T) {
	f, clk := startFakes(t)
	view := `{"type":"modal","callback_id":"openrecall:note","private_metadata":"{\"analysis_id\":\"b1-7\"}",` +
		`"title":{"type":"plain_text","text":"Decide b1-7"},"blocks":[]}`
	ans := slackCall(t, f, "views.open", slackToken, jsonType, `{"trigger_id":"12345.98765.abcd2358fdea","view":`+view+`}`)
	v, _ := ans["view"].(map[string]any)
	if ans["ok"] != true || v["id"] == "" || v["callback_id"] != "openrecall:note" {
		t.Errorf("answer %v, want ok and the view with an id", ans)
	}
	form := url.Values{"trigger_id": {"12345.98765.ffff"}, "view": {view}}.Encode()
	if ans := slackCall(t, f, "views.open", slackToken, "application/x-www-form-urlencoded", form); ans["ok"] != true {
		t.Errorf("a form's view: %v", ans)
	}
	refusals := []struct{ name, token, body, want string }{
		{"a trigger used before", slackToken, `{"trigger_id":"12345.98765.abcd2358fdea","view":` + view + `}`, "exchanged_trigger_id"},
		{"no trigger", slackToken, `{"view":` + view + `}`, "invalid_trigger_id"},
		{"no view", slackToken, `{"trigger_id":"1.2.3"}`, "invalid_arguments"},
		{"a wrong token", "xoxb-wrong", `{"trigger_id":"1.2.4","view":` + view + `}`, "invalid_auth"},
		{"no token", "", `{"trigger_id":"1.2.5","view":` + view + `}`, "not_authed"},
	}
	for _, tt := range refusals {
		if ans := slackCall(t, f, "views.open", tt.token, jsonType, tt.body); ans["ok"] != false || ans["error"] != tt.want {
			t.Errorf("%s: answer %v, want %s", tt.name, ans, tt.want)
		}
	}
	views := f.State().Slack.Views
	if len(views) != 2 {
		t.Fatalf("%d views recorded, want 2", len(views))
	}
	want := fakereceivers.SlackView{ID: v["id"].(string), TriggerID: "12345.98765.abcd2358fdea", CallbackID: "openrecall:note",
		PrivateMetadata: `{"analysis_id":"b1-7"}`, View: json.RawMessage(view), At: clk.Now()}
	if diff := cmp.Diff(want, views[0]); diff != "" {
		t.Errorf("recorded view (-want +got):\n%s", diff)
	}
	checkNoSecret(t, f, slackToken)
}

// TestSlackPostEphemeral: chat.postEphemeral shows a message to one user
// of a channel the workspace has, answers its message_ts and records it;
// an unknown channel, no user and no text are refused.
func TestSlackPostEphemeral(t *testing.T) {
	f, clk := startFakes(t)
	sl := receivers(t, f, clk)[fakereceivers.Slack]
	d := send(t, sl, trigger())
	ch := d.State["channel"]
	ans := slackCall(t, f, "chat.postEphemeral", slackToken, jsonType,
		`{"channel":"`+ch+`","user":"U0UNMAPPED","text":"You are not mapped to an openrecall analyst."}`)
	if ans["ok"] != true || ans["message_ts"] == "" {
		t.Errorf("answer %v, want ok and a message_ts", ans)
	}
	for _, tt := range []struct{ name, body, want string }{
		{"unknown channel", `{"channel":"C999","user":"U1","text":"x"}`, "channel_not_found"},
		{"no user", `{"channel":"` + ch + `","text":"x"}`, "user_not_in_channel"},
		{"no text", `{"channel":"` + ch + `","user":"U1"}`, "no_text"},
	} {
		if ans := slackCall(t, f, "chat.postEphemeral", slackToken, jsonType, tt.body); ans["error"] != tt.want {
			t.Errorf("%s: answer %v, want %s", tt.name, ans, tt.want)
		}
	}
	if ans := slackCall(t, f, "chat.postEphemeral", "xoxb-wrong", jsonType, `{"channel":"`+ch+`","user":"U1","text":"x"}`); ans["error"] != "invalid_auth" {
		t.Errorf("a wrong token: %v", ans)
	}
	want := []fakereceivers.SlackEphemeral{{Channel: ch, User: "U0UNMAPPED", Text: "You are not mapped to an openrecall analyst.",
		MessageTS: ans["message_ts"].(string), At: clk.Now()}}
	if diff := cmp.Diff(want, f.State().Slack.Ephemeral); diff != "" {
		t.Errorf("ephemeral messages (-want +got):\n%s", diff)
	}
}

// TestSlackButtons: the message an interactive Slack receiver posts shows
// its decision buttons (Buttons), and the version chat.update made after
// the decision has none of them.
func TestSlackButtons(t *testing.T) {
	f, _ := startFakes(t)
	sl, err := notify.NewSlack(notify.SlackConfig{Name: "chat", Token: secret(t, slackToken), Channel: fakeChannel,
		APIURL: f.Addrs().Slack, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	d := send(t, sl, trigger())
	m, ok := f.State().Slack.Message(fakeChannel, d.State["ts"])
	if !ok {
		t.Fatal("no message")
	}
	var got []string
	for _, b := range m.Buttons() {
		if b.BlockID == notify.SlackBlockActions {
			got = append(got, b.ActionID+"="+b.Value+b.URL)
		}
	}
	want := []string{"openrecall:review=" + reviewURL, "openrecall:approve=b1-7", "openrecall:decide:real=b1-7",
		"openrecall:decide:known_benign=b1-7", "openrecall:decide:false_positive=b1-7", "openrecall:note=b1-7"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buttons (-want +got):\n%s", diff)
	}
	send(t, sl, updateOf(d.State))
	m, _ = f.State().Slack.Message(fakeChannel, d.State["ts"])
	if len(m.History) != 2 {
		t.Fatalf("%d versions, want the post and its update", len(m.History))
	}
	for _, b := range m.Buttons() {
		if b.BlockID == notify.SlackBlockActions || b.Value != "" {
			t.Errorf("the updated message keeps a decision button: %+v", b)
		}
	}
	if len(m.History[0].Buttons()) != 6 {
		t.Errorf("the first version's buttons: %+v", m.History[0].Buttons())
	}
}
