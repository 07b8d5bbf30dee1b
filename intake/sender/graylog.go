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
//
// Graylog before 3.1 posted another shape, the HTTP alarm callback of a
// stream's alert condition: that legacy notification is Graylog's too,
// at the same endpoint (DESIGN §3), read by graylogLegacyEvent.
func graylog() Sender {
	return Sender{
		Name: "graylog", Display: "Graylog", Security: false, Episode: true,
		Match: func(v Value) bool {
			return v.Has("event_definition_id") && v.Get("event").IsObject() &&
				(v.Has("event_definition_title") || v.Has("event_definition_type")) || graylogLegacy(v)
		},
		Map: func(v Value) ([]Event, error) {
			if !v.Get("event").IsObject() && v.Get("check_result").IsObject() {
				return []Event{graylogLegacyEvent(v)}, nil
			}
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
			Point: "Alerts → Notifications → Create, type HTTP Notification, URL http://HOST:9555/api/v1/alerts/graylog, attached to the event definitions (before 3.1: the stream's HTTP Alarm Callback, same URL)",
			Auth:  "the notification's API key/secret header (Authorization: Bearer TOKEN), else ?token= in the URL",
			Title: "event.message, else event_definition_title (legacy: check_result.triggered_condition.title, else result_description)", Severity: "event.priority (1 low, 2 normal, 3 high, 4 critical; legacy: none)",
			Service: "event.fields / group_by_fields service (legacy: stream.title)", Rule: "event_definition_title, else event_definition_id (legacy: the condition's title, else its id)",
			ID: "graylog- + event.id (legacy: the condition's id and triggered_at)", Source: "Keep's Graylog provider mock (keephq/keep), Graylog's HTTP notification format; the legacy HTTP alarm callback's sample in Graylog's 2.x documentation",
		},
	}
}

// graylogLegacy reports whether v is the notification of Graylog's legacy
// HTTP alarm callback (Graylog 1.x to 3.0): {check_result{result_description,
// triggered_condition, triggered_at, triggered, matching_messages[]},
// stream{id, title, description, …}}.
func graylogLegacy(v Value) bool {
	cr := v.Get("check_result")
	return cr.IsObject() && v.Get("stream").IsObject() && !v.Has("event_definition_id") &&
		(cr.Get("triggered_condition").IsObject() || cr.Get("result_description").IsString())
}

// graylogLegacyEvent reads a legacy alarm callback notification. The check
// is the stream's alert condition: Rule is its title as sent (conditions
// have titles since Graylog 2.2), else its id; Title the condition's
// title, else the check result's description ("Stream had 2 messages in
// the last 1 minutes …"); Service the stream's title (a legacy condition
// belongs to one stream: two streams' conditions of one title are two
// checks). ID: "graylog-" + the condition's id + "/" + triggered_at, one
// per firing (an episode; a redelivery keeps it). Severity: none (legacy
// conditions have no priority). Status: firing, or resolved when
// check_result.triggered is false (Graylog notifies only when a condition
// triggers; it resolves its alerts without notifying). Host: the first
// matching message's source. Text: the result description, the
// condition's type and parameters, the stream and the first matching
// messages.
func graylogLegacyEvent(v Value) Event {
	cr := v.Get("check_result")
	cond := cr.Get("triggered_condition")
	stream := v.Get("stream")
	var e Event
	if !e.Set(PartTitle, Rendered(cond.Get("title").String()), "check_result.triggered_condition.title") {
		e.Set(PartTitle, cr.Get("result_description").String(), "check_result.result_description")
	}
	if !e.Set(PartRule, Rendered(cond.Get("title").String()), "check_result.triggered_condition.title") {
		e.Set(PartRule, cond.Get("id").String(), "check_result.triggered_condition.id")
	}
	e.Set(PartService, Rendered(stream.Get("title").String()), "stream.title")
	e.SetID("check_result.triggered_condition.id+check_result.triggered_at", "graylog-", "/",
		cond.Get("id").String(), cr.Get("triggered_at").String())
	e.Status = openrecall.StatusFiring
	if triggered, ok := cr.Get("triggered").Bool(); ok && !triggered {
		e.Status = openrecall.StatusResolved
	}
	e.Timestamp = cr.Get("triggered_at").Time()
	messages := cr.Get("matching_messages").Elements()
	if len(messages) > 0 {
		e.Host = messages[0].Get("source").String()
	}
	condType := cond.Get("type_string").String()
	if condType == "" {
		condType = cond.Get("type").String()
	}
	e.Label("stream", stream.Get("title").String())
	e.Label("stream_id", stream.Get("id").String())
	e.Label("condition_id", cond.Get("id").String())
	e.Label("condition_type", condType)
	for k, val := range cond.Get("parameters").Labels() {
		e.Label("parameter."+k, val)
	}
	pairs := [][2]string{
		{"condition type", condType},
		{"parameters", cond.Get("description").String()},
		{"stream", stream.Get("title").String()},
		{"stream description", stream.Get("description").String()},
	}
	if e.Origin[PartTitle] != "check_result.result_description" {
		pairs = append([][2]string{{"result", cr.Get("result_description").String()}}, pairs...)
	}
	for i, m := range messages {
		if i == graylogBacklog {
			pairs = append(pairs, [2]string{"matching messages", "… " + strconv.Itoa(len(messages)-i) + " more messages"})
			break
		}
		pairs = append(pairs, [2]string{"message " + m.Get("source").String(), strings.TrimSpace(m.Get("message").String())})
	}
	e.Text = Evidence(pairs...)
	return e
}
