package sender

import (
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// wazuh is the Wazuh adapter: a Wazuh alert as alerts.json writes it and
// as a custom integration with <alert_format>json</alert_format> posts it
// (timestamp, rule{id, level, description, groups, mitre, firedtimes,
// pci_dss…}, agent{id, name, ip}, manager, id, full_log, predecoder,
// decoder, data, syscheck, location), and the same alert carried in
// all_fields by Wazuh's Shuffle integration (an envelope: Open returns it).
//
// The rule is rule.id exactly as sent ("5716"), the title rule.description.
// The id is "wazuh-" + the alert's id: one alert is one event (Episode).
// The agent (agent.name, else agent.ip) is the host, never the service:
// the same rule on another agent is the same alert. The service is an agent
// label service or app, else the program the log came from
// (predecoder.program_name: "sshd"), which keeps the events of Wazuh's
// generic rules apart; the environment an agent label env or environment.
//
// Severity reads rule.level by what Wazuh's own "Rules classification"
// table says each level means (levels 0–15; the rules accept 16): 0–2
// (ignored, system notifications: no security relevance) info; 3–6
// (authorized events, low priority and user errors, low relevance attacks)
// low; 7–9 ("bad word" matches, first-time events, errors from an invalid
// source: "may have security relevance") medium; 10–13 (multiple user
// errors and integrity warnings, which "may indicate an attack", and high
// importance events) high; 14 (high importance security event: "indicates
// an attack"), 15 (severe attack) and 16 critical.
//
// Entities are what acted: user (data.srcuser, a Windows
// subjectUserName, an audit auid), target_user (data.dstuser, a Windows
// targetUserName), process and command (a Windows image, newProcessName or
// processName and commandLine,
// audit exe and command), parent_process, and file (syscheck.path, the
// file a file-integrity alert is about). The evidence is full_log, the
// decoded data fields and syscheck's changes.
func wazuh() Sender {
	return Sender{
		Name: "wazuh", Display: "Wazuh", Security: true, Episode: true,
		Match: func(v Value) bool {
			return wazuhAlert(v) || (v.Get("all_fields").IsObject() && wazuhAlert(v.Get("all_fields")))
		},
		Open: func(v Value) (Value, bool) {
			inner := v.Get("all_fields")
			return inner, !wazuhAlert(v) && wazuhAlert(inner)
		},
		Map:      wazuhMap,
		Severity: wazuhSeverity,
		Levels:   []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"},
		Doc: Doc{
			Point:    "ossec.conf <integration>: <name>custom-openrecall</name>, <hook_url>http://HOST:9555/api/v1/alerts/wazuh</hook_url>, <alert_format>json</alert_format> and a script posting the alert file; or the shuffle integration's hook_url",
			Auth:     "the integration script sets Authorization: Bearer TOKEN (<api_key>); Shuffle: ?token=TOKEN in hook_url",
			Title:    "rule.description",
			Severity: "rule.level (0–2 info, 3–6 low, 7–9 medium, 10–13 high, 14–16 critical)",
			Service:  "agent.labels.service, else predecoder.program_name (never the agent)",
			Rule:     "rule.id",
			ID:       "id (the alert's id)",
			Source:   "payloads written for openrecall after Wazuh's alerts.json format and its integrations (wazuh/wazuh integrations/shuffle.py)",
		},
	}
}

// wazuhAlert reports whether v is a Wazuh alert: a rule with an id and a
// numeric level, an agent, and one of the members Wazuh's analysis engine
// adds.
func wazuhAlert(v Value) bool {
	r := v.Get("rule")
	if !r.IsObject() || r.Get("id").String() == "" {
		return false
	}
	if _, ok := r.Get("level").Float(); !ok {
		return false
	}
	return v.Get("agent").IsObject() && (v.Has("manager") || v.Has("decoder") || v.Has("location") || v.Has("full_log"))
}

// wazuhSeverity maps a rule level to a severity by Wazuh's rules
// classification.
func wazuhSeverity(raw string) openrecall.Severity {
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil {
		f, ok := Of(strings.TrimSpace(raw)).Float()
		if !ok {
			return openrecall.SeverityUnknown
		}
		n = int(f)
	}
	switch {
	case n < 0:
		return openrecall.SeverityUnknown
	case n <= 2:
		return openrecall.SeverityInfo
	case n <= 6:
		return openrecall.SeverityLow
	case n <= 9:
		return openrecall.SeverityMedium
	case n <= 13:
		return openrecall.SeverityHigh
	}
	return openrecall.SeverityCritical
}

// wazuhJoin joins an array's (or a scalar's) text with commas.
func wazuhJoin(v Value) string { return strings.Join(v.Strings(), ",") }

func wazuhMap(v Value) ([]Event, error) {
	if !wazuhAlert(v) && wazuhAlert(v.Get("all_fields")) {
		v = v.Get("all_fields")
	}
	var e Event
	r := v.Get("rule")
	e.Set(PartRule, r.Get("id").String(), "rule.id")
	if !e.Set(PartTitle, Rendered(r.Get("description").String()), "rule.description") {
		e.Set(PartTitle, "Wazuh rule "+r.Get("id").String(), "rule.id")
	}
	e.Set(PartSeverity, r.Get("level").String(), "rule.level")
	e.SetID("id", "wazuh-", "", v.Get("id").String())
	e.Timestamp = v.Get("timestamp").Time()
	agent := v.Get("agent")
	e.Host, _ = agent.First("name", "ip")
	labels := agent.Get("labels")
	for _, k := range []string{"service", "app"} {
		if e.Set(PartService, Rendered(labels.Get(k).String()), "agent.labels."+k) {
			break
		}
	}
	if e.Service == "" {
		e.Set(PartService, v.Path("predecoder.program_name").String(), "predecoder.program_name")
	}
	for _, k := range []string{"env", "environment"} {
		if e.Set(PartEnvironment, Rendered(labels.Get(k).String()), "agent.labels."+k) {
			break
		}
	}

	data := v.Get("data")
	win := data.Path("win.eventdata")
	audit := data.Get("audit")
	first := func(vals ...string) string {
		for _, s := range vals {
			if s = strings.TrimSpace(s); s != "" && s != "-" {
				return s
			}
		}
		return ""
	}
	e.Entity("user", first(data.Get("srcuser").String(), win.Get("subjectUserName").String(), audit.Get("auid").String()))
	e.Entity("target_user", first(data.Get("dstuser").String(), win.Get("targetUserName").String()))
	e.Entity("process", first(win.Get("image").String(), win.Get("newProcessName").String(), win.Get("processName").String(), audit.Get("exe").String()))
	e.Entity("command", first(win.Get("commandLine").String(), audit.Get("command").String()))
	e.Entity("parent_process", first(win.Get("parentImage").String(), win.Get("parentProcessName").String()))
	e.Entity("file", v.Path("syscheck.path").String())

	mitre := r.Get("mitre")
	e.Label("rule_groups", wazuhJoin(r.Get("groups")))
	e.Label("mitre_id", wazuhJoin(mitre.Get("id")))
	e.Label("mitre_tactic", wazuhJoin(mitre.Get("tactic")))
	e.Label("mitre_technique", wazuhJoin(mitre.Get("technique")))
	e.Label("agent_id", agent.Get("id").String())
	e.Label("agent_name", agent.Get("name").String())
	e.Label("agent_ip", agent.Get("ip").String())
	e.Label("manager", v.Path("manager.name").String())
	e.Label("decoder", v.Path("decoder.name").String())
	e.Label("location", v.Get("location").String())
	e.Label("rule_level", r.Get("level").String())

	pairs := [][2]string{
		{"rule", r.Get("id").String() + " (level " + r.Get("level").String() + ")"},
		{"groups", strings.Join(r.Get("groups").Strings(), ", ")},
		{"mitre", strings.TrimSpace(wazuhJoin(mitre.Get("id")) + " " + wazuhJoin(mitre.Get("tactic")) + " " + wazuhJoin(mitre.Get("technique")))},
		{"agent", strings.TrimSpace(agent.Get("name").String() + " " + agent.Get("ip").String())},
		{"location", v.Get("location").String()},
		{"decoder", v.Path("decoder.name").String()},
	}
	for _, p := range data.Scalars(48) {
		pairs = append(pairs, [2]string{"data." + p[0], p[1]})
	}
	for _, p := range v.Get("syscheck").Scalars(24) {
		pairs = append(pairs, [2]string{"syscheck." + p[0], p[1]})
	}
	e.Text = JoinText(v.Get("full_log").String(), Evidence(pairs...))
	return []Event{e}, nil
}
