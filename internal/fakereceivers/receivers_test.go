package fakereceivers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

// These tests drive each fake with openrecall's own receiver (notify),
// as serve will, and check what a person would see in the system the fake
// plays: the fakes speak what the receivers send.

func TestPagerDutyIncidentLifecycle(t *testing.T) {
	f, clk := startFakes(t)
	pd := receivers(t, f, clk)[fakereceivers.PagerDuty]

	d := send(t, pd, trigger())
	if d.State["dedup_key"] != episodeKey {
		t.Errorf("trigger's delivery %v, want the dedup_key the fake answered", d.State)
	}
	in, ok := f.State().PagerDuty.Incident(episodeKey)
	if !ok || in.Status != fakereceivers.IncidentTriggered || in.Summary != alertTitle || in.Severity != "error" ||
		in.Source != "worker-3:9100" || in.ClientURL != reviewURL {
		t.Fatalf("after the trigger, incident %+v (found %v), want it triggered with the alert's summary", in, ok)
	}
	send(t, pd, trigger()) // a retry: deduplicated into the open incident
	clk.Advance(time.Minute)
	send(t, pd, updateOf(d.State))
	clk.Advance(time.Minute)
	send(t, pd, resolveOf(d.State))
	send(t, pd, resolveOf(d.State)) // nothing open any more: dropped
	clk.Advance(time.Minute)
	n := trigger()
	n.ID = "n-4"
	send(t, pd, n) // the key fires again after its resolve: a new incident

	st := f.State().PagerDuty
	incidents := st.IncidentsOf(episodeKey)
	if len(incidents) != 2 {
		t.Fatalf("%d incidents of %s, want 2 (a trigger after a resolve opens a new one): %+v", len(incidents), episodeKey, incidents)
	}
	first := incidents[0]
	if first.Status != fakereceivers.IncidentResolved || first.Triggers != 2 ||
		!first.AcknowledgedAt.Equal(start.Add(time.Minute)) || !first.ResolvedAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("first incident %+v, want resolved after 2 triggers, acknowledged at +1m, resolved at +2m", first)
	}
	if got := actions(first.Log); !slices.Equal(got, []string{"trigger", "trigger", "acknowledge", "resolve"}) {
		t.Errorf("first incident's log %v", got)
	}
	if second := incidents[1]; second.Status != fakereceivers.IncidentTriggered || second.Number != 2 {
		t.Errorf("second incident %+v, want number 2 triggered", second)
	}
	var outcomes []string
	for _, e := range st.Events {
		outcomes = append(outcomes, e.Outcome)
	}
	if want := []string{"opened", "deduplicated", "acknowledged", "resolved", "ignored", "opened"}; !slices.Equal(outcomes, want) {
		t.Errorf("events' outcomes %v, want %v", outcomes, want)
	}
	checkNoSecret(t, f, routingKey)
}

func TestPagerDutyRefusesAWrongRoutingKey(t *testing.T) {
	f, _ := startFakes(t)
	pd, err := notify.NewPagerDuty(notify.PagerDutyConfig{Name: "pager", RoutingKey: secret(t, strings.Repeat("x", 32)),
		URL: f.Addrs().PagerDuty})
	if err != nil {
		t.Fatal(err)
	}
	se := sendError(t, pd, trigger())
	if se.Status != http.StatusBadRequest || !se.Permanent || !strings.Contains(se.Body, "Invalid routing key") {
		t.Errorf("SendError %+v, want a permanent 400 naming the routing key", se)
	}
	if n := len(f.State().PagerDuty.Incidents); n != 0 {
		t.Errorf("%d incidents opened by a refused event", n)
	}
}

func TestOpsgenieAlertLifecycle(t *testing.T) {
	f, clk := startFakes(t)
	og := receivers(t, f, clk)[fakereceivers.Opsgenie]

	d := send(t, og, trigger())
	send(t, og, trigger()) // a retry: deduplicated by alias
	clk.Advance(time.Minute)
	send(t, og, updateOf(d.State))
	clk.Advance(time.Minute)
	send(t, og, resolveOf(d.State))
	closeAgain := send(t, og, resolveOf(d.State))

	st := f.State().Opsgenie
	if len(st.Alerts) != 1 {
		t.Fatalf("%d alerts, want 1 (the retry deduplicated by alias): %+v", len(st.Alerts), st.Alerts)
	}
	a, _ := st.Alert(episodeKey)
	if a.Status != fakereceivers.AlertClosed || a.Count != 2 || a.Message != alertTitle || a.Priority != "P2" ||
		a.ClosedBy != "openrecall" || !a.ClosedAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("alert %+v, want closed by openrecall at +2m, count 2, P2, the alert's title", a)
	}
	if !slices.Contains(a.Tags, "team-ledger") || !slices.Contains(a.Tags, "decision:real") {
		t.Errorf("tags %v, want openrecall's and the configured ones", a.Tags)
	}
	if len(a.Notes) != 2 || a.Notes[0].User != "bob" || !strings.Contains(a.Notes[0].Note, "ledger API rate limit changed") ||
		!strings.HasPrefix(a.Notes[1].Note, "recovered: "+alertTitle) {
		t.Errorf("notes %+v, want bob's decision then the close's note", a.Notes)
	}
	var statuses []string
	for _, r := range st.Requests {
		statuses = append(statuses, r.Action+": "+r.Status)
	}
	want := []string{"Create: Created alert", "Create: Alert deduplicated", "AddNote: Added note", "Close: Closed alert", "Close: Alert is already closed"}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("processed requests (-want +got):\n%s", diff)
	}

	// The request Opsgenie answered is looked up as its API says.
	req, _ := http.NewRequest(http.MethodGet, f.Addrs().Opsgenie+"/v2/alerts/requests/"+closeAgain.State["request_id"], nil)
	req.Header.Set("Authorization", "GenieKey "+genieKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var got struct {
		Data struct {
			IsSuccess bool   `json:"isSuccess"`
			Status    string `json:"status"`
			Alias     string `json:"alias"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the request's status: %d, %v", resp.StatusCode, err)
	}
	if got.Data.IsSuccess || got.Data.Status != "Alert is already closed" || got.Data.Alias != episodeKey {
		t.Errorf("the second close's request status %+v", got.Data)
	}
	checkNoSecret(t, f, genieKey)
}

func TestOpsgenieRefusesAWrongKey(t *testing.T) {
	f, _ := startFakes(t)
	og, err := notify.NewOpsgenie(notify.OpsgenieConfig{Name: "ops", APIKey: secret(t, "not-the-key"), APIURL: f.Addrs().Opsgenie})
	if err != nil {
		t.Fatal(err)
	}
	se := sendError(t, og, trigger())
	if se.Status != http.StatusUnauthorized || !se.Permanent {
		t.Errorf("SendError %+v, want a permanent 401", se)
	}
}

func TestSlackMessagePostedThenUpdated(t *testing.T) {
	f, clk := startFakes(t)
	sl := receivers(t, f, clk)[fakereceivers.Slack]

	d := send(t, sl, trigger())
	st := f.State().Slack
	id := st.Channels["oncall"]
	if id == "" || d.State["channel"] != id || d.State["ts"] == "" {
		t.Fatalf("trigger's delivery %v, channels %v: want the channel's id and the message's ts", d.State, st.Channels)
	}
	clk.Advance(time.Minute)
	d2 := send(t, sl, updateOf(d.State))
	clk.Advance(time.Minute)
	send(t, sl, resolveOf(d2.State))

	st = f.State().Slack
	if len(st.Messages) != 1 {
		t.Fatalf("%d messages, want the trigger's, edited: %+v", len(st.Messages), st.Messages)
	}
	m, ok := st.Message(fakeChannel, d.State["ts"])
	if !ok {
		t.Fatalf("no message %s in %s", d.State["ts"], fakeChannel)
	}
	if len(m.History) != 3 || m.History[0].Header != alertTitle || !m.EditedAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("message %+v, want 3 versions headed by the alert's title, edited at +2m", m)
	}
	if !strings.Contains(m.History[1].Text, "real") || !strings.Contains(m.Text, "resolved") || m.Text != m.History[2].Text {
		t.Errorf("versions %q, %q, %q: want the decision's, then the resolve's shown now", m.History[0].Text, m.History[1].Text, m.Text)
	}
	checkNoSecret(t, f, slackToken)
}

func TestSlackRefusals(t *testing.T) {
	f, clk := startFakes(t)
	sl := receivers(t, f, clk)[fakereceivers.Slack]
	// An edit of a message the channel has not is posted as a new message
	// (notify's answer to message_not_found).
	send(t, sl, trigger())
	send(t, sl, resolveOf(map[string]string{"channel": fakeChannel, "ts": "1.000001"}))
	if n := len(f.State().Slack.Messages); n != 2 {
		t.Errorf("%d messages, want the resolve posted anew after message_not_found", n)
	}
	bad, err := notify.NewSlack(notify.SlackConfig{Name: "chat", Token: secret(t, "xoxb-wrong"), Channel: fakeChannel, APIURL: f.Addrs().Slack})
	if err != nil {
		t.Fatal(err)
	}
	if se := sendError(t, bad, trigger()); !se.Permanent || !strings.Contains(se.Error(), "invalid_auth") {
		t.Errorf("SendError %v, want a permanent invalid_auth", se)
	}
}

func TestTeamsCard(t *testing.T) {
	f, clk := startFakes(t)
	tm := receivers(t, f, clk)[fakereceivers.Teams]
	send(t, tm, trigger())
	send(t, tm, resolveOf(nil))
	cards := f.State().Teams.Cards
	if len(cards) != 2 {
		t.Fatalf("%d cards, want 2", len(cards))
	}
	c := cards[0]
	if c.Problem != "" || !slices.Contains(c.Texts, "Judged a real incident") || !slices.Contains(c.Texts, alertTitle) ||
		len(c.Actions) != 1 || c.Actions[0].URL != reviewURL {
		t.Errorf("trigger's card %+v, want its headline, the title and the review button", c)
	}
	if !strings.HasPrefix(cards[1].Texts[0], "Resolved") {
		t.Errorf("resolve's card texts %q", cards[1].Texts)
	}
	checkNoSecret(t, f, fakereceivers.DefaultTeamsSig)

	u := strings.Replace(f.Addrs().Teams, "sig="+fakereceivers.DefaultTeamsSig, "sig=wrong", 1)
	bad, err := notify.NewTeams(notify.TeamsConfig{Name: "teams", WebhookURL: secret(t, u)})
	if err != nil {
		t.Fatal(err)
	}
	if se := sendError(t, bad, trigger()); se.Status != http.StatusUnauthorized || !se.Permanent {
		t.Errorf("SendError %+v, want a permanent 401 for a wrong sig", se)
	}
}

func TestWebhookSignatureVerified(t *testing.T) {
	f, clk := startFakes(t)
	hook := receivers(t, f, clk)[fakereceivers.Webhook]
	send(t, hook, trigger())
	send(t, hook, trigger()) // a retry of the same notification
	send(t, hook, updateOf(nil))
	send(t, hook, resolveOf(nil))

	st := f.State().Webhook
	if got := st.Kinds(episodeKey); !slices.Equal(got, []string{"trigger", "update", "resolve"}) {
		t.Errorf("kinds %v, want trigger, update, resolve (the retry a duplicate)", got)
	}
	d := st.Deliveries[0]
	if !d.Signed || !d.Verified || d.ID != "n-1" || !st.Deliveries[1].Duplicate {
		t.Errorf("deliveries %+v, want signed and verified, the second a duplicate", st.Deliveries[:2])
	}
	var body notify.WebhookBody
	if err := json.Unmarshal(d.Body, &body); err != nil || body.Version != notify.WebhookVersion || body.Alert.Title != alertTitle {
		t.Errorf("body %+v (%v), want the documented body", body, err)
	}

	tests := []struct {
		name   string
		secret string
		skew   time.Duration
	}{
		{"wrong secret", "another-secret", 0},
		{"no secret", "", 0},
		{"stale timestamp", hookSecret, -10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := notify.WebhookConfig{Name: "hook", URL: secret(t, f.Addrs().Webhook),
				Now: func() time.Time { return clk.Now().Add(tt.skew) }}
			if tt.secret != "" {
				cfg.Secret = secret(t, tt.secret)
			}
			bad, err := notify.NewWebhook(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if se := sendError(t, bad, trigger()); se.Status != http.StatusUnauthorized || !se.Permanent {
				t.Errorf("SendError %+v, want a permanent 401", se)
			}
		})
	}
	if n := len(f.State().Webhook.Deliveries); n != 4 {
		t.Errorf("%d deliveries, want the 4 signed ones only", n)
	}
}

func TestEmailReceived(t *testing.T) {
	f, clk := startFakes(t)
	mail := receivers(t, f, clk)[fakereceivers.Email]
	d := send(t, mail, trigger())
	send(t, mail, resolveOf(d.State))

	msgs := f.State().Email.Messages
	if len(msgs) != 2 {
		t.Fatalf("%d mails, want 2", len(msgs))
	}
	m, ok := f.State().Email.Message(d.State["message_id"])
	if !ok {
		t.Fatalf("no mail of Message-ID %s", d.State["message_id"])
	}
	if m.Subject != "[openrecall] real "+alertTitle || m.From != mailFrom || !slices.Equal(m.To, []string{mailTo}) ||
		m.Hello != "openrecall.test" || m.Header["X-Openrecall-Kind"] != "trigger" || !strings.Contains(m.Body, "Review: "+reviewURL) {
		t.Errorf("trigger's mail %+v", m)
	}
	if r := msgs[1]; r.InReplyTo != m.MessageID || !strings.HasPrefix(r.Subject, "[openrecall] resolved ") {
		t.Errorf("resolve's mail: In-Reply-To %q, subject %q; want it to answer the trigger's", r.InReplyTo, r.Subject)
	}
	for _, r := range f.State().Requests {
		if r.Receiver == fakereceivers.Email && (r.Method != "SMTP" || r.Status != 250 || !slices.Contains(r.Commands, "DATA")) {
			t.Errorf("SMTP session %+v, want a recorded session ending in 250", r)
		}
	}
}

// TestFail plays outages: each receiver answers its next requests with
// the failure asked for, and notify classifies each as the receiver's API
// means it.
func TestFail(t *testing.T) {
	tests := []struct {
		receiver   string
		fail       fakereceivers.Failure
		permanent  bool
		retryAfter time.Duration
	}{
		{fakereceivers.PagerDuty, fakereceivers.Failure{Status: 500, Count: 2}, false, 0},
		{fakereceivers.PagerDuty, fakereceivers.Failure{Status: 429, Count: 1, RetryAfter: 2 * time.Second}, false, 2 * time.Second},
		{fakereceivers.Opsgenie, fakereceivers.Failure{Status: 503, Count: 2, RetryAfter: 5 * time.Second}, false, 5 * time.Second},
		{fakereceivers.Opsgenie, fakereceivers.Failure{Status: 400, Count: 1}, true, 0},
		{fakereceivers.Slack, fakereceivers.Failure{Status: 429, Count: 2, RetryAfter: 3 * time.Second}, false, 3 * time.Second},
		{fakereceivers.Slack, fakereceivers.Failure{Status: 200, Count: 1, Error: "channel_not_found"}, true, 0},
		{fakereceivers.Teams, fakereceivers.Failure{Status: 502, Count: 1}, false, 0},
		{fakereceivers.Webhook, fakereceivers.Failure{Status: 400, Count: 1}, true, 0},
		{fakereceivers.Email, fakereceivers.Failure{Status: 451, Count: 2}, false, 0},
		{fakereceivers.Email, fakereceivers.Failure{Status: 554, Count: 1}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.receiver+"/"+http.StatusText(tt.fail.Status), func(t *testing.T) {
			f, clk := startFakes(t)
			r := receivers(t, f, clk)[tt.receiver]
			if err := f.Fail(tt.receiver, tt.fail); err != nil {
				t.Fatal(err)
			}
			for i := range tt.fail.Count {
				se := sendError(t, r, trigger())
				if se.Status != tt.fail.Status || se.Permanent != tt.permanent || se.RetryAfter != tt.retryAfter {
					t.Errorf("try %d: SendError{Status %d, Permanent %v, RetryAfter %s}, want {%d, %v, %s}: %v", i+1,
						se.Status, se.Permanent, se.RetryAfter, tt.fail.Status, tt.permanent, tt.retryAfter, se)
				}
			}
			if _, ok := f.State().Failing[tt.receiver]; ok {
				t.Errorf("a failure still pending after %d requests", tt.fail.Count)
			}
			send(t, r, trigger()) // back up
			failed := 0
			for _, req := range recorded(t, f, tt.fail.Count+1) {
				if req.Failed {
					failed++
				}
			}
			if failed != tt.fail.Count {
				t.Errorf("%d requests recorded as failed, want %d", failed, tt.fail.Count)
			}
			for _, s := range []string{routingKey, genieKey, slackToken, fakereceivers.DefaultTeamsSig, hookSecret} {
				checkNoSecret(t, f, s)
			}
		})
	}
}

func TestFailRefusesWhatItCannotPlay(t *testing.T) {
	f, _ := startFakes(t)
	tests := []struct {
		receiver string
		fail     fakereceivers.Failure
	}{
		{"jira", fakereceivers.Failure{Status: 500, Count: 1}},
		{fakereceivers.PagerDuty, fakereceivers.Failure{Status: 200, Count: 1}},
		{fakereceivers.Slack, fakereceivers.Failure{Status: 200, Count: 1}},
		{fakereceivers.Teams, fakereceivers.Failure{Status: 500, Count: -1}},
	}
	for _, tt := range tests {
		if err := f.Fail(tt.receiver, tt.fail); err == nil {
			t.Errorf("Fail(%s, %+v) succeeded", tt.receiver, tt.fail)
		}
	}
	if err := f.Fail(fakereceivers.Teams, fakereceivers.Failure{Status: 500, Count: 3}); err != nil {
		t.Fatal(err)
	}
	if err := f.Fail(fakereceivers.Teams, fakereceivers.Failure{}); err != nil {
		t.Fatal(err)
	}
	if len(f.State().Failing) != 0 {
		t.Errorf("failing %v after a count of 0 cleared it", f.State().Failing)
	}
}

// checkNoSecret fails t when the fakes' state, as GET /_state answers it,
// shows s.
// recorded returns the requests the fakes recorded once there are n: the
// fake SMTP server records a conversation when the connection ends, which
// can be just after the client has its answer and returns.
func recorded(t *testing.T, f *fakereceivers.Fakes, n int) []fakereceivers.Request {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		reqs := f.State().Requests
		if len(reqs) >= n || time.Now().After(deadline) {
			return reqs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func checkNoSecret(t *testing.T, f *fakereceivers.Fakes, s string) {
	t.Helper()
	b, err := json.Marshal(f.State())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), s) {
		t.Errorf("the state shows the secret %q", s)
	}
}

func actions(log []fakereceivers.LogEntry) []string {
	var out []string
	for _, e := range log {
		out = append(out, e.Action)
	}
	return out
}

// get GETs u and returns its status and body.
func get(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
