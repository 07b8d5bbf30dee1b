package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
)

// Opsgenie Alert API v2, as documented by Atlassian:
//   - https://docs.opsgenie.com/docs/alert-api (create alert, close alert,
//     add note to alert; identifierType=alias; the fields and their
//     limits; answers 202 {result, took, requestId})
//   - https://docs.opsgenie.com/docs/api-overview (Authorization: GenieKey,
//     the EU endpoint api.eu.opsgenie.com)
//   - https://docs.opsgenie.com/docs/response (the error answers: 400, 401,
//     403, 404, 422 with {message, took, requestId}; 429 rate limited)

// TypeOpsgenie is the Type of an Opsgenie receiver.
const TypeOpsgenie = "opsgenie"

// DefaultOpsgenieURL is the Opsgenie API (an EU account's is
// https://api.eu.opsgenie.com).
const DefaultOpsgenieURL = "https://api.opsgenie.com"

// Opsgenie's documented limits, in characters.
const (
	ogMaxMessage     = 130
	ogMaxAlias       = 512
	ogMaxDescription = 15000
	ogMaxDetails     = 8000 // the details' keys and values together
	ogMaxEntity      = 512
	ogMaxSource      = 100
	ogMaxUser        = 100
	ogMaxNote        = 25000
	ogMaxTags        = 20
	ogMaxTag         = 50
	ogSource         = "openrecall"
)

// OpsgenieConfig configures an Opsgenie receiver: the API integration its
// alerts go to.
type OpsgenieConfig struct {
	// Name is the receiver's name, which routes name.
	Name string
	// APIKey is the API integration's key.
	APIKey Secret
	// APIURL is the API's address: DefaultOpsgenieURL when empty. It is
	// https (plain http only to a loopback address: a test's server).
	APIURL string
	// Tags are added to every alert the receiver creates (Opsgenie routes
	// and filters on tags).
	Tags []string
}

// Opsgenie opens, annotates and closes Opsgenie alerts through the Alert
// API v2, one alert per episode, its alias the episode's Key: a trigger
// creates the alert (a retry of it, or a later trigger of the episode, is
// deduplicated by Opsgenie on the alias), a person's decision (KindUpdate)
// adds a note to it, a resolve closes it. What the notification's fields
// become:
//
//	POST /v2/alerts (trigger)
//	  message      the summary line (the alert's title), ≤130 characters
//	  alias        Notification.Key
//	  description  the analysis as text: decision and route, reason,
//	               identity, severity, service, host, memories that
//	               voted, dead ends, cost, review link (≤15000)
//	  priority     the alert's severity, as below
//	  details      the analysis by name (decision, route, reason,
//	               confidence, identity, severity, service, environment,
//	               sender, memories, dead_ends, exception, group_head,
//	               cost, cost_nano_usd, review_url), ≤8000 together
//	  entity       the alert's host, else its service
//	  source       "openrecall"
//	  tags         openrecall, decision:…, route:…, severity:…,
//	               service:…, env:…, then OpsgenieConfig.Tags (≤20)
//	POST /v2/alerts/{Key}/notes?identifierType=alias (update)
//	  user, note   the analyst, "decided <decision>: <note>" and the review link
//	POST /v2/alerts/{Key}/close?identifierType=alias (resolve)
//	  user, note   "openrecall", "recovered: <summary line>"
//
// Priorities (an unknown severity is paged as critical, see pagedAs):
//
//	openrecall  critical  high  medium  low  info  unknown
//	Opsgenie    P1        P2    P3      P4   P5    P1
//
// Opsgenie answers 202 to every accepted request and processes it later;
// the Delivery.State of each holds the alias and the requestId Opsgenie
// answered (to look the request up: GET /v2/alerts/requests/{requestId}).
// Opsgenie is safe for concurrent use.
type Opsgenie struct {
	name, api string
	key       Secret
	tags      []string
}

// NewOpsgenie returns the receiver c configures, or an error naming the
// field that is wrong.
func NewOpsgenie(c OpsgenieConfig) (*Opsgenie, error) {
	if strings.TrimSpace(c.Name) == "" {
		return nil, errors.New("opsgenie receiver: name: empty")
	}
	where := fmt.Sprintf("opsgenie receiver %q", c.Name)
	if c.APIKey.IsZero() {
		return nil, fmt.Errorf("%s: api_key: empty", where)
	}
	if !printableASCII(c.APIKey.Reveal()) {
		return nil, fmt.Errorf("%s: api_key: not printable ASCII", where)
	}
	api := strings.TrimRight(c.APIURL, "/")
	if api == "" {
		api = DefaultOpsgenieURL
	}
	if err := checkURL(api, false); err != nil {
		return nil, fmt.Errorf("%s: api_url: %w", where, err)
	}
	if u, _ := url.Parse(api); u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s: api_url: takes no query or fragment", where)
	}
	if len(c.Tags) > ogMaxTags-6 {
		return nil, fmt.Errorf("%s: tags: at most %d (Opsgenie keeps %d, openrecall sets 6)", where, ogMaxTags-6, ogMaxTags)
	}
	for i, t := range c.Tags {
		if t = strings.TrimSpace(t); t == "" || len([]rune(t)) > ogMaxTag {
			return nil, fmt.Errorf("%s: tags[%d]: want 1 to %d characters", where, i, ogMaxTag)
		}
	}
	return &Opsgenie{name: c.Name, api: api, key: c.APIKey, tags: slices.Clone(c.Tags)}, nil
}

// Name returns the receiver's name.
func (o *Opsgenie) Name() string { return o.name }

// Type returns TypeOpsgenie.
func (o *Opsgenie) Type() string { return TypeOpsgenie }

// ogCreate is the body of a create alert request.
type ogCreate struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority"`
}

// ogAction is the body of a close or add note request.
type ogAction struct {
	User   string `json:"user,omitempty"`
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
}

// ogAnswer is the API's answer.
type ogAnswer struct {
	Result    string  `json:"result"`
	Took      float64 `json:"took"`
	RequestID string  `json:"requestId"`
	Message   string  `json:"message"`
}

// Send sends n as one request (see Opsgenie).
func (o *Opsgenie) Send(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkKey(n.Key, ogMaxAlias); err != nil {
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("opsgenie: alias: %w", err)}
	}
	alias := url.PathEscape(n.Key)
	var target string
	var body any
	switch n.Kind {
	case KindTrigger:
		target, body = o.api+"/v2/alerts", o.create(n)
	case KindResolve:
		target = o.api + "/v2/alerts/" + alias + "/close?identifierType=alias"
		body = ogAction{User: ogSource, Source: ogSource, Note: clip("recovered: "+summaryLine(n.Result), ogMaxNote)}
	case KindUpdate:
		target, body = o.api+"/v2/alerts/"+alias+"/notes?identifierType=alias", o.note(n)
	default:
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("opsgenie: unknown notification kind %q", n.Kind)}
	}
	answer, err := send(ctx, nil, request{What: "opsgenie", URL: target, Body: body,
		Header: http.Header{"Authorization": {"GenieKey " + o.key.Reveal()}}, Secrets: []string{o.key.Reveal()}})
	if err != nil {
		return Delivery{}, err
	}
	var a ogAnswer
	_ = json.Unmarshal(answer.Body, &a) // a 202 is the acceptance; its body names the request
	return Delivery{State: map[string]string{"alias": n.Key, "request_id": a.RequestID}}, nil
}

// create renders a trigger as a create alert request.
func (o *Opsgenie) create(n Notification) ogCreate {
	a := viewOf(n)
	c := ogCreate{
		Message:     clip(a.SummaryLine, ogMaxMessage),
		Alias:       n.Key,
		Description: clip(ogDescription(a), ogMaxDescription),
		Details:     fitDetails(a.flat(), ogMaxDetails),
		Entity:      clip(firstOf(a.Host, a.Service), ogMaxEntity),
		Source:      ogSource,
		Priority:    ogPriority(a.Severity),
	}
	tag := func(name, v string) {
		if v = oneLine(v); v != "" {
			if name != "" {
				v = name + ":" + v
			}
			c.Tags = append(c.Tags, clip(v, ogMaxTag))
		}
	}
	tag("", "openrecall")
	tag("decision", string(a.Decision))
	tag("route", a.Route)
	tag("severity", string(a.Severity))
	tag("service", a.Service)
	tag("env", a.Environment)
	for _, t := range o.tags {
		tag("", t)
	}
	return c
}

// note renders a person's decision as an add note request.
func (o *Opsgenie) note(n Notification) ogAction {
	user, text := ogSource, "decided"
	if d := n.Decision; d != nil {
		if d.Analyst != "" {
			user = d.Analyst
		}
		text = strings.TrimSpace(fmt.Sprintf("%s decided %s", d.Analyst, d.Decision))
		if d.Note != "" {
			text += ": " + d.Note
		}
	} else if n.Result.Decision != "" {
		text = "decided " + string(n.Result.Decision)
	}
	if u := webURL(n.ReviewURL); u != "" {
		text += "\n" + reviewLinkTitle + ": " + u
	}
	return ogAction{User: clip(user, ogMaxUser), Source: ogSource, Note: clip(text, ogMaxNote)}
}

// ogDescription renders v as Opsgenie's description: a line a fact.
func ogDescription(v view) string {
	var b strings.Builder
	line := func(label, s string) {
		if s != "" {
			fmt.Fprintf(&b, "%s: %s\n", label, s)
		}
	}
	decision := string(v.Decision)
	if decision != "" && v.Route != "" {
		decision += " (" + v.Route + ")"
	}
	line("Decision", decision)
	line("Reason", v.Conclusion)
	if v.Decided != nil {
		line("Decided", strings.TrimSpace(string(v.Decided.Decision)+" by "+v.Decided.Analyst))
		line("Note", v.Decided.Note)
	}
	line("Alert", v.Identity)
	line("Severity", string(v.Severity))
	line("Service", v.Service)
	line("Host", v.Host)
	line("Exception", v.Exception)
	line("Group head", v.Group)
	if len(v.Memories) > 0 {
		b.WriteString("Memories that voted:\n")
		for _, m := range v.Memories {
			b.WriteString("- " + m.String() + "\n")
		}
	}
	if len(v.DeadEnds) > 0 {
		b.WriteString("Dead ends (tried before, did not help):\n")
		for _, d := range v.DeadEnds {
			b.WriteString("- " + d + "\n")
		}
	}
	line("Cost", v.Cost.String())
	line("Review", v.ReviewURL)
	return strings.TrimRight(b.String(), "\n")
}

// ogPriority maps a severity to Opsgenie's priorities (see Opsgenie).
func ogPriority(s openrecall.Severity) string {
	switch pagedAs(s) {
	case openrecall.SeverityCritical:
		return "P1"
	case openrecall.SeverityHigh:
		return "P2"
	case openrecall.SeverityMedium:
		return "P3"
	case openrecall.SeverityLow:
		return "P4"
	default:
		return "P5"
	}
}

// detailsOrder is the order in which details are kept when they do not
// all fit: what a person needs first.
var detailsOrder = []string{"decision", "route", "reason", "review_url", "severity", "identity", "service",
	"environment", "confidence", "memories", "dead_ends", "exception", "group_head", "cost", "cost_nano_usd", "sender",
	"decided", "decided_by", "decision_note"}

// fitDetails returns the details whose keys and values together take at
// most max characters: in detailsOrder (then by name), the value that
// does not fit cut to what is left, the rest left out.
func fitDetails(d map[string]string, max int) map[string]string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if i := slices.Index(detailsOrder, k); i >= 0 {
			return i
		}
		return len(detailsOrder)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	out := map[string]string{}
	left := max
	for _, k := range keys {
		room := left - len([]rune(k))
		if room < 2 {
			continue
		}
		v := clip(d[k], room)
		out[k] = v
		left = room - len([]rune(v))
	}
	return out
}
