package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// sentinelOne reads SentinelOne threats as the Management API returns them
// (GET /web/api/v2.1/threats: {"data": [threat, …]}, or one threat) and as
// a script or a SentinelOne Singularity Hub app forwarding them posts them:
// id, threatInfo{threatId, threatName, classification, confidenceLevel,
// incidentStatus, analystVerdict, mitigationStatus, filePath, sha1,
// originatorProcess, processUser, detectionType, engines, createdAt},
// agentRealtimeInfo{agentComputerName, siteName, accountName, agentOsType},
// agentDetectionInfo and indicators[]{category, tactics[]{name,
// techniques[]{name}}}. Each threat is one event.
//
// The rule is threatInfo.threatName exactly as sent (the file or the
// behavioural detection SentinelOne names the threat by, the same on every
// agent); the title is "<classification>: <threatName>". The id is "s1-" +
// threatInfo.threatId (else id): a threat's later states keep it (Episode).
// The agent's computer is the Host; the service is the site
// (agentRealtimeInfo.siteName), never the agent.
//
// SentinelOne rates a threat by its confidence, not a severity: malicious
// is high, suspicious medium (n/a stays unknown). incidentStatus resolved
// is resolved, in_progress acknowledged, unresolved firing.
//
// Entities: user (threatInfo.processUser), process (originatorProcess) and
// file (threatInfo.filePath's file name). The indicators' ATT&CK tactics
// and techniques are the labels mitre_tactics and mitre_techniques.
func sentinelOne() Sender {
	scale := Scale{"malicious": openrecall.SeverityHigh, "suspicious": openrecall.SeverityMedium}
	return Sender{
		Name: "sentinelone", Display: "SentinelOne (threats)", Security: true, Episode: true,
		Match: func(v Value) bool {
			return s1Threat(v) || (v.Get("data").IsArray() && v.Get("data").Len() > 0 && s1Threat(v.Get("data").At(0)))
		},
		Map: func(v Value) ([]Event, error) {
			if s1Threat(v) {
				return []Event{s1Event(v, "")}, nil
			}
			var out []Event
			for _, t := range v.Get("data").Elements() {
				if s1Threat(t) {
					out = append(out, s1Event(t, "data[]."))
				}
			}
			return out, nil
		},
		Severity: scale.Map,
		Levels:   []string{"malicious", "suspicious"},
		Doc: Doc{
			Point:    "a script or Singularity Hub workflow reading GET /web/api/v2.1/threats and POSTing the threat (or the data[] page) to http://HOST:9555/api/v1/alerts/sentinelone",
			Auth:     "Authorization: Bearer TOKEN on the POST",
			Title:    "threatInfo.classification + \": \" + threatInfo.threatName",
			Severity: "threatInfo.confidenceLevel (malicious high, suspicious medium)",
			Service:  "agentRealtimeInfo.siteName (never the agent)",
			Rule:     "threatInfo.threatName",
			ID:       "threatInfo.threatId, else id",
			Source:   "SentinelOne Management API v2.1 threat fields as public integrations document them (field names only); threats written for openrecall in that shape",
		},
	}
}

// s1Threat reports whether v is a SentinelOne threat.
func s1Threat(v Value) bool {
	ti := v.Get("threatInfo")
	return ti.IsObject() && ti.Get("threatName").String() != "" && (ti.Has("threatId") || v.Has("id")) &&
		(v.Get("agentRealtimeInfo").IsObject() || v.Get("agentDetectionInfo").IsObject())
}

func s1Event(t Value, prefix string) Event {
	var e Event
	ti := t.Get("threatInfo")
	p := prefix + "threatInfo."
	name := ti.Get("threatName").String()
	e.Set(PartRule, name, p+"threatName")
	title := name
	if c := ti.Get("classification").String(); c != "" {
		title = c + ": " + name
	}
	e.Set(PartTitle, title, p+"classification+"+p+"threatName")
	e.Set(PartSeverity, ti.Get("confidenceLevel").String(), p+"confidenceLevel")
	if !e.SetID(p+"threatId", "s1-", "", ti.Get("threatId").String()) {
		e.SetID(prefix+"id", "s1-", "", t.Get("id").String())
	}
	switch FoldLevel(ti.Get("incidentStatus").String()) {
	case "resolved":
		e.Status = openrecall.StatusResolved
	case "inprogress":
		e.Status = openrecall.StatusAcknowledged
	default:
		e.Status = openrecall.StatusFiring
	}
	rt := t.Get("agentRealtimeInfo")
	e.Host = cloudWatchFirst(rt.Get("agentComputerName").String(), t.Path("agentDetectionInfo.agentComputerName").String())
	e.Set(PartService, rt.Get("siteName").String(), prefix+"agentRealtimeInfo.siteName")
	e.Timestamp = ti.Get("createdAt").Time()
	e.Entity("user", ti.Get("processUser").String())
	e.Entity("process", ti.Get("originatorProcess").String())
	file := ti.Get("filePath").String()
	if i := strings.LastIndexAny(file, `\/`); i >= 0 {
		file = file[i+1:]
	}
	e.Entity("file", file)
	var tactics, techniques []string
	for _, ind := range t.Get("indicators").Elements() {
		for _, tac := range ind.Get("tactics").Elements() {
			if n := tac.Get("name").String(); n != "" {
				tactics = append(tactics, n)
			}
			for _, tech := range tac.Get("techniques").Elements() {
				if n := tech.Get("name").String(); n != "" {
					techniques = append(techniques, n)
				}
			}
		}
	}
	e.Label("mitre_tactics", strings.Join(dedupe(tactics), ","))
	e.Label("mitre_techniques", strings.Join(dedupe(techniques), ","))
	e.Label("classification", ti.Get("classification").String())
	e.Label("confidence", ti.Get("confidenceLevel").String())
	e.Label("analyst_verdict", ti.Get("analystVerdict").String())
	e.Label("mitigation_status", ti.Get("mitigationStatus").String())
	e.Label("detection_type", ti.Get("detectionType").String())
	e.Label("site", rt.Get("siteName").String())
	e.Label("account", rt.Get("accountName").String())
	e.Label("os", rt.Get("agentOsType").String())
	e.Text = JoinText(Evidence(
		[2]string{"threat", name},
		[2]string{"classification", ti.Get("classification").String()},
		[2]string{"confidence", ti.Get("confidenceLevel").String()},
		[2]string{"engines", strings.Join(ti.Get("engines").Strings(), ", ")},
		[2]string{"detection type", ti.Get("detectionType").String()},
		[2]string{"file", ti.Get("filePath").String()},
		[2]string{"sha1", ti.Get("sha1").String()},
		[2]string{"process", ti.Get("originatorProcess").String()},
		[2]string{"user", ti.Get("processUser").String()},
		[2]string{"agent", e.Host},
		[2]string{"mitigation", ti.Get("mitigationStatus").String()},
		[2]string{"verdict", ti.Get("analystVerdict").String()},
		[2]string{"tactics", strings.Join(dedupe(tactics), ", ")},
		[2]string{"techniques", strings.Join(dedupe(techniques), ", ")},
	))
	return e
}

// dedupe returns ss without repeats, in first-seen order.
func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
