package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// splunk reads the webhook alert action of Splunk Enterprise and Splunk
// Cloud: {result: {the fields of the search's first result row}, sid,
// results_link, search_name, owner, app}. A webhook that carries a Splunk
// Enterprise Security notable (or an ES correlation search) is splunk-es's.
//
// The rule is search_name exactly: the saved search (the alert) is the
// check. The title is search_name, followed by the result's summary (its
// summary, title, message or description field, first line) when it has
// one: the webhook has no title of its own.
//
// Severity: the alert action sends none of Splunk's own (the alert's
// severity setting is not in the payload), so a result field stating one is
// read: severity, urgency, priority, log_level or level, with the words
// critical and fatal (critical), severe, high and error (high), medium, warn
// and warning (medium), low, info, informational and debug (info). A result
// without one has no severity (unknown).
//
// Service and environment come from the result's service (or service_name)
// and environment (or env) fields, the host from its host field.
//
// The id is "splunk-" and sid: one search run is one firing (Episode). Only
// a triggered alert posts, so every webhook is firing.
func splunk() Sender {
	return Sender{
		Name: "splunk", Display: "Splunk alert action", Episode: true,
		Match: func(v Value) bool { return splunkWebhook(v) && !splunkESWebhook(v) },
		Map: func(v Value) ([]Event, error) {
			var e Event
			r := v.Get("result")
			rf := func(keys ...string) (string, string) {
				for _, k := range keys {
					if s := Rendered(r.Get(k).String()); s != "" {
						return s, "result." + k
					}
				}
				return "", ""
			}
			name := Rendered(v.Get("search_name").String())
			e.Set(PartRule, name, "search_name")
			title, tf := name, "search_name"
			if s, f := rf("summary", "title", "message", "description"); s != "" {
				s = firstLineOf(s)
				if len(s) > 160 {
					s = strings.ToValidUTF8(s[:160], "") + "…"
				}
				if title == "" {
					title, tf = s, f
				} else if !strings.EqualFold(s, title) {
					title, tf = title+": "+s, tf+"+"+f
				}
			}
			e.Set(PartTitle, title, tf)
			if s, f := rf("severity", "urgency", "priority", "log_level", "level"); s != "" {
				e.Set(PartSeverity, s, f)
			}
			if s, f := rf("service", "service_name"); s != "" {
				e.Set(PartService, s, f)
			}
			if s, f := rf("environment", "env"); s != "" {
				e.Set(PartEnvironment, s, f)
			}
			e.Host, _ = rf("host")
			e.SetID("sid", "splunk-", "", v.Get("sid").String())
			e.Timestamp = r.Get("_time").Time()
			e.Status = openrecall.StatusFiring
			e.Label("splunk_app", v.Get("app").String())
			e.Label("owner", v.Get("owner").String())
			e.Label("results_link", v.Get("results_link").String())
			for _, k := range []string{"sourcetype", "index", "source"} {
				e.Label(k, r.Get(k).String())
			}
			raw, _ := rf("_raw")
			e.Text = JoinText(raw, Evidence(splunkFields(r, 40)...))
			return []Event{e}, nil
		},
		Severity: Scale{
			"critical": openrecall.SeverityCritical, "fatal": openrecall.SeverityCritical,
			"severe": openrecall.SeverityHigh, "high": openrecall.SeverityHigh, "error": openrecall.SeverityHigh,
			"medium": openrecall.SeverityMedium, "warn": openrecall.SeverityMedium, "warning": openrecall.SeverityMedium,
			"low":  openrecall.SeverityLow,
			"info": openrecall.SeverityInfo, "informational": openrecall.SeverityInfo, "debug": openrecall.SeverityInfo,
		}.Map,
		Levels: []string{"critical", "fatal", "severe", "high", "error", "medium", "warn", "warning", "low", "info", "informational", "debug"},
		Doc: Doc{
			Point:    "the alert's Trigger Actions → Webhook, URL http://HOST:9555/api/v1/alerts/splunk?token=TOKEN",
			Auth:     "?token= (the webhook alert action sets no header)",
			Title:    "search_name, and the result's summary/message when present",
			Severity: "the result's severity/urgency/priority/log_level field, else none",
			Service:  "the result's service field",
			Rule:     "search_name",
			ID:       "splunk- + sid (one search run, one firing)",
			Source:   "zulip/zulip zerver/webhooks/splunk fixtures (Apache-2.0); written for openrecall after Splunk's documented webhook payload",
		},
	}
}

// splunkWebhook reports whether v has the shape of Splunk's webhook alert
// action: sid and search_name, with results_link or a result object.
func splunkWebhook(v Value) bool {
	return v.IsObject() && v.Has("sid") && v.Has("search_name") && (v.Has("results_link") || v.Get("result").IsObject())
}

// splunkSkipped are the result fields Splunk adds to every row: they are no
// evidence.
var splunkSkipped = map[string]bool{"punct": true, "timestartpos": true, "timeendpos": true, "linecount": true, "splunk_server": true, "splunk_server_group": true, "eventtype": true, "tag": true}

// splunkFields returns up to limit of a result row's own fields as evidence,
// in name order: Splunk's internal fields (_raw, _time, _cd…), the date_*
// fields and the other fields every row carries are left out.
func splunkFields(r Value, limit int) [][2]string {
	var out [][2]string
	for _, k := range r.Keys() {
		if len(out) >= limit {
			break
		}
		if strings.HasPrefix(k, "_") || strings.HasPrefix(k, "date_") || splunkSkipped[k] {
			continue
		}
		x := r.Get(k)
		s := x.String()
		if x.IsArray() {
			s = strings.Join(x.Strings(), ", ")
		}
		if strings.TrimSpace(s) != "" {
			out = append(out, [2]string{k, s})
		}
	}
	return out
}
