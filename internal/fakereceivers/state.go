package fakereceivers

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// State is what the fakes hold at one moment: each system as a person
// would see it, every request received, the failures still to come. It
// is a copy the fakes do not change afterwards (its json.RawMessage values
// share the fakes' bytes: read them, never modify them), and its JSON (the
// tags) is what GET /_state answers and scripts/fakereceivers writes.
type State struct {
	PagerDuty PagerDutyState `json:"pagerduty"`
	Opsgenie  OpsgenieState  `json:"opsgenie"`
	Slack     SlackState     `json:"slack"`
	Teams     TeamsState     `json:"teams"`
	Webhook   WebhookState   `json:"webhook"`
	Email     EmailState     `json:"email"`
	// Requests are every request the fakes received, in order of arrival
	// (an SMTP session is one).
	Requests []Request `json:"requests"`
	// Failing holds, by receiver, the failures still to be answered.
	Failing map[string]Pending `json:"failing"`
}

// Request is one request a fake received: its credentials masked
// (Authorization keeps its scheme, "Bearer xxxxx"; PagerDuty's routing_key
// and the Teams URL's sig are xxxxx).
type Request struct {
	// Seq numbers the requests of all the fakes from 1, in order of
	// arrival.
	Seq int       `json:"seq"`
	At  time.Time `json:"at"`
	// Receiver is the fake's name: pagerduty, opsgenie, slack, teams,
	// webhook or email.
	Receiver string `json:"receiver"`
	// Method is the HTTP method, "SMTP" for an SMTP session.
	Method string      `json:"method"`
	Path   string      `json:"path,omitempty"`
	Query  string      `json:"query,omitempty"`
	Header http.Header `json:"header,omitempty"`
	// Body is the request's body when it is JSON; Text when it is not.
	Body json.RawMessage `json:"body,omitempty"`
	Text string          `json:"text,omitempty"`
	// Status is what the fake answered: the HTTP status, or the SMTP reply
	// code to the session's last MAIL or DATA.
	Status int `json:"status"`
	// Failed says the answer was a failure Fail asked for.
	Failed bool `json:"failed,omitempty"`
	// Commands are an SMTP session's commands (AUTH without its
	// argument).
	Commands []string `json:"commands,omitempty"`
}

// Pending is a failure still to be answered (Fail).
type Pending struct {
	Status int `json:"status"`
	// Left is how many more requests are answered with it.
	Left int `json:"left"`
	// RetryAfter is the Retry-After the answers carry, in seconds (0:
	// none).
	RetryAfter int    `json:"retry_after,omitempty"`
	Error      string `json:"error,omitempty"`
}

// The status of a PagerDuty incident.
const (
	IncidentTriggered    = "triggered"
	IncidentAcknowledged = "acknowledged"
	IncidentResolved     = "resolved"
)

// PagerDutyState is the PagerDuty service the events reach.
type PagerDutyState struct {
	// Incidents are in the order they were opened; several may share a
	// dedup_key, at most one of them not resolved.
	Incidents []Incident `json:"incidents"`
	// Events are every accepted event, with what it did.
	Events []PagerDutyEvent `json:"events"`
}

// Incident is a PagerDuty incident (with its one alert): what its first
// trigger said, and its status.
type Incident struct {
	// Number counts the service's incidents from 1; ID is PagerDuty-like.
	Number   int    `json:"number"`
	ID       string `json:"id"`
	DedupKey string `json:"dedup_key"`
	// Status is IncidentTriggered, IncidentAcknowledged or
	// IncidentResolved.
	Status        string          `json:"status"`
	Summary       string          `json:"summary"`
	Source        string          `json:"source"`
	Severity      string          `json:"severity"`
	Timestamp     string          `json:"timestamp,omitempty"`
	Component     string          `json:"component,omitempty"`
	Group         string          `json:"group,omitempty"`
	Class         string          `json:"class,omitempty"`
	Client        string          `json:"client,omitempty"`
	ClientURL     string          `json:"client_url,omitempty"`
	Links         []Link          `json:"links,omitempty"`
	CustomDetails json.RawMessage `json:"custom_details,omitempty"`
	// Triggers counts the trigger events of the incident: the first, and
	// those deduplicated into it.
	Triggers       int       `json:"triggers"`
	TriggeredAt    time.Time `json:"triggered_at"`
	AcknowledgedAt time.Time `json:"acknowledged_at,omitzero"`
	ResolvedAt     time.Time `json:"resolved_at,omitzero"`
	// Log is the incident's events: trigger, acknowledge, resolve.
	Log []LogEntry `json:"log"`
}

// Link is a link of a PagerDuty event.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// LogEntry is an event in an incident's log.
type LogEntry struct {
	Action string    `json:"action"`
	At     time.Time `json:"at"`
}

// PagerDutyEvent is an accepted event and what it did: opened (a new
// incident), deduplicated (a trigger of an open incident), acknowledged,
// resolved, or ignored (an acknowledge or resolve of no open incident,
// which PagerDuty accepts and drops).
type PagerDutyEvent struct {
	At       time.Time `json:"at"`
	Action   string    `json:"action"`
	DedupKey string    `json:"dedup_key"`
	Outcome  string    `json:"outcome"`
	// Incident is the Number of the incident it reached, 0 for none.
	Incident int `json:"incident,omitempty"`
}

// Incident returns the latest incident of dedup key key.
func (s PagerDutyState) Incident(key string) (Incident, bool) {
	for i := len(s.Incidents) - 1; i >= 0; i-- {
		if s.Incidents[i].DedupKey == key {
			return s.Incidents[i], true
		}
	}
	return Incident{}, false
}

// IncidentsOf returns the incidents of dedup key key, oldest first.
func (s PagerDutyState) IncidentsOf(key string) []Incident {
	var out []Incident
	for _, in := range s.Incidents {
		if in.DedupKey == key {
			out = append(out, in)
		}
	}
	return out
}

// The status of an Opsgenie alert.
const (
	AlertOpen   = "open"
	AlertClosed = "closed"
)

// OpsgenieState is the Opsgenie account the requests reach.
type OpsgenieState struct {
	// Alerts are in the order they were created; several may share an
	// alias, at most one of them open.
	Alerts []OpsgenieAlert `json:"alerts"`
	// Requests are the accepted (202) requests as Opsgenie processed them,
	// as GET /v2/alerts/requests/{requestId} reports them.
	Requests []OpsgenieRequest `json:"requests"`
}

// OpsgenieAlert is an Opsgenie alert.
type OpsgenieAlert struct {
	ID          string            `json:"id"`
	TinyID      string            `json:"tiny_id"`
	Alias       string            `json:"alias"`
	Message     string            `json:"message"`
	Description string            `json:"description,omitempty"`
	Priority    string            `json:"priority"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Source      string            `json:"source,omitempty"`
	// Status is AlertOpen or AlertClosed.
	Status string `json:"status"`
	// Count counts the create requests of the alert: the first, and those
	// deduplicated into it by alias.
	Count     int       `json:"count"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ClosedAt  time.Time `json:"closed_at,omitzero"`
	ClosedBy  string    `json:"closed_by,omitempty"`
	// Notes are the notes added to the alert, a close's note among them.
	Notes []OpsgenieNote `json:"notes"`
}

// OpsgenieNote is a note on an Opsgenie alert.
type OpsgenieNote struct {
	User   string    `json:"user,omitempty"`
	Source string    `json:"source,omitempty"`
	Note   string    `json:"note"`
	At     time.Time `json:"at"`
}

// OpsgenieRequest is an accepted Opsgenie request as processed: Action
// Create, Close or AddNote; Status says what happened ("Created alert",
// "Alert does not exist", …).
type OpsgenieRequest struct {
	RequestID string    `json:"request_id"`
	Action    string    `json:"action"`
	Success   bool      `json:"success"`
	Status    string    `json:"status"`
	AlertID   string    `json:"alert_id,omitempty"`
	Alias     string    `json:"alias,omitempty"`
	At        time.Time `json:"at"`
}

// Alert returns the latest alert of alias alias.
func (s OpsgenieState) Alert(alias string) (OpsgenieAlert, bool) {
	for i := len(s.Alerts) - 1; i >= 0; i-- {
		if s.Alerts[i].Alias == alias {
			return s.Alerts[i], true
		}
	}
	return OpsgenieAlert{}, false
}

// SlackState is the Slack workspace the bot posts to.
type SlackState struct {
	// Channels maps each channel's name (without "#") to its id.
	Channels map[string]string `json:"channels"`
	// Messages are in the order they were posted.
	Messages []SlackMessage `json:"messages"`
	// Views are the modals views.open opened, in order.
	Views []SlackView `json:"views"`
	// Ephemeral are the messages chat.postEphemeral showed one user, in
	// order.
	Ephemeral []SlackEphemeral `json:"ephemeral"`
}

// SlackView is a modal views.open opened for a user.
type SlackView struct {
	// ID is the view's id (V…), as the answer gave it.
	ID string `json:"id"`
	// TriggerID is the trigger it was opened with (each is good once).
	TriggerID string `json:"trigger_id"`
	// CallbackID and PrivateMetadata are the view's, which Slack sends
	// back with its submission (view_submission).
	CallbackID      string `json:"callback_id,omitempty"`
	PrivateMetadata string `json:"private_metadata,omitempty"`
	// View is the view object as the call gave it.
	View json.RawMessage `json:"view"`
	At   time.Time       `json:"at"`
}

// SlackEphemeral is a message chat.postEphemeral showed one user in a
// channel.
type SlackEphemeral struct {
	// Channel is the channel's id.
	Channel   string          `json:"channel"`
	User      string          `json:"user"`
	Text      string          `json:"text"`
	Blocks    json.RawMessage `json:"blocks,omitempty"`
	MessageTS string          `json:"message_ts"`
	At        time.Time       `json:"at"`
}

// SlackButton is a button of a message's blocks: in an actions block, or
// a section's accessory.
type SlackButton struct {
	BlockID  string `json:"block_id,omitempty"`
	ActionID string `json:"action_id"`
	Value    string `json:"value,omitempty"`
	URL      string `json:"url,omitempty"`
	Text     string `json:"text"`
}

// Buttons returns the buttons of the message as it shows now, in order.
func (m SlackMessage) Buttons() []SlackButton { return slackButtons(m.Blocks) }

// Buttons returns the buttons of the version.
func (v SlackVersion) Buttons() []SlackButton { return slackButtons(v.Blocks) }

// slackButtons reads the buttons of blocks (none when they are not
// Block Kit's JSON).
func slackButtons(blocks json.RawMessage) []SlackButton {
	type element struct {
		Type     string `json:"type"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		URL      string `json:"url"`
		Text     struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	var bs []struct {
		BlockID   string          `json:"block_id"`
		Elements  json.RawMessage `json:"elements"`
		Accessory *element        `json:"accessory"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return nil
	}
	var out []SlackButton
	add := func(blockID string, e element) {
		if e.Type == "button" {
			out = append(out, SlackButton{BlockID: blockID, ActionID: e.ActionID, Value: e.Value, URL: e.URL, Text: e.Text.Text})
		}
	}
	for _, b := range bs {
		var els []element
		_ = json.Unmarshal(b.Elements, &els) // a context's elements are texts, read as no button
		for _, e := range els {
			add(b.BlockID, e)
		}
		if b.Accessory != nil {
			add(b.BlockID, *b.Accessory)
		}
	}
	return out
}

// SlackMessage is a message in a channel as it shows now, and every
// version it had.
type SlackMessage struct {
	// Channel is the channel's id, ChannelName its name.
	Channel     string `json:"channel"`
	ChannelName string `json:"channel_name"`
	TS          string `json:"ts"`
	Text        string `json:"text"`
	// Header is the text of the message's header block, if it has one.
	Header   string          `json:"header,omitempty"`
	Blocks   json.RawMessage `json:"blocks,omitempty"`
	PostedAt time.Time       `json:"posted_at"`
	// EditedAt is the last chat.update's time, zero when never edited.
	EditedAt time.Time `json:"edited_at,omitzero"`
	// History holds every version, the posted one first, the current one
	// last.
	History []SlackVersion `json:"history"`
}

// SlackVersion is one version of a Slack message.
type SlackVersion struct {
	Text   string          `json:"text"`
	Header string          `json:"header,omitempty"`
	Blocks json.RawMessage `json:"blocks,omitempty"`
	At     time.Time       `json:"at"`
}

// Message returns the message ts of channel (its id or name).
func (s SlackState) Message(channel, ts string) (SlackMessage, bool) {
	for _, m := range s.Messages {
		if m.TS == ts && (m.Channel == channel || m.ChannelName == trimHash(channel)) {
			return m, true
		}
	}
	return SlackMessage{}, false
}

// TeamsState is the Teams channel the workflow posts to.
type TeamsState struct {
	Cards []TeamsCard `json:"cards"`
}

// TeamsCard is a card a Workflows webhook request carried.
type TeamsCard struct {
	At time.Time `json:"at"`
	// Workflow is the workflow's id, from the URL's path.
	Workflow string `json:"workflow"`
	// Texts are the card's texts in order, as a person reads them: each
	// TextBlock, each RichTextBlock's runs joined, each fact as "title:
	// value".
	Texts []string `json:"texts"`
	// Actions are the card's buttons.
	Actions []TeamsAction `json:"actions,omitempty"`
	// Card is the Adaptive Card as posted (the attachment's content).
	Card json.RawMessage `json:"card,omitempty"`
	// Problem says why the workflow could not post it (no Adaptive Card
	// in the message); empty when it could.
	Problem string `json:"problem,omitempty"`
}

// TeamsAction is a card's Action.OpenUrl.
type TeamsAction struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// WebhookState is the webhook's endpoint.
type WebhookState struct {
	// Deliveries are the accepted requests, in order.
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookDelivery is an accepted webhook request.
type WebhookDelivery struct {
	At time.Time `json:"at"`
	// ID is the X-Openrecall-Notification-Id header.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Key  string `json:"key"`
	// Signed says the request carried a signature; Verified that it was
	// checked against the configured secret (a secret is configured and
	// the signature matched; an unsigned or bad request is refused then).
	Signed   bool `json:"signed"`
	Verified bool `json:"verified"`
	// Duplicate says a delivery of the same notification id came before
	// (a retry): a receiver drops it.
	Duplicate bool            `json:"duplicate,omitempty"`
	Body      json.RawMessage `json:"body"`
}

// Kinds returns the kinds of the deliveries of key that are not
// duplicates, in order.
func (s WebhookState) Kinds(key string) []string {
	var out []string
	for _, d := range s.Deliveries {
		if d.Key == key && !d.Duplicate {
			out = append(out, d.Kind)
		}
	}
	return out
}

// EmailState is the mailbox every recipient shares.
type EmailState struct {
	Messages []Mail `json:"messages"`
}

// Mail is a mail the SMTP fake accepted.
type Mail struct {
	At time.Time `json:"at"`
	// Hello is the name the client gave in EHLO or HELO.
	Hello string `json:"hello"`
	// From and To are the envelope's (MAIL FROM, RCPT TO).
	From string   `json:"from"`
	To   []string `json:"to"`
	// Subject is decoded (RFC 2047).
	Subject    string `json:"subject"`
	MessageID  string `json:"message_id,omitempty"`
	InReplyTo  string `json:"in_reply_to,omitempty"`
	References string `json:"references,omitempty"`
	// Header holds every header field's first value.
	Header map[string]string `json:"header"`
	// Body is the text, its transfer encoding undone, with LF line ends.
	Body string `json:"body"`
	// Raw is the message as received (dot-stuffing undone, LF line ends).
	Raw string `json:"raw"`
}

// Message returns the mail whose Message-ID is id.
func (s EmailState) Message(id string) (Mail, bool) {
	for _, m := range s.Messages {
		if m.MessageID == id {
			return m, true
		}
	}
	return Mail{}, false
}

// clone returns a deep copy of s, every list non-nil (so its JSON holds
// [] rather than null).
func (s State) clone() State {
	c := State{
		PagerDuty: PagerDutyState{Incidents: each(s.PagerDuty.Incidents, func(in Incident) Incident {
			in.Links, in.Log = slices.Clone(in.Links), nonNil(in.Log)
			return in
		}), Events: nonNil(s.PagerDuty.Events)},
		Opsgenie: OpsgenieState{Alerts: each(s.Opsgenie.Alerts, func(a OpsgenieAlert) OpsgenieAlert {
			a.Tags, a.Notes = slices.Clone(a.Tags), nonNil(a.Notes)
			if a.Details != nil {
				d := make(map[string]string, len(a.Details))
				for k, v := range a.Details {
					d[k] = v
				}
				a.Details = d
			}
			return a
		}), Requests: nonNil(s.Opsgenie.Requests)},
		Slack: SlackState{Channels: map[string]string{}, Messages: each(s.Slack.Messages, func(m SlackMessage) SlackMessage {
			m.History = nonNil(m.History)
			return m
		}), Views: nonNil(s.Slack.Views), Ephemeral: nonNil(s.Slack.Ephemeral)},
		Teams: TeamsState{Cards: each(s.Teams.Cards, func(c TeamsCard) TeamsCard {
			c.Texts, c.Actions = nonNil(c.Texts), slices.Clone(c.Actions)
			return c
		})},
		Webhook: WebhookState{Deliveries: nonNil(s.Webhook.Deliveries)},
		Email: EmailState{Messages: each(s.Email.Messages, func(m Mail) Mail {
			m.To = slices.Clone(m.To)
			h := make(map[string]string, len(m.Header))
			for k, v := range m.Header {
				h[k] = v
			}
			m.Header = h
			return m
		})},
		Requests: each(s.Requests, func(r Request) Request {
			r.Header, r.Commands = r.Header.Clone(), slices.Clone(r.Commands)
			return r
		}),
		Failing: map[string]Pending{},
	}
	for k, v := range s.Slack.Channels {
		c.Slack.Channels[k] = v
	}
	for k, v := range s.Failing {
		c.Failing[k] = v
	}
	return c
}

// each returns the copies fn makes of s's elements, never nil.
func each[T any](s []T, fn func(T) T) []T {
	out := make([]T, 0, len(s))
	for _, v := range s {
		out = append(out, fn(v))
	}
	return out
}

// nonNil returns a copy of s, never nil.
func nonNil[T any](s []T) []T { return append(make([]T, 0, len(s)), s...) }
