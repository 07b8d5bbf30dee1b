package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// PagerDuty Events API v2, as documented by PagerDuty:
//   - https://developer.pagerduty.com/docs/events-api-v2-overview (the
//     events, dedup_key, the answers and which to retry)
//   - https://developer.pagerduty.com/docs/send-alert-event (the trigger,
//     acknowledge and resolve bodies and their fields)
//   - https://github.com/PagerDuty/api-schema/blob/main/reference/events-v2/openapiv3.json
//     (the same as OpenAPI: 202 {status, message, dedup_key}; 400 {status,
//     message, errors[]}; 429 rate limited; 5xx retried)

// TypePagerDuty is the Type of a PagerDuty receiver.
const TypePagerDuty = "pagerduty"

// DefaultPagerDutyURL is the Events API v2 endpoint (an EU account's is
// https://events.eu.pagerduty.com/v2/enqueue).
const DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"

// PagerDuty's documented limits.
const (
	pdMaxSummary  = 1024 // payload.summary, characters
	pdMaxDedupKey = 255  // dedup_key, characters
	pdRoutingKey  = 32   // an integration key's length
)

// PagerDutyConfig configures a PagerDuty receiver: the Events API v2
// integration its events go to.
type PagerDutyConfig struct {
	// Name is the receiver's name, which routes name.
	Name string
	// RoutingKey is the integration key of the service's Events API v2
	// integration (32 characters).
	RoutingKey Secret
	// URL is the events endpoint: DefaultPagerDutyURL when empty. It is
	// https (plain http only to a loopback address: a test's server).
	URL string
	// Client is the "client" of the events, the monitoring tool PagerDuty
	// shows: "openrecall" when empty.
	Client string
	// Acknowledge sends a person's decision about a paged alert
	// (KindUpdate) as an acknowledge event: the incident stops escalating
	// while the person who decided owns it. Without it updates are not
	// sent to PagerDuty (the decision shows in openrecall).
	Acknowledge bool
}

// PagerDuty pages through the PagerDuty Events API v2. A trigger opens (or
// updates) the alert whose dedup_key is the episode's Key, a resolve
// resolves it, an update acknowledges it when configured. What the
// notification's fields become:
//
//	routing_key             PagerDutyConfig.RoutingKey
//	event_action            trigger (KindTrigger), resolve (KindResolve),
//	                        acknowledge (KindUpdate, with Acknowledge; else
//	                        nothing is sent)
//	dedup_key               Notification.Key
//	payload.summary         the summary line (the alert's title), ≤1024 characters
//	payload.source          the alert's host (labels host, hostname,
//	                        instance, node, pod; its source), else its
//	                        service, else its sender, else "openrecall"
//	payload.severity        the alert's severity, paged as below
//	payload.timestamp       the alert's own time, when it has one
//	payload.component       the alert's service
//	payload.group           the alert's environment
//	payload.class           the identity's rule (the alertname, check, …)
//	payload.custom_details  the analysis: decision, route, reason,
//	                        confidence, identity, severity, memories (that
//	                        voted: id, decision, score, analyst, note),
//	                        dead_ends, exception, group_head, cost (dollars),
//	                        cost_nano_usd, review_url
//	links                   the review page, the alert's runbook_url
//	client, client_url      PagerDutyConfig.Client, the review page
//
// Severities (PagerDuty has four; an unknown severity is paged as
// critical, see pagedAs):
//
//	openrecall  critical  high   medium   low      info  unknown
//	PagerDuty   critical  error  warning  warning  info  critical
//
// A trigger's Delivery.State holds the dedup_key PagerDuty answered.
// PagerDuty is safe for concurrent use.
type PagerDuty struct {
	name, url, client string
	key               Secret
	acknowledge       bool
}

// NewPagerDuty returns the receiver c configures, or an error naming the
// field that is wrong.
func NewPagerDuty(c PagerDutyConfig) (*PagerDuty, error) {
	if strings.TrimSpace(c.Name) == "" {
		return nil, errors.New("pagerduty receiver: name: empty")
	}
	where := fmt.Sprintf("pagerduty receiver %q", c.Name)
	if c.RoutingKey.IsZero() {
		return nil, fmt.Errorf("%s: routing_key: empty", where)
	}
	if k := c.RoutingKey.Reveal(); len(k) != pdRoutingKey || !printableASCII(k) {
		return nil, fmt.Errorf("%s: routing_key: not an Events API v2 integration key (%d printable characters)", where, pdRoutingKey)
	}
	u := c.URL
	if u == "" {
		u = DefaultPagerDutyURL
	}
	if err := checkURL(u, false); err != nil {
		return nil, fmt.Errorf("%s: url: %w", where, err)
	}
	client := strings.TrimSpace(c.Client)
	if client == "" {
		client = "openrecall"
	}
	return &PagerDuty{name: c.Name, url: u, client: client, key: c.RoutingKey, acknowledge: c.Acknowledge}, nil
}

// Name returns the receiver's name.
func (p *PagerDuty) Name() string { return p.name }

// Type returns TypePagerDuty.
func (p *PagerDuty) Type() string { return TypePagerDuty }

// pdEvent is an Events API v2 event.
type pdEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload,omitempty"`
	Client      string     `json:"client,omitempty"`
	ClientURL   string     `json:"client_url,omitempty"`
	Links       []pdLink   `json:"links,omitempty"`
}

type pdPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

type pdLink struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// pdAnswer is the Events API's answer.
type pdAnswer struct {
	Status   string   `json:"status"`
	Message  string   `json:"message"`
	DedupKey string   `json:"dedup_key"`
	Errors   []string `json:"errors"`
}

// Send sends n as one event (see PagerDuty).
func (p *PagerDuty) Send(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkKey(n.Key, pdMaxDedupKey); err != nil {
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("pagerduty: dedup_key: %w", err)}
	}
	ev := pdEvent{RoutingKey: p.key.Reveal(), DedupKey: n.Key}
	switch n.Kind {
	case KindTrigger:
		ev.EventAction = "trigger"
		p.trigger(&ev, n)
	case KindResolve:
		ev.EventAction = "resolve"
	case KindUpdate:
		if !p.acknowledge {
			return Delivery{State: n.Prior}, nil
		}
		ev.EventAction = "acknowledge"
	default:
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("pagerduty: unknown notification kind %q", n.Kind)}
	}
	answer, err := send(ctx, nil, request{What: "pagerduty", URL: p.url, Body: ev, Secrets: []string{p.key.Reveal()}})
	if err != nil {
		return Delivery{}, err
	}
	if n.Kind != KindTrigger {
		return Delivery{State: n.Prior}, nil
	}
	var a pdAnswer
	_ = json.Unmarshal(answer.Body, &a) // a 202 is the delivery; its body only echoes the key
	key := a.DedupKey
	if key == "" {
		key = n.Key
	}
	return Delivery{State: map[string]string{"dedup_key": key}}, nil
}

// trigger fills a trigger event's payload, client and links.
func (p *PagerDuty) trigger(ev *pdEvent, n Notification) {
	a := viewOf(n)
	r := n.Result
	source := firstOf(a.Host, a.Service, r.Alert.Sender, "openrecall")
	ev.Payload = &pdPayload{
		Summary:       clip(a.SummaryLine, pdMaxSummary),
		Source:        clip(source, maxLabelRunes),
		Severity:      pdSeverity(a.Severity),
		Component:     clip(a.Service, maxLabelRunes),
		Group:         clip(a.Environment, maxLabelRunes),
		Class:         clip(firstOf(r.Identity.Rule, r.Alert.Rule), maxLabelRunes),
		CustomDetails: a.details(),
	}
	if !r.Alert.Timestamp.IsZero() {
		ev.Payload.Timestamp = r.Alert.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	ev.Client = clip(p.client, maxLabelRunes)
	ev.ClientURL = a.ReviewURL
	if a.ReviewURL != "" {
		ev.Links = append(ev.Links, pdLink{Href: a.ReviewURL, Text: reviewLinkTitle})
	}
	if rb := webURL(r.Alert.Annotations["runbook_url"]); rb != "" {
		ev.Links = append(ev.Links, pdLink{Href: rb, Text: "Runbook"})
	}
}

// pdSeverity maps a severity to PagerDuty's four (see PagerDuty).
func pdSeverity(s openrecall.Severity) string {
	switch pagedAs(s) {
	case openrecall.SeverityCritical:
		return "critical"
	case openrecall.SeverityHigh:
		return "error"
	case openrecall.SeverityMedium, openrecall.SeverityLow:
		return "warning"
	default:
		return "info"
	}
}

// checkKey reports whether key can name an episode at a receiver whose
// keys take at most max characters: not empty, printable ASCII.
func checkKey(key string, max int) error {
	switch {
	case key == "":
		return errors.New("the notification has no key")
	case len(key) > max:
		return fmt.Errorf("the notification's key has %d characters, more than %d", len(key), max)
	case !printableASCII(key):
		return errors.New("the notification's key is not printable ASCII")
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// firstOf returns the first of ss that is not blank, trimmed.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
