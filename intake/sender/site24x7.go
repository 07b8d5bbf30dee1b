package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// site24x7 is the Site24x7 adapter: a Site24x7 webhook integration posting
// its incident parameters as JSON ("Post as JSON" with "Send Incident
// Parameters"): MONITORNAME, MONITORTYPE, MONITOR_ID, STATUS, MONITORURL,
// INCIDENT_REASON, INCIDENT_TIME, INCIDENT_TIME_ISO, FAILED_LOCATIONS,
// MONITOR_GROUPNAME (GROUPNAME), TAGS, OUTAGE_TIME_UNIX_FORMAT, ….
//
// The rule is MONITOR_ID exactly as sent (a number too large for a float,
// kept as written), else MONITORNAME: one monitor is one check, whichever
// location saw it fail. The title is "MONITORNAME is STATUS", as Site24x7's
// own notifications say it. MONITOR_ID names the monitor, not the outage,
// so the id is "site24x7-" + MONITOR_ID + "-" + OUTAGE_TIME_UNIX_FORMAT (the
// outage's start, else INCIDENT_TIME_ISO): two outages of one monitor are
// two alerts, and the notifications of one outage share one (Episode).
//
// Severity is the STATUS: DOWN is critical (the monitor is unreachable),
// CRITICAL high, TROUBLE medium (a threshold breached while the monitor
// answers), UP info with status resolved. The service is a "service:" tag,
// else the monitor group's name; the environment an "env:" tag; the host is
// the monitored URL or address (MONITORURL), never part of the identity.
func site24x7() Sender {
	scale := Scale{"down": openrecall.SeverityCritical, "critical": openrecall.SeverityHigh, "trouble": openrecall.SeverityMedium, "up": openrecall.SeverityInfo}
	return Sender{
		Name: "site24x7", Display: "Site24x7", Security: false, Episode: true,
		Match: func(v Value) bool {
			if !v.Has("MONITOR_ID") || !v.Has("STATUS") {
				return false
			}
			return v.Has("MONITORNAME") && (v.Has("MONITORTYPE") || v.Has("INCIDENT_REASON") || v.Has("OUTAGE_TIME_UNIX_FORMAT"))
		},
		Map:      site24x7Map,
		Severity: scale.Map,
		Levels:   []string{"DOWN", "CRITICAL", "TROUBLE", "UP"},
		Doc: Doc{
			Point:    "Admin > Third-Party Integrations > Webhooks: Hook URL http://HOST:9555/api/v1/alerts/site24x7, POST, Post as JSON, Send Incident Parameters",
			Auth:     "a custom header Authorization: Bearer TOKEN (or ?token=TOKEN in the Hook URL)",
			Title:    "MONITORNAME is STATUS",
			Severity: "STATUS (DOWN critical, CRITICAL high, TROUBLE medium, UP resolved)",
			Service:  "a service: tag, else MONITOR_GROUPNAME",
			Rule:     "MONITOR_ID, else MONITORNAME",
			ID:       "MONITOR_ID + OUTAGE_TIME_UNIX_FORMAT (one id per outage)",
			Source:   "the Site24x7 webhook sample of FireHydrant's Site24x7 event source docs; the incident parameters of Site24x7's help; the other payloads written for openrecall",
		},
	}
}

// site24x7Tags reads TAGS or GROUP_TAGS: an array, or comma-separated text.
func site24x7Tags(t Value) []string {
	if t.IsArray() {
		return t.Strings()
	}
	var out []string
	for _, p := range strings.Split(Rendered(t.String()), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func site24x7Map(v Value) ([]Event, error) {
	var e Event
	str := func(k string) string { return Rendered(v.Get(k).String()) }
	name, status := str("MONITORNAME"), str("STATUS")
	switch {
	case name != "" && status != "":
		e.Set(PartTitle, name+" is "+status, "MONITORNAME+STATUS")
	case name != "":
		e.Set(PartTitle, name, "MONITORNAME")
	}
	if !e.Set(PartRule, str("MONITOR_ID"), "MONITOR_ID") {
		e.Set(PartRule, name, "MONITORNAME")
	}
	e.Set(PartSeverity, status, "STATUS")
	e.Status = Status(status)
	if !e.SetID("MONITOR_ID+OUTAGE_TIME_UNIX_FORMAT", "site24x7-", "-", str("MONITOR_ID"), str("OUTAGE_TIME_UNIX_FORMAT")) {
		e.SetID("MONITOR_ID+INCIDENT_TIME_ISO", "site24x7-", "-", str("MONITOR_ID"), str("INCIDENT_TIME_ISO"))
	}
	e.Timestamp = v.Get("INCIDENT_TIME_ISO").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = v.Get("OUTAGE_TIME_UNIX_FORMAT").Time()
	}
	tags := site24x7Tags(v.Get("TAGS"))
	e.Tags(tags, "TAGS")
	if e.Service == "" {
		if g, k := v.First("MONITOR_GROUPNAME", "GROUPNAME"); Rendered(g) != "" {
			e.Set(PartService, Rendered(g), k)
		}
	}
	e.Host = str("MONITORURL")
	e.Label("tags", strings.Join(tags, ","))
	e.Label("group_tags", strings.Join(site24x7Tags(v.Get("GROUP_TAGS")), ","))
	for _, k := range []string{"MONITORTYPE", "FAILED_LOCATIONS", "MONITOR_GROUPNAME", "GROUPNAME", "MONITORNAME", "POLLFREQUENCY"} {
		e.Label(strings.ToLower(k), str(k))
	}
	details := str("INCIDENT_DETAILS")
	if details == str("INCIDENT_REASON") {
		details = ""
	}
	e.Text = JoinText(str("INCIDENT_REASON"), details, Evidence(
		[2]string{"monitor", name},
		[2]string{"monitor type", str("MONITORTYPE")},
		[2]string{"status", status},
		[2]string{"monitor url", str("MONITORURL")},
		[2]string{"failed locations", str("FAILED_LOCATIONS")},
		[2]string{"incident time", str("INCIDENT_TIME")},
		[2]string{"dashboard", str("MONITOR_DASHBOARD_LINK")},
		[2]string{"rca", str("RCA_LINK")},
	))
	return []Event{e}, nil
}
