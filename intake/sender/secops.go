package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// secOps reads Google Security Operations (Chronicle) rule detections as
// the Detection Engine API returns them (ListDetections' detections[], one
// detection, as a script or a SOAR connector forwarding them posts it):
// {"type": "RULE_DETECTION", "id": "de_…", "detection": [{ruleName,
// ruleId, ruleVersion, ruleType, alertState, ruleLabels[{key, value}],
// detectionFields, outcomes, riskScore, urlBackToProduct}],
// "collectionElements": [{label, references: [{event: UDM}]}],
// "createdTime", "detectionTime"}. Each detection is one event.
//
// The rule is detection[0].ruleId exactly as sent ("ru_…", the same for
// every detection of the rule), else ruleName; the title is ruleName. The id
// is "secops-" + id: one detection is one event (Episode).
//
// Severity is the rule's meta severity (ruleLabels severity, the YARA-L
// meta section: Informational, Low, Medium, High, Critical). Detections are
// firings; a NOT_ALERTING detection (the rule does not alert) is kept
// firing with its state as the label alert_state.
//
// Entities come from the first UDM event: user (principal.user.userid,
// else its email), process (the file name of principal.process.file.fullPath),
// command (principal.process.commandLine, else target.process.commandLine);
// the principal's hostname is the Host. Rule labels tactic and technique
// (YARA-L meta mitre_attack_tactic, mitre_attack_technique, …) are labels
// as written.
func secOps() Sender {
	scale := Scale{"informational": openrecall.SeverityInfo, "info": openrecall.SeverityInfo, "low": openrecall.SeverityLow,
		"medium": openrecall.SeverityMedium, "high": openrecall.SeverityHigh, "critical": openrecall.SeverityCritical}
	return Sender{
		Name: "secops", Display: "Google SecOps (Chronicle) detections", Security: true, Episode: true,
		Match: func(v Value) bool {
			d := v.Get("detections")
			return secOpsDetection(v) || (d.IsArray() && d.Len() > 0 && secOpsDetection(d.At(0)))
		},
		Map: func(v Value) ([]Event, error) {
			if secOpsDetection(v) {
				return []Event{secOpsEvent(v, "")}, nil
			}
			var out []Event
			for _, d := range v.Get("detections").Elements() {
				if secOpsDetection(d) {
					out = append(out, secOpsEvent(d, "detections[]."))
				}
			}
			return out, nil
		},
		Severity: scale.Map,
		Levels:   []string{"Informational", "Low", "Medium", "High", "Critical"},
		Doc: Doc{
			Point:    "a script or SOAR connector reading ListDetections (or a detection's webhook) and POSTing the detection, or the detections page, to http://HOST:9555/api/v1/alerts/secops",
			Auth:     "Authorization: Bearer TOKEN on the POST",
			Title:    "detection[0].ruleName",
			Severity: "detection[0].ruleLabels severity (Informational info, Low, Medium, High, Critical)",
			Service:  "none (the rule is the identity)",
			Rule:     "detection[0].ruleId, else ruleName",
			ID:       "id (de_…)",
			Source:   "Google SecOps (Chronicle) Detection Engine API reference, ListDetections response and YARA-L meta (Google developer documentation, CC BY 4.0); detections written for openrecall in that shape",
		},
	}
}

// secOpsDetection reports whether v is a SecOps rule detection.
func secOpsDetection(v Value) bool {
	t := v.Get("type").String()
	d := v.Get("detection").At(0)
	return (t == "RULE_DETECTION" || t == "GCTI_FINDING") && strings.HasPrefix(v.Get("id").String(), "de_") &&
		(d.Get("ruleId").String() != "" || d.Get("ruleName").String() != "")
}

func secOpsEvent(v Value, prefix string) Event {
	var e Event
	d := v.Get("detection").At(0)
	dp := prefix + "detection[0]."
	if !e.Set(PartRule, d.Get("ruleId").String(), dp+"ruleId") {
		e.Set(PartRule, d.Get("ruleName").String(), dp+"ruleName")
	}
	e.Set(PartTitle, d.Get("ruleName").String(), dp+"ruleName")
	labels := map[string]string{}
	for _, l := range d.Get("ruleLabels").Elements() {
		if k := strings.TrimSpace(l.Get("key").String()); k != "" {
			labels[strings.ToLower(k)] = l.Get("value").String()
		}
	}
	e.Set(PartSeverity, labels["severity"], dp+"ruleLabels.severity")
	e.SetID(prefix+"id", "secops-", "", v.Get("id").String())
	e.Status = openrecall.StatusFiring
	e.Timestamp = v.Get("detectionTime").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = v.Get("createdTime").Time()
	}
	ev := v.Get("collectionElements").At(0).Get("references").At(0).Get("event")
	principal, target := ev.Get("principal"), ev.Get("target")
	e.Host = principal.Get("hostname").String()
	user, _ := principal.First("user.userid", "user.emailAddresses", "user.userDisplayName")
	e.Entity("user", user)
	if path := principal.Path("process.file.fullPath").String(); path != "" {
		e.Entity("process", path[strings.LastIndexAny(path, `\/`)+1:])
	}
	cmd, _ := principal.First("process.commandLine")
	if cmd == "" {
		cmd, _ = target.First("process.commandLine")
	}
	e.Entity("command", cmd)
	for k, val := range labels {
		switch {
		case k == "severity", k == "description", k == "author":
		case strings.Contains(k, "tactic"), strings.Contains(k, "technique"), strings.Contains(k, "mitre"):
			e.Label(k, val)
		}
	}
	e.Label("alert_state", d.Get("alertState").String())
	e.Label("rule_type", d.Get("ruleType").String())
	e.Label("rule_version", d.Get("ruleVersion").String())
	e.Label("risk_score", d.Get("riskScore").String())
	e.Label("url", d.Get("urlBackToProduct").String())
	e.Label("event_type", ev.Path("metadata.eventType").String())
	pairs := [][2]string{
		{"rule", d.Get("ruleName").String()},
		{"rule id", d.Get("ruleId").String()},
		{"severity", labels["severity"]},
		{"alert state", d.Get("alertState").String()},
		{"host", e.Host},
		{"user", user},
		{"command", cmd},
	}
	for _, f := range d.Get("detectionFields").Elements() {
		pairs = append(pairs, [2]string{"field " + f.Get("key").String(), f.Get("value").String()})
	}
	for _, o := range d.Get("outcomes").Elements() {
		pairs = append(pairs, [2]string{"outcome " + o.Get("key").String(), o.Get("value").String()})
	}
	e.Text = JoinText(labels["description"], Evidence(pairs...))
	return e
}
