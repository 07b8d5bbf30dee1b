package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// Forwarded reads the labels of an Alertmanager (or Grafana, Prometheus)
// alert that a security sender's own Alertmanager output wrote: it returns
// that sender and the event its labels carry — the service, environment,
// severity (of the sender's scale) and entity fields the sender's own
// reading takes from the same event — and whether the labels are such an
// alert (DESIGN §3, §6b: exceptions match on entities, so they must be the
// same on every path an event takes).
//
// Only a documented forwarder is recognised: falcosidekick's Alertmanager
// output (labels source=falco, rule, alertname, eventsource, priority and
// one label per output field, its name with every character outside
// [A-Za-z0-9_] made '_': proc.name is proc_name). Wazuh and Suricata
// document no Alertmanager output.
func Forwarded(labels map[string]string) (Sender, Event, bool) {
	s := mapped("falcosidekick")
	if !falcoForwarded(s, labels) {
		return Sender{}, Event{}, false
	}
	return s, falcoAlertmanager(s, labels), true
}

// falcoForwarded reports whether Alertmanager labels are an alert
// falcosidekick's Alertmanager output posted: its source label (falco, or
// falcosidekick where a team relabels it), or — when extralabels replaced
// the source — its eventsource label with a Falco priority (of s, the
// falcosidekick sender's scale); and a rule in rule or alertname.
func falcoForwarded(s Sender, labels map[string]string) bool {
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
	return s.Severity(labels["priority"]) != openrecall.SeverityUnknown
}

// falcoAlertmanager reads the event falcosidekick's Alertmanager output
// wrote into labels through the falcosidekick mapping s, so that nothing
// here reads a field a second way: the payload s reads is the event rebuilt
// from the labels — rule, priority and hostname from the labels of those
// names, and each output field the mapping reads (Sender.membersRead) from
// the label falcosidekick gives it (FalcoLabel).
func falcoAlertmanager(s Sender, labels map[string]string) Event {
	fields := map[string]any{}
	for _, k := range s.membersRead("output_fields") {
		if v, ok := labels[FalcoLabel(k)]; ok {
			fields[k] = v
		}
	}
	event := map[string]any{"output_fields": fields}
	for _, k := range []string{"rule", "priority", "hostname"} {
		if v, ok := labels[k]; ok {
			event[k] = v
		}
	}
	events, err := s.Map(Of(event))
	if err != nil || len(events) != 1 {
		return Event{}
	}
	return events[0]
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
