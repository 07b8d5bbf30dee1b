package intake

import (
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// Grafana's legacy alerting (dashboard alerts, Grafana 4 to 8, removed in
// 11) posted one object per notification of a rule, with no alerts array.
// It is Grafana's too, at its named endpoint (DESIGN §3): intake hands it,
// wherever it reads Grafana's webhooks, to Grafana's embedded mapping
// (sender/mappings/grafana.yaml), which recognises and reads it.

// grafanaLegacy returns the decoded object and true when it is a legacy
// Grafana alerting notification, as Grafana's mapping recognises it. Only
// an object naming a rule (ruleName or ruleId) and no alerts array is
// decoded to ask.
func grafanaLegacy(o object, raw []byte) (sender.Value, sender.Sender, bool) {
	if o.has("alerts") || (!o.has("ruleName") && !o.has("ruleId")) {
		return sender.Value{}, sender.Sender{}, false
	}
	s, _ := sender.Lookup("grafana")
	v, err := sender.Parse(raw)
	if err != nil || s.Match == nil || !s.Match(v) {
		return sender.Value{}, sender.Sender{}, false
	}
	return v, s, true
}

// grafanaLegacyObject reads a legacy Grafana alerting notification by
// Grafana's mapping into its record (an alert of the grafana sender; the
// payload's id, as it names no firing).
func (p *parser) grafanaLegacyObject(out []Record, s sender.Sender, v sender.Value, pos openrecall.Position) []Record {
	_, events, err := sender.ReadAs(nil, s, v)
	if err != nil {
		return reject(out, pos, "Grafana legacy alerting: %v", err)
	}
	if len(events) != 1 {
		return reject(out, pos, "Grafana legacy alerting: the payload carries %d alerts, not one", len(events))
	}
	a, err := eventAlert(s, events[0], string(p.container))
	if err != nil {
		return reject(out, pos, "Grafana legacy alerting: %v", err)
	}
	a.Position = pos
	out = append(out, Record{Alert: a})
	p.sent(&out[len(out)-1], "")
	return out
}
