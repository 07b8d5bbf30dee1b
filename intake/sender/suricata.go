package sender

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// suricata is the Suricata adapter: EVE JSON records (timestamp, flow_id,
// in_iface, event_type, src_ip, src_port, dest_ip, dest_port, proto,
// app_proto, alert{action, gid, signature_id, rev, signature, category,
// severity, metadata}, http, dns, tls, …) posted one by one (an EVE
// forwarder, a log shipper's HTTP output, a JSON Lines file of eve.json).
//
// Only event_type "alert" is an alert. Match recognises every EVE record
// (so that eve.json can be sent whole), and Map refuses the others — flow,
// netflow, dns, http, tls, fileinfo, anomaly, stats — with a reason: they
// are records of traffic, not detections, and are neither triaged nor
// billed.
//
// The rule is "gid:signature_id" ("1:2018358"), Suricata's own notation
// for a signature (fast.log writes [gid:sid:rev]; the revision is left out,
// as a rule update is the same detection): exactly the signature, the same
// on every sensor and flow, distinct between signatures. The title is
// alert.signature. Addresses, ports and the flow are evidence in the text,
// never identity; the host is the sensor (host, when sensor-name is set),
// the service is empty (a network signature names no service), and there
// are no entities: nothing in an EVE alert names a process, user or image
// that acted. The id is "suricata-" + flow_id + the rule + the event's
// timestamp: one alert record is one detection (Episode), and a redelivered
// line keeps its id.
//
// Severity is alert.severity, the priority of the signature's
// classification (classification.config), where 1 is the most severe: 1
// high, 2 medium, 3 low, 4 (and any larger number) info.
func suricata() Sender {
	return Sender{
		Name: "suricata", Display: "Suricata EVE", Security: true, Episode: true,
		Match: func(v Value) bool {
			t := v.Get("event_type").String()
			if t == "" || !v.Get("timestamp").IsString() {
				return false
			}
			if t == "alert" {
				return v.Get("alert").IsObject() && v.Path("alert.signature_id").String() != ""
			}
			if t == "stats" {
				return v.Get("stats").IsObject()
			}
			return v.Has("flow_id") && v.Has("src_ip") && v.Has("proto")
		},
		Map:      suricataMap,
		Severity: suricataSeverity,
		Levels:   []string{"1", "2", "3", "4"},
		Doc: Doc{
			Point:    "forward eve.json's alert records (types: alert) to http://HOST:9555/api/v1/alerts/suricata, one record a request (Filebeat/Fluent Bit/Vector HTTP output), or feed eve.json as JSON Lines",
			Auth:     "the forwarder's Authorization: Bearer TOKEN header",
			Title:    "alert.signature",
			Severity: "alert.severity (1 high, 2 medium, 3 low, 4 info)",
			Service:  "none (a network signature names no service)",
			Rule:     "alert.gid:alert.signature_id",
			ID:       "flow_id + gid:signature_id + timestamp",
			Source:   "EVE alert records written for openrecall after Suricata's EVE JSON format documentation",
		},
	}
}

// suricataSeverity maps a classification priority: 1 is the most severe.
func suricataSeverity(raw string) openrecall.Severity {
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	switch {
	case err != nil || n < 1:
		return openrecall.SeverityUnknown
	case n == 1:
		return openrecall.SeverityHigh
	case n == 2:
		return openrecall.SeverityMedium
	case n == 3:
		return openrecall.SeverityLow
	}
	return openrecall.SeverityInfo
}

func suricataMap(v Value) ([]Event, error) {
	if t := v.Get("event_type").String(); t != "alert" {
		return nil, fmt.Errorf("an EVE %q record is no alert (only event_type alert is)", t)
	}
	var e Event
	a := v.Get("alert")
	sid := a.Get("signature_id").String()
	gid := a.Get("gid").String()
	if gid == "" {
		gid = "1"
	}
	rule := ""
	if Rendered(sid) != "" {
		// Without its signature id a record names no rule (and no id: "1:"
		// would be every such record's).
		rule = gid + ":" + sid
	}
	e.Set(PartRule, rule, "alert.gid+alert.signature_id")
	if !e.Set(PartTitle, a.Get("signature").String(), "alert.signature") && rule != "" {
		e.Set(PartTitle, "Suricata signature "+rule, "alert.signature_id")
	}
	e.Set(PartSeverity, a.Get("severity").String(), "alert.severity")
	ts := v.Get("timestamp").String()
	e.SetID("flow_id+alert.signature_id+timestamp", "suricata-", "-", v.Get("flow_id").String(), rule, ts)
	e.Timestamp = v.Get("timestamp").Time()
	e.Host = v.Get("host").String()

	e.Label("signature_id", sid)
	e.Label("gid", gid)
	e.Label("rev", a.Get("rev").String())
	e.Label("category", a.Get("category").String())
	e.Label("action", a.Get("action").String())
	e.Label("app_proto", v.Get("app_proto").String())
	e.Label("proto", v.Get("proto").String())
	e.Label("in_iface", v.Get("in_iface").String())
	for _, k := range a.Get("metadata").Keys() {
		e.Label("metadata."+k, strings.Join(a.Get("metadata").Get(k).Strings(), ","))
	}

	endpoint := func(ip, port string) string {
		ip, port = v.Get(ip).String(), v.Get(port).String()
		if port == "" {
			return ip
		}
		if strings.Contains(ip, ":") {
			return "[" + ip + "]:" + port
		}
		return ip + ":" + port
	}
	pairs := [][2]string{
		{"signature", a.Get("signature").String()},
		{"rule", rule + ":" + a.Get("rev").String()},
		{"category", a.Get("category").String()},
		{"action", a.Get("action").String()},
		{"flow", strings.TrimSpace(v.Get("proto").String() + " " + endpoint("src_ip", "src_port") + " -> " + endpoint("dest_ip", "dest_port"))},
		{"app_proto", v.Get("app_proto").String()},
		{"direction", v.Get("direction").String()},
		{"in_iface", v.Get("in_iface").String()},
	}
	for _, layer := range []string{"http", "dns", "tls", "smtp", "ssh", "fileinfo", "smb"} {
		for _, p := range v.Get(layer).Scalars(24) {
			pairs = append(pairs, [2]string{layer + "." + p[0], p[1]})
		}
	}
	pairs = append(pairs, [2]string{"payload", v.Get("payload_printable").String()})
	e.Text = Evidence(pairs...)
	return []Event{e}, nil
}
