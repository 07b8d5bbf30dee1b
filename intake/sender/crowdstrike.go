package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// crowdStrike reads CrowdStrike Falcon detections as the Falcon Event
// Streams API delivers them ({"metadata": {eventType, eventCreationTime,
// customerIDString, offset}, "event": {…}}): DetectionSummaryEvent (Falcon
// Insight's legacy detections) and EppDetectionSummaryEvent (the Alerts
// era), posted by a stream consumer or a Falcon Fusion workflow forwarding
// the event.
//
// The rule is the detection's pattern id exactly as sent (event.PatternId,
// the behaviour that fired; the same on every host), else — a legacy event
// names no pattern — DetectName and Technique as sent, joined by " / ". The
// title is the detection's description (Description, DetectDescription),
// else its name. The id is "cs-" + CompositeId, else DetectId: one detection
// is one event (Episode). The host (Hostname, ComputerName) is the Host.
//
// Severity is Falcon's SeverityName (Informational, Low, Medium, High,
// Critical), else Severity on the legacy 1–5 scale (1 informational … 5
// critical). Every detection the stream delivers is a firing.
//
// Entities: user (UserName), process (FileName), command (CommandLine),
// parent_process (ParentImageFileName) and the file path's image
// (FilePath + FileName is evidence). Tactic, Technique and their ids are
// the labels tactic, technique, tactic_id and technique_id.
func crowdStrike() Sender {
	names := Scale{"informational": openrecall.SeverityInfo, "low": openrecall.SeverityLow, "medium": openrecall.SeverityMedium,
		"high": openrecall.SeverityHigh, "critical": openrecall.SeverityCritical,
		"1": openrecall.SeverityInfo, "2": openrecall.SeverityLow, "3": openrecall.SeverityMedium, "4": openrecall.SeverityHigh, "5": openrecall.SeverityCritical}
	return Sender{
		Name: "crowdstrike", Display: "CrowdStrike Falcon (detections)", Security: true, Episode: true,
		Match: func(v Value) bool {
			switch v.Path("metadata.eventType").String() {
			case "DetectionSummaryEvent", "EppDetectionSummaryEvent":
				return v.Get("event").IsObject()
			}
			return false
		},
		Map:      func(v Value) ([]Event, error) { return []Event{crowdStrikeEvent(v)}, nil },
		Severity: names.Map,
		Levels:   []string{"Informational", "Low", "Medium", "High", "Critical", "1", "2", "3", "4", "5"},
		Doc: Doc{
			Point:    "an Event Streams consumer (or a Falcon Fusion workflow's HTTP action) POSTing each detection event to http://HOST:9555/api/v1/alerts/crowdstrike",
			Auth:     "Authorization: Bearer TOKEN on the POST",
			Title:    "event.Description / DetectDescription, else the detection's name",
			Severity: "event.SeverityName (Informational info, Low, Medium, High, Critical), else event.Severity 1–5",
			Service:  "none (the pattern is the identity)",
			Rule:     "event.PatternId, else event.DetectName + \" / \" + event.Technique",
			ID:       "event.CompositeId, else event.DetectId",
			Source:   "CrowdStrike Falcon Event Streams event fields as public references name them (Elastic Filebeat \"Crowdstrike fields\", vendor parser docs; field names only); events written for openrecall in that shape",
		},
	}
}

func crowdStrikeEvent(v Value) Event {
	var e Event
	ev := v.Get("event")
	get := func(k string) string { return strings.TrimSpace(ev.Get(k).String()) }
	if !e.Set(PartRule, get("PatternId"), "event.PatternId") {
		name, tech := get("DetectName"), get("Technique")
		switch {
		case name != "" && tech != "":
			e.Set(PartRule, name+" / "+tech, "event.DetectName+event.Technique")
		case name != "":
			e.Set(PartRule, name, "event.DetectName")
		default:
			e.Set(PartRule, get("Name"), "event.Name")
		}
	}
	for _, k := range []string{"Description", "DetectDescription", "DetectName", "Name"} {
		if e.Set(PartTitle, get(k), "event."+k) {
			break
		}
	}
	if !e.Set(PartSeverity, get("SeverityName"), "event.SeverityName") {
		e.Set(PartSeverity, get("Severity"), "event.Severity")
	}
	if !e.SetID("event.CompositeId", "cs-", "", get("CompositeId")) {
		e.SetID("event.DetectId", "cs-", "", get("DetectId"))
	}
	e.Status = openrecall.StatusFiring
	e.Host = cloudWatchFirst(get("Hostname"), get("ComputerName"))
	e.Timestamp = v.Path("metadata.eventCreationTime").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = ev.Get("ProcessStartTime").Time()
	}
	e.Entity("user", get("UserName"))
	e.Entity("process", get("FileName"))
	e.Entity("command", get("CommandLine"))
	e.Entity("parent_process", get("ParentImageFileName"))
	e.Label("tactic", get("Tactic"))
	e.Label("technique", get("Technique"))
	e.Label("tactic_id", get("TacticId"))
	e.Label("technique_id", get("TechniqueId"))
	e.Label("objective", get("Objective"))
	e.Label("falcon_link", get("FalconHostLink"))
	e.Label("event_type", v.Path("metadata.eventType").String())
	e.Text = JoinText(cloudWatchFirst(get("Description"), get("DetectDescription")), Evidence(
		[2]string{"detection", cloudWatchFirst(get("Name"), get("DetectName"))},
		[2]string{"pattern", get("PatternId")},
		[2]string{"tactic", get("Tactic")},
		[2]string{"technique", get("Technique")},
		[2]string{"objective", get("Objective")},
		[2]string{"host", e.Host},
		[2]string{"user", get("UserName")},
		[2]string{"file", strings.TrimRight(get("FilePath"), `\`) + `\` + get("FileName")},
		[2]string{"command", get("CommandLine")},
		[2]string{"parent", get("ParentImageFileName")},
		[2]string{"parent command", get("ParentCommandLine")},
		[2]string{"sha256", get("SHA256String")},
		[2]string{"disposition", get("PatternDispositionDescription")},
	))
	return e
}
