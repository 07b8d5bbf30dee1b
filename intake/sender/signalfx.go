package sender

import (
	"regexp"
	"sort"
	"strings"

	"github.com/openrecall/openrecall"
)

// signalFx reads the webhook of Splunk Observability Cloud (SignalFx)
// detectors: sf_schema, detector, detectorId, detectorUrl, incidentId,
// eventType, rule, severity, description, messageTitle, messageBody,
// detectOnCondition, detectOffCondition, status, statusExtended, timestamp,
// inputs{name: {key or dimensions, value, fragment}}, and, in custom
// templates, dimensions.
//
// The title is messageTitle, the notification title the detector's rule
// sets (the default one reads "Critical Alert: <rule> (<detector>)"); a
// payload without it is titled "<detector>: <rule>".
//
// The rule is the detector's name and the rule's name, "<detector> / <rule>"
// exactly as sent (the detector id when the name is missing): one detector
// holds several rules (a Critical and a Warning threshold, say), and each is
// its own check. eventType is not used: it names a version of the detector
// and changes when the detector is edited.
//
// The service is the sf_service (or service, service.name) dimension of the
// inputs, the environment sf_environment (or deployment.environment,
// environment, env), the host the host (or host.name, aws_instance_id…)
// dimension; every dimension is kept as a label.
//
// Severity: Critical, Major, Minor, Warning, Info, in that order (critical,
// high, medium, low, info).
//
// Status: statusExtended (else status) anomalous is firing; ok, manually
// resolved and stopped (the detector was edited or deleted) are resolved.
//
// The id is "sfx-" and incidentId: one incident is one firing episode, and
// its clearing carries the same id (Episode).
func signalFx() Sender {
	scale := Scale{
		"critical": openrecall.SeverityCritical,
		"major":    openrecall.SeverityHigh,
		"minor":    openrecall.SeverityMedium,
		"warning":  openrecall.SeverityLow,
		"info":     openrecall.SeverityInfo,
	}
	return Sender{
		Name: "signalfx", Display: "Splunk Observability (SignalFx)", Episode: true,
		Match: func(v Value) bool {
			if !v.IsObject() || !v.Has("incidentId") {
				return false
			}
			if !v.Has("detectorUrl") && !v.Has("detectorId") {
				return false
			}
			return v.Has("detector") || v.Has("sf_schema") || v.Has("statusExtended") || v.Has("eventType") || v.Has("detectOnCondition") ||
				strings.Contains(v.Get("detectorUrl").String(), "signalfx.com")
		},
		Map: func(v Value) ([]Event, error) {
			var e Event
			// Some senders nest the rule's fields in inputs (Keep's sample
			// does); the top level wins.
			first := func(keys ...string) (string, string) {
				for _, k := range keys {
					if s := Rendered(v.Get(k).String()); s != "" {
						return s, k
					}
					if s := Rendered(v.Get("inputs", k).String()); s != "" {
						return s, "inputs." + k
					}
				}
				return "", ""
			}
			detector, df := first("detector", "detectorName")
			rule, rf := first("rule", "ruleName")
			detectorID, dif := first("detectorId")
			if detectorID == "" {
				if m := signalFxDetectorURL.FindStringSubmatch(v.Get("detectorUrl").String()); m != nil {
					detectorID, dif = m[1], "detectorUrl"
				}
			}

			if t, f := first("messageTitle"); t != "" {
				e.Set(PartTitle, t, f)
			} else if detector != "" && rule != "" {
				e.Set(PartTitle, detector+": "+rule, df+"+"+rf)
			} else if t, f := first("detector", "rule", "description"); t != "" {
				e.Set(PartTitle, t, f)
			}

			check, cf := detector, df
			if check == "" {
				check, cf = detectorID, dif
			}
			switch {
			case check != "" && rule != "":
				e.Set(PartRule, check+" / "+rule, cf+"+"+rf)
			case check != "":
				e.Set(PartRule, check, cf)
			case rule != "":
				e.Set(PartRule, rule, rf)
			}

			if s, f := first("severity"); s != "" {
				e.Set(PartSeverity, s, f)
			}
			status, _ := first("statusExtended", "status", "anomalyState")
			e.Status = Status(status)
			if f := FoldLevel(status); f == "manuallyresolved" || f == "stopped" {
				e.Status = openrecall.StatusResolved
			}
			id, f := first("incidentId")
			e.SetID(f, "sfx-", "", id)
			e.Timestamp = v.Get("timestamp").Time()

			dims := signalFxDimensions(v)
			for k, val := range dims {
				e.Label(k, val)
			}
			for _, k := range []string{"sf_service", "service", "service.name"} {
				if dims[k] != "" {
					e.Set(PartService, dims[k], "dimensions."+k)
					break
				}
			}
			for _, k := range []string{"sf_environment", "deployment.environment", "environment", "env"} {
				if dims[k] != "" {
					e.Set(PartEnvironment, dims[k], "dimensions."+k)
					break
				}
			}
			for _, k := range []string{"host", "host.name", "aws_instance_id", "gcp_id", "azure_resource_id", "k8s.pod.name", "kubernetes_pod_name", "container_id"} {
				if dims[k] != "" {
					e.Host = dims[k]
					break
				}
			}
			e.Label("detector_id", detectorID)

			body, _ := first("messageBody")
			description, _ := first("description")
			if strings.Contains(body, description) {
				description = ""
			}
			on, _ := first("detectOnCondition")
			off, _ := first("detectOffCondition")
			metric, _ := first("originatingMetric")
			pairs := [][2]string{
				{"detector", detector}, {"rule", rule}, {"status", status},
				{"condition", on}, {"clear condition", off}, {"metric", metric},
			}
			pairs = append(pairs, signalFxInputs(v)...)
			runbook, _ := first("runbookUrl")
			e.Link(openrecall.LinkSource, v.Get("detectorUrl").String())
			e.Link(openrecall.LinkRunbook, runbook)
			tip, _ := first("tip")
			pairs = append(pairs, [2]string{"tip", tip}, [2]string{"runbook", runbook})
			e.Text = JoinText(description, body, Evidence(pairs...))
			return []Event{e}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"Critical", "Major", "Minor", "Warning", "Info"},
		Doc: Doc{
			Point:    "Data Management → Webhook integration with URL http://HOST:9555/api/v1/alerts/signalfx, added as an alert recipient of the detector's rules",
			Auth:     "the integration's Headers: Authorization: Bearer TOKEN",
			Title:    "messageTitle, else detector: rule",
			Severity: "severity (Critical, Major, Minor, Warning, Info)",
			Service:  "the sf_service dimension of the inputs",
			Rule:     "detector / rule (the detector id when its name is missing)",
			ID:       "sfx- + incidentId (one incident, one episode)",
			Source:   "keephq/keep signalfx_provider alerts_mock.py (MIT); written for openrecall after the documented request body fields",
		},
	}
}

// signalFxDetectorURL finds the detector id in a detector link.
var signalFxDetectorURL = regexp.MustCompile(`/detector/([A-Za-z0-9_-]+)`)

// signalFxDimensions merges the dimensions of the payload: a top-level
// dimensions object, then each input's key (or dimensions) object, the
// first value of a dimension winning, inputs taken in name order.
func signalFxDimensions(v Value) map[string]string {
	out := map[string]string{}
	add := func(m map[string]string) {
		for k, val := range m {
			if _, ok := out[k]; !ok && Rendered(val) != "" {
				out[k] = val
			}
		}
	}
	add(v.Get("dimensions").Labels())
	inputs := v.Get("inputs")
	for _, name := range inputs.Keys() {
		in := inputs.Get(name)
		add(in.Get("key").Labels())
		add(in.Get("dimensions").Labels())
	}
	return out
}

// signalFxInputs renders each input of the rule as evidence: its name, its
// value and the SignalFlow fragment it comes from.
func signalFxInputs(v Value) [][2]string {
	inputs := v.Get("inputs")
	var out [][2]string
	names := inputs.Keys()
	sort.Strings(names)
	for _, name := range names {
		in := inputs.Get(name)
		if !in.IsObject() || !in.Has("value") {
			continue
		}
		s := in.Get("value").String()
		if f := in.Get("fragment").String(); f != "" {
			s += " (" + f + ")"
		}
		out = append(out, [2]string{"input " + name, s})
	}
	return out
}
