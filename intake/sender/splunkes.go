package sender

import (
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// splunkES reads Splunk Enterprise Security notable events, a security
// detection sender: every notable is an attack (DESIGN §4). A notable
// arrives either as the notable's own JSON (rule_name, rule_title,
// security_domain, urgency, severity, src, dest, user, event_id, orig_sid,
// notable_type, drilldown_*, status_label…, as SOAR and search exports send
// it) or through the webhook alert action of a correlation search, its
// fields in result{}.
//
// Recognised by the notable's own markers: security_domain, notable_type,
// orig_sid, an event_id of the form <guid>@@notable@@<hash>, index notable,
// a search named "… - Rule" (ES's correlation searches), or the ES app; a
// plain Splunk webhook without any of them is splunk's.
//
// The rule is rule_name exactly as sent (the correlation search's rule),
// else search_name ("Access - Brute Force Access Behavior Detected - Rule",
// "ESCU - … - Rule"). The title is the rule; rule_title (the notable's
// title, its tokens such as $user$ already expanded) opens the text, which
// is the detection's evidence, so that one rule fired for another user or
// host keeps its Alert DNA. Severity: urgency (critical,
// high, medium, low, informational: ES's own mix of the rule's severity and
// the asset's priority), else severity on the same scale.
//
// Entities: user, src_user, dest_user (the accounts), process and
// parent_process (their _name fields, the image, else the field itself),
// command (CIM's process, the command line, when it is more than the
// image); the evidence (src, dest,
// signature, process, command, file, url, the original event) goes into the
// text. The host is dest (or dest_host, dvc). Status: status_label (or the
// numeric status) New is firing, In Progress and Pending acknowledged,
// Resolved and Closed resolved.
//
// The id is "splunk-es-" and event_id, one per notable (Episode); a webhook
// without one has its sid.
func splunkES() Sender {
	return Sender{
		Name: "splunk-es", Display: "Splunk ES notable events", Security: true, Episode: true,
		Match: func(v Value) bool { return splunkESWebhook(v) || splunkESNotable(v) },
		Map: func(v Value) ([]Event, error) {
			var e Event
			r, prefix := v, ""
			if splunkWebhook(v) {
				r, prefix = v.Get("result"), "result."
			}
			rf := func(keys ...string) (string, string) {
				for _, k := range keys {
					x := r.Get(k)
					s := x.String()
					if x.IsArray() {
						s = strings.Join(x.Strings(), ", ")
					}
					if s = Rendered(s); s != "" {
						return s, prefix + k
					}
				}
				return "", ""
			}
			search, sf := rf("search_name", "source")
			if search == "" {
				search, sf = Rendered(v.Get("search_name").String()), "search_name"
			}
			if s, f := rf("rule_name"); s != "" {
				e.Set(PartRule, s, f)
			} else {
				e.Set(PartRule, search, sf)
			}
			// rule_title is the notable's title with the event's tokens
			// ($user$, $dest$) expanded: evidence, so it opens the text, and
			// the title is the rule (a detection's DNA reads its title).
			e.Set(PartTitle, e.Rule, e.Origin[PartRule])
			title, _ := rf("rule_title")
			if s, f := rf("urgency", "severity"); s != "" {
				e.Set(PartSeverity, s, f)
			}
			status, _ := rf("status_label", "status_group")
			if status == "" {
				if n, err := strconv.Atoi(r.Get("status").String()); err == nil && n >= 1 && n <= 5 {
					status = [...]string{"New", "In Progress", "Pending", "Resolved", "Closed"}[n-1]
				}
			}
			switch FoldLevel(status) {
			case "inprogress", "pending":
				e.Status = openrecall.StatusAcknowledged
			default:
				e.Status = Status(status)
			}
			if id, f := rf("event_id"); !e.SetID(f, "splunk-es-", "", id) && !e.SetID("sid", "splunk-es-", "", v.Get("sid").String()) {
				sid, f := rf("orig_sid")
				t, _ := rf("_time")
				e.SetID(f+"+_time", "splunk-es-", "-", sid, t)
			}
			for _, k := range []string{"_time", "orig_time", "info_search_time"} {
				if t := r.Get(k).Time(); !t.IsZero() {
					e.Timestamp = t
					break
				}
			}
			e.Host, _ = rf("dest", "dest_host", "dest_nt_host", "dvc", "dvc_host")
			for _, ent := range [][]string{{"user", "user", "user_name"}, {"src_user", "src_user", "src_user_name"}, {"dest_user", "dest_user", "dest_user_name", "target_user"},
				{"process", "process_name", "process"}, {"parent_process", "parent_process_name", "parent_process"}} {
				s, _ := rf(ent[1:]...)
				e.Entity(ent[0], s)
			}
			// CIM's process is the command line, process_name the image.
			if cmd, _ := rf("process"); cmd != "" && cmd != e.Entities["process"] {
				e.Entity("command", cmd)
			}
			for _, k := range []string{"security_domain", "notable_type", "disposition_label", "owner", "risk_score", "risk_object", "risk_object_type"} {
				s, _ := rf(k)
				e.Label(k, s)
			}
			if mitre := splunkESMitre(r); mitre != "" {
				e.Label("mitre_attack", mitre)
			}
			if !v.Get("app").IsNull() && prefix != "" {
				e.Label("splunk_app", v.Get("app").String())
			}
			e.Link(openrecall.LinkSource, v.Get("results_link").String())
			description, _ := rf("rule_description", "savedsearch_description", "description")
			var pairs [][2]string
			for _, k := range []string{"src", "src_ip", "src_user", "dest", "dest_ip", "dest_port", "user", "dest_user", "action", "app", "signature", "signature_id",
				"process", "process_name", "process_path", "parent_process", "command", "file_name", "file_path", "file_hash", "url", "count", "security_domain", "orig_raw", "_raw"} {
				s, _ := rf(k)
				pairs = append(pairs, [2]string{k, s})
			}
			e.Text = JoinText(title, description, Evidence(pairs...))
			return []Event{e}, nil
		},
		Severity: Scale{
			"critical": openrecall.SeverityCritical, "high": openrecall.SeverityHigh, "medium": openrecall.SeverityMedium,
			"low": openrecall.SeverityLow, "informational": openrecall.SeverityInfo, "info": openrecall.SeverityInfo,
		}.Map,
		Levels: []string{"critical", "high", "medium", "low", "informational"},
		Doc: Doc{
			Point:    "the correlation search's Adaptive Response → Webhook (or a search over the notable index with the webhook alert action), URL http://HOST:9555/api/v1/alerts/splunk-es?token=TOKEN",
			Auth:     "?token= (the webhook alert action sets no header)",
			Title:    "rule_name, else search_name",
			Severity: "urgency (critical, high, medium, low, informational), else severity",
			Service:  "none (a notable names no service)",
			Rule:     "rule_name, else search_name (\"… - Rule\")",
			ID:       "splunk-es- + event_id (one per notable), else sid",
			Source:   "demisto/content SplunkPy test_data/test_notable_event.json (MIT); written for openrecall",
		},
	}
}

// splunkWebhook reports whether v has the shape of Splunk's webhook alert
// action: sid and search_name, with results_link or a result object.
func splunkWebhook(v Value) bool {
	return v.IsObject() && v.Has("sid") && v.Has("search_name") && (v.Has("results_link") || v.Get("result").IsObject())
}

// splunkESWebhook reports whether v is Splunk's webhook alert action
// carrying a notable or sent by an ES correlation search.
func splunkESWebhook(v Value) bool {
	if !splunkWebhook(v) {
		return false
	}
	if splunkESStrong(v.Get("result")) {
		return true
	}
	if strings.HasSuffix(strings.TrimSpace(v.Get("search_name").String()), " - Rule") {
		return true
	}
	switch v.Get("app").String() {
	case "SplunkEnterpriseSecuritySuite", "DA-ESS-ContentUpdate", "SA-ThreatIntelligence", "SA-AccessProtection", "SA-EndpointProtection", "SA-NetworkProtection", "SA-IdentityManagement":
		return true
	}
	return false
}

// splunkESNotable reports whether v is a notable's own JSON: one of its
// strong markers and a rule (rule_name or search_name).
func splunkESNotable(v Value) bool {
	if !v.IsObject() || splunkWebhook(v) {
		return false
	}
	return splunkESStrong(v) && (v.Has("rule_name") || v.Has("search_name") || v.Has("rule_title"))
}

// splunkESStrong reports whether an object carries a marker only notables
// carry.
func splunkESStrong(r Value) bool {
	if !r.IsObject() {
		return false
	}
	for _, k := range []string{"security_domain", "notable_type", "orig_sid", "orig_rid"} {
		if r.Has(k) {
			return true
		}
	}
	if strings.Contains(r.Get("event_id").String(), "@@notable@@") || r.Get("index").String() == "notable" {
		return true
	}
	name := strings.TrimSpace(r.Get("search_name").String())
	return r.Has("rule_name") && strings.HasSuffix(name, " - Rule")
}

// splunkESMitre returns the ATT&CK techniques a notable's annotations name
// (annotations.mitre_attack, an object or its JSON text), comma-joined.
func splunkESMitre(r Value) string {
	ann := r.Get("annotations")
	if s := ann.String(); strings.HasPrefix(strings.TrimSpace(s), "{") {
		if parsed, err := Parse([]byte(s)); err == nil {
			ann = parsed
		}
	}
	var out []string
	for _, p := range []string{"mitre_attack", "mitre_attack.mitre_technique_id"} {
		out = append(out, ann.Path(p).Strings()...)
		out = append(out, r.Path("annotations."+p).Strings()...)
	}
	seen := map[string]bool{}
	var uniq []string
	for _, s := range out {
		if !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	return strings.Join(uniq, ", ")
}
