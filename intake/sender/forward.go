package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// Forwarded reads the labels of an Alertmanager (or Grafana, Prometheus)
// alert that a security sender's own Alertmanager output wrote: it returns
// that sender and the event its labels carry — the service, environment,
// severity (of the sender's scale) and entity fields the sender's own
// adapter reads from the same event — and whether the labels are such an
// alert (DESIGN §3, §6b: exceptions match on entities, so they must be the
// same on every path an event takes).
//
// Only a documented forwarder is recognised: falcosidekick's Alertmanager
// output (labels source=falco, rule, alertname, eventsource, priority and
// one label per output field, its name with every character outside
// [A-Za-z0-9_] made '_': proc.name is proc_name). Wazuh and Suricata
// document no Alertmanager output.
func Forwarded(labels map[string]string) (Sender, Event, bool) {
	if !falcoForwarded(labels) {
		return Sender{}, Event{}, false
	}
	return falcosidekick(), falcoAlertmanager(labels), true
}

// falcoForwarded reports whether Alertmanager labels are an alert
// falcosidekick's Alertmanager output posted: its source label (falco, or
// falcosidekick where a team relabels it), or — when extralabels replaced
// the source — its eventsource label with a Falco priority; and a rule in
// rule or alertname.
func falcoForwarded(labels map[string]string) bool {
	if strings.TrimSpace(labels["rule"]) == "" && strings.TrimSpace(labels["alertname"]) == "" {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(labels["source"])) {
	case "falco", "falcosidekick":
		return true
	}
	if strings.TrimSpace(labels["eventsource"]) == "" {
		return false
	}
	return falcosidekick().Severity(labels["priority"]) != openrecall.SeverityUnknown
}

// falcoAlertmanager reads the event falcosidekick's Alertmanager output
// wrote into labels, each output field from its label.
func falcoAlertmanager(labels map[string]string) Event {
	var e Event
	f := func(k string) string {
		s := Rendered(labels[FalcoLabel(k)])
		if s == "<NA>" {
			return ""
		}
		return s
	}
	falcoEvent(&e, f, func(k string) string { return "labels." + FalcoLabel(k) })
	e.Set(PartSeverity, labels["priority"], "labels.priority")
	e.Set(PartRule, labels["rule"], "labels.rule")
	e.Host = labels["hostname"]
	return e
}

// FalcoLabel is the label name falcosidekick's Alertmanager output gives a
// Falco output field: every character outside [A-Za-z0-9_] becomes '_',
// each "__" then becomes "_", and leading and trailing '_' go
// ("ka.uri.param[command]" is "ka_uri_param_command").
func FalcoLabel(field string) string {
	s := strings.Map(func(r rune) rune {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, field)
	return strings.Trim(strings.ReplaceAll(s, "__", "_"), "_")
}
