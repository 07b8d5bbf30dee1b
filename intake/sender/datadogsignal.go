package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// datadogSignal reads Datadog Security Signals (Cloud SIEM, Workload
// Protection, App and API Protection) as the Security Monitoring API
// returns them (GET /api/v2/security_monitoring/signals/{id} and the list
// and search endpoints: {"data": signal | [signal, …]}) and as a workflow
// or script forwarding them posts one signal: {"id", "type": "signal",
// "attributes": {"message", "tags", "timestamp", and the signal's own
// attributes — under "custom" in the current API model, "attributes" in
// earlier clients, both read}}. Each signal is one event.
//
// The rule is the detection rule's id exactly as sent
// (workflow.rule.id), else its name; the title is the signal's title, else
// the rule's name. The id is "dds-" + the signal's id: its triage updates
// keep it (Episode). The service is a service attribute or a "service:" tag;
// the host a host attribute or tag.
//
// Severity is the rule case's status, Datadog's signal severity: info,
// low, medium, high, critical. A signal whose triage state
// (workflow.triage.state) is archived is resolved; under_review is
// acknowledged; open is firing.
//
// Entities: user (usr.id, usr.name, a user attribute, else a
// cloudtrail userIdentity's arn), process (process.name), command
// (process.args or a "command" attribute). Tags tactic:TA…-name and
// technique:T…-name (Datadog's ATT&CK tags) are the labels tactic and
// technique.
func datadogSignal() Sender {
	scale := Scale{"info": openrecall.SeverityInfo, "low": openrecall.SeverityLow, "medium": openrecall.SeverityMedium,
		"high": openrecall.SeverityHigh, "critical": openrecall.SeverityCritical}
	return Sender{
		Name: "datadog-signal", Display: "Datadog Security Signals", Security: true, Episode: true,
		Match: func(v Value) bool {
			d := v.Get("data")
			return ddSignal(v) || ddSignal(d) || (d.IsArray() && d.Len() > 0 && ddSignal(d.At(0)))
		},
		Map: func(v Value) ([]Event, error) {
			var out []Event
			switch d := v.Get("data"); {
			case ddSignal(v):
				out = append(out, ddSignalEvent(v, ""))
			case ddSignal(d):
				out = append(out, ddSignalEvent(d, "data."))
			default:
				for _, s := range d.Elements() {
					if ddSignal(s) {
						out = append(out, ddSignalEvent(s, "data[]."))
					}
				}
			}
			return out, nil
		},
		Severity: scale.Map,
		Levels:   []string{"info", "low", "medium", "high", "critical"},
		Doc: Doc{
			Point:    "a Datadog Workflow Automation (security signal trigger) or script POSTing the signal (GET /api/v2/security_monitoring/signals/{id}) to http://HOST:9555/api/v1/alerts/datadog-signal",
			Auth:     "Authorization: Bearer TOKEN on the POST",
			Title:    "attributes.custom.title (or attributes.attributes.title), else the rule's name",
			Severity: "the signal's status (info, low, medium, high, critical)",
			Service:  "a service attribute, else a service: tag",
			Rule:     "workflow.rule.id, else workflow.rule.name",
			ID:       "id (the signal's id)",
			Source:   "Datadog API reference, Security Monitoring signals and rule cases (docs.datadoghq.com), and the datadog-api-client model SecurityMonitoringSignalAttributes (Apache-2.0); signals written for openrecall in that shape",
		},
	}
}

// ddSignalAttrs returns a signal's own attributes: attributes.custom, else
// attributes.attributes.
func ddSignalAttrs(s Value) (Value, string) {
	if c := s.Path("attributes.custom"); c.IsObject() {
		return c, "attributes.custom."
	}
	return s.Path("attributes.attributes"), "attributes.attributes."
}

// ddSignal reports whether v is a Datadog security signal.
func ddSignal(v Value) bool {
	if v.Get("type").String() != "signal" || v.Get("id").String() == "" || !v.Get("attributes").IsObject() {
		return false
	}
	a, _ := ddSignalAttrs(v)
	return a.Path("workflow.rule").IsObject()
}

func ddSignalEvent(s Value, prefix string) Event {
	var e Event
	a, ap := ddSignalAttrs(s)
	ap = prefix + ap
	rule := a.Path("workflow.rule")
	if !e.Set(PartRule, rule.Get("id").String(), ap+"workflow.rule.id") {
		e.Set(PartRule, rule.Get("name").String(), ap+"workflow.rule.name")
	}
	if !e.Set(PartTitle, a.Get("title").String(), ap+"title") {
		e.Set(PartTitle, rule.Get("name").String(), ap+"workflow.rule.name")
	}
	if !e.Set(PartSeverity, a.Get("status").String(), ap+"status") {
		e.Set(PartSeverity, a.Get("severity").String(), ap+"severity")
	}
	e.SetID(prefix+"id", "dds-", "", s.Get("id").String())
	switch FoldLevel(a.Path("workflow.triage.state").String()) {
	case "archived":
		e.Status = openrecall.StatusResolved
	case "underreview":
		e.Status = openrecall.StatusAcknowledged
	default:
		e.Status = openrecall.StatusFiring
	}
	e.Timestamp = s.Path("attributes.timestamp").Time()
	tags := s.Path("attributes.tags").Strings()
	if !e.Set(PartService, firstString(a.Get("service")), ap+"service") {
		e.Tags(tags, prefix+"attributes.tags")
	}
	e.Host = firstString(a.Get("host"))
	var tactics, techniques []string
	for _, t := range tags {
		k, val, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		switch k {
		case "tactic":
			tactics = append(tactics, val)
		case "technique":
			techniques = append(techniques, val)
		case "host":
			if e.Host == "" {
				e.Host = val
			}
		case "source":
			e.Label("log_source", val)
		}
	}
	user, _ := a.First("usr.id", "usr.name", "user", "userIdentity.arn")
	e.Entity("user", user)
	e.Entity("process", a.Path("process.name").String())
	cmd := strings.Join(a.Path("process.args").Strings(), " ")
	if cmd == "" {
		cmd = a.Get("command").String()
	}
	e.Entity("command", cmd)
	e.Label("tactic", strings.Join(tactics, ","))
	e.Label("technique", strings.Join(techniques, ","))
	e.Label("rule_name", rule.Get("name").String())
	e.Label("rule_type", rule.Get("type").String())
	e.Label("triage_state", a.Path("workflow.triage.state").String())
	e.Label("tags", strings.Join(tags, ","))
	e.Text = JoinText(s.Path("attributes.message").String(), Evidence(
		[2]string{"rule", rule.Get("name").String()},
		[2]string{"rule id", rule.Get("id").String()},
		[2]string{"severity", a.Get("status").String()},
		[2]string{"triage", a.Path("workflow.triage.state").String()},
		[2]string{"tactic", strings.Join(tactics, ", ")},
		[2]string{"technique", strings.Join(techniques, ", ")},
		[2]string{"user", user},
		[2]string{"host", e.Host},
		[2]string{"process", a.Path("process.name").String()},
		[2]string{"command", cmd},
		[2]string{"network client", a.Path("network.client.ip").String()},
	))
	return e
}

// firstString returns a string, or an array's first string.
func firstString(v Value) string {
	if v.IsArray() {
		return v.At(0).String()
	}
	return v.String()
}
