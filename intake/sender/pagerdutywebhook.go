package sender

import (
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
)

// pagerDutyWebhookScale is the scale of a PagerDuty incident: its priority
// (P1 highest to P5, PagerDuty's default priority names) and, when the
// account has no priorities or a custom name, its urgency (high, low).
var pagerDutyWebhookScale = Scale{
	"p1": openrecall.SeverityCritical, "p2": openrecall.SeverityHigh, "p3": openrecall.SeverityMedium,
	"p4": openrecall.SeverityLow, "p5": openrecall.SeverityInfo,
	"high": openrecall.SeverityHigh, "low": openrecall.SeverityLow,
}

// pagerDutyWebhook is the PagerDuty webhooks adapter, for the three
// versions PagerDuty has posted (DESIGN §3: a sender's older payloads are
// that sender's too). A v3 webhook subscription posts one {"event": {id,
// event_type, resource_type, occurred_at, agent, client, data}} per change
// of an incident or a service; the older v1 and v2 webhooks post
// {"messages": [...]}, one message per change, each one alert (see
// pagerDutyMessage). It never collides with PagerDuty Events v2, which
// intake reads itself: an Events v2 event has event_action and payload at
// its top level and no event object or messages array.
//
// An incident event (data.type incident) is the incident: its title is
// data.title, its service data.service.summary, its id "pdw-" + data.id
// (the incident, one episode: a new firing of the same problem is a new
// incident, every change of one incident keeps its id). Its status comes
// from event_type: incident.triggered, .unacknowledged and .reopened are
// firing, .acknowledged acknowledged, .resolved resolved; the other incident
// events (escalated, reassigned, delegated, priority_updated) take the
// incident's own data.status. Events about an incident that are no change
// of it (annotated, responder.added/replied, status_update_published,
// conference_bridge.updated, workflow.*) and service events are notices,
// recorded and not triaged.
//
// Rule: a v3 webhook names no check. data.incident_key is the dedup key
// of whatever created the incident (a random key, or an Alertmanager group
// key), which names an episode rather than a check, so Rule stays empty and
// identity falls back to the title's template with the service.
//
// Severity: the priority when PagerDuty's default names P1..P5 are used
// (P1 critical, P2 high, P3 medium, P4 low, P5 info), else the urgency
// (high is high, low is low); a custom priority name is kept as a label.
func pagerDutyWebhook() Sender {
	return Sender{
		Name: "pagerduty-webhook", Display: "PagerDuty webhooks (v3, v2, v1)", Security: false, Episode: true,
		Match: func(v Value) bool {
			if v.Has("event_action") || v.Has("payload") {
				return false
			}
			if pagerDutyMessages(v) {
				return true
			}
			ev := v.Get("event")
			t := ev.Get("event_type").String()
			return strings.Contains(t, ".") && ev.Get("resource_type").IsString() && ev.Get("data").IsObject()
		},
		Map: func(v Value) ([]Event, error) {
			if v.Get("messages").IsArray() {
				return pagerDutyMessageEvents(v), nil
			}
			ev := v.Get("event")
			data := ev.Get("data")
			eventType := ev.Get("event_type").String()
			var e Event
			e.Timestamp = ev.Get("occurred_at").Time()
			e.Label("event_type", eventType)
			e.Label("agent", ev.Path("agent.summary").String())
			if data.Get("type").String() == "incident" {
				pagerDutyWebhookIncident(&e, data, eventType)
			} else {
				pagerDutyWebhookNotice(&e, ev, data, eventType)
			}
			return []Event{e}, nil
		},
		Severity: pagerDutyWebhookScale.Map,
		Levels:   []string{"P1", "P2", "P3", "P4", "P5", "high", "low"},
		Doc: Doc{
			Point: "a webhook subscription (Integrations → Generic Webhooks (v3), or POST /webhook_subscriptions; a v1 or v2 webhook extension of a service too) with the URL http://HOST:9555/api/v1/alerts/pagerduty-webhook",
			Auth:  "a custom header of the subscription: Authorization: Bearer TOKEN",
			Title: "event.data.title (v2: messages[].incident.title; v1: trigger_summary_data.subject)", Severity: "the incident's priority.summary (P1..P5), else its urgency (high, low)",
			Service: "event.data.service.summary (v1, v2: the incident's service.name)", Rule: "none (webhooks name no check): the title template",
			ID:     "pdw- + the incident's id, in every version",
			Source: "Zulip's captured PagerDuty v3, v2 and v1 fixtures (zulip/zulip zerver/webhooks/pagerduty) and PagerDuty's developer documentation sample (incident.priority_updated)",
		},
	}
}

// pagerDutyWebhookIncident reads an incident event.
func pagerDutyWebhookIncident(e *Event, data Value, eventType string) {
	e.SetID("event.data.id", "pdw-", "", data.Get("id").String())
	if !e.Set(PartTitle, data.Get("title").String(), "event.data.title") {
		e.Set(PartTitle, data.Get("summary").String(), "event.data.summary")
	}
	e.Set(PartService, Rendered(data.Path("service.summary").String()), "event.data.service.summary")
	priority := data.Path("priority.summary").String()
	urgency := data.Get("urgency").String()
	if pagerDutyWebhookScale.Map(priority) != openrecall.SeverityUnknown {
		e.Set(PartSeverity, priority, "event.data.priority.summary")
	} else if !e.Set(PartSeverity, urgency, "event.data.urgency") {
		e.Set(PartSeverity, priority, "event.data.priority.summary")
	}
	switch eventType {
	case "incident.triggered", "incident.unacknowledged", "incident.reopened":
		e.Status = openrecall.StatusFiring
	case "incident.acknowledged":
		e.Status = openrecall.StatusAcknowledged
	case "incident.resolved":
		e.Status = openrecall.StatusResolved
	default:
		e.Status = pagerDutyWebhookStatus(data.Get("status").String())
	}
	if ts := data.Get("created_at").Time(); !ts.IsZero() && eventType == "incident.triggered" {
		e.Timestamp = ts
	}
	var assignees []string
	for _, a := range data.Get("assignees").Elements() {
		if s := a.Get("summary").String(); s != "" {
			assignees = append(assignees, s)
		}
	}
	var teams []string
	for _, t := range data.Get("teams").Elements() {
		if s := t.Get("summary").String(); s != "" {
			teams = append(teams, s)
		}
	}
	e.Label("incident_number", data.Get("number").String())
	e.Label("incident_status", data.Get("status").String())
	e.Label("urgency", urgency)
	e.Label("priority", priority)
	e.Label("escalation_policy", data.Path("escalation_policy.summary").String())
	e.Label("assignees", strings.Join(assignees, ", "))
	e.Label("teams", strings.Join(teams, ", "))
	e.Label("incident_key", data.Get("incident_key").String())
	e.Label("html_url", data.Get("html_url").String())
	e.Link(openrecall.LinkSource, data.Get("html_url").String())
	e.Text = Evidence(
		[2]string{"event", eventType},
		[2]string{"incident", "#" + data.Get("number").String() + " " + data.Get("status").String()},
		[2]string{"urgency", urgency},
		[2]string{"priority", priority},
		[2]string{"escalation policy", data.Path("escalation_policy.summary").String()},
		[2]string{"assignees", strings.Join(assignees, ", ")},
		[2]string{"resolve reason", data.Get("resolve_reason").Text()},
		[2]string{"url", data.Get("html_url").String()},
	)
}

// pagerDutyWebhookNotice reads an event that is no change of an
// incident's state (a note, a responder, a status update, a service
// event): a notice about the incident or service it names.
func pagerDutyWebhookNotice(e *Event, ev, data Value, eventType string) {
	e.Status = openrecall.StatusNotice
	e.SetID("event.id", "pdw-", "", ev.Get("id").String())
	subject := data.Path("incident.summary").String()
	if subject == "" {
		subject = data.Get("summary").String()
	}
	if subject == "" {
		subject = data.Get("name").String()
	}
	title := "PagerDuty " + eventType
	if subject != "" {
		title += ": " + subject
	}
	e.Set(PartTitle, title, "event.event_type")
	e.Label("incident_id", data.Path("incident.id").String())
	e.Link(openrecall.LinkSource, data.Path("incident.html_url").String())
	e.Text = Evidence(
		[2]string{"note", data.Get("content").String()},
		[2]string{"message", data.Get("message").String()},
		[2]string{"responder", data.Path("user.summary").String()},
		[2]string{"state", data.Get("state").String()},
		[2]string{"url", data.Path("incident.html_url").String()},
	)
}

// pagerDutyWebhookStatus maps an incident's status (triggered,
// acknowledged, resolved).
func pagerDutyWebhookStatus(s string) string {
	switch s {
	case "acknowledged":
		return openrecall.StatusAcknowledged
	case "resolved":
		return openrecall.StatusResolved
	}
	return openrecall.StatusFiring
}

// pagerDutyMessages reports whether v is a v1 or v2 webhook: a messages
// array with a message of either version (pagerDutyMessage).
func pagerDutyMessages(v Value) bool {
	for _, m := range v.Get("messages").Elements() {
		if _, _, ok := pagerDutyMessage(m); ok {
			return true
		}
	}
	return false
}

// pagerDutyMessage returns the event type and the incident of a message of
// a v1 or v2 webhook, and whether it is one: v2 names its change in event
// ("incident.trigger") beside the incident object; v1 names it in type,
// with the incident under data.
func pagerDutyMessage(m Value) (eventType string, incident Value, ok bool) {
	if t := m.Get("event").String(); strings.HasPrefix(t, "incident.") && m.Get("incident").IsObject() {
		return t, m.Get("incident"), true
	}
	if t := m.Get("type").String(); strings.HasPrefix(t, "incident.") && m.Path("data.incident").IsObject() {
		return t, m.Path("data.incident"), true
	}
	return "", Value{}, false
}

// pagerDutyMessageEvents reads a v1 or v2 webhook: one alert per message
// (a message of neither version is skipped).
//
// The incident is read as a v3 incident event reads it, so one incident
// has one id, title, service and identity whichever version sent it: id
// "pdw-" + the incident's id; title the incident's title (v1 has none: its
// trigger_summary_data.subject, else description, else the summary
// "[#33] …"); service the incident's service.name (else summary); severity
// its priority P1..P5, else its urgency. Status from the message's event
// (v2) or type (v1): incident.trigger and .unacknowledge are firing,
// .acknowledge acknowledged, .resolve resolved. The messages that change
// no state of the incident (incident.assign, .escalate, .delegate,
// .annotate and any other) are notices, recorded and not triaged, with the
// message's own id ("pdw-" + messages[].id): a second message of the same
// incident in one webhook (v1 posts assign and acknowledge together) is
// then never a duplicate of the first.
func pagerDutyMessageEvents(v Value) []Event {
	var out []Event
	for _, m := range v.Get("messages").Elements() {
		eventType, inc, ok := pagerDutyMessage(m)
		if !ok {
			continue
		}
		version, field := "v2", "messages[].incident."
		if !m.Has("event") {
			version, field = "v1", "messages[].data.incident."
		}
		var e Event
		e.Label("webhook_version", version)
		e.Label("event_type", eventType)
		if e.Timestamp = m.Get("created_on").Time(); e.Timestamp.IsZero() {
			e.Timestamp = inc.Get("created_at").Time()
		}
		title, titleField := inc.Get("title").String(), "title"
		for _, k := range []string{"trigger_summary_data.subject", "description", "summary"} {
			if Rendered(title) != "" {
				break
			}
			title, titleField = inc.Path(k).String(), k
		}
		e.Set(PartTitle, title, field+titleField)
		if !e.Set(PartService, Rendered(inc.Path("service.name").String()), field+"service.name") {
			e.Set(PartService, Rendered(inc.Path("service.summary").String()), field+"service.summary")
		}
		priority := inc.Path("priority.summary").String()
		urgency := inc.Get("urgency").String()
		if pagerDutyWebhookScale.Map(priority) != openrecall.SeverityUnknown {
			e.Set(PartSeverity, priority, field+"priority.summary")
		} else if !e.Set(PartSeverity, urgency, field+"urgency") {
			e.Set(PartSeverity, priority, field+"priority.summary")
		}
		switch eventType {
		case "incident.trigger", "incident.unacknowledge":
			e.Status = openrecall.StatusFiring
		case "incident.acknowledge":
			e.Status = openrecall.StatusAcknowledged
		case "incident.resolve":
			e.Status = openrecall.StatusResolved
		default:
			e.Status = openrecall.StatusNotice
		}
		if e.Status == openrecall.StatusNotice {
			e.SetID("messages[].id", "pdw-", "", m.Get("id").String())
			e.Label("incident_id", inc.Get("id").String())
			notice := "PagerDuty " + eventType
			if e.Title != "" {
				notice += ": " + e.Title
			}
			e.Title = notice
		} else {
			e.SetID(field+"id", "pdw-", "", inc.Get("id").String())
		}
		var assignees []string
		for _, a := range inc.Get("assignments").Elements() {
			assignees = appendName(assignees, a.Path("assignee.summary").String())
		}
		for _, a := range inc.Get("assigned_to").Elements() {
			assignees = appendName(assignees, a.Path("object.name").String())
		}
		policy := inc.Path("escalation_policy.summary").String()
		if policy == "" {
			policy = inc.Path("escalation_policy.name").String()
		}
		var agent string
		if entries := m.Get("log_entries").Elements(); len(entries) > 0 {
			agent = entries[0].Path("agent.summary").String()
		}
		e.Label("agent", agent)
		e.Label("incident_number", inc.Get("incident_number").String())
		e.Label("incident_status", inc.Get("status").String())
		e.Label("urgency", urgency)
		e.Label("priority", priority)
		e.Label("escalation_policy", policy)
		e.Label("assignees", strings.Join(assignees, ", "))
		e.Label("incident_key", inc.Get("incident_key").String())
		e.Label("html_url", inc.Get("html_url").String())
		e.Link(openrecall.LinkSource, inc.Get("html_url").String())
		e.Text = Evidence(
			[2]string{"event", eventType},
			[2]string{"incident", "#" + inc.Get("incident_number").String() + " " + inc.Get("status").String()},
			[2]string{"description", pagerDutyDescription(inc, e.Title)},
			[2]string{"urgency", urgency},
			[2]string{"priority", priority},
			[2]string{"escalation policy", policy},
			[2]string{"assignees", strings.Join(assignees, ", ")},
			[2]string{"by", agent},
			[2]string{"url", inc.Get("html_url").String()},
		)
		out = append(out, e)
	}
	return out
}

// pagerDutyDescription returns an incident's description when it says more
// than its title.
func pagerDutyDescription(inc Value, title string) string {
	d := strings.TrimSpace(inc.Get("description").String())
	if d == "" || strings.Contains(title, d) {
		return ""
	}
	return d
}

// appendName appends a name not blank and not yet in names.
func appendName(names []string, name string) []string {
	name = strings.TrimSpace(name)
	if name == "" || slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}
