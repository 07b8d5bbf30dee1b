package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The receivers' names in serve's configuration, and their types.
const (
	rcvPager  = "pager"  // pagerduty, acknowledge: true
	rcvOps    = "ops"    // opsgenie
	rcvChat   = "chat"   // slack, bot token
	rcvSecOps = "secops" // teams
	rcvAM     = "am"     // alertmanager
	rcvHook   = "hook"   // webhook, signed
	rcvMail   = "mail"   // email
)

// receiverNames lists the receivers in the order the report prints them.
var receiverNames = []string{rcvPager, rcvOps, rcvChat, rcvSecOps, rcvAM, rcvHook, rcvMail}

// receiverTypes gives each receiver's type.
var receiverTypes = map[string]string{rcvPager: "pagerduty", rcvOps: "opsgenie", rcvChat: "slack", rcvSecOps: "teams",
	rcvAM: "alertmanager", rcvHook: "webhook", rcvMail: "email"}

// routeYAML is the notify section's route tree, as a team would write it:
// what memory or an approved exception closed reaches no one; the members
// of a storm reach the chat and the webhook, one page being enough; what
// is left to a person pages when critical or high, mails when critical,
// reaches the security channel when it is an attack, and every other
// tool. routedTo is this tree as the check reads it.
const routeYAML = `  route:
    receiver: ""
    routes:
      - matchers: ['route=~"bypass|exception"']
      - matchers: ['decision=~"escalated|real"', 'route="group"']
        routes:
          - receiver: hook
            continue: true
          - receiver: chat
      - matchers: ['decision=~"escalated|real"']
        routes:
          - receiver: pager
            matchers: ['severity=~"critical|high"']
            continue: true
          - receiver: mail
            matchers: ['severity="critical"']
            continue: true
          - receiver: secops
            matchers: ['attack_pattern!=""']
            continue: true
          - receiver: ops
            continue: true
          - receiver: am
            continue: true
          - receiver: hook
            continue: true
          - receiver: chat
`

// subject is what the routes of routeYAML read of a result.
type subject struct {
	Decision, Route, Severity, AttackPattern string
}

// routedTo returns the receivers routeYAML sends a triaged result to,
// written from the tree's meaning rather than by walking it (the test
// holds the two together): the oracle of the triggers.
func routedTo(s subject) []string {
	left := s.Decision == "escalated" || s.Decision == "real"
	switch {
	case s.Route == "bypass" || s.Route == "exception" || !left:
		return nil
	case s.Route == "group":
		return []string{rcvHook, rcvChat}
	}
	var out []string
	if s.Severity == "critical" || s.Severity == "high" {
		out = append(out, rcvPager)
	}
	if s.Severity == "critical" {
		out = append(out, rcvMail)
	}
	if s.AttackPattern != "" {
		out = append(out, rcvSecOps)
	}
	return append(out, rcvOps, rcvAM, rcvHook, rcvChat)
}

// receiverAddrs is where serve's receivers deliver.
type receiverAddrs struct {
	PagerDuty, Opsgenie, Slack, Alertmanager string
	SMTPHost                                 string
	SMTPPort                                 int
}

// serveLease is server.lease in serve's configuration: how long a claim
// of a killed process would hold its intents from another instance.
const serveLease = 10 * time.Second

// externalURL is the cockpit's address the review links carry.
const externalURL = "https://openrecall.e2e.example"

// serveConfig returns serve's configuration: its tokens, a short lease and
// a fixed instance name (a restart after kill -9 takes its own claims back
// at once), and the notify section with the seven receivers (their
// secrets from the environment) and routeYAML. The back-off is short so
// that an outage's retries come within the run.
func serveConfig(a receiverAddrs) string {
	var b strings.Builder
	fmt.Fprintf(&b, `server:
  instance: e2e-notify
  lease: %s
  tokens:
    - name: e2e
      token_env: E2E_RETAIN_TOKEN
      scopes: [retain]
notify:
  external_url: %s
  max_age: 10m
  concurrency: 4
  backoff: {base: 200ms, max: 1s}
  receivers:
    - name: %s
      type: pagerduty
      routing_key: env:E2E_PD_ROUTING_KEY
      url: %s
      client: openrecall-e2e
      acknowledge: true
    - name: %s
      type: opsgenie
      api_key: env:E2E_OPSGENIE_KEY
      api_url: %s
      tags: [e2e]
    - name: %s
      type: slack
      token: env:E2E_SLACK_TOKEN
      channel: "#oncall"
      api_url: %s
      timeout: 5s
    - name: %s
      type: teams
      webhook_url: env:E2E_TEAMS_WEBHOOK
      timeout: 5s
    - name: %s
      type: alertmanager
      urls: [%s]
      resolve_timeout: 5m
    - name: %s
      type: webhook
      url: env:E2E_HOOK_URL
      secret: env:E2E_HOOK_SECRET
      timeout: 5s
    - name: %s
      type: email
      host: %s
      port: %d
      from: openrecall@e2e.example
      to: [oncall@e2e.example]
      require_tls: false
      hello: openrecall.e2e.example
      timeout: 5s
`, serveLease, externalURL, rcvPager, a.PagerDuty, rcvOps, a.Opsgenie, rcvChat, a.Slack, rcvSecOps, rcvAM, a.Alertmanager, rcvHook,
		rcvMail, a.SMTPHost, a.SMTPPort)
	b.WriteString(routeYAML)
	return b.String()
}

// has reports whether list holds s.
func has(list []string, s string) bool { return slices.Contains(list, s) }
