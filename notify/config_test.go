package notify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

// notifySection returns the value of conf's notify: key (nil without one).
func notifySection(t *testing.T, conf string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(conf), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "notify" {
			return root.Content[i+1]
		}
	}
	return nil
}

// fullConfig has every receiver type with every key it takes, each set to
// something other than its default, so a key read into the wrong field
// or not at all shows. SECRETFILE is replaced by a file's path.
const fullConfig = `
notify:
  external_url: https://openrecall.example.com/
  max_age: 2h
  concurrency: 8
  backoff: {base: 2s, max: 10m}
  receivers:
    - name: pager
      type: pagerduty
      routing_key: env:OPENRECALL_TEST_PD_KEY
      url: http://127.0.0.1:9/v2/enqueue
      client: recall-test
      acknowledge: true
    - name: ops
      type: opsgenie
      api_key: env:OPENRECALL_TEST_OG_KEY
      api_url: http://127.0.0.1:9
      tags: [openrecall, team-a]
    - name: chat
      type: slack
      token: env:OPENRECALL_TEST_SLACK_TOKEN
      channel: "#oncall"
      api_url: http://127.0.0.1:9/api/
      interactive: true
      timeout: 20s
      digest: 30m
    - name: chat-hook
      type: slack
      webhook_url: env:OPENRECALL_TEST_SLACK_WEBHOOK
    - name: teams
      type: teams
      webhook_url: env:OPENRECALL_TEST_TEAMS_WEBHOOK
      timeout: 15s
    - name: am
      type: alertmanager
      urls: [http://127.0.0.1:9093, "http://127.0.0.1:9094/am/"]
      bearer_token: env:OPENRECALL_TEST_AM_TOKEN
      resolve_timeout: 5m
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/hook?token=inline-S3CRET
      secret: file:SECRETFILE
      timeout: 5s
      digest: 2h
    - name: mail
      type: email
      host: 127.0.0.1
      port: 2525
      from: openrecall@example.com
      to: [oncall@example.com, "Team <team@example.com>"]
      username: openrecall
      password: env:OPENRECALL_TEST_SMTP_PASSWORD
      require_tls: true
      hello: openrecall.test
      timeout: 30s
    - name: mail.plain
      type: email
      host: 127.0.0.1
      from: openrecall@example.com
      to: [oncall@example.com]
      require_tls: false
  route:
    receiver: chat
    routes:
      - receiver: pager
        matchers: ['severity="critical"']
        continue: true
      - receiver: mail
        matchers: ['decision="escalated"']
`

// The environment's secrets of fullConfig; every one holds S3CRET.
var testSecrets = map[string]string{
	"OPENRECALL_TEST_PD_KEY":         "pd-S3CRET-" + strings.Repeat("0", 22), // 32 characters
	"OPENRECALL_TEST_OG_KEY":         "og-S3CRET",
	"OPENRECALL_TEST_SLACK_TOKEN":    "xoxb-S3CRET",
	"OPENRECALL_TEST_SLACK_WEBHOOK":  "http://127.0.0.1:9/services/S3CRET",
	"OPENRECALL_TEST_TEAMS_WEBHOOK":  "http://127.0.0.1:9/workflows?sig=S3CRET",
	"OPENRECALL_TEST_AM_TOKEN":       "am-S3CRET",
	"OPENRECALL_TEST_SMTP_PASSWORD":  "smtp-S3CRET",
	"OPENRECALL_TEST_SHORT_PD_KEY":   "short-S3CRET",
	"OPENRECALL_TEST_INSECURE_TEAMS": "http://teams.example.com/workflows?sig=S3CRET",
	"OPENRECALL_TEST_WEBHOOK_SECRET": "hmac-S3CRET",
}

// setSecrets puts testSecrets in the environment for t's duration.
func setSecrets(t *testing.T) {
	for k, v := range testSecrets {
		t.Setenv(k, v)
	}
}

func TestConfigFull(t *testing.T) {
	setSecrets(t)
	file := filepath.Join(t.TempDir(), "hook-secret")
	if err := os.WriteFile(file, []byte("file-S3CRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSettings(notifySection(t, strings.ReplaceAll(strings.TrimPrefix(fullConfig, "\n"), "SECRETFILE", file)))
	if err != nil {
		t.Fatal(err)
	}

	secret := func(v string) Secret { return Secret{value: v} }
	yes, no := true, false
	want := []Receiver{
		mustBuild(NewPagerDuty(PagerDutyConfig{Name: "pager", RoutingKey: secret(testSecrets["OPENRECALL_TEST_PD_KEY"]),
			URL: "http://127.0.0.1:9/v2/enqueue", Client: "recall-test", Acknowledge: true})),
		mustBuild(NewOpsgenie(OpsgenieConfig{Name: "ops", APIKey: secret("og-S3CRET"), APIURL: "http://127.0.0.1:9",
			Tags: []string{"openrecall", "team-a"}})),
		mustBuild(NewSlack(SlackConfig{Name: "chat", Token: secret("xoxb-S3CRET"), Channel: "#oncall",
			APIURL: "http://127.0.0.1:9/api/", Interactive: true, Timeout: 20 * time.Second})),
		mustBuild(NewSlack(SlackConfig{Name: "chat-hook", WebhookURL: secret(testSecrets["OPENRECALL_TEST_SLACK_WEBHOOK"])})),
		mustBuild(NewTeams(TeamsConfig{Name: "teams", WebhookURL: secret(testSecrets["OPENRECALL_TEST_TEAMS_WEBHOOK"]),
			Timeout: 15 * time.Second})),
		mustBuild(NewAlertmanager(AlertmanagerConfig{Name: "am", URLs: []string{"http://127.0.0.1:9093", "http://127.0.0.1:9094/am/"},
			BearerToken: secret("am-S3CRET"), ResolveTimeout: 5 * time.Minute})),
		mustBuild(NewWebhook(WebhookConfig{Name: "hook", URL: secret("http://127.0.0.1:9/hook?token=inline-S3CRET"),
			Secret: secret("file-S3CRET"), Timeout: 5 * time.Second})),
		mustBuild(NewEmail(EmailConfig{Name: "mail", Host: "127.0.0.1", Port: 2525, From: "openrecall@example.com",
			To: []string{"oncall@example.com", "Team <team@example.com>"}, Username: "openrecall", Password: secret("smtp-S3CRET"),
			RequireTLS: &yes, Hello: "openrecall.test", Timeout: 30 * time.Second})),
		mustBuild(NewEmail(EmailConfig{Name: "mail.plain", Host: "127.0.0.1", From: "openrecall@example.com",
			To: []string{"oncall@example.com"}, RequireTLS: &no})),
	}
	opts := cmp.Options{
		cmp.AllowUnexported(PagerDuty{}, Opsgenie{}, Slack{}, Teams{}, Alertmanager{}, Webhook{}, Email{}, Secret{}),
		cmpopts.IgnoreFields(Alertmanager{}, "now"), cmpopts.IgnoreFields(Webhook{}, "now"),
	}
	if diff := cmp.Diff(want, s.Receivers, opts); diff != "" {
		t.Errorf("receivers (-want +got):\n%s", diff)
	}

	got := Settings{ExternalURL: s.ExternalURL, MaxAge: s.MaxAge, Concurrency: s.Concurrency, BackoffBase: s.BackoffBase, BackoffMax: s.BackoffMax}
	wantSettings := Settings{ExternalURL: "https://openrecall.example.com", MaxAge: 2 * time.Hour, Concurrency: 8,
		BackoffBase: 2 * time.Second, BackoffMax: 10 * time.Minute}
	if diff := cmp.Diff(wantSettings, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}

	if s.Route == nil || s.Route.Receiver != "chat" || len(s.Route.Routes) != 2 || s.Route.Routes[0].Receiver != "pager" ||
		!s.Route.Routes[0].Continue || s.Route.Routes[1].Receiver != "mail" || s.Route.Line != 62 {
		t.Errorf("route = %+v, want chat at line 62 with pager (continue) and mail under it", s.Route)
	}
	if diff := cmp.Diff(map[string]time.Duration{"chat": 30 * time.Minute, "hook": 2 * time.Hour}, s.Digests); diff != "" {
		t.Errorf("digests (-want +got):\n%s", diff)
	}
	wantNames := []string{"pager", "ops", "chat", "chat-hook", "teams", "am", "hook", "mail", "mail.plain"}
	if diff := cmp.Diff(wantNames, s.ReceiverNames()); diff != "" {
		t.Errorf("ReceiverNames (-want +got):\n%s", diff)
	}
	for _, name := range wantNames {
		if r, ok := s.Receiver(name); !ok || r.Name() != name {
			t.Errorf("Receiver(%q) = %v, %v", name, r, ok)
		}
	}
	if r, ok := s.Receiver("nobody"); ok || r != nil {
		t.Errorf("Receiver(nobody) = %v, %v; want none", r, ok)
	}
}

// mustBuild returns a receiver built from a Go config the test knows is
// good (a failure is a bug in the test itself).
func mustBuild[R Receiver](r R, err error) Receiver {
	if err != nil {
		panic(err)
	}
	return r
}

func TestConfigDefaults(t *testing.T) {
	defaults := Settings{MaxAge: time.Hour, Concurrency: 4, BackoffBase: time.Second, BackoffMax: 5 * time.Minute}
	tests := []struct {
		name string
		node *yaml.Node
	}{
		{"nil node", nil},
		{"zero node", &yaml.Node{}},
		{"no notify key", notifySection(t, "server: {}\n")},
		{"empty notify", notifySection(t, "notify:\n")},
		{"empty mapping", notifySection(t, "notify: {}\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadSettings(tt.node)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(defaults, s); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	t.Run("receivers only", func(t *testing.T) {
		s, err := ReadSettings(notifySection(t, `
notify:
  receivers:
    - {name: hook, type: webhook, url: "http://127.0.0.1:9/h"}
  route: {receiver: hook}
`))
		if err != nil {
			t.Fatal(err)
		}
		got := Settings{ExternalURL: s.ExternalURL, MaxAge: s.MaxAge, Concurrency: s.Concurrency, BackoffBase: s.BackoffBase, BackoffMax: s.BackoffMax}
		if diff := cmp.Diff(defaults, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if len(s.Receivers) != 1 || s.Route == nil || s.Route.Receiver != "hook" {
			t.Errorf("receivers %v, route %+v; want hook", s.ReceiverNames(), s.Route)
		}
		// A timeout left out is the receiver's default.
		if w := s.Receivers[0].(*Webhook); w.timeout != defaultTimeout {
			t.Errorf("webhook timeout = %s, want %s", w.timeout, defaultTimeout)
		}
	})
}

// TestConfigErrors reads bad notify: sections: each error must start with
// the exact line and field at fault, and never hold a secret (every secret
// in play holds S3CRET).
func TestConfigErrors(t *testing.T) {
	setSecrets(t)
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name, conf string
		want       string // the error's start
	}{
		{"not a mapping", `
notify: [pager]
`, "line 1: notify: want a mapping"},
		{"unknown key", `
notify:
  max_age: 1h
  retries: 3
`, `line 3: notify: unknown key "retries"`},
		{"max_age unparsable", `
notify:
  max_age: soon
`, `line 2: notify.max_age: "soon" is not a duration`},
		{"max_age negative", `
notify:
  max_age: -1m
`, "line 2: notify.max_age: -1m is negative"},
		{"max_age zero", `
notify:
  max_age: 0s
`, "line 2: notify.max_age: must be more than zero"},
		{"concurrency zero", `
notify:
  external_url: https://openrecall.example.com
  concurrency: 0
`, "line 3: notify.concurrency: 0: want at least 1"},
		{"concurrency not a number", `
notify:
  concurrency: many
`, `line 2: notify.concurrency: "many" is not a whole number`},
		{"backoff base above max", `
notify:
  max_age: 1h
  backoff:
    base: 10m
`, "line 3: notify.backoff: base 10m0s is more than max 5m0s"},
		{"backoff unknown key", `
notify:
  backoff: {base: 1s, cap: 5m}
`, `line 2: notify.backoff: unknown key "cap"`},
		{"backoff zero", `
notify:
  backoff:
    max: 1m
    base: 0s
`, "line 4: notify.backoff.base: must be more than zero"},
		{"backoff not a mapping", `
notify:
  backoff: 1s
`, "line 2: notify.backoff: want a mapping (base, max)"},
		{"external_url relative", `
notify:
  external_url: openrecall.example.com
`, "line 2: notify.external_url: want an absolute http or https URL"},
		{"external_url with a password", `
notify:
  external_url: https://admin:S3CRET@openrecall.example.com
`, "line 2: notify.external_url: takes no user or password"},
		{"receivers not a list", `
notify:
  receivers: {name: hook}
`, "line 2: notify.receivers: want a list"},
		{"receiver not a mapping", `
notify:
  receivers:
    - hook
`, "line 3: notify.receivers[0]: want a mapping"},
		{"receiver without a name", `
notify:
  receivers:
    - type: webhook
      url: http://127.0.0.1:9/h
  route: {receiver: hook}
`, "line 3: notify.receivers[0]: name: missing"},
		{"receiver name with a space", `
notify:
  receivers:
    - type: webhook
      name: my hook
`, `line 4: notify.receivers[0]: name: "my hook" is not [A-Za-z0-9_.-]+`},
		{"duplicate receiver names", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
    - name: hook
      type: teams
      webhook_url: env:OPENRECALL_TEST_TEAMS_WEBHOOK
  route: {receiver: hook}
`, `line 6: notify.receivers[1]: name: "hook" is notify.receivers[0]'s already`},
		{"receiver without a type", `
notify:
  receivers:
    - name: hook
      url: http://127.0.0.1:9/h
`, "line 3: notify.receivers[0] (hook): type: missing (want pagerduty,"},
		{"unknown receiver type", `
notify:
  receivers:
    - name: hook
      type: discord
`, `line 4: notify.receivers[0] (hook): type: unknown "discord" (want pagerduty,`},
		{"another type's key", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
      routing_key: inline-S3CRET
`, `line 6: notify.receivers[0] (hook): unknown key "routing_key" (want name, type, url, secret, timeout, digest)`},
		{"secret from an unset variable", `
notify:
  receivers:
    - name: ok
      type: webhook
      url: http://127.0.0.1:9/h
    - name: pager
      type: pagerduty
      routing_key: env:OPENRECALL_TEST_UNSET
  route: {receiver: pager}
`, "line 8: notify.receivers[1] (pager): routing_key: secret: environment variable OPENRECALL_TEST_UNSET is empty or unset"},
		{"secret from a missing file", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
      secret: file:` + missing + `
`, "line 6: notify.receivers[0] (hook): secret: secret: open " + missing},
		{"empty inline secret", `
notify:
  receivers:
    - name: ops
      type: opsgenie
      api_key: ""
`, "line 5: notify.receivers[0] (ops): api_key: secret: empty"},
		{"secret not a string", `
notify:
  receivers:
    - name: ops
      type: opsgenie
      api_key: [og-S3CRET]
`, "line 5: notify.receivers[0] (ops): api_key: want a string"},
		{"constructor refuses a secret's value", `
notify:
  receivers:
    - name: pager
      type: pagerduty
      routing_key: env:OPENRECALL_TEST_SHORT_PD_KEY
`, `line 3: notify.receivers[0]: pagerduty receiver "pager": routing_key: not an Events API v2 integration key`},
		{"constructor refuses a secret URL", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
    - name: teams
      type: teams
      webhook_url: env:OPENRECALL_TEST_INSECURE_TEAMS
`, "line 6: notify.receivers[1]: teams receiver teams: webhook_url must be https"},
		{"constructor refuses an inline secret URL", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: ftp://S3CRET@hooks.example.com/x
`, "line 3: notify.receivers[0]: webhook receiver hook: url is not an absolute http or https URL"},
		{"slack with token and webhook", `
notify:
  receivers:
    - name: chat
      type: slack
      token: env:OPENRECALL_TEST_SLACK_TOKEN
      webhook_url: env:OPENRECALL_TEST_SLACK_WEBHOOK
      channel: "#oncall"
`, "line 3: notify.receivers[0]: slack receiver chat: set exactly one of token"},
		{"negative timeout", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
      secret: env:OPENRECALL_TEST_WEBHOOK_SECRET
      timeout: -5s
`, "line 7: notify.receivers[0] (hook): timeout: -5s is negative"},
		{"digest on a pager", `
notify:
  receivers:
    - name: pager
      type: pagerduty
      routing_key: env:OPENRECALL_TEST_PD_KEY
      digest: 30m
`, "line 6: notify.receivers[0] (pager): digest: a pagerduty receiver pages, and a digest never does: say it on a slack, teams, email or webhook receiver"},
		{"digest on opsgenie", `
notify:
  receivers:
    - name: ops
      type: opsgenie
      api_key: env:OPENRECALL_TEST_OG_KEY
      digest: 1h
`, "line 6: notify.receivers[0] (ops): digest: a opsgenie receiver pages"},
		{"digest on alertmanager", `
notify:
  receivers:
    - name: am
      type: alertmanager
      urls: [http://127.0.0.1:9093]
      digest: 1h
`, "line 6: notify.receivers[0] (am): digest: a alertmanager receiver pages"},
		{"digest too short", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
      digest: 30s
`, "line 6: notify.receivers[0] (hook): digest: 30s: want from 1m0s to 24h"},
		{"digest too long", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
      digest: 48h
`, "line 6: notify.receivers[0] (hook): digest: 48h0m0s: want from 1m0s to 24h"},
		{"digest not a duration", `
notify:
  receivers:
    - name: mail
      type: email
      host: 127.0.0.1
      from: openrecall@example.com
      to: [oncall@example.com]
      digest: hourly
`, `line 8: notify.receivers[0] (mail): digest: "hourly" is not a duration`},
		{"port not a number", `
notify:
  receivers:
    - name: mail
      type: email
      host: 127.0.0.1
      port: smtp
`, `line 6: notify.receivers[0] (mail): port: "smtp" is not a whole number`},
		{"require_tls not a boolean", `
notify:
  receivers:
    - name: mail
      type: email
      require_tls: maybe
`, `line 5: notify.receivers[0] (mail): require_tls: "maybe" is not true or false`},
		{"tags not a list", `
notify:
  receivers:
    - name: ops
      type: opsgenie
      api_key: env:OPENRECALL_TEST_OG_KEY
      tags: openrecall
`, "line 6: notify.receivers[0] (ops): tags: want a list of strings"},
		{"urls item not a string", `
notify:
  receivers:
    - name: am
      type: alertmanager
      urls:
        - http://127.0.0.1:9093
        - {url: http://127.0.0.1:9094}
`, "line 7: notify.receivers[0] (am): urls[1]: want a string"},
		{"receivers without a route", `
notify:
  max_age: 1h
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
`, "line 3: notify.route: missing: say which receiver hears what"},
		{"route without receivers", `
notify:
  max_age: 1h
  route:
    receiver: hook
`, "line 3: notify.route: no receivers are configured"},
		{"route naming an unknown receiver", `
notify:
  receivers:
    - name: hook
      type: webhook
      url: http://127.0.0.1:9/h
  route:
    receiver: hook
    routes:
      - receiver: pagr
`, `line 9: route.routes[0].receiver: no receiver "pagr" is configured`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSettings(notifySection(t, strings.TrimPrefix(tt.conf, "\n")))
			if err == nil {
				t.Fatalf("accepted; want %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to start %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "S3CRET") {
				t.Errorf("error %q shows a secret", err)
			}
		})
	}
}
