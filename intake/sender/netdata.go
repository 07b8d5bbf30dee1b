package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// netdata reads Netdata Cloud's webhook notifications (DESIGN §3):
//
//   - alert notifications: message, alert (the alert's name; "alarm" in
//     older payloads), info, chart, context, space, rooms, family, class,
//     severity (critical, warning, clear), date, duration,
//     additional_active_critical_alerts, additional_active_warning_alerts,
//     alert_url ("alarm_url"); recognised by the alert name with severity
//     and chart, context or alert_url, plus one of the additional_active
//     counters, alert_url or class;
//   - reachability notifications: message, url, host, severity (info,
//     critical) and status {reachable, text}; recognised by status.reachable
//     and status.text;
//   - the integration's test notification (title "Test Notification" and a
//     verification token), a notice for a person, not an alert.
//
// Rule of an alert is its name and the chart context it is bound to
// ("disk_space_usage on disk.space"), exactly as sent: one Netdata alert
// template fires on many charts (every disk, every interface) and on many
// nodes, and those are one check; the context keeps apart two checks that
// share a name on different kinds of chart. The chart (the instance: a
// disk, an interface) is a label, the node is the host. Netdata names no
// service: Service is left empty. The title is the message, else
// "ALERT is SEVERITY". Rule of a reachability notification is "node
// reachability"; its host is host; it carries no date, so its id is a hash
// of its content.
//
// Netdata sends no event id: the id is "nd-" + space/node/chart/alert + the
// date of the transition, so each notification (raised, escalated,
// cleared) is one alert and a redelivery keeps its id; the ids name
// episodes. severity clear is resolved, as is a reachable node.
//
// Severity: critical is critical, warning medium, clear info; a
// reachability notification's critical (unreachable) is critical and info
// (reachable again) info.
func netdata() Sender {
	scale := Scale{"critical": openrecall.SeverityCritical, "warning": openrecall.SeverityMedium, "clear": openrecall.SeverityInfo, "info": openrecall.SeverityInfo}
	return Sender{
		Name: "netdata", Display: "Netdata", Security: false, Episode: true,
		Match:    netdataMatch,
		Map:      netdataMap,
		Severity: scale.Map,
		Levels:   []string{"critical", "warning", "clear", "info"},
		Doc: Doc{
			Point:    "Space settings → Alerts & Notifications → Add configuration → Webhook, URL https://HOST/api/v1/alerts/netdata (Netdata accepts only HTTPS)",
			Auth:     "Authentication Mechanism Bearer: Authorization: Bearer TOKEN",
			Title:    "message, else alert + severity",
			Severity: "severity (critical, warning, clear; reachability critical, info)",
			Service:  "none (Netdata names no service); the node is the host",
			Rule:     "alert + \" on \" + context (reachability: \"node reachability\")",
			ID:       "space/node/chart/alert + date (one per notification)",
			Source:   "Netdata Cloud webhook integration docs (alert and reachability payload fields)",
		},
	}
}

// netdataAlertName returns the alert's name: alert, or alarm in older
// payloads.
func netdataAlertName(v Value) (string, string) {
	for _, k := range []string{"alert", "alarm"} {
		if s := Rendered(v.Get(k).String()); s != "" {
			return s, k
		}
	}
	return "", ""
}

func netdataMatch(v Value) bool {
	if netdataTest(v) {
		return true
	}
	if st := v.Get("status"); st.IsObject() {
		if _, ok := st.Get("reachable").Bool(); ok && st.Has("text") {
			return v.Has("host") || v.Has("message")
		}
	}
	name, _ := netdataAlertName(v)
	if name == "" || !v.Has("severity") {
		return false
	}
	if !v.Has("chart") && !v.Has("context") {
		return false
	}
	return v.Has("additional_active_critical_alerts") || v.Has("additional_active_warning_alerts") ||
		v.Has("alert_url") || v.Has("alarm_url") || (v.Has("class") && v.Has("family"))
}

// netdataTest reports whether v is the webhook integration's test
// notification, which carries the verification token.
func netdataTest(v Value) bool {
	return v.Get("title").String() == "Test Notification" && v.Has("token") &&
		strings.Contains(v.Get("message").String(), "Webhook integration")
}

func netdataMap(v Value) ([]Event, error) {
	var e Event
	str := func(k string) string { return Rendered(v.Get(k).String()) }
	e.Timestamp = v.Get("date").Time()
	space := str("space")
	e.Label("space", space)
	var rooms []string
	if r := v.Get("rooms"); r.IsObject() {
		rooms = r.Keys()
	} else if r := v.Get("Rooms"); r.IsObject() {
		rooms = r.Keys()
	}
	if len(rooms) > 0 {
		e.Label("rooms", strings.Join(rooms, ","))
	}

	switch {
	case netdataTest(v):
		e.Status = openrecall.StatusNotice
		e.Set(PartTitle, "Netdata webhook test notification: enter its token in Netdata to verify the integration", "title")
		e.Text = Evidence([2]string{"message", str("message")}, [2]string{"token", str("token")})
		return []Event{e}, nil

	case v.Get("status").IsObject():
		host := str("host")
		e.Host = host
		e.Set(PartRule, "node reachability", "status")
		if !e.Set(PartTitle, str("message"), "message") {
			e.Set(PartTitle, host+" is "+v.Path("status.text").String(), "status.text")
		}
		e.Set(PartSeverity, str("severity"), "severity")
		if reachable, _ := v.Path("status.reachable").Bool(); reachable {
			e.Status = openrecall.StatusResolved
		} else {
			e.Status = openrecall.StatusFiring
		}
		// A reachability notification carries no date: without one it has
		// no id of its own (a content hash).
		netdataID(&e, "host+status+date", []string{space, host}, "reachability", v.Path("status.text").String(), v.Get("date").String())
		e.Text = JoinText(str("message"), Evidence([2]string{"host", host}, [2]string{"status", v.Path("status.text").String()},
			[2]string{"url", str("url")}))
		return []Event{e}, nil
	}

	name, nameField := netdataAlertName(v)
	context := str("context")
	chart := str("chart")
	if context != "" {
		e.Set(PartRule, name+" on "+context, nameField+"+context")
	} else {
		e.Set(PartRule, name, nameField)
	}
	severity := str("severity")
	e.Set(PartSeverity, severity, "severity")
	if !e.Set(PartTitle, str("message"), "message") {
		e.Set(PartTitle, name+" is "+severity, nameField)
	}
	if FoldLevel(severity) == "clear" {
		e.Status = openrecall.StatusResolved
	} else {
		e.Status = openrecall.StatusFiring
	}
	for _, k := range []string{"host", "node", "hostname", "node_name"} {
		if s := str(k); s != "" {
			e.Host = s
			break
		}
	}
	netdataID(&e, "space+node+chart+alert+date", []string{space, e.Host}, chart, name, v.Get("date").String())
	e.Label("chart", chart)
	e.Label("context", context)
	e.Label("family", str("family"))
	e.Label("class", str("class"))
	e.Text = JoinText(str("info"), Evidence(
		[2]string{"message", str("message")}, [2]string{"value", v.Get("value").String()}, [2]string{"chart", chart},
		[2]string{"family", str("family")}, [2]string{"class", str("class")}, [2]string{"duration", str("duration")},
		[2]string{"other critical alerts on the node", v.Get("additional_active_critical_alerts").String()},
		[2]string{"other warning alerts on the node", v.Get("additional_active_warning_alerts").String()},
		[2]string{"url", netdataFirst(str("alert_url"), str("alarm_url"))},
	))
	return []Event{e}, nil
}

// netdataFirst returns the first of ss that is not blank.
func netdataFirst(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// netdataID sets the id "nd-" + the optional parts present (space, node) +
// the required ones, joined by '/': without any required part (the alert,
// its status, the date) it sets none, and the id falls back to the
// payload's hash.
func netdataID(e *Event, field string, optional []string, required ...string) {
	var parts []string
	for _, p := range optional {
		if p = Rendered(p); p != "" {
			parts = append(parts, p)
		}
	}
	e.SetID(field, "nd-", "/", append(parts, required...)...)
}
