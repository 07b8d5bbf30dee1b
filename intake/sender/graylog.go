package sender

import (
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// graylogScale is Graylog's event priority: 1 low, 2 normal, 3 high, and 4
// critical (the fourth priority of newer Graylog releases), by number or by
// name.
var graylogScale = Scale{
	"1": openrecall.SeverityLow, "low": openrecall.SeverityLow,
	"2": openrecall.SeverityMedium, "normal": openrecall.SeverityMedium, "medium": openrecall.SeverityMedium,
	"3": openrecall.SeverityHigh, "high": openrecall.SeverityHigh,
	"4": openrecall.SeverityCritical, "critical": openrecall.SeverityCritical,
}

// graylogBacklog caps the backlog messages rendered into the text.
const graylogBacklog = 5

// graylog is the Graylog adapter: the HTTP notification of an event
// definition ({event_definition_id, event_definition_type,
// event_definition_title, event_definition_description, job_definition_id,
// job_trigger_id, event{id, message, timestamp, priority, alert, source,
// key, fields, group_by_fields}, backlog[]}).
//
// Title: event.message (the event's message, which the definition's title
// or its message template makes), else event_definition_title. Rule:
// event_definition_title as sent, else event_definition_id: the check.
// ID: "graylog-" + event.id (one event per firing, an episode).
//
// Service: the event's field or group-by field service (else app,
// application); Host: its field or group-by field source or host, else the
// first backlog message's source. event.source is the Graylog node that
// made the event, not the host it is about: it is a label. Environment:
// a field env or environment.
//
// Severity: event.priority (1 low, 2 normal → medium, 3 high, 4 critical).
// Status: always firing; Graylog sends no resolution.
//
// Text: the definition's description, the event's fields and the first
// backlog messages (source, message), capped.
func graylog() Sender {
	return Sender{
		Name: "graylog", Display: "Graylog", Security: false, Episode: true,
		Match: func(v Value) bool {
			return v.Has("event_definition_id") && v.Get("event").IsObject() &&
				(v.Has("event_definition_title") || v.Has("event_definition_type"))
		},
		Map: func(v Value) ([]Event, error) {
			ev := v.Get("event")
			var e Event
			if !e.Set(PartTitle, Rendered(ev.Get("message").String()), "event.message") {
				e.Set(PartTitle, v.Get("event_definition_title").String(), "event_definition_title")
			}
			if !e.Set(PartRule, v.Get("event_definition_title").String(), "event_definition_title") {
				e.Set(PartRule, v.Get("event_definition_id").String(), "event_definition_id")
			}
			e.SetID("event.id", "graylog-", "", ev.Get("id").String())
			e.Set(PartSeverity, ev.Get("priority").String(), "event.priority")
			e.Status = openrecall.StatusFiring
			if e.Timestamp = ev.Get("timestamp").Time(); e.Timestamp.IsZero() {
				e.Timestamp = ev.Get("timestamp_processing").Time()
			}
			field := func(names ...string) (string, string) {
				for _, n := range names {
					for _, at := range []string{"fields", "group_by_fields"} {
						if s := Rendered(ev.Get(at, n).String()); s != "" {
							return s, "event." + at + "." + n
						}
					}
				}
				return "", ""
			}
			if s, at := field("service", "app", "application"); s != "" {
				e.Set(PartService, s, at)
			}
			if s, at := field("env", "environment"); s != "" {
				e.Set(PartEnvironment, s, at)
			}
			e.Host, _ = field("source", "host", "hostname")
			backlog := v.Get("backlog").Elements()
			if e.Host == "" && len(backlog) > 0 {
				e.Host = backlog[0].Get("source").String()
				if e.Host == "" {
					e.Host = backlog[0].Path("fields.source").String()
				}
			}
			for k, val := range ev.Get("fields").Labels() {
				if k != "service" && k != "env" && k != "environment" {
					e.Label("field."+k, val)
				}
			}
			for k, val := range ev.Get("group_by_fields").Labels() {
				if k != "service" && k != "env" && k != "environment" {
					e.Label("group_by."+k, val)
				}
			}
			e.Label("event_definition_id", v.Get("event_definition_id").String())
			e.Label("event_definition_type", v.Get("event_definition_type").String())
			e.Label("event_key", ev.Get("key").String())
			e.Label("graylog_node", ev.Get("source").String())
			var pairs [][2]string
			for _, f := range ev.Get("fields").Scalars(32) {
				pairs = append(pairs, [2]string{f[0], f[1]})
			}
			for _, f := range ev.Get("group_by_fields").Scalars(16) {
				pairs = append(pairs, [2]string{f[0], f[1]})
			}
			pairs = append(pairs, [2]string{"key", ev.Get("key").String()}, [2]string{"query", ev.Path("replay_info.query").String()})
			for i, m := range backlog {
				if i == graylogBacklog {
					pairs = append(pairs, [2]string{"backlog", "… " + strconv.Itoa(len(backlog)-i) + " more messages"})
					break
				}
				src := m.Get("source").String()
				if src == "" {
					src = m.Path("fields.source").String()
				}
				msg := m.Get("message").String()
				if msg == "" {
					msg = m.Path("fields.message").String()
				}
				pairs = append(pairs, [2]string{"message " + src, strings.TrimSpace(msg)})
			}
			e.Text = JoinText(Rendered(v.Get("event_definition_description").String()), Evidence(pairs...))
			return []Event{e}, nil
		},
		Severity: graylogScale.Map,
		Levels:   []string{"1", "2", "3", "4"},
		Doc: Doc{
			Point: "Alerts → Notifications → Create, type HTTP Notification, URL http://HOST:9555/api/v1/alerts/graylog, attached to the event definitions",
			Auth:  "the notification's API key/secret header (Authorization: Bearer TOKEN), else ?token= in the URL",
			Title: "event.message, else event_definition_title", Severity: "event.priority (1 low, 2 normal, 3 high, 4 critical)",
			Service: "event.fields / group_by_fields service", Rule: "event_definition_title, else event_definition_id",
			ID: "graylog- + event.id", Source: "Keep's Graylog provider mock (keephq/keep), Graylog's HTTP notification format",
		},
	}
}
