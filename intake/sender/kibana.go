package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// kibana reads Elastic/Kibana alerting rule actions sent through the Webhook
// connector. Kibana posts whatever body the rule's action templates with
// mustache variables, so the adapter recognises the shapes people and tools
// write:
//
//   - nested, mirroring Kibana's own variables: {"rule": {"id", "name",
//     "tags", "type", "spaceId", "url"}, "alert": {"id", "uuid",
//     "actionGroup", "actionGroupName", "flapping"}, "context": {"message",
//     "reason", "value", "threshold", "alertDetailsUrl", …}, "date",
//     "kibanaBaseUrl"}; it is Kibana's when alert.actionGroup(Name) is set,
//     or when rule and alert come with kibanaBaseUrl or rule.spaceId;
//   - Keep's current template {"webhook_body": {"rule_info", "alert_info",
//     "context_info"}}, each member the JSON of {{#rule}}{{.}}{{/rule}} and so
//     on, read as the nested shape;
//   - flat: Keep's former template (actionGroup, status, ruleId, name,
//     rule.spaceId, ruleUrl, ruleTags, contextTags, description, context.*,
//     lastReceived) and snake-case variants (rule_id, rule_name, alert_id,
//     action_group), recognised by an action group together with a rule id
//     or name.
//
// An Elastic Security detection alert (kibana.alert.* or signal.* fields) is
// never Kibana's here: the elastic-security mapping reads it.
//
// Rule is rule.id (the rule's saved-object id: the same on every firing and
// instance, different between rules), else rule.name, exactly as sent.
// The title is context.title, else the rule name, else the first line of
// context.message. The id is "kb-" + alert.uuid when Kibana (8.8+) sends it:
// that uuid names one active period of one alert, so a new firing gets a new
// one; otherwise "kb-" + rule + "/" + alert.id + "/" + date, one id per
// notification (with "on status change" notifications, one per firing). The
// ids name episodes. alert.id names the alert instance (a host, a group-by
// value) and becomes the host unless it is a rule-type constant such as
// "query matched".
//
// Kibana rules have no severity of their own. A severity field the template
// sets (severity, context.severity, rule.severity) wins and is read as the
// common words (critical, high, error, warning, medium, low, info); else the
// action group is the severity: a rule type's "fired", "threshold met",
// "query matched" and the other alerting groups are high, a "warning" group
// medium, SLO burn-rate groups by their own level (alert critical, high,
// medium, low), "recovered" and "nodata" info. The action group "recovered"
// (or alert.status "recovered", or actionGroupName "Recovered") is resolved;
// everything else is firing.
func kibana() Sender {
	return Sender{
		Name: "kibana", Display: "Elastic/Kibana rule action", Security: false, Episode: true,
		Match:    kibanaMatch,
		Map:      kibanaMap,
		Severity: kibanaSeverity,
		Levels: []string{"critical", "high", "error", "warning", "medium", "low", "info",
			"threshold met", "query matched", "metrics.threshold.fired", "metrics.threshold.warning",
			"metrics.inventory_threshold.fired", "metrics.inventory_threshold.warning", "logs.threshold.fired",
			"custom_threshold.fired", "xpack.uptime.alerts.actionGroups.monitorStatus", "xpack.synthetics.alerts.actionGroups.monitorStatus",
			"anomaly_score_match", "apm.error_rate", "apm.transaction_error_rate", "apm.transaction_duration", "apm.anomaly",
			"slo.burnRate.alert", "slo.burnRate.high", "slo.burnRate.medium", "slo.burnRate.low",
			"tracking containment", "recovered", "nodata"},
		Doc: Doc{
			Point: "a Webhook connector (POST, URL http://HOST:9555/api/v1/alerts/kibana) used as the rule's action, " +
				`body e.g. {"rule":{"id":"{{rule.id}}","name":"{{rule.name}}","tags":"{{rule.tags}}"},"alert":{"id":"{{alert.id}}","uuid":"{{alert.uuid}}","actionGroup":"{{alert.actionGroup}}"},"context":{"message":"{{context.message}}","reason":"{{context.reason}}"},"date":"{{date}}"}`,
			Auth:  "the connector's headers: Authorization: Bearer TOKEN",
			Title: "context.title, else rule.name, else the first line of context.message",
			Severity: "a templated severity field, else alert.actionGroup (fired/threshold met high, warning medium, " +
				"SLO burn rate by level, recovered info)",
			Service: "a rule or context tag service:NAME (or service=NAME), else a templated service field",
			Rule:    "rule.id, else rule.name",
			ID:      "alert.uuid (one per active period), else rule + alert.id + date",
			Source:  "Kibana's documented rule action variables and Keep's Kibana provider templates (keephq/keep, MIT)",
		},
	}
}

// kibanaMatch recognises a Kibana rule action body.
func kibanaMatch(v Value) bool {
	if mapped("elastic-security").Match(v) {
		return false
	}
	if wb := v.Get("webhook_body"); wb.IsObject() {
		return wb.Has("rule_info") && (wb.Has("alert_info") || wb.Has("context_info"))
	}
	rule, alert := v.Get("rule"), v.Get("alert")
	if rule.IsObject() && alert.IsObject() {
		if alert.Has("actionGroup") || alert.Has("actionGroupName") {
			return rule.Has("id") || rule.Has("name")
		}
		return (v.Has("kibanaBaseUrl") || rule.Has("spaceId")) && (rule.Has("id") || rule.Has("name"))
	}
	// Flat templates: an action group with a rule id or name.
	group, _ := v.First("actionGroup", "action_group", "alert.actionGroup")
	if group == "" {
		return false
	}
	r, _ := v.First("ruleId", "rule_id", "rule.id", "rule_name", "ruleName", "rule.name")
	return r != ""
}

// kibanaView is a Kibana body read into the nested shape: the rule, alert
// and context objects as Values, and the top-level body for the rest.
type kibanaView struct {
	body, rule, alert, context Value
	// flat is set for a flat template: fields are read from body by their
	// flat names.
	flat bool
}

func kibanaOpen(v Value) kibanaView {
	if wb := v.Get("webhook_body"); wb.IsObject() {
		return kibanaView{body: v, rule: kibanaJSON(wb.Get("rule_info")), alert: kibanaJSON(wb.Get("alert_info")), context: kibanaJSON(wb.Get("context_info"))}
	}
	if v.Get("rule").IsObject() && v.Get("alert").IsObject() {
		return kibanaView{body: v, rule: v.Get("rule"), alert: v.Get("alert"), context: v.Get("context")}
	}
	return kibanaView{body: v, flat: true}
}

// kibanaJSON reads a member that holds an object, or a JSON string of one
// (Kibana renders {{.}} of an object as its JSON).
func kibanaJSON(v Value) Value {
	if v.IsObject() {
		return v
	}
	s := strings.TrimSpace(v.String())
	if !strings.HasPrefix(s, "{") {
		return Value{}
	}
	inner, err := Parse([]byte(s))
	if err != nil || !inner.IsObject() {
		return Value{}
	}
	return inner
}

// pick returns the first non-blank rendered value among nested (object,
// path) pairs or flat body paths, and the field it came from.
func (k kibanaView) pick(nested [][2]string, flat ...string) (string, string) {
	if !k.flat {
		for _, p := range nested {
			var obj Value
			switch p[0] {
			case "rule":
				obj = k.rule
			case "alert":
				obj = k.alert
			case "context":
				obj = k.context
			default:
				obj = k.body
			}
			if s := Rendered(obj.Path(p[1]).String()); s != "" {
				if p[0] == "" {
					return s, p[1]
				}
				return s, p[0] + "." + p[1]
			}
		}
		return "", ""
	}
	for _, f := range flat {
		if s := Rendered(k.body.Path(f).String()); s != "" {
			return s, f
		}
	}
	return "", ""
}

// kibanaTags returns the rule's and the context's tags: an array, or the
// comma-separated text {{rule.tags}} renders to.
func kibanaTags(k kibanaView) []string {
	var raw []Value
	if k.flat {
		raw = []Value{k.body.Get("ruleTags"), k.body.Get("rule_tags"), k.body.Path("rule.tags"), k.body.Get("contextTags"), k.body.Path("context.tags"), k.body.Get("tags")}
	} else {
		raw = []Value{k.rule.Get("tags"), k.context.Get("tags"), k.body.Get("tags")}
	}
	var out []string
	for _, r := range raw {
		if r.IsArray() {
			out = append(out, r.Strings()...)
			continue
		}
		s := strings.Trim(strings.TrimSpace(r.String()), "[]")
		for _, t := range strings.Split(s, ",") {
			if t = strings.Trim(strings.TrimSpace(t), `"`); Rendered(t) != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// kibanaTagValue returns the value of a key:value or key=value tag.
func kibanaTagValue(tags []string, keys ...string) string {
	for _, k := range keys {
		for _, t := range tags {
			for _, sep := range []string{":", "="} {
				if name, val, ok := strings.Cut(t, sep); ok && strings.EqualFold(strings.TrimSpace(name), k) {
					if val = strings.TrimSpace(val); val != "" {
						return val
					}
				}
			}
		}
	}
	return ""
}

// kibanaInstanceConstants are alert ids that rule types use for their one
// alert: they name no instance.
var kibanaInstanceConstants = map[string]bool{"query matched": true, "threshold met": true, "all documents": true, "*": true}

func kibanaMap(v Value) ([]Event, error) {
	k := kibanaOpen(v)
	var e Event

	ruleID, ruleIDField := k.pick([][2]string{{"rule", "id"}, {"", "ruleId"}, {"", "rule_id"}}, "ruleId", "rule_id", "rule.id")
	ruleName, ruleNameField := k.pick([][2]string{{"rule", "name"}, {"", "rule_name"}, {"", "ruleName"}}, "name", "rule_name", "ruleName", "rule.name")
	if !e.Set(PartRule, ruleID, ruleIDField) {
		e.Set(PartRule, ruleName, ruleNameField)
	}

	message, _ := k.pick([][2]string{{"context", "message"}, {"", "message"}}, "context.message", "message")
	reason, _ := k.pick([][2]string{{"context", "reason"}, {"", "reason"}, {"", "description"}}, "description", "context.reason", "reason")
	if title, f := k.pick([][2]string{{"context", "title"}, {"", "title"}}, "context.title", "title"); !e.Set(PartTitle, title, f) {
		if !e.Set(PartTitle, ruleName, ruleNameField) {
			e.Set(PartTitle, firstLineOf(message), "context.message")
		}
	}

	group, groupField := k.pick([][2]string{{"alert", "actionGroup"}, {"", "actionGroup"}, {"", "action_group"}}, "actionGroup", "action_group", "alert.actionGroup")
	groupName, _ := k.pick([][2]string{{"alert", "actionGroupName"}, {"", "actionGroupName"}}, "status", "actionGroupName", "action_group_name", "alert.actionGroupName")
	if sev, f := k.pick([][2]string{{"", "severity"}, {"context", "severity"}, {"rule", "severity"}}, "severity", "context.severity", "rule.severity"); !e.Set(PartSeverity, sev, f) {
		e.Set(PartSeverity, group, groupField)
	}
	alertStatus, _ := k.pick([][2]string{{"alert", "status"}, {"", "status"}}, "alert.status", "alert_status")
	switch {
	case FoldLevel(group) == "recovered", FoldLevel(groupName) == "recovered", FoldLevel(alertStatus) == "recovered":
		e.Status = openrecall.StatusResolved
	default:
		e.Status = openrecall.StatusFiring
	}

	tags := kibanaTags(k)
	if svc := kibanaTagValue(tags, "service", "service.name", "app"); svc != "" {
		e.Set(PartService, svc, "rule.tags")
	} else if svc, f := k.pick([][2]string{{"", "service"}, {"context", "service"}, {"context", "service.name"}}, "service", "context.service"); svc != "" {
		e.Set(PartService, svc, f)
	}
	if env := kibanaTagValue(tags, "env", "environment"); env != "" {
		e.Set(PartEnvironment, env, "rule.tags")
	} else if env, f := k.pick([][2]string{{"", "environment"}, {"context", "environment"}}, "environment", "context.environment"); env != "" {
		e.Set(PartEnvironment, env, f)
	}
	if len(tags) > 0 {
		e.Label("tags", strings.Join(tags, ","))
	}

	instance, _ := k.pick([][2]string{{"alert", "id"}, {"", "alert_id"}}, "id", "alert_id", "alert.id")
	if host, _ := k.pick([][2]string{{"context", "host.name"}, {"context", "hostname"}, {"", "host"}}, "context.host.name", "context.hostname", "host"); host != "" && !strings.HasPrefix(host, "{") {
		e.Host = host
	} else if instance != "" && !kibanaInstanceConstants[strings.ToLower(instance)] {
		e.Host = instance
	}

	date, _ := k.pick([][2]string{{"", "date"}, {"context", "timestamp"}}, "lastReceived", "date", "context.timestamp")
	e.Timestamp = Value{date}.Time()
	if uuid, f := k.pick([][2]string{{"alert", "uuid"}, {"", "alert_uuid"}}, "alert_uuid", "alert.uuid", "fingerprint_uuid"); !e.SetID(f, "kb-", "", uuid) {
		e.SetID("rule.id+alert.id+date", "kb-", "/", e.Rule, instance, date)
	}

	ruleType, _ := k.pick([][2]string{{"rule", "type"}, {"rule", "ruleTypeId"}}, "rule.type", "rule_type")
	space, _ := k.pick([][2]string{{"rule", "spaceId"}}, "rule.spaceId", "space_id")
	e.Label("rule_type", ruleType)
	e.Label("space", space)
	e.Label("action_group", group)
	if e.Rule == ruleID && ruleName != "" {
		e.Label("rule_name", ruleName)
	}

	value, _ := k.pick([][2]string{{"context", "value"}, {"", "value"}}, "context.value", "value")
	threshold, _ := k.pick([][2]string{{"context", "threshold"}}, "context.threshold", "threshold")
	conditions, _ := k.pick([][2]string{{"context", "conditions"}}, "context.conditions")
	hits, _ := k.pick([][2]string{{"context", "hits"}, {"context", "matchingDocuments"}}, "context.hits")
	group2, _ := k.pick([][2]string{{"context", "group"}}, "context.group")
	link, _ := k.pick([][2]string{{"context", "alertDetailsUrl"}, {"context", "viewInAppUrl"}, {"context", "link"}, {"rule", "url"}}, "url", "ruleUrl", "context.alertDetailsUrl", "context.link")
	e.Link(openrecall.LinkSource, link)
	text := message
	if reason != "" && reason != message {
		text = JoinText(message, reason)
	}
	e.Text = JoinText(text, Evidence(
		[2]string{"value", value}, [2]string{"threshold", threshold}, [2]string{"conditions", conditions},
		[2]string{"matching documents", hits}, [2]string{"group", group2}, [2]string{"alert", instance},
		[2]string{"action group", groupName}, [2]string{"url", link},
	))
	return []Event{e}, nil
}

// kibanaScale maps the action groups of Kibana's rule types, and the
// severity words a template may set, to severities.
var kibanaScale = Scale{
	"critical": openrecall.SeverityCritical, "high": openrecall.SeverityHigh, "error": openrecall.SeverityHigh,
	"warning": openrecall.SeverityMedium, "warn": openrecall.SeverityMedium, "medium": openrecall.SeverityMedium,
	"low": openrecall.SeverityLow, "info": openrecall.SeverityInfo,
	"thresholdmet": openrecall.SeverityHigh, "querymatched": openrecall.SeverityHigh,
	"anomalyscorematch": openrecall.SeverityHigh, "trackingcontainment": openrecall.SeverityMedium,
	"slo.burnrate.alert": openrecall.SeverityCritical, "slo.burnrate.high": openrecall.SeverityHigh,
	"slo.burnrate.medium": openrecall.SeverityMedium, "slo.burnrate.low": openrecall.SeverityLow,
	"recovered": openrecall.SeverityInfo, "nodata": openrecall.SeverityInfo,
}

// kibanaSeverity maps a Kibana action group or templated severity: first
// the whole value, then its last dotted part (metrics.threshold.fired is
// fired), where fired, monitorStatus and the APM groups are high.
func kibanaSeverity(raw string) openrecall.Severity {
	if s := kibanaScale.Map(raw); s != openrecall.SeverityUnknown {
		return s
	}
	f := FoldLevel(raw)
	last := f
	if i := strings.LastIndexByte(f, '.'); i >= 0 {
		last = f[i+1:]
	}
	switch {
	case last == "fired", last == "monitorstatus", strings.HasPrefix(f, "apm."):
		return openrecall.SeverityHigh
	}
	return kibanaScale.Map(last)
}
