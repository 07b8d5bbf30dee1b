package sender

import (
	"sort"
	"strings"

	"github.com/openrecall/openrecall"
)

// newRelic reads New Relic alert webhooks in both of their shapes.
//
// The workflow webhook (New Relic's current alerts): its default payload
// template sends id (the issue id), issueUrl, title, priority, impactedEntities,
// totalIncidents, state, trigger, isCorrelated, createdAt, updatedAt, sources,
// alertPolicyNames, alertConditionNames and workflowName; templates that use
// the variables by their own names send issueId, conditionName, policyName,
// accumulations{conditionName[], policyName[], tag.*}, entitiesData{names,
// types}, and so on. Both are read.
//
// The legacy notification channel: incident_id, condition_id,
// condition_name, policy_name, severity, current_state, details, targets[{
// name, labels, product, type}], timestamp, incident_url.
//
// The rule is the alert condition exactly as sent: alertConditionNames (or
// accumulations.conditionName, conditionName, condition_name; several
// correlated conditions are joined with ", "), else the condition id. The
// title quotes the condition ("… on 'High CPU'"), but the title is never the
// rule: two conditions on one entity ("High CPU" and "Low Storage") are two
// alerts, and the same condition on another entity is one.
//
// The entity (impactedEntities, entitiesData.names, targets[].name) is the
// host the alert fired on, not part of the identity — unless New Relic says
// it is an application (entitiesData.types APPLICATION or SERVICE, a target
// of type Application or product APM/Browser/Mobile): then it is the
// service. A service or app tag (accumulations.tag.service, targets'
// labels.service) names the service first.
//
// Severity: the workflow's priority CRITICAL, HIGH, MEDIUM, LOW (critical,
// high, medium, low); the legacy channel's severity CRITICAL, WARNING, INFO
// (critical, medium, info).
//
// Status: state ACTIVATED and CREATED are firing, ACKNOWLEDGED acknowledged,
// CLOSED and DEACTIVATED resolved; the legacy current_state open, acknowledged,
// closed likewise.
//
// The id is "nr-" and the issue id (or the legacy incident id): one issue or
// incident is one firing episode, and its acknowledgement and closing carry
// the same id (Episode).
func newRelic() Sender {
	scale := Scale{
		"critical": openrecall.SeverityCritical,
		"high":     openrecall.SeverityHigh,
		"medium":   openrecall.SeverityMedium,
		"warning":  openrecall.SeverityMedium,
		"low":      openrecall.SeverityLow,
		"info":     openrecall.SeverityInfo,
	}
	return Sender{
		Name: "newrelic", Display: "New Relic", Episode: true,
		Match: newRelicMatch,
		Map: func(v Value) ([]Event, error) {
			var e Event
			first := func(paths ...string) (string, string) { return newRelicFirst(v, paths...) }

			if !e.Set(PartTitle, Rendered(v.Get("title").String()), "title") {
				if t, f := first("annotations.title", "details", "condition_name", "conditionName"); t != "" {
					e.Set(PartTitle, t, f)
				}
			}

			conditions, cf := newRelicList(v, "alertConditionNames", "accumulations.conditionName", "conditionName", "condition_name", "annotations.conditionName")
			if len(conditions) > 0 {
				e.Set(PartRule, strings.Join(conditions, ", "), cf)
			} else if id, f := first("conditionId", "condition_id", "accumulations.conditionId", "conditionFamilyId", "condition_family_id"); id != "" {
				e.Set(PartRule, id, f)
			}
			policies, _ := newRelicList(v, "alertPolicyNames", "accumulations.policyName", "policyName", "policy_name")
			e.Label("policy", strings.Join(policies, ", "))

			if p, f := first("priority", "severity"); p != "" {
				e.Set(PartSeverity, p, f)
			}

			state, _ := first("state", "current_state", "status")
			switch FoldLevel(state) {
			case "deactivated":
				e.Status = openrecall.StatusResolved
			default:
				e.Status = Status(state)
			}

			id, f := first("issueId", "id", "incident_id", "incidentId")
			e.SetID(f, "nr-", "", id)
			for _, k := range []string{"updatedAt", "createdAt", "timestamp", "activatedAt"} {
				if t := v.Get(k).Time(); !t.IsZero() {
					e.Timestamp = t
					break
				}
			}

			entities, ef := newRelicList(v, "impactedEntities", "entitiesData.names", "entityNames", "targets.name")
			if len(entities) == 0 {
				for _, t := range v.Get("targets").Elements() {
					if n := Rendered(t.Get("name").String()); n != "" {
						entities, ef = append(entities, n), "targets.name"
					}
				}
			}
			entity := strings.Join(entities, ", ")
			labels := newRelicTargetLabels(v)
			for k, val := range labels {
				e.Label(k, val)
			}
			tag := func(keys ...string) (string, string) {
				for _, k := range keys {
					if s, f := first("accumulations.tag."+k, "tag."+k, "tags."+k); s != "" {
						return s, f
					}
					if s := labels[k]; s != "" {
						return s, "targets.labels." + k
					}
				}
				return "", ""
			}
			if s, f := tag("service", "service.name", "serviceName", "appName", "app"); s != "" {
				e.Set(PartService, s, f)
			} else if s, f := first("service", "serviceName"); s != "" {
				e.Set(PartService, s, f)
			} else if entity != "" && newRelicApplication(v) {
				e.Set(PartService, entity, ef)
			}
			if entity != "" && e.Service != entity {
				e.Host = entity
			}
			if s, f := tag("env", "environment", "deployment.environment"); s != "" {
				e.Set(PartEnvironment, s, f)
			}

			trigger, _ := first("trigger", "triggerEvent", "event_type")
			workflow, _ := first("workflowName")
			url, _ := first("issueUrl", "issuePageUrl", "incident_url")
			account, _ := first("account_name", "accountName")
			e.Label("trigger", trigger)
			e.Label("workflow", workflow)
			e.Link(openrecall.LinkSource, url)
			details, _ := first("details", "description", "annotations.description")
			if details == e.Title {
				details = ""
			}
			e.Text = JoinText(details, Evidence(
				[2]string{"condition", strings.Join(conditions, ", ")},
				[2]string{"policy", strings.Join(policies, ", ")},
				[2]string{"entity", entity},
				[2]string{"state", state},
				[2]string{"trigger", trigger},
				[2]string{"total incidents", v.Get("totalIncidents").String()},
				[2]string{"account", account},
				[2]string{"url", url},
			))
			return []Event{e}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"CRITICAL", "HIGH", "MEDIUM", "LOW", "WARNING", "INFO"},
		Doc: Doc{
			Point:    "Alerts → Destinations: a Webhook destination with endpoint URL http://HOST:9555/api/v1/alerts/newrelic, used by a workflow's webhook channel (the default payload template)",
			Auth:     "the destination's Authorization: Bearer TOKEN (or a custom header)",
			Title:    "title (legacy: details)",
			Severity: "priority CRITICAL/HIGH/MEDIUM/LOW (legacy: severity CRITICAL/WARNING/INFO)",
			Service:  "a service or appName tag, else the entity when New Relic says it is an application; a host entity is the host",
			Rule:     "alertConditionNames / accumulations.conditionName (legacy: condition_name), else the condition id",
			ID:       "nr- + the issue id (legacy: incident_id), one issue one episode",
			Source:   "zulip/zulip zerver/webhooks/newrelic fixtures (Apache-2.0), alerta/alerta tests (Apache-2.0), written for openrecall",
		},
	}
}

// newRelicMatch recognises a New Relic webhook by two of its own keys: the
// workflow's issueUrl (or issuePageUrl), alertConditionNames,
// alertPolicyNames, impactedEntities, totalIncidents, issueId, accumulations
// or entitiesData; the legacy channel's incident_id, condition_name,
// policy_name, incident_url, incident_acknowledge_url, violation_callback_url,
// condition_family_id; a newrelic.com link counts once.
func newRelicMatch(v Value) bool {
	if !v.IsObject() {
		return false
	}
	n := 0
	for _, k := range []string{"issueUrl", "issuePageUrl", "alertConditionNames", "alertPolicyNames", "impactedEntities", "totalIncidents", "issueId",
		"incident_id", "condition_name", "policy_name", "incident_url", "incident_acknowledge_url", "violation_callback_url", "condition_family_id", "policy_url"} {
		if v.Has(k) {
			n++
		}
	}
	if acc := v.Get("accumulations"); acc.Has("conditionName") || acc.Has("policyName") {
		n++
	}
	if v.Get("entitiesData").Has("names") {
		n++
	}
	for _, k := range []string{"issueUrl", "issuePageUrl", "incident_url", "policy_url"} {
		if strings.Contains(v.Get(k).String(), "newrelic.com") {
			n++
			break
		}
	}
	return n >= 2
}

// newRelicFirst is First with unrendered template placeholders read as
// absent, and a one-element array read as its element (New Relic's
// templates send {{ json annotations.title.[0] }} or the whole array).
func newRelicFirst(v Value, paths ...string) (string, string) {
	for _, p := range paths {
		x := v.Path(p)
		s := x.String()
		if x.IsArray() {
			s = strings.Join(x.Strings(), ", ")
		}
		if s = Rendered(s); s != "" {
			return s, p
		}
	}
	return "", ""
}

// newRelicList returns the first of the paths that holds a string or an
// array of strings, its distinct non-blank values in order, and the path.
func newRelicList(v Value, paths ...string) ([]string, string) {
	for _, p := range paths {
		var out []string
		seen := map[string]bool{}
		for _, s := range v.Path(p).Strings() {
			if s = Rendered(s); s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out, p
		}
	}
	return nil, ""
}

// newRelicApplication reports whether New Relic names the alert's entity as
// an application (its service) rather than a host.
func newRelicApplication(v Value) bool {
	for _, t := range v.Path("entitiesData.types").Strings() {
		switch FoldLevel(t) {
		case "application", "service", "apmapplicationentity", "apmapplication":
			return true
		}
	}
	for _, t := range v.Get("targets").Elements() {
		switch FoldLevel(t.Get("type").String()) {
		case "application", "service":
			return true
		}
		switch FoldLevel(t.Get("product").String()) {
		case "apm", "browser", "mobile":
			return true
		}
	}
	return false
}

// newRelicTargetLabels returns the labels of the legacy payload's targets
// (the first target's value wins), their product and type.
func newRelicTargetLabels(v Value) map[string]string {
	out := map[string]string{}
	for _, t := range v.Get("targets").Elements() {
		labels := t.Get("labels").Labels()
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := out[k]; !ok {
				out[k] = labels[k]
			}
		}
		for _, k := range []string{"product", "type"} {
			if s := t.Get(k).String(); s != "" && out["target_"+k] == "" {
				out["target_"+k] = s
			}
		}
	}
	return out
}
