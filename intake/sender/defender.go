package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// defender reads Microsoft Defender XDR alerts as the Microsoft Graph
// security API returns them (microsoft.graph.security.alert, GET
// /security/alerts_v2): one alert, or a list ({"value": […]}) as a Logic
// App or a script polling the API posts it. Each alert is one event.
//
// The rule is detectorId exactly as sent (the detector that raised the
// alert, the same for every alert it raises), else alertPolicyId, else the
// title. The title is title. The id is "mdx-" + id: an update of the alert
// keeps it (Episode). The device (deviceEvidence's deviceDnsName) is the
// Host; the service is none (the detector is the identity).
//
// Severity is Graph's alertSeverity: high, medium, low, informational
// (unknown stays unknown). Status: new is firing, inProgress acknowledged,
// resolved resolved.
//
// Entities come from evidence: a user (userEvidence, or a process's
// userAccount: accountName, with its domain), the process (processEvidence's
// imageFile.fileName and processCommandLine), its parent
// (parentProcessImageFile.fileName) and a file (fileEvidence). category (the
// ATT&CK tactic, "DefenseEvasion") and mitreTechniques are the labels
// tactic and mitre_techniques.
func defender() Sender {
	scale := Scale{"high": openrecall.SeverityHigh, "medium": openrecall.SeverityMedium, "low": openrecall.SeverityLow,
		"informational": openrecall.SeverityInfo}
	return Sender{
		Name: "defender", Display: "Microsoft Defender XDR (Graph security alert)", Security: true, Episode: true,
		Match: func(v Value) bool {
			return defenderAlert(v) || (v.Get("value").IsArray() && v.Get("value").Len() > 0 && defenderAlert(v.Get("value").At(0)))
		},
		Map: func(v Value) ([]Event, error) {
			if defenderAlert(v) {
				return []Event{defenderEvent(v, "")}, nil
			}
			var out []Event
			for _, a := range v.Get("value").Elements() {
				if defenderAlert(a) {
					out = append(out, defenderEvent(a, "value[]."))
				}
			}
			return out, nil
		},
		Severity: scale.Map,
		Levels:   []string{"high", "medium", "low", "informational"},
		Doc: Doc{
			Point:    "a Logic App or script that reads GET /security/alerts_v2 (or a Graph change notification's alert) and POSTs the alert, or the list, to http://HOST:9555/api/v1/alerts/defender",
			Auth:     "Authorization: Bearer TOKEN on the POST",
			Title:    "title",
			Severity: "severity (high, medium, low, informational info)",
			Service:  "none (the detector is the identity)",
			Rule:     "detectorId, else alertPolicyId, else title",
			ID:       "id",
			Source:   "Microsoft Learn: Microsoft Graph security alert resource type and its evidence types (CC BY 4.0); alerts written for openrecall in that shape",
		},
	}
}

// defenderAlert reports whether v is a Graph security alert: its OData
// type, or an id, a title, a severity and the service that raised it.
func defenderAlert(v Value) bool {
	if v.Get("@odata.type").String() == "#microsoft.graph.security.alert" {
		return true
	}
	return v.Get("id").String() != "" && v.Get("title").String() != "" && v.Get("severity").IsString() &&
		v.Get("serviceSource").String() != "" && v.Has("detectionSource")
}

func defenderEvent(a Value, prefix string) Event {
	var e Event
	e.Set(PartTitle, a.Get("title").String(), prefix+"title")
	for _, k := range []string{"detectorId", "alertPolicyId", "title"} {
		if e.Set(PartRule, a.Get(k).String(), prefix+k) {
			break
		}
	}
	e.Set(PartSeverity, a.Get("severity").String(), prefix+"severity")
	e.SetID(prefix+"id", "mdx-", "", a.Get("id").String())
	switch FoldLevel(a.Get("status").String()) {
	case "resolved":
		e.Status = openrecall.StatusResolved
	case "inprogress":
		e.Status = openrecall.StatusAcknowledged
	default:
		e.Status = openrecall.StatusFiring
	}
	e.Timestamp = a.Get("createdDateTime").Time()
	account := func(u Value) string {
		name := u.Get("accountName").String()
		if name == "" {
			name = u.Get("userPrincipalName").String()
		}
		if d := u.Get("domainName").String(); name != "" && d != "" && !strings.Contains(name, "@") && !strings.Contains(name, `\`) {
			name = d + `\` + name
		}
		return name
	}
	for _, ev := range a.Get("evidence").Elements() {
		kind := strings.TrimPrefix(ev.Get("@odata.type").String(), "#microsoft.graph.security.")
		switch kind {
		case "userEvidence":
			if e.Entities["user"] == "" {
				e.Entity("user", account(ev.Get("userAccount")))
			}
		case "processEvidence":
			e.Entity("process", ev.Path("imageFile.fileName").String())
			e.Entity("command", ev.Get("processCommandLine").String())
			e.Entity("parent_process", ev.Path("parentProcessImageFile.fileName").String())
			if e.Entities["user"] == "" {
				e.Entity("user", account(ev.Get("userAccount")))
			}
		case "fileEvidence":
			e.Entity("file", ev.Path("fileDetails.fileName").String())
		case "deviceEvidence":
			if e.Host == "" {
				e.Host = ev.Get("deviceDnsName").String()
			}
		}
	}
	e.Label("tactic", a.Get("category").String())
	e.Label("mitre_techniques", strings.Join(a.Get("mitreTechniques").Strings(), ","))
	e.Label("service_source", a.Get("serviceSource").String())
	e.Label("detection_source", a.Get("detectionSource").String())
	e.Label("incident_id", a.Get("incidentId").String())
	e.Label("alert_url", a.Get("alertWebUrl").String())
	e.Label("classification", a.Get("classification").String())
	e.Label("threat_family", a.Get("threatFamilyName").String())
	e.Text = JoinText(a.Get("description").String(), Evidence(
		[2]string{"detector", a.Get("detectorId").String()},
		[2]string{"category", a.Get("category").String()},
		[2]string{"techniques", strings.Join(a.Get("mitreTechniques").Strings(), ", ")},
		[2]string{"service", a.Get("serviceSource").String()},
		[2]string{"detection source", a.Get("detectionSource").String()},
		[2]string{"device", e.Host},
		[2]string{"user", e.Entities["user"]},
		[2]string{"process", e.Entities["process"]},
		[2]string{"command", e.Entities["command"]},
		[2]string{"file", e.Entities["file"]},
		[2]string{"threat family", a.Get("threatFamilyName").String()},
		[2]string{"recommended actions", a.Get("recommendedActions").String()},
	))
	return e
}
