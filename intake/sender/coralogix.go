package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// coralogix reads Coralogix's Generic outbound webhook in its default
// template: uuid, alert_id, name, description, threshold, timewindow,
// alert_action (trigger, resolve), alert_url, log_url, icon_url, service,
// duration, and fields[] of {key, value} (team, application, subsystem,
// severity, priority, computer, ipAddress, timestampISO, hitCount, text,
// alertUniqueIdentifier, metaLabels, group-by values…). A custom template
// that puts those keys at the top level reads the same. It is recognised by
// alert_action with alert_id or uuid, and fields[] or a Coralogix URL or
// application/subsystem.
//
// Coralogix leaves a variable it has no value for unrendered ("$SERVICE",
// "$DURATION" for a logs alert) and its test notification sends
// "*insert desired application name*": neither becomes a field.
//
// Rule is alert_id (the alert definition's id, the same on every firing),
// else name, exactly as sent; the title is name. Service is the rendered
// service (tracing alerts), else subsystem (Coralogix's component), else
// application; when the subsystem is the service, an application that is an
// environment word (prod, production, staging, dev…) is the environment.
// Host is computer, else ipAddress. The id is "cx-" +
// alertUniqueIdentifier (one per alert incident, kept by its resolve),
// else uuid: the ids name episodes. alert_action resolve is resolved,
// trigger firing.
//
// Severity is the alert's: alert_severity (Info, Warning, Critical, Error)
// when the template sends it, else its priority P1–P5 (P1 critical, P2
// high, P3 medium, P4 low, P5 info), else the severity field (the matched
// log's: Debug and Verbose low, Info info, Warning medium, Error high,
// Critical critical).
func coralogix() Sender {
	scale := Scale{
		"critical": openrecall.SeverityCritical, "error": openrecall.SeverityHigh, "warning": openrecall.SeverityMedium,
		"warn": openrecall.SeverityMedium, "info": openrecall.SeverityInfo, "verbose": openrecall.SeverityLow,
		"debug": openrecall.SeverityLow,
		"p1":    openrecall.SeverityCritical, "p2": openrecall.SeverityHigh, "p3": openrecall.SeverityMedium,
		"p4": openrecall.SeverityLow, "p5": openrecall.SeverityInfo,
	}
	return Sender{
		Name: "coralogix", Display: "Coralogix", Security: false, Episode: true,
		Match:    coralogixMatch,
		Map:      coralogixMap,
		Severity: scale.Map,
		Levels:   []string{"Critical", "Error", "Warning", "Info", "Verbose", "Debug", "P1", "P2", "P3", "P4", "P5"},
		Doc: Doc{
			Point:    "Data Flow → Outbound Webhooks → Generic Webhook, POST to http://HOST:9555/api/v1/alerts/coralogix, default body; attach it to the alerts' notifications",
			Auth:     "a request header Authorization: Bearer TOKEN",
			Title:    "name",
			Severity: "alert_severity, else fields priority (P1–P5), else fields severity",
			Service:  "service (when rendered), else subsystem, else application",
			Rule:     "alert_id, else name",
			ID:       "fields alertUniqueIdentifier, else uuid",
			Source:   "Keep's Coralogix provider mock (keephq/keep, MIT) and Coralogix's generic webhook default template",
		},
	}
}

func coralogixMatch(v Value) bool {
	action := FoldLevel(v.Get("alert_action").String())
	if action != "trigger" && action != "resolve" {
		return false
	}
	if !v.Has("alert_id") && !v.Has("uuid") {
		return false
	}
	if v.Get("fields").IsArray() {
		return true
	}
	for _, k := range []string{"alert_url", "log_url", "icon_url"} {
		if strings.Contains(strings.ToLower(v.Get(k).String()), "coralogix") {
			return true
		}
	}
	return v.Has("application") || v.Has("subsystem")
}

// coralogixFields returns fields[] as a map, key → value (the first of a
// key wins), with the top-level members added where fields lacks them.
func coralogixFields(v Value) map[string]Value {
	out := map[string]Value{}
	for _, f := range v.Get("fields").Elements() {
		k := strings.TrimSpace(f.Get("key").String())
		if _, dup := out[k]; k != "" && !dup {
			out[k] = f.Get("value")
		}
	}
	for _, k := range v.Keys() {
		if _, ok := out[k]; !ok && k != "fields" {
			out[k] = v.Get(k)
		}
	}
	return out
}

// coralogixValue returns a value rendered: "" for an unrendered variable,
// a "null" and the test notification's "*insert … *" placeholders.
func coralogixValue(x Value) string {
	s := Rendered(x.String())
	if strings.HasPrefix(s, "*") && strings.HasSuffix(s, "*") && strings.Contains(strings.ToLower(s), "insert") {
		return ""
	}
	return s
}

// coralogixEnvWords are applications that name an environment.
var coralogixEnvWords = map[string]bool{"prod": true, "production": true, "prd": true, "staging": true, "stage": true, "stg": true,
	"dev": true, "development": true, "test": true, "qa": true}

func coralogixMap(v Value) ([]Event, error) {
	f := coralogixFields(v)
	get := func(keys ...string) (string, string) {
		for _, k := range keys {
			if s := coralogixValue(f[k]); s != "" {
				return s, k
			}
		}
		return "", ""
	}
	var e Event
	set := func(part string, keys ...string) bool {
		s, k := get(keys...)
		if k != "" && !v.Has(k) {
			k = "fields." + k
		}
		return e.Set(part, s, k)
	}
	set(PartTitle, "name", "alert_name")
	if !set(PartRule, "alert_id") {
		set(PartRule, "name", "alert_name")
	}
	if e.Title == "" {
		e.Set(PartTitle, e.Rule, "alert_id")
	}
	set(PartSeverity, "alert_severity", "priority", "severity")
	for _, key := range []string{"alertUniqueIdentifier", "uuid"} {
		s, k := get(key)
		if k != "" && !v.Has(k) {
			k = "fields." + k
		}
		if e.SetID(k, "cx-", "", s) {
			break
		}
	}
	e.Status = Status(v.Get("alert_action").String())

	app, _ := get("application", "applicationName")
	sub, _ := get("subsystem", "subsystemName")
	switch {
	case set(PartService, "service"):
	case sub != "":
		set(PartService, "subsystem", "subsystemName")
	default:
		set(PartService, "application", "applicationName")
	}
	if sub != "" && coralogixEnvWords[strings.ToLower(app)] {
		set(PartEnvironment, "application", "applicationName")
	}
	e.Label("application", app)
	e.Label("subsystem", sub)
	e.Host, _ = get("computer", "ipAddress")
	for _, k := range []string{"timestampISO", "timestampMs", "timestamp"} {
		if t := (Value{coralogixValue(f[k])}).Time(); !t.IsZero() {
			e.Timestamp = t
			break
		}
	}

	for _, k := range []string{"team", "priority", "category", "alert_type", "group_by_labels"} {
		s, _ := get(k)
		e.Label(k, s)
	}
	for _, l := range strings.Split(coralogixValue(f["metaLabels"]), ",") {
		if key, val, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			e.Label(strings.TrimSpace(key), val)
			if strings.EqualFold(strings.TrimSpace(key), "env") || strings.EqualFold(strings.TrimSpace(key), "environment") {
				if e.Environment == "" {
					e.Set(PartEnvironment, val, "fields.metaLabels")
				}
			}
		}
	}

	desc, _ := get("description", "alert_description")
	text, _ := get("text")
	pairs := [][2]string{{"log", text}}
	for _, k := range []string{"hitCount", "threshold", "timewindow", "queryText", "computer", "ipAddress", "duration", "errors",
		"alertGroupByValues", "Group-by Field1", "Group-by Value1", "Group-by Field2", "Group-by Value2", "metricKey", "actualRatio",
		"alert_url", "log_url"} {
		s, _ := get(k)
		pairs = append(pairs, [2]string{k, s})
	}
	e.Text = JoinText(desc, Evidence(pairs...))
	return []Event{e}, nil
}
