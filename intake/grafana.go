package intake

import (
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// Grafana's legacy alerting (dashboard alerts, Grafana 4 to 8, removed in
// 11) posted one object per notification of a rule, with no alerts array:
// {title, ruleId, ruleName, ruleUrl, state, evalMatches[{metric, value,
// tags}], message, tags, imageUrl, dashboardId, panelId, orgId}. It is
// Grafana's too, at its named endpoint (DESIGN §3): intake reads it
// wherever it reads Grafana's webhooks.

// formatGrafanaLegacy is the shape of a legacy Grafana alerting
// notification. It is no --format of its own: FormatAlertmanager (Grafana's
// endpoint) and FormatAuto read it.
const formatGrafanaLegacy Format = "grafana-legacy"

// grafanaLegacy reports whether an object is a legacy Grafana alerting
// notification: a rule's name or id, a state, and one of the fields only
// that notification carries together (evalMatches, ruleUrl, dashboardId,
// panelId), and no alerts array.
func grafanaLegacy(o object) bool {
	if o.has("alerts") || (!o.has("ruleName") && !o.has("ruleId")) {
		return false
	}
	if s, err := o.str("state"); err != nil || s == "" {
		return false
	}
	return o.has("evalMatches") || o.has("ruleUrl") || o.has("dashboardId") || o.has("panelId")
}

// grafanaLegacyStatus maps a legacy rule state: ok is the rule's recovery
// (resolved); paused and pending are notices (a rule paused, or a
// condition that holds but not yet for its pending period); alerting,
// no_data and any other state are firing.
func grafanaLegacyStatus(state string) string {
	switch strings.ToLower(strings.TrimSpace(state)) {
	case "ok":
		return openrecall.StatusResolved
	case "paused", "pending":
		return openrecall.StatusNotice
	}
	return openrecall.StatusFiring
}

// maxEvalMatches caps the evaluated series a legacy notification's text
// lists.
const maxEvalMatches = 10

// grafanaLegacyEvent reads a legacy Grafana alerting notification.
//
// Title and rule: ruleName, exactly as sent (the rule is the check; the
// title field is "[Alerting] " + the rule's name, its state in front),
// else the title without its "[State] " prefix. Status: state (ok
// resolved; paused, pending notices; alerting, no_data firing). Service,
// environment and severity: the rule's tags (service, app, …; env,
// environment; severity), as a webhook's labels are read. ID: none — the
// notification names no firing (it has no time nor id of one) — so the
// alert's id is the hash of the whole payload, and it names no episode.
// Text: the message, the evaluated series (metric: value), the state and
// the rule's, panel's and image's URLs. Link: ruleUrl, the rule's panel.
func grafanaLegacyEvent(v sender.Value) sender.Event {
	var e sender.Event
	title := sender.Rendered(v.Get("title").String())
	if _, rest, ok := strings.Cut(title, "] "); ok && strings.HasPrefix(title, "[") {
		title = rest
	}
	if !e.Set(sender.PartTitle, sender.Rendered(v.Get("ruleName").String()), "ruleName") {
		e.Set(sender.PartTitle, title, "title")
	}
	e.Set(sender.PartRule, sender.Rendered(v.Get("ruleName").String()), "ruleName")
	state := v.Get("state").String()
	e.Status = grafanaLegacyStatus(state)
	for k, val := range v.Get("tags").Labels() {
		e.Label(k, val)
	}
	e.Label("state", state)
	e.Label("rule_id", v.Get("ruleId").String())
	e.Label("dashboard_id", v.Get("dashboardId").String())
	e.Label("panel_id", v.Get("panelId").String())
	e.Label("org_id", v.Get("orgId").String())
	e.Label("rule_url", v.Get("ruleUrl").String())
	e.Link(openrecall.LinkSource, v.Get("ruleUrl").String())
	e.Label("image_url", v.Get("imageUrl").String())
	pairs := [][2]string{{"state", state}}
	matches := v.Get("evalMatches").Elements()
	for i, m := range matches {
		if i == maxEvalMatches {
			pairs = append(pairs, [2]string{"evalMatches", "… " + strconv.Itoa(len(matches)-i) + " more series"})
			break
		}
		metric := m.Get("metric").String()
		if tags := m.Get("tags").Compact(); tags != "" && tags != "{}" && tags != "null" {
			metric += " " + tags
		}
		pairs = append(pairs, [2]string{metric, m.Get("value").Text()})
	}
	pairs = append(pairs, [2]string{"rule", v.Get("ruleUrl").String()}, [2]string{"image", v.Get("imageUrl").String()})
	e.Text = sender.JoinText(v.Get("message").String(), sender.Evidence(pairs...))
	return e
}

// grafanaLegacyObject reads a legacy Grafana alerting notification into its
// record (an alert of the grafana sender; the payload's id when it reads
// no id of its own).
func (p *parser) grafanaLegacyObject(out []Record, raw []byte, pos openrecall.Position) []Record {
	v, err := sender.Parse(raw)
	if err != nil {
		return reject(out, pos, "%s", jsonReason(err))
	}
	s, _ := sender.Set{}.Lookup("grafana")
	e := grafanaLegacyEvent(v)
	e.PayloadID = sender.PayloadID(s.Name, v, 0)
	a, err := eventAlert(s, e, string(p.container))
	if err != nil {
		return reject(out, pos, "Grafana legacy alerting: %v", err)
	}
	a.Position = pos
	out = append(out, Record{Alert: a})
	p.sent(&out[len(out)-1], "")
	return out
}
