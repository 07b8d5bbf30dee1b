package fakereceivers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

// The credentials the tests configure: the fakes accept only these.
const (
	routingKey  = "R0UTINGKEY0123456789abcdefABCDEF" // 32 characters, as PagerDuty's
	genieKey    = "genie-0000-1111-2222-333344445555"
	slackToken  = "xoxb-1111-2222-fakereceiverstoken"
	hookSecret  = "whsec-fakereceivers-test-secret"
	episodeKey  = "openrecall-b1-7"
	reviewURL   = "https://openrecall.example.com/results/b1-7"
	alertTitle  = "ledger-sync-worker timeout calling ledger API"
	mailFrom    = "openrecall@example.com"
	mailTo      = "oncall@example.com"
	fakeChannel = "#oncall"
)

// start is 2026-03-02 09:00 UTC, the tests' clock at its start.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clock is a clock the test moves; the fakes and the webhook receiver read
// it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startFakes starts fakes that accept only the tests' credentials, on a
// clock the test moves, and closes them when the test ends.
func startFakes(t *testing.T) (*fakereceivers.Fakes, *clock) {
	t.Helper()
	clk := &clock{t: start}
	f, err := fakereceivers.Start(fakereceivers.Config{PagerDutyRoutingKey: routingKey, OpsgenieAPIKey: genieKey,
		SlackToken: slackToken, WebhookSecret: hookSecret, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return f, clk
}

// secret returns s as a notify.Secret.
func secret(t *testing.T, s string) notify.Secret {
	t.Helper()
	v, err := notify.ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// result is a minimal triaged result: a high-severity alert judged real.
func result() openrecall.Result {
	return openrecall.Result{
		AnalysisID: "b1-7", Outcome: openrecall.ResultTriaged,
		Alert: openrecall.Alert{ID: "am-1", Title: alertTitle, Severity: openrecall.SeverityHigh, Service: "ledger-sync",
			Environment: "prod", Sender: "alertmanager", Status: openrecall.StatusFiring, Timestamp: start.Add(-time.Minute),
			Labels: map[string]string{"alertname": "LedgerSyncTimeout", "instance": "worker-3:9100"}},
		Identity: openrecall.Identity{Rule: "LedgerSyncTimeout", Service: "ledger-sync"},
		Decision: openrecall.DecisionReal,
		Analysis: &openrecall.Analysis{Decision: openrecall.DecisionReal, Confidence: 0.8, Summary: "the ledger API is down"},
	}
}

// trigger is the episode's trigger notification.
func trigger() notify.Notification {
	return notify.Notification{Kind: notify.KindTrigger, Key: episodeKey, ID: "n-1", Result: result(), ReviewURL: reviewURL, At: start}
}

// resolveOf is the episode's resolve: the recovery's result, the
// trigger's delivery state.
func resolveOf(prior map[string]string) notify.Notification {
	r := result()
	r.Outcome, r.Decision, r.Analysis = openrecall.ResultResolved, "", nil
	r.Alert.Status, r.Alert.ID, r.AnalysisID = openrecall.StatusResolved, "am-1-resolved", "b1-9"
	return notify.Notification{Kind: notify.KindResolve, Key: episodeKey, ID: "n-3", Result: r, Prior: prior, At: start.Add(30 * time.Minute)}
}

// updateOf is a person's decision about the episode.
func updateOf(prior map[string]string) notify.Notification {
	return notify.Notification{Kind: notify.KindUpdate, Key: episodeKey, ID: "n-2", Result: result(), Prior: prior,
		Decision:  &notify.Decided{Decision: openrecall.DecisionReal, Analyst: "bob", Note: "ledger API rate limit changed"},
		ReviewURL: reviewURL, At: start.Add(10 * time.Minute)}
}

// send sends n through r, failing t on an error.
func send(t *testing.T, r notify.Receiver, n notify.Notification) notify.Delivery {
	t.Helper()
	d, err := r.Send(context.Background(), n)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Type(), n.Kind, err)
	}
	return d
}

// sendError sends n through r and returns its *notify.SendError, failing
// t when Send succeeded or failed otherwise.
func sendError(t *testing.T, r notify.Receiver, n notify.Notification) *notify.SendError {
	t.Helper()
	_, err := r.Send(context.Background(), n)
	var se *notify.SendError
	if !errors.As(err, &se) {
		t.Fatalf("%s %s: error %v (%T), want a *notify.SendError", r.Type(), n.Kind, err, err)
	}
	return se
}

// receivers returns a notify receiver of every type, pointed at f with
// the tests' credentials.
func receivers(t *testing.T, f *fakereceivers.Fakes, clk *clock) map[string]notify.Receiver {
	t.Helper()
	a := f.Addrs()
	must := func(r notify.Receiver, err error) notify.Receiver {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	noTLS := false
	return map[string]notify.Receiver{
		fakereceivers.PagerDuty: must(notify.NewPagerDuty(notify.PagerDutyConfig{Name: "pager", RoutingKey: secret(t, routingKey),
			URL: a.PagerDuty, Acknowledge: true})),
		fakereceivers.Opsgenie: must(notify.NewOpsgenie(notify.OpsgenieConfig{Name: "ops", APIKey: secret(t, genieKey),
			APIURL: a.Opsgenie, Tags: []string{"team-ledger"}})),
		fakereceivers.Slack: must(notify.NewSlack(notify.SlackConfig{Name: "chat", Token: secret(t, slackToken),
			Channel: fakeChannel, APIURL: a.Slack})),
		fakereceivers.Teams: must(notify.NewTeams(notify.TeamsConfig{Name: "teams", WebhookURL: secret(t, a.Teams)})),
		fakereceivers.Webhook: must(notify.NewWebhook(notify.WebhookConfig{Name: "hook", URL: secret(t, a.Webhook),
			Secret: secret(t, hookSecret), Now: clk.Now})),
		fakereceivers.Email: must(notify.NewEmail(notify.EmailConfig{Name: "mail", Host: a.SMTPHost, Port: a.SMTPPort,
			From: "openrecall <" + mailFrom + ">", To: []string{mailTo}, RequireTLS: &noTLS, Hello: "openrecall.test"})),
	}
}
