package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// sentryScale is Sentry's scale: an event's level (fatal, error, warning,
// info, debug) and a metric alert's action (critical, warning).
var sentryScale = Scale{
	"fatal": openrecall.SeverityCritical, "critical": openrecall.SeverityCritical,
	"error": openrecall.SeverityHigh, "warning": openrecall.SeverityMedium,
	"info": openrecall.SeverityInfo, "debug": openrecall.SeverityInfo,
}

// sentry is the Sentry adapter. It reads the integration platform's
// webhooks — issue alerts (Sentry-Hook-Resource event_alert: action
// triggered, data.event, data.triggered_rule), metric alerts (metric_alert:
// action critical, warning or resolved, data.metric_alert.alert_rule) and
// issue webhooks (issue: action created, resolved, assigned, archived,
// ignored, unresolved, data.issue) — and the legacy webhooks plugin's
// payload (id, project, project_name, culprit, message, url, level, event).
//
// Identity separates errors: for an issue alert, an issue webhook and the
// plugin, Rule is the Sentry issue id (the grouping of events into one
// error; stable across events, releases and hosts, and different for two
// errors). The alert rule that fired (triggered_rule, triggering_rules) is
// a label, not the rule: one "a new issue is created" rule fires for every
// error of a project. Without an issue id the title template is the rule.
// For a metric alert Rule is data.metric_alert.alert_rule.name, as sent.
//
// Service: a tag "service", else the project slug (from the event's API
// URL, data.issue.project.slug, the plugin's project_slug, the metric
// rule's projects[0]). Host: the server_name tag. Environment: the event's
// environment or the environment tag.
//
// ID: an issue alert or plugin payload is one event ("sentry-" +
// event_id): each firing is a new event. A metric alert is one incident
// ("sentry-metric-" + metric_alert.id, kept from critical to resolved). An
// issue webhook names the issue itself ("sentry-issue-" + issue.id): its
// actions are changes of one issue, so a regression of a resolved issue
// keeps the id.
//
// Status: issue alerts and metric critical/warning are firing, metric
// resolved is resolved; issue created and unresolved are firing, assigned
// acknowledged, resolved, archived and ignored resolved.
//
// Severity: the level (fatal critical, error high, warning medium, info and
// debug info); a metric alert's action (critical critical, warning medium).
func sentry() Sender {
	return Sender{
		Name: "sentry", Display: "Sentry", Security: false, Episode: true,
		Match: func(v Value) bool {
			if sentryPlugin(v) {
				return true
			}
			data := v.Get("data")
			if !v.Get("action").IsString() || !data.IsObject() || !v.Get("installation").IsObject() && !v.Path("actor.type").IsString() {
				return false
			}
			return data.Get("metric_alert").IsObject() || data.Get("issue").IsObject() ||
				(data.Get("event").IsObject() && (data.Has("triggered_rule") || data.Has("issue_alert")))
		},
		Map: func(v Value) ([]Event, error) {
			var e Event
			data := v.Get("data")
			switch {
			case sentryPlugin(v):
				e.Link(openrecall.LinkSource, v.Get("url").String()) // the issue's page
				sentryEvent(&e, v.Get("event"), "event.")
				e.Set(PartRule, v.Get("id").String(), "id")
				if e.Service == "" {
					if !e.Set(PartService, v.Get("project_slug").String(), "project_slug") {
						e.Set(PartService, v.Get("project").String(), "project")
					}
				}
				if e.Title == "" && !e.Set(PartTitle, v.Get("message").String(), "message") {
					e.Set(PartTitle, v.Get("culprit").String(), "culprit")
				}
				if e.Severity == "" {
					e.Set(PartSeverity, v.Get("level").String(), "level")
				}
				e.Label("url", v.Get("url").String())
				e.Label("triggering_rules", strings.Join(v.Get("triggering_rules").Strings(), ", "))
				if msg := v.Get("message").String(); !strings.Contains(e.Text, msg) {
					e.Text = JoinText(msg, e.Text)
				}
			case data.Get("metric_alert").IsObject():
				sentryMetric(&e, v.Get("action").String(), data)
			case data.Get("issue").IsObject():
				sentryIssue(&e, v.Get("action").String(), data.Get("issue"))
			default:
				sentryEvent(&e, data.Get("event"), "data.event.")
				e.Label("triggered_rule", data.Get("triggered_rule").String())
			}
			return []Event{e}, nil
		},
		Severity: sentryScale.Map,
		Levels:   []string{"fatal", "error", "warning", "info", "debug", "critical"},
		Doc: Doc{
			Point:    "an internal integration (Settings → Developer Settings) with the webhook URL http://HOST:9555/api/v1/alerts/sentry?token=TOKEN, alert rule action enabled and the issue resource subscribed; or the legacy WebHooks plugin with that URL",
			Auth:     "?token= in the URL (Sentry sets no custom header)",
			Title:    "data.event.title; data.description_title (metric); data.issue.title; the plugin's event.title or message",
			Severity: "the event's level (fatal, error, warning, info, debug); a metric alert's action (critical, warning)",
			Service:  "tag service, else the project slug",
			Rule:     "the issue id (data.event.issue_id, data.issue.id, the plugin's id); metric: data.metric_alert.alert_rule.name",
			ID:       "sentry- + event_id; sentry-metric- + metric_alert.id; sentry-issue- + issue.id",
			Source:   "Sentry's integration platform webhook documentation samples (getsentry/sentry-docs), Zulip's captured Sentry fixtures (zulip/zulip), Keep's Sentry provider mock (keephq/keep)",
		},
	}
}

// sentryPlugin reports whether v is the legacy webhooks plugin's payload.
func sentryPlugin(v Value) bool {
	return v.Has("project_name") && v.Has("culprit") && v.Get("event").IsObject() && v.Get("url").IsString() && !v.Has("action")
}

// sentryEvent reads a Sentry event (an issue alert's or the plugin's).
func sentryEvent(e *Event, ev Value, at string) {
	tags := sentryTags(ev.Get("tags"))
	if !e.Set(PartTitle, ev.Get("title").String(), at+"title") {
		if !e.Set(PartTitle, ev.Path("metadata.title").String(), at+"metadata.title") {
			e.Set(PartTitle, ev.Path("logentry.formatted").String(), at+"logentry.formatted")
		}
	}
	if !e.Set(PartSeverity, ev.Get("level").String(), at+"level") {
		e.Set(PartSeverity, tags["level"], at+"tags.level")
	}
	e.Set(PartRule, ev.Get("issue_id").String(), at+"issue_id")
	e.SetID(at+"event_id", "sentry-", "", ev.Get("event_id").String())
	if !e.Set(PartService, Rendered(tags["service"]), at+"tags.service") {
		e.Set(PartService, sentryProject(ev.Get("url").String()), at+"url")
	}
	if !e.Set(PartEnvironment, ev.Get("environment").String(), at+"environment") {
		e.Set(PartEnvironment, tags["environment"], at+"tags.environment")
	}
	e.Host = tags["server_name"]
	if e.Host == "" {
		e.Host = ev.Get("server_name").String()
	}
	if e.Timestamp = ev.Get("datetime").Time(); e.Timestamp.IsZero() {
		e.Timestamp = ev.Get("timestamp").Time()
	}
	for k, t := range tags {
		if k != "service" && k != "environment" && k != "level" {
			e.Label("tag."+k, t)
		}
	}
	e.Label("platform", ev.Get("platform").String())
	e.Label("web_url", ev.Get("web_url").String())
	e.Label("issue_url", ev.Get("issue_url").String())
	e.Link(openrecall.LinkSource, ev.Get("web_url").String()) // issue_url is the API's
	e.Label("release", ev.Get("release").String())
	exc := ev.Path("exception.values").At(0)
	e.Text = Evidence(
		[2]string{"message", ev.Path("logentry.formatted").String()},
		[2]string{"exception", sentryException(exc.Get("type").String(), exc.Get("value").String())},
		[2]string{"culprit", ev.Get("culprit").String()},
		[2]string{"location", ev.Get("location").String()},
		[2]string{"platform", ev.Get("platform").String()},
		[2]string{"request", strings.TrimSpace(ev.Path("request.method").String() + " " + ev.Path("request.url").String())},
		[2]string{"server", e.Host},
		[2]string{"release", ev.Get("release").String()},
		[2]string{"url", ev.Get("web_url").String()},
	)
}

// sentryMetric reads a metric alert.
func sentryMetric(e *Event, action string, data Value) {
	ma := data.Get("metric_alert")
	rule := ma.Get("alert_rule")
	if !e.Set(PartTitle, data.Get("description_title").String(), "data.description_title") {
		e.Set(PartTitle, rule.Get("name").String(), "data.metric_alert.alert_rule.name")
	}
	e.Set(PartRule, rule.Get("name").String(), "data.metric_alert.alert_rule.name")
	e.SetID("data.metric_alert.id", "sentry-metric-", "", ma.Get("id").String())
	e.Set(PartService, Rendered(rule.Get("projects").At(0).String()), "data.metric_alert.alert_rule.projects")
	if e.Service == "" {
		e.Set(PartService, Rendered(ma.Get("projects").At(0).String()), "data.metric_alert.projects")
	}
	e.Set(PartEnvironment, rule.Get("environment").String(), "data.metric_alert.alert_rule.environment")
	switch action {
	case "resolved":
		e.Status = openrecall.StatusResolved
	default:
		e.Status = openrecall.StatusFiring
		e.Set(PartSeverity, action, "action")
	}
	if e.Timestamp = ma.Get("date_detected").Time(); e.Timestamp.IsZero() {
		e.Timestamp = ma.Get("date_started").Time()
	}
	e.Label("alert_rule_id", rule.Get("id").String())
	e.Label("incident_identifier", ma.Get("identifier").String())
	e.Label("web_url", data.Get("web_url").String())
	e.Link(openrecall.LinkSource, data.Get("web_url").String())
	e.Text = JoinText(strings.ReplaceAll(data.Get("description_text").String(), `\n`, "\n"), Evidence(
		[2]string{"aggregate", rule.Get("aggregate").String()},
		[2]string{"query", rule.Get("query").String()},
		[2]string{"dataset", rule.Get("dataset").String()},
		[2]string{"time window (minutes)", rule.Get("time_window").String()},
		[2]string{"url", data.Get("web_url").String()},
	))
}

// sentryIssue reads an issue webhook.
func sentryIssue(e *Event, action string, is Value) {
	e.Set(PartTitle, is.Get("title").String(), "data.issue.title")
	e.Set(PartSeverity, is.Get("level").String(), "data.issue.level")
	e.Set(PartRule, is.Get("id").String(), "data.issue.id")
	e.SetID("data.issue.id", "sentry-issue-", "", is.Get("id").String())
	if !e.Set(PartService, Rendered(is.Path("project.slug").String()), "data.issue.project.slug") {
		e.Set(PartService, Rendered(is.Path("project.name").String()), "data.issue.project.name")
	}
	switch action {
	case "assigned":
		e.Status = openrecall.StatusAcknowledged
	case "resolved", "archived", "ignored":
		e.Status = openrecall.StatusResolved
	default:
		e.Status = openrecall.StatusFiring
	}
	if e.Timestamp = is.Get("lastSeen").Time(); e.Timestamp.IsZero() {
		e.Timestamp = is.Get("firstSeen").Time()
	}
	e.Label("action", action)
	e.Label("short_id", is.Get("shortId").String())
	e.Label("issue_status", is.Get("status").String())
	e.Label("substatus", is.Get("substatus").String())
	e.Label("platform", is.Get("platform").String())
	e.Label("assigned_to", is.Path("assignedTo.name").String())
	e.Link(openrecall.LinkSource, is.Get("web_url").String())
	e.Text = Evidence(
		[2]string{"action", action},
		[2]string{"issue", is.Get("shortId").String()},
		[2]string{"exception", sentryException(is.Path("metadata.type").String(), is.Path("metadata.value").String())},
		[2]string{"culprit", is.Get("culprit").String()},
		[2]string{"events", is.Get("count").String()},
		[2]string{"users", is.Get("userCount").String()},
		[2]string{"first seen", is.Get("firstSeen").String()},
		[2]string{"url", is.Get("web_url").String()},
	)
}

// sentryTags reads Sentry's tags, an array of [key, value] pairs (or of
// {key, value} objects), as a map.
func sentryTags(v Value) map[string]string {
	out := map[string]string{}
	for _, t := range v.Elements() {
		k, val := t.At(0).String(), t.At(1).String()
		if t.IsObject() {
			k, val = t.Get("key").String(), t.Get("value").String()
		}
		if k != "" && strings.TrimSpace(val) != "" {
			out[k] = val
		}
	}
	if len(out) == 0 {
		for k, val := range v.Labels() {
			out[k] = val
		}
	}
	return out
}

// sentryProject returns the project slug of a Sentry API URL
// (…/api/0/projects/{org}/{project}/events/…), or "".
func sentryProject(url string) string {
	_, rest, ok := strings.Cut(url, "/projects/")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// sentryException renders an exception's type and value ("ReferenceError:
// x is not defined"), or "" when neither is there.
func sentryException(typ, value string) string {
	typ, value = strings.TrimSpace(typ), strings.TrimSpace(value)
	switch {
	case typ == "":
		return value
	case value == "":
		return typ
	}
	return typ + ": " + value
}
