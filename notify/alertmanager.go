package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// Alertmanager API v2, as documented by the Prometheus project:
//   - https://prometheus.io/docs/alerting/latest/clients/ (POST
//     /api/v2/alerts takes a JSON array of alerts; the labels identify an
//     alert, the annotations are the last ones received; endsAt, when
//     known, ends it, else Alertmanager's resolve_timeout does)
//   - https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml
//     (postableAlert: labels, annotations, startsAt, endsAt,
//     generatorURL; answers 200, 400 with the validation error as a JSON
//     string, 500)
//   - label and annotation names must match [a-zA-Z_][a-zA-Z0-9_]*
//     (Alertmanager 0.25's validation; newer ones accept more only when
//     told to: https://prometheus.io/docs/alerting/latest/configuration/#labelname)

// TypeAlertmanager is the Type of an Alertmanager receiver.
const TypeAlertmanager = "alertmanager"

// The labels and annotations openrecall adds to the alerts it posts.
const (
	// LabelEpisode carries Notification.Key: it makes the alert one per
	// episode, and routes can tell openrecall's alerts from others (a team
	// whose Alertmanager also sends to openrecall routes
	// openrecall_episode!="" away from openrecall's webhook, else an
	// alert would come back to openrecall).
	LabelEpisode = "openrecall_episode"
	// LabelDecision carries openrecall's decision (escalated, real,
	// known_benign, …), for routes.
	LabelDecision = "openrecall_decision"
	// LabelRoute carries how it was decided (FieldRoute: bypass, strong, …).
	LabelRoute = "openrecall_route"
	// LabelSeverity carries openrecall's normalized severity, the same
	// name whatever the sender called its own.
	LabelSeverity = "openrecall_severity"

	// AnnotationSummary carries the summary line (the alert's title).
	AnnotationSummary = "openrecall_summary"
	// AnnotationReason says why openrecall decided as it did.
	AnnotationReason = "openrecall_reason"
	// AnnotationReview links to the analysis's review page.
	AnnotationReview = "openrecall_review"
	// AnnotationMemories lists the memories that voted.
	AnnotationMemories = "openrecall_memories"
	// AnnotationDeadEnds lists the dead ends: the analysis's, and those
	// the memories record.
	AnnotationDeadEnds = "openrecall_dead_ends"
	// AnnotationCost is the analysis's cost in dollars.
	AnnotationCost = "openrecall_cost"
)

// DefaultAlertmanagerResolveTimeout is how long an alert openrecall posted
// stays firing without its recovery, by default.
const DefaultAlertmanagerResolveTimeout = 24 * time.Hour

// AlertmanagerConfig configures an Alertmanager receiver.
type AlertmanagerConfig struct {
	// Name is the receiver's name, which routes name.
	Name string
	// URLs are the Alertmanagers' addresses (http://alertmanager:9093, a
	// path prefix allowed): every member of a high-availability cluster,
	// since its members share silences and notifications but not alerts.
	URLs []string
	// BearerToken, when set, is sent as Authorization: Bearer (an
	// Alertmanager behind an authenticating proxy).
	BearerToken Secret
	// ResolveTimeout is how long a posted alert stays firing when no
	// recovery comes: its endsAt, from the time it is posted.
	// DefaultAlertmanagerResolveTimeout when zero. (Alertmanager's own
	// resolve_timeout, 5m by default, is for senders that re-post firing
	// alerts every minute; openrecall posts each once.)
	ResolveTimeout time.Duration
}

// Alertmanager re-posts the alerts openrecall leaves to people to a
// Prometheus Alertmanager (POST /api/v2/alerts), with openrecall's
// decision added, so a team's routing tree, inhibitions, silences and
// receivers page as before, minus what openrecall closed. What the
// notification's fields become (one postable alert):
//
//	labels        the alert's own labels (names made valid: every
//	              character outside [a-zA-Z0-9_] becomes _, a leading
//	              digit gets a _ before it; empty values left out),
//	              alertname (its own, else the identity's rule, else the
//	              sender's rule, else the summary line),
//	              openrecall_episode (Notification.Key),
//	              openrecall_decision, openrecall_route,
//	              openrecall_severity
//	annotations   the alert's own annotations (names made valid),
//	              openrecall_summary (the summary line),
//	              openrecall_reason, openrecall_review (the review link),
//	              openrecall_memories, openrecall_dead_ends, openrecall_cost
//	startsAt      the alert's own time, else the notification's
//	endsAt        trigger: now + ResolveTimeout; resolve: the
//	              notification's time (now at the latest), which resolves it
//	generatorURL  the review link
//
// Alertmanager identifies an alert by its whole label set: the trigger
// and the resolve of an episode must carry the same labels, or the
// resolve would be a second alert and the first would fire until it
// expires. openrecall_decision and openrecall_route are labels (routes
// match labels only) but a recovery's result has no decision of its own,
// so the resolve never derives labels from its result: the trigger's
// Delivery.State keeps the label set it posted (and its startsAt and its
// openrecall annotations), and the resolve re-posts exactly that set with
// endsAt set. openrecall_episode makes the set one per episode, so a new
// firing of the same alert is a new alert once the last one resolved. A
// later trigger of an episode already posted (Notification.Prior set)
// re-posts the same alert, its annotations renewed.
//
// A resolve without the trigger's state (this receiver never posted the
// episode's trigger) sends nothing: there is no alert to resolve. An update
// (a person's decision) sends nothing either: Alertmanager has no notes or
// acknowledgements, and re-posting an alert that resolved meanwhile would
// fire it again. Alertmanager is safe for concurrent use.
type Alertmanager struct {
	name    string
	urls    []string
	token   Secret
	timeout time.Duration
	now     func() time.Time
}

// NewAlertmanager returns the receiver c configures, or an error naming
// the field that is wrong.
func NewAlertmanager(c AlertmanagerConfig) (*Alertmanager, error) {
	if strings.TrimSpace(c.Name) == "" {
		return nil, errors.New("alertmanager receiver: name: empty")
	}
	where := fmt.Sprintf("alertmanager receiver %q", c.Name)
	if len(c.URLs) == 0 {
		return nil, fmt.Errorf("%s: urls: empty", where)
	}
	var urls []string
	for i, u := range c.URLs {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if err := checkURL(u, true); err != nil {
			return nil, fmt.Errorf("%s: urls[%d]: %w", where, i, err)
		}
		if p, _ := url.Parse(u); p.RawQuery != "" || p.Fragment != "" {
			return nil, fmt.Errorf("%s: urls[%d]: takes no query or fragment", where, i)
		}
		if slices.Contains(urls, u+"/api/v2/alerts") {
			return nil, fmt.Errorf("%s: urls[%d]: named twice", where, i)
		}
		urls = append(urls, u+"/api/v2/alerts")
	}
	if !c.BearerToken.IsZero() && !printableASCII(c.BearerToken.Reveal()) {
		return nil, fmt.Errorf("%s: bearer_token: not printable ASCII", where)
	}
	timeout := c.ResolveTimeout
	switch {
	case timeout < 0:
		return nil, fmt.Errorf("%s: resolve_timeout: %s is negative", where, timeout)
	case timeout == 0:
		timeout = DefaultAlertmanagerResolveTimeout
	}
	return &Alertmanager{name: c.Name, urls: urls, token: c.BearerToken, timeout: timeout, now: time.Now}, nil
}

// Name returns the receiver's name.
func (a *Alertmanager) Name() string { return a.name }

// Type returns TypeAlertmanager.
func (a *Alertmanager) Type() string { return TypeAlertmanager }

// amAlert is a postable alert.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt,omitzero"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// The keys of a trigger's Delivery.State.
const (
	amStateLabels      = "labels"      // the label set posted, as a JSON object
	amStateAnnotations = "annotations" // the openrecall annotations posted, as a JSON object
	amStateStartsAt    = "starts_at"   // startsAt, RFC 3339
)

// Send posts n's alert to every configured Alertmanager (see
// Alertmanager). It fails when one of them did not take it: a retry posts
// again to all, which is harmless (an alert posted twice is one alert).
func (a *Alertmanager) Send(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkKey(n.Key, maxLabelRunes); err != nil {
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("alertmanager: %s: %w", LabelEpisode, err)}
	}
	var alert amAlert
	var state map[string]string
	switch n.Kind {
	case KindTrigger:
		alert, state = a.trigger(n)
	case KindResolve:
		var ok bool
		var err error
		if alert, ok, err = a.resolve(n); err != nil || !ok {
			return Delivery{State: n.Prior}, err
		}
		state = n.Prior
	case KindUpdate:
		return Delivery{State: n.Prior}, nil
	default:
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("alertmanager: unknown notification kind %q", n.Kind)}
	}
	var h http.Header
	if !a.token.IsZero() {
		h = http.Header{"Authorization": {"Bearer " + a.token.Reveal()}}
	}
	var retry, permanent *SendError
	for _, u := range a.urls {
		req := request{What: "alertmanager", URL: u, Header: h, Body: []amAlert{alert}, Secrets: []string{a.token.Reveal()}}
		if _, err := send(ctx, nil, req); err != nil {
			se := asSendError(err)
			switch {
			case !se.Permanent && retry == nil:
				retry = se
			case se.Permanent && permanent == nil:
				permanent = se
			}
		}
	}
	switch {
	case retry != nil:
		return Delivery{}, retry
	case permanent != nil:
		return Delivery{}, permanent
	}
	return Delivery{State: state}, nil
}

// trigger renders a trigger and the state its resolve needs.
func (a *Alertmanager) trigger(n Notification) (amAlert, map[string]string) {
	an := viewOf(n)
	r := n.Result
	labels := validNames(r.Alert.Labels)
	if labels["alertname"] == "" {
		labels["alertname"] = clip(oneLine(firstOf(r.Identity.Rule, r.Alert.Rule, an.SummaryLine)), maxLabelRunes)
	}
	for k, v := range map[string]string{LabelEpisode: n.Key, LabelDecision: string(an.Decision), LabelRoute: an.Route,
		LabelSeverity: string(an.Severity)} {
		if v != "" {
			labels[k] = v
		} else {
			delete(labels, k)
		}
	}
	ours := map[string]string{
		AnnotationSummary:  an.SummaryLine,
		AnnotationReason:   an.Conclusion,
		AnnotationReview:   an.ReviewURL,
		AnnotationMemories: joinVotes(an.Memories),
		AnnotationDeadEnds: strings.Join(an.DeadEnds, "; "),
		AnnotationCost:     an.Cost.String(),
	}
	for k, v := range ours {
		if v = clip(v, maxLabelRunes); v == "" {
			delete(ours, k)
		} else {
			ours[k] = v
		}
	}
	start := r.Alert.Timestamp
	if start.IsZero() {
		start = n.At
	}
	if start.IsZero() {
		start = a.now()
	}
	start = start.UTC()
	// A later trigger of an episode already posted re-posts that alert.
	if prior, at, ok := priorAlert(n.Prior); ok {
		labels, start = prior, at
	}
	alert := amAlert{
		Labels:       labels,
		Annotations:  withOurs(validNames(r.Alert.Annotations), ours),
		StartsAt:     start,
		EndsAt:       later(a.now().Add(a.timeout), start).UTC(),
		GeneratorURL: an.ReviewURL,
	}
	lb, _ := json.Marshal(labels) // a map of strings always encodes
	ab, _ := json.Marshal(ours)
	return alert, map[string]string{amStateLabels: string(lb), amStateAnnotations: string(ab), amStateStartsAt: start.Format(time.RFC3339Nano)}
}

// priorAlert returns the labels and startsAt a trigger's state (prior)
// holds; ok is false when it holds no labels, or labels it cannot read.
func priorAlert(prior map[string]string) (labels map[string]string, start time.Time, ok bool) {
	if err := json.Unmarshal([]byte(prior[amStateLabels]), &labels); err != nil || len(labels) == 0 {
		return nil, time.Time{}, false
	}
	start, _ = time.Parse(time.RFC3339Nano, prior[amStateStartsAt]) // zero when absent: Alertmanager keeps the first
	return labels, start.UTC(), true
}

// resolve renders a resolve from the trigger's state: the same labels,
// ended. ok is false when there is no state (nothing to resolve).
func (a *Alertmanager) resolve(n Notification) (amAlert, bool, error) {
	raw, found := n.Prior[amStateLabels]
	if !found {
		return amAlert{}, false, nil
	}
	bad := func(what string, err error) error {
		return &SendError{Permanent: true, Err: fmt.Errorf("alertmanager: the trigger's delivery state: %s: %w", what, err)}
	}
	var labels map[string]string
	if err := json.Unmarshal([]byte(raw), &labels); err != nil || len(labels) == 0 {
		if err == nil {
			err = errors.New("no labels")
		}
		return amAlert{}, false, bad(amStateLabels, err)
	}
	ours := map[string]string{}
	if s := n.Prior[amStateAnnotations]; s != "" {
		if err := json.Unmarshal([]byte(s), &ours); err != nil {
			return amAlert{}, false, bad(amStateAnnotations, err)
		}
	}
	var start time.Time
	if s := n.Prior[amStateStartsAt]; s != "" {
		var err error
		if start, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return amAlert{}, false, bad(amStateStartsAt, err)
		}
	}
	end := a.now()
	if !n.At.IsZero() && n.At.Before(end) {
		end = n.At
	}
	end = later(end, start)
	alert := amAlert{
		Labels:       labels,
		Annotations:  withOurs(validNames(n.Result.Alert.Annotations), ours),
		StartsAt:     start.UTC(),
		EndsAt:       end.UTC(),
		GeneratorURL: webURL(ours[AnnotationReview]),
	}
	return alert, true, nil
}

// validNames returns m with names Alertmanager takes (see Alertmanager),
// values valid UTF-8 of at most 1024 characters, empty values left out.
// A name already valid keeps its value; of several names that become the
// same, the first in byte order does.
func validNames(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+6)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, pass := range []bool{true, false} {
		for _, k := range keys {
			name := labelName(k)
			if (name == k) != pass || name == "" {
				continue
			}
			if _, taken := out[name]; taken {
				continue
			}
			if v := clip(m[k], maxLabelRunes); v != "" {
				out[name] = v
			}
		}
	}
	return out
}

// labelName returns s as a valid label name: every character outside
// [a-zA-Z0-9_] replaced by _, a _ before a leading digit; "" for "".
func labelName(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			b.WriteRune(c)
		case c >= '0' && c <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// withOurs returns own with ours added over it.
func withOurs(own, ours map[string]string) map[string]string {
	for k, v := range ours {
		own[k] = v
	}
	if len(own) == 0 {
		return nil
	}
	return own
}

// later returns the later of t and floor.
func later(t, floor time.Time) time.Time {
	if t.Before(floor) {
		return floor
	}
	return t
}
