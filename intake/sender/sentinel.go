package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// sentinel reads Microsoft Sentinel's incidents and alerts as a playbook
// (Logic App) forwards them with an HTTP action posting its trigger's body:
// the incident trigger's body ({"object": incident, "objectSchemaType":
// "Incident", "objectEventType": "Create"|"Update", "workspaceInfo": …}),
// an incident resource as the REST API returns it (id …/Microsoft.
// SecurityInsights/Incidents/…, properties), and the alert trigger's body
// (the SecurityAlert schema: SystemAlertId, AlertDisplayName, AlertType,
// Severity, Status, Tactics, Entities, ExtendedProperties).
//
// An incident's rule is its first related analytics rule id exactly as sent
// (properties.relatedAnalyticRuleIds[0]), else its title; an alert's rule is
// AlertType (a scheduled rule's is "<workspace id>_<rule id>"). The title is
// properties.title or AlertDisplayName. The id is "sentinel-" + the
// incident's name (its GUID) or the alert's SystemAlertId: an update of an
// incident is the same alert (Episode).
//
// Severity is Sentinel's scale: High, Medium, Low, Informational. Status: an
// incident New is firing, Active acknowledged, Closed resolved; an alert
// New is firing, InProgress acknowledged, Resolved and Dismissed resolved.
//
// Entities are read from the incident's relatedEntities (kind Account:
// user; Process: command and process; File: file; Host: the host, never an
// entity) and the alert's Entities (Type account, process, file, host).
// Tactics and techniques (properties.additionalData.tactics and
// techniques; an alert's Tactics and Techniques) are labels tactics and
// techniques, as Sentinel writes them (CamelCase names, technique ids).
func sentinel() Sender {
	scale := Scale{"high": openrecall.SeverityHigh, "medium": openrecall.SeverityMedium, "low": openrecall.SeverityLow,
		"informational": openrecall.SeverityInfo}
	return Sender{
		Name: "sentinel", Display: "Microsoft Sentinel (playbook)", Security: true, Episode: true,
		Match: func(v Value) bool {
			return sentinelIncident(v) || sentinelIncident(v.Get("object")) || sentinelAlert(v)
		},
		Map: func(v Value) ([]Event, error) {
			switch {
			case sentinelIncident(v.Get("object")):
				return []Event{sentinelIncidentEvent(v.Get("object"), "object.")}, nil
			case sentinelIncident(v):
				return []Event{sentinelIncidentEvent(v, "")}, nil
			}
			return []Event{sentinelAlertEvent(v)}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"High", "Medium", "Low", "Informational"},
		Doc: Doc{
			Point:    "an automation rule running a playbook (incident trigger) whose HTTP action POSTs the trigger body to http://HOST:9555/api/v1/alerts/sentinel",
			Auth:     "the HTTP action's header Authorization: Bearer TOKEN",
			Title:    "properties.title (incident), AlertDisplayName (alert)",
			Severity: "properties.severity / Severity (High, Medium, Low, Informational info)",
			Service:  "none (the analytics rule is the identity)",
			Rule:     "properties.relatedAnalyticRuleIds[0], else properties.title (incident); AlertType (alert)",
			ID:       "the incident's name (GUID) / SystemAlertId",
			Source:   "Microsoft Learn: Microsoft Sentinel playbook triggers, the Incidents REST API and the SecurityAlert table reference (CC BY 4.0); payloads written for openrecall in those shapes",
		},
	}
}

// sentinelIncident reports whether v is a Sentinel incident resource.
func sentinelIncident(v Value) bool {
	p := v.Get("properties")
	return p.IsObject() && p.Get("title").String() != "" && p.Get("severity").String() != "" &&
		(strings.Contains(strings.ToLower(v.Get("id").String()), "/microsoft.securityinsights/incidents/") ||
			strings.EqualFold(v.Get("type").String(), "Microsoft.SecurityInsights/Incidents"))
}

// sentinelAlert reports whether v is a SecurityAlert record.
func sentinelAlert(v Value) bool {
	return v.Get("SystemAlertId").String() != "" && v.Get("AlertDisplayName").String() != "" && v.Has("Severity") &&
		(v.Has("AlertType") || v.Has("ProductName"))
}

// sentinelStatus maps an incident's or alert's status.
func sentinelStatus(raw string) string {
	switch FoldLevel(raw) {
	case "closed", "resolved", "dismissed":
		return openrecall.StatusResolved
	case "active", "inprogress":
		return openrecall.StatusAcknowledged
	}
	return openrecall.StatusFiring
}

// sentinelEntity reads one entity (its kind and its properties: an
// incident's relatedEntities element, or an alert's Entities element, whose
// fields are PascalCase) into e.
func sentinelEntity(e *Event, kind string, p Value) {
	get := func(keys ...string) string {
		s, _ := p.First(keys...)
		return s
	}
	switch strings.ToLower(kind) {
	case "account":
		user := get("accountName", "AccountName", "Name", "displayName")
		if user != "" {
			if suffix := get("upnSuffix", "UPNSuffix"); suffix != "" && !strings.Contains(user, "@") {
				user += "@" + suffix
			}
			if e.Entities == nil || e.Entities["user"] == "" {
				e.Entity("user", user)
			}
		}
	case "process":
		e.Entity("command", get("commandLine", "CommandLine"))
		e.Entity("process", get("imageFile.fileName", "ImageFile.Name", "imageFileName"))
	case "file":
		e.Entity("file", get("fileName", "Name", "FileName"))
	case "host":
		if e.Host == "" {
			e.Host = get("hostName", "HostName", "netBiosName", "NetBiosName")
		}
	}
}

func sentinelIncidentEvent(inc Value, prefix string) Event {
	var e Event
	p := inc.Get("properties")
	pp := prefix + "properties."
	e.Set(PartTitle, p.Get("title").String(), pp+"title")
	if !e.Set(PartRule, p.Get("relatedAnalyticRuleIds").At(0).String(), pp+"relatedAnalyticRuleIds[0]") {
		e.Set(PartRule, p.Get("title").String(), pp+"title")
	}
	e.Set(PartSeverity, p.Get("severity").String(), pp+"severity")
	// The incident's name is its GUID; the resource id ends with it.
	if !e.SetID(prefix+"name", "sentinel-", "", inc.Get("name").String()) {
		id := inc.Get("id").String()
		e.SetID(prefix+"id", "sentinel-", "", id[strings.LastIndex(id, "/")+1:])
	}
	e.Status = sentinelStatus(p.Get("status").String())
	e.Timestamp = p.Get("createdTimeUtc").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = p.Get("firstActivityTimeUtc").Time()
	}
	for _, ent := range p.Get("relatedEntities").Elements() {
		sentinelEntity(&e, ent.Get("kind").String(), ent.Get("properties"))
	}
	add := p.Get("additionalData")
	e.Label("tactics", strings.Join(add.Get("tactics").Strings(), ","))
	e.Label("techniques", strings.Join(add.Get("techniques").Strings(), ","))
	e.Label("products", strings.Join(add.Get("alertProductNames").Strings(), ","))
	e.Label("incident_number", p.Get("incidentNumber").String())
	e.Label("incident_url", p.Get("incidentUrl").String())
	e.Link(openrecall.LinkSource, p.Get("incidentUrl").String())
	e.Label("classification", p.Get("classification").String())
	var labels []string
	for _, l := range p.Get("labels").Elements() {
		labels = append(labels, l.Get("labelName").String())
	}
	e.Label("incident_labels", strings.Join(labels, ","))
	e.Text = JoinText(p.Get("description").String(), Evidence(
		[2]string{"analytics rule", p.Get("relatedAnalyticRuleIds").At(0).String()},
		[2]string{"severity", p.Get("severity").String()},
		[2]string{"status", p.Get("status").String()},
		[2]string{"tactics", strings.Join(add.Get("tactics").Strings(), ", ")},
		[2]string{"techniques", strings.Join(add.Get("techniques").Strings(), ", ")},
		[2]string{"alerts", add.Get("alertsCount").String()},
		[2]string{"products", strings.Join(add.Get("alertProductNames").Strings(), ", ")},
		[2]string{"user", e.Entities["user"]},
		[2]string{"host", e.Host},
		[2]string{"command", e.Entities["command"]},
	))
	return e
}

func sentinelAlertEvent(v Value) Event {
	var e Event
	e.Set(PartTitle, v.Get("AlertDisplayName").String(), "AlertDisplayName")
	if !e.Set(PartRule, v.Get("AlertType").String(), "AlertType") {
		e.Set(PartRule, v.Get("AlertDisplayName").String(), "AlertDisplayName")
	}
	e.Set(PartSeverity, v.Get("Severity").String(), "Severity")
	e.SetID("SystemAlertId", "sentinel-", "", v.Get("SystemAlertId").String())
	e.Status = sentinelStatus(v.Get("Status").String())
	e.Timestamp = v.Get("StartTimeUtc").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = v.Get("TimeGenerated").Time()
	}
	entities := v.Get("Entities")
	if s := strings.TrimSpace(entities.String()); entities.IsString() && strings.HasPrefix(s, "[") {
		if parsed, err := Parse([]byte(s)); err == nil {
			entities = parsed // the SecurityAlert table holds Entities as JSON text
		}
	}
	for _, ent := range entities.Elements() {
		sentinelEntity(&e, ent.Get("Type").String(), ent)
	}
	techniques := v.Get("Techniques")
	if s := strings.TrimSpace(techniques.String()); techniques.IsString() && strings.HasPrefix(s, "[") {
		if parsed, err := Parse([]byte(s)); err == nil {
			techniques = parsed
		}
	}
	e.Label("tactics", strings.Join(v.Get("Tactics").Strings(), ","))
	e.Label("techniques", strings.Join(techniques.Strings(), ","))
	e.Label("product", v.Get("ProductName").String())
	e.Label("provider", v.Get("ProviderName").String())
	ext := v.Get("ExtendedProperties")
	e.Label("analytic_rule_name", ext.Get("Analytic Rule Name").String())
	e.Text = JoinText(v.Get("Description").String(), Evidence(
		[2]string{"alert type", v.Get("AlertType").String()},
		[2]string{"severity", v.Get("Severity").String()},
		[2]string{"status", v.Get("Status").String()},
		[2]string{"tactics", v.Get("Tactics").String()},
		[2]string{"product", v.Get("ProductName").String()},
		[2]string{"user", e.Entities["user"]},
		[2]string{"host", e.Host},
		[2]string{"command", e.Entities["command"]},
	))
	return e
}
