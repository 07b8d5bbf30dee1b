package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// checkly is the Checkly adapter: a Checkly webhook alert channel. Checkly
// posts whatever body the channel's Handlebars template renders; the
// adapter reads the default JSON template Checkly's integrations document
// (snake_case keys: event, alert_type, check_name, group_name, check_id,
// check_type, check_result_id, check_error_message, response_time,
// api_check_response_status_code, run_location, started_at, tags, link,
// region, uuid), and the same variables written as keys under their own
// names (ALERT_TITLE, ALERT_TYPE, CHECK_NAME, CHECK_ID, RESULT_LINK, …) or in
// camelCase (alertType, checkId, as Checkly's check-alerts API writes them).
//
// The rule is the check's UUID (check_id) exactly as sent, else its name:
// it is the same for every run location and run, and differs between
// checks. The title is the alert title Checkly shows ("Check 'Payment API'
// has failed"), else the check name. The id is "checkly-" +
// check_result_id, the result that triggered the message: a new failure is
// a new result, so the id names one firing (Episode); a reminder is a new
// result too. Without a result id the check id and the run's start time
// make the id.
//
// Severity is read from the alert type, Checkly's only scale:
// ALERT_FAILURE, ALERT_FAILURE_REMAIN (the reminder of a failure) and
// ALERT_DEGRADED_FAILURE (a degraded check that then failed) are high;
// ALERT_DEGRADED, ALERT_DEGRADED_REMAIN and ALERT_FAILURE_DEGRADED (a failed
// check that improved to degraded) are medium, as is ALERT_SSL (a
// certificate about to expire); ALERT_RECOVERY, ALERT_DEGRADED_RECOVERY and
// NO_ALERT are info, and their status is resolved. Every other type is
// firing.
//
// The service is a "service:" tag, else the check's group name; the
// environment an "env:" or "environment:" tag. The run location is kept as
// a label, never as the host: it says where Checkly ran from, not what
// failed.
func checkly() Sender {
	scale := Scale{
		"alertfailure": openrecall.SeverityHigh, "alertfailureremain": openrecall.SeverityHigh, "alertdegradedfailure": openrecall.SeverityHigh,
		"alertdegraded": openrecall.SeverityMedium, "alertdegradedremain": openrecall.SeverityMedium, "alertfailuredegraded": openrecall.SeverityMedium,
		"alertssl":      openrecall.SeverityMedium,
		"alertrecovery": openrecall.SeverityInfo, "alertdegradedrecovery": openrecall.SeverityInfo, "noalert": openrecall.SeverityInfo,
	}
	return Sender{
		Name: "checkly", Display: "Checkly", Security: false, Episode: true,
		Match: func(v Value) bool {
			t, _ := checklyField(v, "alert_type")
			if _, ok := scale[FoldLevel(t)]; !ok {
				return false
			}
			id, _ := checklyField(v, "check_id")
			name, _ := checklyField(v, "check_name")
			result, _ := checklyField(v, "check_result_id")
			return (id != "" || name != "") && (result != "" || v.Has("check_type") || v.Has("CHECK_TYPE") || v.Has("checkType"))
		},
		Map:      checklyMap,
		Severity: scale.Map,
		Levels: []string{"ALERT_FAILURE", "ALERT_FAILURE_REMAIN", "ALERT_DEGRADED_FAILURE", "ALERT_DEGRADED", "ALERT_DEGRADED_REMAIN",
			"ALERT_FAILURE_DEGRADED", "ALERT_SSL", "ALERT_RECOVERY", "ALERT_DEGRADED_RECOVERY", "NO_ALERT"},
		Doc: Doc{
			Point:    "Alert settings > Add channel > Webhook: POST to http://HOST:9555/api/v1/alerts/checkly with Checkly's default JSON body",
			Auth:     "a request header Authorization: Bearer TOKEN (Headers tab)",
			Title:    "event (ALERT_TITLE), else check_name",
			Severity: "alert_type (ALERT_FAILURE high, ALERT_DEGRADED medium, ALERT_RECOVERY resolved)",
			Service:  "a service: tag, else group_name",
			Rule:     "check_id (CHECK_ID), else check_name",
			ID:       "check_result_id (one result per firing)",
			Source:   "Checkly's default webhook JSON template as Keep's Checkly provider documents it (keephq/keep, MIT); the other payloads written for openrecall",
		},
	}
}

// checklyField returns the first non-blank, rendered value of a Checkly
// variable, given by its snake_case key ("check_id"), read under that key,
// under the variable's own name ("CHECK_ID") or in camelCase ("checkId"),
// and the key it was read from.
func checklyField(v Value, snake string) (string, string) {
	keys := []string{snake, strings.ToUpper(snake), checklyCamel(snake)}
	switch snake {
	case "event":
		keys = append(keys, "ALERT_TITLE", "alert_title", "title", "name")
	case "link":
		keys = append(keys, "RESULT_LINK", "result_link")
	}
	for _, k := range keys {
		if s := Rendered(v.Get(k).String()); s != "" {
			return s, k
		}
	}
	return "", ""
}

// checklyCamel writes a snake_case key in camelCase.
func checklyCamel(snake string) string {
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// checklyTags reads the rendered tags: an array, or the comma-separated
// text Handlebars renders an array as.
func checklyTags(v Value) []string {
	for _, k := range []string{"tags", "TAGS"} {
		t := v.Get(k)
		if t.IsArray() {
			return t.Strings()
		}
		if s := Rendered(t.String()); s != "" {
			var out []string
			for _, p := range strings.Split(strings.Trim(s, "[]"), ",") {
				if p = strings.Trim(strings.TrimSpace(p), `"'`); p != "" {
					out = append(out, p)
				}
			}
			return out
		}
	}
	return nil
}

func checklyMap(v Value) ([]Event, error) {
	var e Event
	get := func(snake string) string { s, _ := checklyField(v, snake); return s }
	set := func(part, snake string) bool {
		s, k := checklyField(v, snake)
		return e.Set(part, s, k)
	}
	if !set(PartTitle, "event") {
		set(PartTitle, "check_name")
	}
	if !set(PartRule, "check_id") {
		set(PartRule, "check_name")
	}
	set(PartSeverity, "alert_type")
	if result, k := checklyField(v, "check_result_id"); !e.SetID(k, "checkly-", "", result) {
		e.SetID("check_id+started_at", "checkly-", "-", get("check_id"), get("started_at"))
	}
	e.Status = openrecall.StatusFiring
	switch FoldLevel(e.Severity) {
	case "alertrecovery", "alertdegradedrecovery", "noalert":
		e.Status = openrecall.StatusResolved
	}
	if s, k := checklyField(v, "started_at"); s != "" {
		e.Timestamp = v.Get(k).Time()
	}
	tags := checklyTags(v)
	e.Tags(tags, "tags")
	if e.Service == "" {
		set(PartService, "group_name")
	}
	e.Label("tags", strings.Join(tags, ","))
	for _, f := range [][2]string{{"check_name", "check_name"}, {"check_type", "check_type"}, {"group_name", "group_name"},
		{"run_location", "run_location"}, {"region", "region"}, {"alert_type", "alert_type"}} {
		e.Label(f[0], get(f[1]))
	}
	e.Text = JoinText(get("check_error_message"), Evidence(
		[2]string{"check", get("check_name")},
		[2]string{"check type", get("check_type")},
		[2]string{"alert type", get("alert_type")},
		[2]string{"status code", strings.TrimSpace(get("api_check_response_status_code") + " " + get("api_check_response_status_text"))},
		[2]string{"response time (ms)", get("response_time")},
		[2]string{"run location", get("run_location")},
		[2]string{"ssl days remaining", get("ssl_days_remaining")},
		[2]string{"ssl domain", get("ssl_check_domain")},
		[2]string{"started at", get("started_at")},
		[2]string{"result", get("link")},
	))
	return []Event{e}, nil
}
