package sender

import (
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

// pagerDutyWebhook is the PagerDuty webhooks v3 adapter: a webhook
// subscription posts one {"event": {id, event_type, resource_type,
// occurred_at, agent, client, data}} per change of an incident or a
// service. It never collides with PagerDuty Events v2, which intake reads
// itself: an Events v2 event has event_action and payload at its top level
// and no event object.
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
		Name: "pagerduty-webhook", Display: "PagerDuty webhooks v3", Security: false, Episode: true,
		Match: func(v Value) bool {
			ev := v.Get("event")
			t := ev.Get("event_type").String()
			return strings.Contains(t, ".") && ev.Get("resource_type").IsString() && ev.Get("data").IsObject() &&
				!v.Has("event_action") && !v.Has("payload")
		},
		Map: func(v Value) ([]Event, error) {
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
			Point: "a webhook subscription (Integrations → Generic Webhooks (v3), or POST /webhook_subscriptions) with the URL http://HOST:9555/api/v1/alerts/pagerduty-webhook",
			Auth:  "a custom header of the subscription: Authorization: Bearer TOKEN",
			Title: "event.data.title", Severity: "event.data.priority.summary (P1..P5), else event.data.urgency (high, low)",
			Service: "event.data.service.summary", Rule: "none (v3 names no check): the title template",
			ID:     "pdw- + event.data.id (the incident)",
			Source: "Zulip's captured PagerDuty v3 fixtures (zulip/zulip zerver/webhooks/pagerduty) and PagerDuty's developer documentation sample (incident.priority_updated)",
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
