package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

// notifyNode returns the notify: mapping of the configuration serve is
// given with the receivers at a.
func notifyNode(t *testing.T, a receiverAddrs) *yaml.Node {
	t.Helper()
	cfg := serveConfig(a)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(cfg), &doc); err != nil {
		t.Fatalf("the configuration is not YAML: %v", err)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "notify" {
			return root.Content[i+1]
		}
	}
	t.Fatal("the configuration has no notify section")
	return nil
}

// TestServeConfigReads holds the configuration this check gives serve to
// what serve's reader takes: every receiver built, the route parsed.
func TestServeConfigReads(t *testing.T) {
	for _, env := range []string{"E2E_PD_ROUTING_KEY", "E2E_OPSGENIE_KEY", "E2E_HOOK_SECRET"} {
		t.Setenv(env, "0123456789abcdef0123456789abcdef")
	}
	t.Setenv("E2E_SLACK_TOKEN", "xoxb-test")
	t.Setenv("E2E_TEAMS_WEBHOOK", "http://127.0.0.1:9/workflows/x/triggers/manual/paths/invoke?sig=x")
	t.Setenv("E2E_HOOK_URL", "http://127.0.0.1:9/hook")
	s, err := notify.ReadSettings(notifyNode(t, receiverAddrs{PagerDuty: "http://127.0.0.1:9/v2/enqueue", Opsgenie: "http://127.0.0.1:9",
		Slack: "http://127.0.0.1:9/api/", Alertmanager: "http://127.0.0.1:9", SMTPHost: "127.0.0.1", SMTPPort: 25}))
	if err != nil {
		t.Fatalf("serve would refuse the configuration: %v", err)
	}
	if got := s.ReceiverNames(); !slices.Equal(got, receiverNames) {
		t.Errorf("receivers %v, want %v", got, receiverNames)
	}
	for _, r := range s.Receivers {
		if r.Type() != receiverTypes[r.Name()] {
			t.Errorf("receiver %s is a %s, want %s", r.Name(), r.Type(), receiverTypes[r.Name()])
		}
	}
}

// TestOracleIsTheRouteTree holds routedTo, the check's reading of
// routeYAML, to the product's walk of the same tree over every
// combination of the fields it matches on, so the oracle and the
// configuration cannot drift apart.
func TestOracleIsTheRouteTree(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(routeYAML), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range receiverNames {
		names[n] = true
	}
	root, err := notify.ParseRoute(doc.Content[0].Content[1], names)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"known_benign", "false_positive", "duplicate", "real", "escalated", ""} {
		for _, route := range []string{"bypass", "exception", "group", "cheap", "strong", "unanalysed", "none"} {
			for _, sev := range []string{"critical", "high", "medium", "low", "info", "unknown", ""} {
				for _, attack := range []string{"", "credential_access"} {
					s := subject{Decision: d, Route: route, Severity: sev, AttackPattern: attack}
					var walked []string
					for _, m := range root.Receivers(notify.Subject{Fields: notify.SubjectFields{Decision: d, Route: route,
						Severity: sev, AttackPattern: attack}}) {
						walked = append(walked, m.Receiver)
					}
					if got := routedTo(s); !slices.Equal(got, walked) {
						t.Errorf("%+v: the oracle says %v, the route tree %v", s, got, walked)
					}
				}
			}
		}
	}
}

func TestHeadlineKind(t *testing.T) {
	tests := []struct{ text, want string }{
		{`{"text":"*Resolved at 2026-12-06 13:00 UTC*"}`, "resolve"},
		{`{"text":"*Decided real by e2e*"}`, "update"},
		{`{"text":"*Real incident: left to a person*"}`, "trigger"},
	}
	for _, tt := range tests {
		if got := headlineKind(tt.text); got != tt.want {
			t.Errorf("headlineKind(%s) = %s, want %s", tt.text, got, tt.want)
		}
	}
}

func TestReviewLink(t *testing.T) {
	tests := []struct{ text, want string }{
		{`"url":"https://openrecall.e2e.example/results/serve-000016"}`, "serve-000016"},
		{"Review: https://openrecall.e2e.example/results/serve-000016\n", "serve-000016"},
		{`"url":"https://openrecall.e2e.example/ui/review/serve-000016"`, "serve-000016"},
	}
	for _, tt := range tests {
		m := reviewLink.FindStringSubmatch(tt.text)
		if m == nil || m[1] != tt.want {
			t.Errorf("reviewLink in %q: %v, want %s", tt.text, m, tt.want)
		}
	}
}

// TestObserveReadsTheReceivers sends one episode — trigger, a person's
// decision, resolve — through the product's own receivers, built from the
// configuration serve is given, to the fakes, and holds observe to reading
// each receiver's rendering back as that episode: the review links, the
// headlines, the kinds. Alertmanager, a real one in the run, is left out.
func TestObserveReadsTheReceivers(t *testing.T) {
	creds := fakereceivers.Config{PagerDutyRoutingKey: "0123456789abcdef0123456789abcdef", OpsgenieAPIKey: "og-key",
		SlackToken: "xoxb-test", WebhookSecret: "hook-secret"}
	f, err := fakereceivers.Start(creds)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	a := f.Addrs()
	for env, v := range map[string]string{"E2E_PD_ROUTING_KEY": creds.PagerDutyRoutingKey, "E2E_OPSGENIE_KEY": creds.OpsgenieAPIKey,
		"E2E_HOOK_SECRET": creds.WebhookSecret, "E2E_SLACK_TOKEN": creds.SlackToken, "E2E_TEAMS_WEBHOOK": a.Teams, "E2E_HOOK_URL": a.Webhook} {
		t.Setenv(env, v)
	}
	s, err := notify.ReadSettings(notifyNode(t, receiverAddrs{PagerDuty: a.PagerDuty, Opsgenie: a.Opsgenie, Slack: a.Slack,
		Alertmanager: "http://127.0.0.1:9", SMTPHost: a.SMTPHost, SMTPPort: a.SMTPPort}))
	if err != nil {
		t.Fatal(err)
	}
	alert := openrecall.Alert{ID: "falco-privesc-2211", Title: "Privilege escalation attempt on web-frontend node", Severity: openrecall.SeverityCritical,
		Service: "web-frontend", Environment: "prod", Status: openrecall.StatusFiring}
	firing := openrecall.Result{AnalysisID: "serve-000016", Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal, Alert: alert}
	alert.Status = openrecall.StatusResolved
	recovery := openrecall.Result{AnalysisID: "serve-000031", Outcome: openrecall.ResultResolved, Alert: alert}
	key := "openrecall-serve-000016"
	link := func(id string) string { return externalURL + "/results/" + id }
	now := time.Now()
	want := ledger{}
	for _, rcv := range s.Receivers {
		if rcv.Name() == rcvAM {
			continue
		}
		prior := map[string]string{}
		for i, n := range []notify.Notification{
			{Kind: notify.KindTrigger, Result: firing, ReviewURL: link(firing.AnalysisID)},
			{Kind: notify.KindUpdate, Result: firing, ReviewURL: link(firing.AnalysisID),
				Decision: &notify.Decided{Decision: openrecall.DecisionReal, Analyst: "e2e"}},
			{Kind: notify.KindResolve, Result: recovery, ReviewURL: link(recovery.AnalysisID)},
		} {
			n.Key, n.ID, n.Prior, n.At = key, fmt.Sprintf("%s-%d", rcv.Name(), i), prior, now
			d, err := rcv.Send(t.Context(), n)
			if err != nil {
				t.Fatalf("%s: send %s: %v", rcv.Name(), n.Kind, err)
			}
			if d.State != nil {
				prior = d.State
			}
			want.add(rcv.Name(), key, n.Kind)
		}
	}
	r := &run{fakes: f, sink: &amSink{}}
	o := r.observe(map[string]string{firing.AnalysisID: key, recovery.AnalysisID: key})
	for _, d := range append(differences(want, o.got, map[string]string{key: "falco-privesc"}, []string{rcvAM}), o.problems...) {
		t.Error(d)
	}
}
