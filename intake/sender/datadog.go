package sender

import (
	"regexp"
	"strings"

	"github.com/openrecall/openrecall"
)

// datadog reads the Datadog Webhooks integration. Its payload is a template
// the user writes with Datadog's variables; the adapter reads the documented
// default payload (body, last_updated, event_type, title, date, org, id) and
// the keys teams commonly give the other variables: alert_id or monitor_id
// ($ALERT_ID), alert_title ($ALERT_TITLE), alert_transition
// ($ALERT_TRANSITION), alert_type ($ALERT_TYPE), alert_priority or priority
// or severity ($ALERT_PRIORITY), alert_query ($ALERT_QUERY), alert_scope or
// scopes ($ALERT_SCOPE), alert_status ($ALERT_STATUS), alert_metric,
// aggreg_key ($AGGREG_KEY), tags ($TAGS, a comma-separated string or an
// array), hostname ($HOSTNAME), event_msg and event_title, link or url.
// Placeholders Datadog left unrendered ("$ALERT_ID") read as absent.
//
// The title is $EVENT_TITLE as Datadog shows it ("[Triggered on
// {host:web-1}] High CPU"). The service is the `service:` tag, the
// environment the `env:` (or `environment:`) tag, the host $HOSTNAME or the
// `host:` tag or scope. The rule is the monitor: its id ($ALERT_ID), else
// the id in the body's or the link's /monitors/<id> URL (the default
// payload has no $ALERT_ID), else the title without its transition prefix.
//
// The id is "dd-" and the event id ($ID): Datadog gives every notification
// event its own id and keeps it when it retries a delivery, so a new firing
// of a monitor is a new alert and a redelivery is recognised (Episode).
// Without $ID the id is the monitor, the scope and $LAST_UPDATED (or $DATE).
// A Recovered notification is an event of its own: it carries its own id.
//
// Severity: the monitor's priority P1–P5 (critical, high, medium, low,
// info; a bare 1–5 is read as P1–P5) when it is set. A monitor without a
// priority says only its transition: Triggered and Re-Triggered (the alert
// threshold) are high, Warn and Re-Warn (the warning threshold) medium, No
// Data medium, Recovered info; $ALERT_TYPE error, warning, info and success
// read the same way. The priority wins over the transition: the monitor's
// owner chose it.
//
// Status: Recovered (or $ALERT_TYPE success, or a "[Recovered" title) is
// resolved; every other transition is firing. Datadog's webhooks say nothing
// of acknowledgement.
func datadog() Sender {
	scale := Scale{
		"p1": openrecall.SeverityCritical, "1": openrecall.SeverityCritical,
		"p2": openrecall.SeverityHigh, "2": openrecall.SeverityHigh,
		"p3": openrecall.SeverityMedium, "3": openrecall.SeverityMedium,
		"p4": openrecall.SeverityLow, "4": openrecall.SeverityLow,
		"p5": openrecall.SeverityInfo, "5": openrecall.SeverityInfo,
		"triggered": openrecall.SeverityHigh, "retriggered": openrecall.SeverityHigh,
		"warn": openrecall.SeverityMedium, "rewarn": openrecall.SeverityMedium,
		"nodata": openrecall.SeverityMedium, "renodata": openrecall.SeverityMedium,
		"recovered": openrecall.SeverityInfo,
		"error":     openrecall.SeverityHigh, "warning": openrecall.SeverityMedium,
		"info": openrecall.SeverityInfo, "success": openrecall.SeverityInfo,
	}
	return Sender{
		Name: "datadog", Display: "Datadog", Episode: true,
		Match: datadogMatch,
		Map: func(v Value) ([]Event, error) {
			var e Event
			dd := func(paths ...string) (string, string) { return datadogFirst(v, paths...) }

			title, tf := dd("title", "event_title", "alert_title", "EVENT_TITLE", "ALERT_TITLE")
			e.Set(PartTitle, title, tf)

			body, _ := dd("body", "event_msg", "message", "text", "EVENT_MSG")
			body = datadogBody(body)

			tags := datadogTags(v)
			for k, val := range tags {
				e.Label(k, val)
			}
			scope, _ := dd("alert_scope", "scopes", "scope", "ALERT_SCOPE")
			scopeTags := datadogTagString(scope)

			if s, ok := tags["service"]; ok {
				e.Set(PartService, s, "tags.service")
			} else if s, ok := scopeTags["service"]; ok {
				e.Set(PartService, s, "alert_scope.service")
			} else if s, f := dd("service"); s != "" {
				e.Set(PartService, s, f)
			}
			for _, k := range []string{"env", "environment"} {
				if s, ok := tags[k]; ok {
					e.Set(PartEnvironment, s, "tags."+k)
					break
				}
				if s, ok := scopeTags[k]; ok {
					e.Set(PartEnvironment, s, "alert_scope."+k)
					break
				}
			}
			if e.Environment == "" {
				if s, f := dd("env", "environment"); s != "" {
					e.Set(PartEnvironment, s, f)
				}
			}
			if h, _ := dd("hostname", "host", "HOSTNAME"); h != "" {
				e.Host = h
			} else if h, ok := tags["host"]; ok {
				e.Host = h
			} else if h, ok := scopeTags["host"]; ok {
				e.Host = h
			}

			if link, _ := dd("link", "url", "LINK"); link != "" {
				e.Link(openrecall.LinkSource, link) // $LINK: the event's page
			}

			monitor, mf := dd("alert_id", "monitor_id", "monitor.id", "alert.id", "ALERT_ID")
			if monitor == "" {
				link, _ := dd("link", "url", "LINK")
				for _, s := range []string{body, link} {
					if m := datadogMonitorURL.FindStringSubmatch(s); m != nil {
						monitor, mf = m[1], "body (/monitors/<id>)"
						break
					}
				}
			}
			if monitor != "" {
				e.Set(PartRule, monitor, mf)
			} else if name := datadogMonitorName(title); name != "" {
				e.Set(PartRule, name, tf+" (monitor name)")
			}

			transition, trf := dd("alert_transition", "transition", "ALERT_TRANSITION")
			alertType, _ := dd("alert_type", "ALERT_TYPE")
			titlePriority, titleTransition := datadogTitleWords(title)
			if transition == "" && titleTransition != "" {
				transition, trf = titleTransition, tf+" (transition prefix)"
			}
			p, pf := dd("alert_priority", "priority", "severity", "ALERT_PRIORITY")
			if p == "" && titlePriority != "" {
				p, pf = titlePriority, tf+" (priority prefix)"
			}
			switch {
			case p != "" && scale.Map(p) != openrecall.SeverityUnknown:
				e.Set(PartSeverity, p, pf)
			case transition != "":
				e.Set(PartSeverity, transition, trf)
			case alertType != "":
				e.Set(PartSeverity, alertType, "alert_type")
			default:
				e.Set(PartSeverity, p, pf)
			}

			switch {
			case transition != "":
				e.Status = Status(transition)
			case strings.EqualFold(alertType, "success"):
				e.Status = openrecall.StatusResolved
			default:
				e.Status = openrecall.StatusFiring
			}

			for _, k := range []string{"last_updated", "date", "LAST_UPDATED", "DATE"} {
				if t := v.Get(k); Rendered(t.String()) != "" {
					if e.Timestamp = t.Time(); !e.Timestamp.IsZero() {
						break
					}
				}
			}

			if id, f := dd("id", "event_id", "event.id", "ID"); !e.SetID(f, "dd-", "", id) {
				ts, tsf := dd("last_updated", "date")
				if scope != "" {
					e.SetID(mf+"+"+tsf, "dd-", "-", monitor, scope, ts)
				} else {
					e.SetID(mf+"+"+tsf, "dd-", "-", monitor, ts)
				}
			}

			query, _ := dd("alert_query", "query", "ALERT_QUERY")
			status, _ := dd("alert_status", "ALERT_STATUS")
			metric, _ := dd("alert_metric", "ALERT_METRIC")
			aggreg, _ := dd("aggreg_key", "AGGREG_KEY")
			eventType, _ := dd("event_type", "EVENT_TYPE")
			e.Label("event_type", eventType)
			e.Label("aggreg_key", aggreg)
			if org, _ := dd("org.name", "org_name"); org != "" {
				e.Label("org", org)
			}
			e.Text = JoinText(body, Evidence(
				[2]string{"transition", transition},
				[2]string{"status", status},
				[2]string{"query", query},
				[2]string{"metric", metric},
				[2]string{"scope", scope},
				[2]string{"host", e.Host},
			))
			return []Event{e}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"P1", "P2", "P3", "P4", "P5", "Triggered", "Re-Triggered", "Warn", "Re-Warn", "No Data", "Re-No Data", "Recovered", "error", "warning", "info", "success"},
		Doc: Doc{
			Point:    "Integrations → Webhooks: a webhook with URL http://HOST:9555/api/v1/alerts/datadog, named in the monitor's message as @webhook-NAME",
			Auth:     "Custom Headers: {\"Authorization\": \"Bearer TOKEN\"}",
			Title:    "title ($EVENT_TITLE), else alert_title",
			Severity: "alert_priority/priority/severity ($ALERT_PRIORITY, P1–P5), else alert_transition (Triggered high, Warn medium)",
			Service:  "the service: tag of tags ($TAGS), else of the scope",
			Rule:     "alert_id/monitor_id ($ALERT_ID, the monitor), else the monitor id in the body's /monitors/<id> link, else the title without its [Triggered] prefix",
			ID:       "dd- + id ($ID, the notification event), else monitor + scope + last_updated",
			Source:   "captured payloads in keephq/keep docs/images/datadog_raw_alerts.txt (MIT); the documented default payload; written for openrecall",
		},
	}
}

// datadogMatch recognises a Datadog webhook: at least two of Datadog's own
// keys or values — $ALERT_TRANSITION, $ALERT_QUERY, $ALERT_SCOPE,
// $ALERT_METRIC, $AGGREG_KEY, $LAST_UPDATED, $EVENT_MSG, $EVENT_TITLE, the
// default payload's org{id,name}, a body in Datadog's %%% markdown fences, a
// datadoghq link.
func datadogMatch(v Value) bool {
	if !v.IsObject() {
		return false
	}
	n := 0
	for _, k := range []string{"alert_transition", "alert_query", "alert_scope", "alert_metric", "aggreg_key", "last_updated", "event_msg", "event_title", "ALERT_TRANSITION", "LAST_UPDATED", "EVENT_MSG"} {
		if v.Has(k) {
			n++
		}
	}
	if org := v.Get("org"); org.Has("id") && org.Has("name") {
		n++
	}
	if t := v.Get("alert_transition").String(); t != "" && datadogTransitions[FoldLevel(t)] {
		n++
	}
	body := strings.TrimSpace(v.Get("body").String())
	if strings.HasPrefix(body, "%%%") {
		n++
	}
	for _, k := range []string{"link", "url", "body"} {
		if s := v.Get(k).String(); strings.Contains(s, "datadoghq.") || strings.Contains(s, "app.datadoghq") {
			n++
			break
		}
	}
	return n >= 2
}

// datadogTransitions are the values of $ALERT_TRANSITION, folded.
var datadogTransitions = map[string]bool{"triggered": true, "retriggered": true, "recovered": true, "warn": true, "rewarn": true, "nodata": true, "renodata": true, "renotify": true}

// datadogFirst is First with Datadog's unrendered placeholders ("$ID")
// read as absent.
func datadogFirst(v Value, paths ...string) (string, string) {
	for _, p := range paths {
		if s := Rendered(v.Path(p).String()); s != "" {
			return s, p
		}
	}
	return "", ""
}

// datadogMonitorURL finds the monitor id in a Datadog monitor link.
var datadogMonitorURL = regexp.MustCompile(`/monitors/([0-9]+)`)

// datadogTitlePrefix is the transition, priority and group prefix Datadog
// puts before the monitor's name in an event title: "[P2] [Triggered on
// {host:web-1}] ".
var datadogTitlePrefix = regexp.MustCompile(`^(\s*\[[^\]]*\])+\s*`)

// datadogMonitorName returns an event title without its prefix: the
// monitor's name.
func datadogMonitorName(title string) string {
	return strings.TrimSpace(datadogTitlePrefix.ReplaceAllString(title, ""))
}

// datadogTitleWords returns the priority ("P2") and the transition
// ("Triggered", "Recovered", "Warn", "No Data", "Re-Triggered") an event
// title's bracketed prefix states: "[P2] [Triggered on {host:web-1}] …".
func datadogTitleWords(title string) (priority, transition string) {
	prefix := datadogTitlePrefix.FindString(title)
	for _, m := range datadogTitleBracket.FindAllStringSubmatch(prefix, -1) {
		word := strings.TrimSpace(m[1])
		if i := strings.Index(word, " on "); i >= 0 {
			word = word[:i]
		}
		switch f := FoldLevel(word); {
		case len(f) == 2 && f[0] == 'p' && f[1] >= '1' && f[1] <= '5':
			priority = word
		case datadogTransitions[f] && transition == "":
			transition = word
		}
	}
	return priority, transition
}

// datadogTitleBracket is one bracketed word of a title's prefix.
var datadogTitleBracket = regexp.MustCompile(`\[([^\]]*)\]`)

// datadogBody strips the %%% fences of Datadog's markdown and the
// @-mentions of notification handles from a message.
func datadogBody(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "%%%")
	s = strings.TrimSuffix(s, "%%%")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "@") && !strings.Contains(t, " ") {
			continue
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// datadogTags reads $TAGS: a comma-separated string or an array of
// "key:value" tags (a tag without a value, such as "monitor", is skipped).
func datadogTags(v Value) map[string]string {
	t := v.Get("tags")
	if t.IsNull() {
		t = v.Get("TAGS")
	}
	if t.IsArray() {
		out := map[string]string{}
		for _, s := range t.Strings() {
			for k, val := range datadogTagString(s) {
				out[k] = val
			}
		}
		return out
	}
	return datadogTagString(Rendered(t.String()))
}

// datadogTagString reads "env:prod, service:api,monitor" into its
// key-value tags; the first key of a repeated tag wins.
func datadogTagString(s string) map[string]string {
	out := map[string]string{}
	for _, tag := range strings.Split(s, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(tag), ":")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" || val == "" {
			continue
		}
		if _, seen := out[k]; !seen {
			out[k] = val
		}
	}
	return out
}
