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

	"github.com/openrecall/openrecall/notify"
)

// teamsPath is a Workflows webhook's path and query: the query's sig is
// the credential.
const teamsPath = "/workflows/4f1a2b/triggers/manual/paths/invoke"

const teamsQuery = "api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + teamsSig

// teamsSig is the webhook URL's signature, its credential.
const teamsSig = "T3amsS1gnatur3KqZ0aWx8Rm2Pd7Lw"

func newTeams(t *testing.T, url string) *notify.Teams {
	t.Helper()
	tm, err := notify.NewTeams(notify.TeamsConfig{Name: "oncall-teams", WebhookURL: secret(t, url), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestTeamsPostsAdaptiveCards: a Workflows webhook takes a message with
// one Adaptive Card attachment and answers 202 Accepted
// (https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook).
// It cannot edit a card: the resolve and the update are cards of their own.
func TestTeamsPostsAdaptiveCards(t *testing.T) {
	srv := notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) { w.WriteHeader(http.StatusAccepted) })
	tm := newTeams(t, srv.URL+teamsPath+"?"+teamsQuery)
	first, err := tm.Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	if first.State["decision"] != "escalated" || first.State["route"] != "strong" {
		t.Errorf("the trigger's delivery %v does not keep the decision", first.State)
	}
	for _, n := range []notify.Notification{resolve(first.State), decided(first.State)} {
		if _, err := tm.Send(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for i, name := range []string{"teams_trigger.json", "teams_resolve.json", "teams_update.json"} {
		req := got[i]
		if req.Method != http.MethodPost || req.Path != teamsPath || req.Query != teamsQuery {
			t.Errorf("request %s %s?%s", req.Method, req.Path, req.Query)
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		golden(t, name, indented(t, req.Body))
	}
	// The resolve's card repeats what openrecall had decided, from the
	// trigger's delivery.
	if !strings.Contains(string(got[1].Body), `"value":"escalated (strong model)"`) {
		t.Errorf("the resolve's card lacks the trigger's decision: %s", got[1].Body)
	}
}

// TestTeamsAlertTextIsNotMarkdown: TextBlocks read Markdown, so the
// alert's text goes in TextRuns, which do not.
func TestTeamsAlertTextIsNotMarkdown(t *testing.T) {
	srv := notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) { w.WriteHeader(http.StatusAccepted) })
	n := trigger()
	n.Result.Alert.Title = "[Reset your password](https://evil.example) **now**"
	if _, err := newTeams(t, srv.URL+teamsPath).Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Attachments []struct {
			Content struct {
				Body []map[string]any
			}
		}
	}
	if err := json.Unmarshal(srv.Only(t).Body, &msg); err != nil {
		t.Fatal(err)
	}
	for _, el := range msg.Attachments[0].Content.Body {
		if el["type"] == "TextBlock" && strings.Contains(fmt.Sprint(el["text"]), "evil.example") {
			t.Errorf("the title reached a Markdown TextBlock: %v", el)
		}
	}
	if !strings.Contains(string(srv.Only(t).Body), `{"type":"TextRun","text":"[Reset your password](https://evil.example) **now**"`) {
		t.Errorf("the title is not a TextRun: %s", srv.Only(t).Body)
	}
}

func TestTeamsConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  notify.TeamsConfig
		want string
	}{
		{"no name", notify.TeamsConfig{WebhookURL: secret(t, "https://x.logic.azure.com/workflows?sig="+teamsSig)}, "name is required"},
		{"no URL", notify.TeamsConfig{Name: "t"}, "webhook_url is required"},
		{"plain http", notify.TeamsConfig{Name: "t", WebhookURL: secret(t, "http://x.logic.azure.com/workflows?sig="+teamsSig)}, "webhook_url must be https"},
		{"not a URL", notify.TeamsConfig{Name: "t", WebhookURL: secret(t, "x.logic.azure.com/workflows?sig="+teamsSig)}, "webhook_url is not an absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := notify.NewTeams(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
			noSecret(t, err, teamsSig)
		})
	}
}

// TestHTTPReceiverErrors holds the webhook, Teams and Slack (incoming
// webhook and Web API) receivers to one classification of HTTP answers:
// a refused request or credential is never retried, a rate limit, a
// timeout or a server fault is (after Retry-After when given); and no
// error shows the credential, even when the answer echoes it.
func TestHTTPReceiverErrors(t *testing.T) {
	retryAt := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	answers := []struct {
		name       string
		status     int
		retryAfter string
		body       string
		permanent  bool
		wait       func(time.Duration) bool
	}{
		{"400 with its reason", 400, "", `{"error":{"code":"TriggerInputSchemaMismatch","message":"bad card"}}`, true, zero},
		{"401", 401, "", `{"error":{"code":"DirectApiAuthorizationRequired"}}`, true, zero},
		{"403", 403, "", "action_prohibited", true, zero},
		{"404", 404, "", "no_service", true, zero},
		{"410", 410, "", "channel_is_archived", true, zero},
		{"429 after seconds", 429, "7", "rate limited", false, func(d time.Duration) bool { return d == 7*time.Second }},
		{"429 after a date", 429, retryAt, "", false, func(d time.Duration) bool { return d > 60*time.Second && d <= 90*time.Second }},
		{"500", 500, "", "rollup_error", false, zero},
		{"502", 502, "", "", false, zero},
		{"503 after seconds", 503, "20", "", false, func(d time.Duration) bool { return d == 20*time.Second }},
	}
	// Each receiver, made on a server's base URL, and the secrets it holds
	// (which the answers echo: no error may show them).
	type receiver struct {
		name    string
		make    func(t *testing.T, base string) notify.Receiver
		secrets []string
	}
	receivers := []receiver{
		{"webhook", func(t *testing.T, base string) notify.Receiver {
			w, err := notify.NewWebhook(notify.WebhookConfig{Name: "soar", URL: secret(t, base+"/hook?token="+hookToken),
				Secret: secret(t, hookSecret), Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}, []string{hookToken, hookSecret}},
		{"teams", func(t *testing.T, base string) notify.Receiver { return newTeams(t, base+teamsPath+"?"+teamsQuery) }, []string{teamsSig}},
		{"slack webhook", func(t *testing.T, base string) notify.Receiver {
			return newSlack(t, notify.SlackConfig{WebhookURL: secret(t, base+slackHookPath), Timeout: 2 * time.Second})
		}, []string{slackHookSecret}},
		{"slack api", func(t *testing.T, base string) notify.Receiver {
			return newSlack(t, notify.SlackConfig{Token: secret(t, slackToken), Channel: "#oncall", APIURL: base, Timeout: 2 * time.Second})
		}, []string{slackToken}},
	}
	for _, rc := range receivers {
		for _, a := range answers {
			t.Run(rc.name+"/"+a.name, func(t *testing.T) {
				srv := notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
					if a.retryAfter != "" {
						w.Header().Set("Retry-After", a.retryAfter)
					}
					w.WriteHeader(a.status)
					_, _ = fmt.Fprint(w, a.body+" "+r.URL.String()+" "+r.Header.Get("Authorization")+" "+strings.Join(rc.secrets, " "))
				})
				_, err := rc.make(t, srv.URL).Send(context.Background(), trigger())
				var se *notify.SendError
				if !errors.As(err, &se) {
					t.Fatalf("error %v (%T), want a *SendError", err, err)
				}
				if se.Status != a.status || se.Permanent != a.permanent || !a.wait(se.RetryAfter) {
					t.Errorf("status %d permanent %v retry after %s; want %d %v (%v)", se.Status, se.Permanent, se.RetryAfter, a.status, a.permanent, err)
				}
				if a.status == 400 && !strings.Contains(se.Body, "TriggerInputSchemaMismatch") {
					t.Errorf("the error keeps no answer: %q", se.Body)
				}
				noSecret(t, err, rc.secrets...)
			})
		}
		t.Run(rc.name+"/no answer in time", func(t *testing.T) {
			err := notify.CheckNoAnswerInTime(t, rc.make(t, notify.HangingAPI(t).URL), trigger(), 200*time.Millisecond)
			noSecret(t, err, rc.secrets...)
		})
		t.Run(rc.name+"/connection refused", func(t *testing.T) {
			_, err := rc.make(t, notify.RefusedURL(t)).Send(context.Background(), trigger())
			var se *notify.SendError
			if err == nil || errors.As(err, &se) && se.Permanent {
				t.Fatalf("error %v, want a retried failure", err)
			}
			noSecret(t, err, rc.secrets...)
		})
	}
}

func zero(d time.Duration) bool { return d == 0 }

// TestHTTPReceiversFollowNoRedirect: a redirect is an answer, not a
// place to post again — a followed POST becomes a GET or carries the
// credential elsewhere — and it is not retried.
func TestHTTPReceiversFollowNoRedirect(t *testing.T) {
	elsewhere := notify.NewFakeAPI(t, nil)
	srv := notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		http.Redirect(w, r, elsewhere.URL+"/collect", http.StatusTemporaryRedirect)
	})
	receivers := []notify.Receiver{
		newWebhook(t, srv.URL+"/hook", hookSecret),
		newTeams(t, srv.URL+teamsPath+"?"+teamsQuery),
		newSlack(t, notify.SlackConfig{WebhookURL: secret(t, srv.URL+slackHookPath)}),
		newSlack(t, notify.SlackConfig{Token: secret(t, slackToken), Channel: "#oncall", APIURL: srv.URL}),
	}
	for _, r := range receivers {
		_, err := r.Send(context.Background(), trigger())
		var se *notify.SendError
		if !errors.As(err, &se) || !se.Permanent || se.Status != http.StatusTemporaryRedirect {
			t.Errorf("%s: error %v, want a permanent 307", r.Type(), err)
		}
	}
	if got := elsewhere.Requests(); len(got) != 0 {
		t.Errorf("the redirect was followed: %d requests elsewhere", len(got))
	}
}

// The credentials in the URLs of the webhook and Slack's incoming webhook.
const (
	hookToken       = "tok-8Hq2LmZ0vR5xW1cY"
	slackHookSecret = "Xq4r7ZkP2mN8vB1cD5eF9gH3"
	slackHookPath   = "/services/T0001AAAA/B0002BBBB/" + slackHookSecret
)
