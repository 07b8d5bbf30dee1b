package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// elasticSecurity reads Elastic Security detection alerts: the alert
// documents of the .alerts-security.alerts index (8.x: kibana.alert.*
// fields) and the signals of 7.x (signal.*), as a Kibana Webhook connector
// posts them from a detection rule's action ({{#context.alerts}}{{{.}}}
// {{/context.alerts}}, one document a body, or a JSON array or an
// {"alerts": [...]} of them, each document read on its own), as
// Elasticsearch returns them (a hit with _source), or exported. Fields come
// flattened ("kibana.alert.rule.name" as one key) or nested; both read alike.
// It is recognised by a detection rule's name or id under kibana.alert.rule
// or signal.rule together with a second alert field (uuid, severity, risk
// score, status, reason, original time).
//
// Rule is kibana.alert.rule.rule_id (the rule's signature id, stable across
// spaces, clusters and versions of a prebuilt rule), else
// kibana.alert.rule.uuid, else the rule name — exactly as sent, so the
// "Potential CVE-2021-42278 …" and "… CVE-2021-42287 …" rules are two. The
// title is the rule name. The id is "es-" + kibana.alert.uuid (signal: the
// document id), one per detection: the ids name episodes. Status:
// workflow_status closed (signal.status closed) is resolved, acknowledged
// (in-progress) acknowledged, else kibana.alert.status recovered is
// resolved, else firing.
//
// Severity is kibana.alert.severity (the rule's, or its severity override),
// Elastic's scale low, medium, high, critical, mapped one to one; without
// one, the risk score 0–100 as Elastic's own bands (≥ 99 critical, ≥ 73
// high, ≥ 47 medium, else low).
//
// Service names the workload the detection is about, never the host: a
// Kubernetes namespace/deployment (or pod's owner), a container image, a
// cloud account's name or id, an ECS service.name. The host (host.name) is
// the host. Entities: user, process, executable, command line, parent
// process, container image, cloud account. The text is the reason, the rule
// description and the evidence (message, command line, addresses, ATT&CK
// tactics and techniques).
func elasticSecurity() Sender {
	scale := Scale{"critical": openrecall.SeverityCritical, "high": openrecall.SeverityHigh, "medium": openrecall.SeverityMedium, "low": openrecall.SeverityLow}
	return Sender{
		Name: "elastic-security", Display: "Elastic Security", Security: true, Episode: true,
		Match:    elasticSecurityMatch,
		Map:      elasticSecurityMap,
		Severity: elasticSecuritySeverity(scale),
		Levels:   []string{"low", "medium", "high", "critical"},
		Doc: Doc{
			Point: "a detection rule's action: Webhook connector, POST http://HOST:9555/api/v1/alerts/elastic-security, " +
				"body {{#context.alerts}}{{{.}}}{{/context.alerts}} (one alert per action: For each alert), or any export of the alert documents",
			Auth:     "the connector's headers: Authorization: Bearer TOKEN",
			Title:    "kibana.alert.rule.name (signal.rule.name)",
			Severity: "kibana.alert.severity (low, medium, high, critical), else kibana.alert.risk_score",
			Service:  "the workload: orchestrator namespace/resource, container.image.name, cloud.account.name/id, service.name; never host.name",
			Rule:     "kibana.alert.rule.rule_id, else kibana.alert.rule.uuid, else the rule name",
			ID:       "kibana.alert.uuid (signal: _id)",
			Source:   "Elastic Security alert schema (kibana.alert.* and signal.* fields, Elastic docs) and Keep's Kibana provider SIEM template (keephq/keep, MIT)",
		},
	}
}

// elasticSecurityDoc reports whether v is a detection alert document (or
// an Elasticsearch hit of one): a rule name or id under kibana.alert.rule
// or signal.rule, and another alert field. The kibana adapter defers to it.
func elasticSecurityDoc(v Value) bool {
	if src := v.Get("_source"); src.IsObject() {
		v = src
	}
	if r, _ := v.First("kibana.alert.rule.name", "kibana.alert.rule.rule_id", "kibana.alert.rule.uuid"); r != "" {
		x, _ := v.First("kibana.alert.uuid", "kibana.alert.severity", "kibana.alert.risk_score", "kibana.alert.status",
			"kibana.alert.workflow_status", "kibana.alert.reason", "kibana.alert.original_time")
		return x != ""
	}
	if r, _ := v.First("signal.rule.name", "signal.rule.rule_id", "signal.rule.id"); r != "" {
		x, _ := v.First("signal.status", "signal.rule.severity", "signal.rule.risk_score", "signal.reason", "signal.original_time")
		return x != ""
	}
	return false
}

func elasticSecurityMatch(v Value) bool { return elasticSecurityDoc(v) }

// elasticSecuritySeverity maps Elastic's severity words, and a risk score
// when the severity is missing, to severities.
func elasticSecuritySeverity(scale Scale) func(string) openrecall.Severity {
	return func(raw string) openrecall.Severity {
		if s := scale.Map(raw); s != openrecall.SeverityUnknown {
			return s
		}
		f, ok := Value{raw}.Float()
		if !ok || f < 0 || f > 100 {
			return openrecall.SeverityUnknown
		}
		switch {
		case f >= 99:
			return openrecall.SeverityCritical
		case f >= 73:
			return openrecall.SeverityHigh
		case f >= 47:
			return openrecall.SeverityMedium
		}
		return openrecall.SeverityLow
	}
}

func elasticSecurityMap(v Value) ([]Event, error) {
	docID := v.Get("_id").String()
	if src := v.Get("_source"); src.IsObject() {
		v = src
	}
	var e Event
	get := func(paths ...string) (string, string) {
		for _, p := range paths {
			if s := Rendered(v.Path(p).String()); s != "" {
				return s, p
			}
		}
		return "", ""
	}
	set := func(part string, paths ...string) bool {
		s, f := get(paths...)
		return e.Set(part, s, f)
	}

	name, _ := get("kibana.alert.rule.name", "signal.rule.name", "rule.name")
	set(PartTitle, "kibana.alert.rule.name", "signal.rule.name", "rule.name")
	set(PartRule, "kibana.alert.rule.rule_id", "signal.rule.rule_id", "kibana.alert.rule.uuid", "signal.rule.id", "kibana.alert.rule.name", "signal.rule.name")
	if !set(PartSeverity, "kibana.alert.severity", "signal.rule.severity", "kibana.alert.rule.severity") {
		set(PartSeverity, "kibana.alert.risk_score", "signal.rule.risk_score", "kibana.alert.rule.risk_score")
	}
	if uuid, _ := get("kibana.alert.uuid"); !e.SetID("kibana.alert.uuid", "es-", "", uuid) {
		e.SetID("_id", "es-", "", docID)
	}

	workflow, _ := get("kibana.alert.workflow_status", "signal.status")
	status, _ := get("kibana.alert.status")
	switch FoldLevel(workflow) {
	case "closed":
		e.Status = openrecall.StatusResolved
	case "acknowledged", "inprogress":
		e.Status = openrecall.StatusAcknowledged
	default:
		if FoldLevel(status) == "recovered" {
			e.Status = openrecall.StatusResolved
		} else {
			e.Status = openrecall.StatusFiring
		}
	}
	for _, p := range []string{"kibana.alert.original_time", "signal.original_time", "@timestamp", "kibana.alert.start"} {
		if t := v.Path(p).Time(); !t.IsZero() {
			e.Timestamp = t
			break
		}
	}

	// The workload, never the host.
	ns, _ := get("orchestrator.namespace", "kubernetes.namespace", "kubernetes.namespace_name")
	workload, _ := get("orchestrator.resource.parent.name", "kubernetes.deployment.name", "kubernetes.statefulset.name", "kubernetes.daemonset.name")
	switch {
	case ns != "" && workload != "":
		e.Set(PartService, ns+"/"+workload, "orchestrator.namespace+resource")
	case workload != "":
		e.Set(PartService, workload, "orchestrator.resource.parent.name")
	default:
		if !set(PartService, "container.image.name", "cloud.service.name", "service.name") {
			if !set(PartService, "cloud.account.name", "cloud.account.id") && ns != "" {
				e.Set(PartService, ns, "orchestrator.namespace")
			}
		}
	}
	set(PartEnvironment, "labels.env", "labels.environment", "service.environment")
	e.Host, _ = get("host.name", "host.hostname", "agent.name", "observer.name")

	user, _ := get("user.name", "user.email", "user.id")
	proc, _ := get("process.name")
	exe, _ := get("process.executable")
	cmd, _ := get("process.command_line", "process.args")
	parent, _ := get("process.parent.name")
	image, _ := get("container.image.name")
	account, _ := get("cloud.account.id")
	e.Entity("user", user)
	e.Entity("process", proc)
	e.Entity("executable", exe)
	e.Entity("command", cmd)
	e.Entity("parent_process", parent)
	e.Entity("image", image)
	e.Entity("account", account)

	reason, _ := get("kibana.alert.reason", "signal.reason")
	desc, _ := get("kibana.alert.rule.description", "signal.rule.description")
	message, _ := get("message")
	src, _ := get("source.ip", "source.address")
	dst, _ := get("destination.ip", "destination.address")
	dstPort, _ := get("destination.port")
	if dst != "" && dstPort != "" {
		dst += ":" + dstPort
	}
	domain, _ := get("dns.question.name", "url.domain", "destination.domain")
	file, _ := get("file.path")
	tactics, techniques := elasticSecurityThreat(v)
	e.Text = JoinText(reason, desc, Evidence(
		[2]string{"message", message}, [2]string{"command line", cmd}, [2]string{"process", exe},
		[2]string{"parent process", parent}, [2]string{"user", user}, [2]string{"source", src},
		[2]string{"destination", dst}, [2]string{"domain", domain}, [2]string{"file", file},
		[2]string{"tactic", strings.Join(tactics, ", ")}, [2]string{"technique", strings.Join(techniques, ", ")},
	))
	if e.Title == "" {
		e.Set(PartTitle, firstLineOf(reason), "kibana.alert.reason")
	}

	if uuid, _ := get("kibana.alert.rule.uuid", "signal.rule.id"); uuid != "" && uuid != e.Rule {
		e.Label("rule_uuid", uuid)
	}
	if e.Rule != name {
		e.Label("rule_name", name)
	}
	if s, _ := get("kibana.alert.risk_score", "signal.rule.risk_score"); s != "" {
		e.Label("risk_score", s)
	}
	ruleType, _ := get("kibana.alert.rule.type", "signal.rule.type")
	e.Label("rule_type", ruleType)
	e.Label("workflow_status", workflow)
	if len(tactics) > 0 {
		e.Label("mitre_tactics", strings.Join(tactics, ","))
	}
	if len(techniques) > 0 {
		e.Label("mitre_techniques", strings.Join(techniques, ","))
	}
	if tags := v.Path("kibana.alert.rule.tags").Strings(); len(tags) > 0 {
		e.Label("tags", strings.Join(tags, ","))
	} else if tags := v.Path("signal.rule.tags").Strings(); len(tags) > 0 {
		e.Label("tags", strings.Join(tags, ","))
	}
	return []Event{e}, nil
}

// elasticSecurityThreat returns the ATT&CK tactics and techniques of a
// detection ("TA0006 Credential Access", "T1558.003 Kerberoasting") from
// kibana.alert.rule.threat (signal.rule.threat, or ECS threat.*).
func elasticSecurityThreat(v Value) (tactics, techniques []string) {
	seen := map[string]bool{}
	add := func(list *[]string, id, name string) {
		s := strings.TrimSpace(strings.TrimSpace(id) + " " + strings.TrimSpace(name))
		if s != "" && !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	var threats []Value
	for _, p := range []string{"kibana.alert.rule.threat", "signal.rule.threat", "threat"} {
		t := v.Path(p)
		if t.IsArray() {
			threats = append(threats, t.Elements()...)
		} else if t.IsObject() {
			threats = append(threats, t)
		}
	}
	for _, t := range threats {
		add(&tactics, t.Path("tactic.id").String(), t.Path("tactic.name").String())
		techs := t.Get("technique").Elements()
		if t.Get("technique").IsObject() {
			techs = []Value{t.Get("technique")}
		}
		for _, tech := range techs {
			add(&techniques, tech.Get("id").String(), tech.Get("name").String())
			for _, sub := range tech.Get("subtechnique").Elements() {
				add(&techniques, sub.Get("id").String(), sub.Get("name").String())
			}
		}
	}
	return tactics, techniques
}
