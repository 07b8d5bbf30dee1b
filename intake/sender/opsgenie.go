package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// opsgenie reads Opsgenie's outgoing Webhook integration: one alert action
// (Create, Close, Acknowledge, …) with a subset of the alert's fields. The
// top-level source is an object ({name, type}: who performed the action)
// while alert.source is a string; neither type ever rejects the payload.
//
// Rule: Opsgenie names no check, but its alias is the dedup key the
// integration that created the alert sets per check (often per check and
// host). The rule is details.alertname when the creator passed one (the
// Alertmanager integration does), so the alert keeps the rule it has when
// Alertmanager sends it directly; else the alias; else none, and identity
// falls back to the message's template. An alias equal to the alertId is
// Opsgenie's default when none was given, names no check, and is not used.
//
// Service: details service, app or component, else a tag "service:NAME",
// else alert.entity (Opsgenie's "domain" of the alert). Environment:
// details env or environment, else a tag "env:NAME". Host: details host,
// hostname or instance.
//
// Severity is the priority P1–P5: P1 critical, P2 high, P3 medium, P4 low,
// P5 info (a bare number is read as its P level).
//
// ID is "og-" + alertId: Opsgenie keeps one alert open per alias, counting
// duplicates on it, and a new alert (a new alertId) once it is closed, so
// the id names one episode.
//
// Status by action: Create, UnAcknowledge and Escalate are firing;
// Acknowledge, AssignOwnership and TakeOwnership acknowledged (a person has
// it); Close and Delete resolved; every other action (AddNote, AddTags,
// AddRecipient, AddTeam, CustomAction, …) is a notice about an alert
// already received: recorded, never triaged.
func opsgenie() Sender {
	scale := Scale{"p1": openrecall.SeverityCritical, "p2": openrecall.SeverityHigh, "p3": openrecall.SeverityMedium,
		"p4": openrecall.SeverityLow, "p5": openrecall.SeverityInfo}
	return Sender{
		Name: "opsgenie", Display: "Opsgenie", Security: false, Episode: true,
		Match: func(v Value) bool {
			return v.Get("action").IsString() && v.Get("alert").IsObject() && v.Path("alert.alertId").String() != "" &&
				(v.Has("integrationId") || v.Has("integrationName") || v.Has("integrationType"))
		},
		Map: func(v Value) ([]Event, error) {
			return []Event{opsgenieAlert(v)}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"P1", "P2", "P3", "P4", "P5"},
		Doc: Doc{
			Point: "a Webhook integration (Settings → Integrations → Webhook), Webhook URL http://HOST:9555/api/v1/alerts/opsgenie, \"Add Alert Description/Details to Payload\" on",
			Auth:  "a custom header Authorization: Bearer TOKEN in the integration's headers",
			Title: "alert.message", Severity: "alert.priority (P1 critical … P5 info)",
			Service: "alert.details service/app/component, else tag service:NAME, else alert.entity",
			Rule:    "alert.details.alertname, else alert.alias (not when it equals the alertId)", ID: "alert.alertId (one alert per alias until closed)",
			Source: "Opsgenie webhook integration documentation samples; zulip/zulip zerver/webhooks/opsgenie/fixtures (Apache-2.0); written for openrecall",
		},
	}
}

// opsgenieStatus maps a webhook action to a status.
func opsgenieStatus(action string) string {
	switch FoldLevel(action) {
	case "create", "unacknowledge", "escalate", "escalatenext":
		return openrecall.StatusFiring
	case "acknowledge", "assignownership", "takeownership":
		return openrecall.StatusAcknowledged
	case "close", "delete":
		return openrecall.StatusResolved
	}
	return openrecall.StatusNotice
}

func opsgenieAlert(v Value) Event {
	var e Event
	a := v.Get("alert")
	details := a.Get("details")
	alertID := strings.TrimSpace(a.Get("alertId").String())
	action := v.Get("action").String()

	message := Rendered(a.Get("message").String())
	if !e.Set(PartTitle, message, "alert.message") {
		t := "Opsgenie alert"
		if tiny := a.Get("tinyId").String(); tiny != "" {
			t += " #" + tiny
		} else if alertID != "" {
			t += " " + alertID
		}
		if action != "" {
			t += ": " + action
		}
		e.Set(PartTitle, t, "action")
	}
	if !e.Set(PartRule, Rendered(details.Get("alertname").String()), "alert.details.alertname") {
		if alias := Rendered(a.Get("alias").String()); alias != alertID {
			e.Set(PartRule, alias, "alert.alias")
		}
	}
	e.SetID("alert.alertId", "og-", "", alertID)
	prio := strings.TrimSpace(a.Get("priority").String())
	if prio != "" && prio[0] >= '1' && prio[0] <= '5' && len(prio) == 1 {
		prio = "P" + prio
	}
	e.Set(PartSeverity, prio, "alert.priority")
	e.Status = opsgenieStatus(action)
	e.Timestamp = a.Get("createdAt").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = a.Get("updatedAt").Time()
	}

	tags := a.Get("tags").Strings()
	for _, k := range []string{"service", "app", "component"} {
		if e.Set(PartService, Rendered(details.Get(k).String()), "alert.details."+k) {
			break
		}
	}
	e.Tags(tags, "alert.tags")
	if e.Service == "" {
		e.Set(PartService, Rendered(a.Get("entity").String()), "alert.entity")
	}
	for _, k := range []string{"env", "environment"} {
		if e.Set(PartEnvironment, Rendered(details.Get(k).String()), "alert.details."+k) {
			break
		}
	}
	e.Host, _ = details.First("host", "hostname", "instance")

	for _, k := range details.Keys() {
		e.Label("detail_"+k, details.Get(k).Text())
	}
	e.Label("tags", strings.Join(tags, ","))
	e.Label("alias", a.Get("alias").String())
	e.Label("entity", a.Get("entity").String())
	e.Label("alert_source", a.Get("source").String())
	e.Label("tiny_id", a.Get("tinyId").String())
	e.Label("action", action)
	e.Label("integration", v.Get("integrationName").String())

	var detailText []string
	for _, k := range details.Keys() {
		detailText = append(detailText, k+"="+details.Get(k).Text())
	}
	actor := strings.TrimSpace(v.Path("source.name").String() + " " + v.Path("source.type").String())
	e.Text = JoinText(Rendered(a.Get("description").String()), Evidence(
		[2]string{"action", action},
		[2]string{"priority", prio},
		[2]string{"alias", a.Get("alias").String()},
		[2]string{"entity", a.Get("entity").String()},
		[2]string{"source", a.Get("source").String()},
		[2]string{"tags", strings.Join(tags, ", ")},
		[2]string{"details", strings.Join(detailText, ", ")},
		[2]string{"note", a.Get("note").String()},
		[2]string{"owner", a.Get("owner").String()},
		[2]string{"by", cloudWatchFirst(a.Get("username").String(), actor)},
		[2]string{"escalation", v.Get("escalationName").String()},
	))
	return e
}
