package detectcorpus

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Form is a delivery form of a firing.
type Form string

// The delivery forms Render knows.
const (
	Falcosidekick Form = "falcosidekick" // falcosidekick's webhook output
	Elastic       Form = "elastic"       // a Kibana webhook action of an Elastic Security rule
	Alertmanager  Form = "alertmanager"  // Alertmanager's webhook, fed by falcosidekick
)

// Forms returns every delivery form, in a fixed order.
func Forms() []Form { return []Form{Falcosidekick, Elastic, Alertmanager} }

// DefaultFirings is the number of firings per rule the corpus tests render.
const DefaultFirings = 6

// Firing is one rendered firing of a rule with its ground truth.
type Firing struct {
	Rule Rule
	Form Form
	N    int // the firing's number among its rule's firings
	// Key is the rule's key (ground truth of the detection's identity).
	Key string
	// ATTACK says whether the rule has ATT&CK tags (Rule.HasATTACK).
	ATTACK bool
	// Payload is the JSON document the sender delivers.
	Payload []byte

	// What the firing observed, the same in every form.
	Host, User, Process, CommandLine string
	PID                              int
	ContainerID                      string // empty for an event outside a container
	SourceIP, DestIP                 string
	Time                             time.Time
}

// Render returns firings per rule in the given form (DefaultFirings when
// firings < 1), rules in order and each rule's firings in order. The output
// is a function of its arguments; a firing's event does not depend on form.
// Render panics on an unknown form.
func Render(rules []Rule, form Form, firings int, seed int64) []Firing {
	if firings < 1 {
		firings = DefaultFirings
	}
	out := make([]Firing, 0, len(rules)*firings)
	for _, r := range rules {
		for n := range firings {
			e := newEvent(r, n, seed)
			var payload []byte
			switch form {
			case Falcosidekick:
				payload = mustJSON(sidekick(r, e, seed))
			case Elastic:
				payload = mustJSON(elastic(r, e, seed))
			case Alertmanager:
				payload = mustJSON(alertmanager(r, e, seed))
			default:
				panic(fmt.Sprintf("detectcorpus: unknown form %q", form))
			}
			f := Firing{
				Rule: r, Form: form, N: n, Key: r.Key(), ATTACK: r.HasATTACK(), Payload: payload,
				Host: e.host, User: e.user, Process: e.proc, CommandLine: e.cmdline, PID: e.pid,
				SourceIP: e.srcIP, DestIP: e.dstIP, Time: e.time,
			}
			if e.container {
				f.ContainerID = e.containerID
			}
			out = append(out, f)
		}
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("detectcorpus: " + err.Error())
	}
	return b
}

// falcoPayload is falcosidekick's FalcoPayload, its fields in its order.
type falcoPayload struct {
	UUID         string         `json:"uuid,omitempty"`
	Output       string         `json:"output"`
	Priority     string         `json:"priority"`
	Rule         string         `json:"rule"`
	Time         time.Time      `json:"time"`
	OutputFields map[string]any `json:"output_fields"`
	Source       string         `json:"source"`
	Tags         []string       `json:"tags,omitempty"`
	Hostname     string         `json:"hostname,omitempty"`
}

// priority returns the Falco priority name of a rule (Falco's own, or the
// one a Sigma level maps to) as Falco writes it in its JSON output.
func priority(r Rule) string {
	p := r.Priority
	if r.Source == "sigma" {
		p = map[string]string{"critical": "CRITICAL", "high": "ERROR", "medium": "WARNING", "low": "NOTICE", "informational": "INFO"}[r.Level]
	}
	switch p {
	case "EMERGENCY":
		return "Emergency"
	case "ALERT":
		return "Alert"
	case "CRITICAL":
		return "Critical"
	case "ERROR":
		return "Error"
	case "WARNING":
		return "Warning"
	case "NOTICE":
		return "Notice"
	case "INFO", "INFORMATIONAL":
		return "Informational"
	case "DEBUG":
		return "Debug"
	}
	return "Notice"
}

// sidekick builds what falcosidekick receives from Falco and posts on.
func sidekick(r Rule, e *event, seed int64) falcoPayload {
	p := falcoPayload{
		UUID:     uuidOf("falcosidekick", strconv.FormatInt(seed, 10), r.Key(), strconv.Itoa(e.n)),
		Priority: priority(r),
		Rule:     r.ID,
		Time:     e.time,
		Tags:     append([]string(nil), r.Tags...),
		Hostname: e.host,
	}
	var text string
	if r.Source == "falco" {
		text, p.OutputFields = falcoOutput(r, e)
		p.Source = r.LogSource.Service
	} else {
		text, p.OutputFields = sigmaOutput(r, e)
		p.Rule = r.Title
		p.Source = sigmaSource(r)
	}
	p.Output = e.time.Format("15:04:05.000000000") + ": " + p.Priority + " " + text
	return p
}

func sigmaSource(r Rule) string {
	ls := r.LogSource
	parts := []string{}
	for _, s := range []string{ls.Product, ls.Service, ls.Category} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "_")
}

// sigmaOutput is the output of a Sigma rule's firing forwarded as a Falco
// event: its title and the event's fields, and the rule's author.
func sigmaOutput(r Rule, e *event) (string, map[string]any) {
	fields := map[string]any{
		"evt.time":    e.time.UnixNano(),
		"rule.id":     r.ID,
		"rule.level":  r.Level,
		"rule.author": r.Author,
		"host.name":   e.host,
		"user.name":   e.user,
	}
	var b strings.Builder
	b.WriteString(r.Title)
	b.WriteString(" | host=" + e.host + " user=" + e.user)
	switch e.plat {
	case windows, linux, macos:
		fields["process.name"] = e.proc
		fields["process.pid"] = e.pid
		fields["process.command_line"] = e.cmdline
		fields["process.parent.name"] = e.pproc
		fmt.Fprintf(&b, " process=%s pid=%d parent=%s command=%s", e.proc, e.pid, e.pproc, e.cmdline)
	case aws, gcp, azure, okta, github, kubernetes:
		fields["source.ip"] = e.srcIP
		fields["cloud.region"] = e.region
		fmt.Fprintf(&b, " src_ip=%s region=%s", e.srcIP, e.region)
	default:
		fields["source.ip"] = e.srcIP
		fields["destination.ip"] = e.dstIP
		fields["destination.port"] = e.dstPort
		fmt.Fprintf(&b, " src_ip=%s dst_ip=%s dst_port=%d", e.srcIP, e.dstIP, e.dstPort)
	}
	b.WriteString(" rule_author=" + r.Author)
	return b.String(), fields
}

// Elastic severity and risk score of a Falco priority or Sigma level, by
// the conventions of Elastic's prebuilt rules (21, 47, 73, 99).
func severity(r Rule) (string, int) {
	switch priority(r) {
	case "Emergency", "Alert", "Critical":
		return "critical", 99
	case "Error":
		return "high", 73
	case "Warning":
		return "medium", 47
	}
	return "low", 21
}

// threat builds the rule's threat[] (MITRE ATT&CK framework) from its tags:
// one entry per tactic tag, the technique tags listed under the first; none
// when the rule names no tactic.
func threat(r Rule) []any {
	var tacs []int
	var techs []string
	for _, t := range r.Tags {
		if i := tagTactic(t); i >= 0 && !containsInt(tacs, i) {
			tacs = append(tacs, i)
		} else if id := tagTechnique(t); id != "" && !containsString(techs, id) {
			techs = append(techs, id)
		}
	}
	out := make([]any, 0, len(tacs))
	for k, i := range tacs {
		tc := tactics[i]
		technique := []any{}
		if k == 0 {
			parents := map[string][]any{}
			var order []string
			for _, id := range techs {
				parent, sub, _ := strings.Cut(id, ".")
				if _, ok := parents[parent]; !ok {
					order = append(order, parent)
					parents[parent] = []any{}
				}
				if sub != "" {
					parents[parent] = append(parents[parent], map[string]any{
						"id": id, "name": id, "reference": "https://attack.mitre.org/techniques/" + parent + "/" + sub + "/",
					})
				}
			}
			for _, parent := range order {
				technique = append(technique, map[string]any{
					"id": parent, "name": parent, "reference": "https://attack.mitre.org/techniques/" + parent + "/",
					"subtechnique": parents[parent],
				})
			}
		}
		tactic := map[string]any{"id": tc.id, "name": tc.name, "reference": "https://attack.mitre.org/tactics/" + tc.id + "/"}
		if tc.id == "" {
			tactic = map[string]any{"name": tc.name}
		}
		out = append(out, map[string]any{"framework": "MITRE ATT&CK", "tactic": tactic, "technique": technique})
	}
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// elastic builds a Kibana webhook action body carrying one alert document.
func elastic(r Rule, e *event, seed int64) map[string]any {
	sev, risk := severity(r)
	ruleUUID := uuidOf("kibana-rule", r.Key())
	ruleID := r.ID
	if r.Source == "falco" {
		ruleID = uuidOf("falco-rule", r.ID)
	}
	name := r.Title
	created := e.time.Add(time.Duration(1+e.n%5) * time.Minute).Truncate(time.Millisecond)
	ts := created.Format("2006-01-02T15:04:05.000Z")
	original := e.time.Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, r.Key(), e.n)
	alertID := fmt.Sprintf("%016x%s", h.Sum64(), strings.ReplaceAll(uuidOf("alert", strconv.FormatInt(seed, 10), r.Key(), strconv.Itoa(e.n)), "-", ""))
	alertID += strings.Repeat("0", 64-len(alertID))
	authors := []string{}
	if r.Author != "" {
		authors = append(authors, r.Author)
	}
	falsePositives := append([]string{}, r.FalsePositives...)
	reason := ""
	category := "process"
	evType := []string{"start"}
	doc := map[string]any{
		"@timestamp":                        ts,
		"kibana.alert.uuid":                 alertID,
		"kibana.alert.start":                ts,
		"kibana.alert.last_detected":        ts,
		"kibana.alert.original_time":        original,
		"kibana.alert.status":               "active",
		"kibana.alert.workflow_status":      "open",
		"kibana.alert.depth":                1,
		"kibana.alert.severity":             sev,
		"kibana.alert.risk_score":           risk,
		"kibana.alert.rule.name":            name,
		"kibana.alert.rule.rule_id":         ruleID,
		"kibana.alert.rule.uuid":            ruleUUID,
		"kibana.alert.rule.description":     r.Description,
		"kibana.alert.rule.severity":        sev,
		"kibana.alert.rule.risk_score":      risk,
		"kibana.alert.rule.threat":          threat(r),
		"kibana.alert.rule.tags":            append([]string{}, r.Tags...),
		"kibana.alert.rule.author":          authors,
		"kibana.alert.rule.false_positives": falsePositives,
		"kibana.alert.rule.references":      []string{"https://github.com/" + r.Repo + "/blob/HEAD/" + r.Path},
		"kibana.alert.rule.type":            "query",
		"kibana.alert.rule.rule_type_id":    "siem.queryRule",
		"kibana.alert.rule.category":        "Custom Query Rule",
		"kibana.alert.rule.consumer":        "siem",
		"kibana.alert.rule.producer":        "siem",
		"kibana.alert.rule.enabled":         true,
		"kibana.alert.rule.interval":        "5m",
		"kibana.alert.rule.from":            "now-6m",
		"kibana.alert.rule.version":         1,
		"kibana.alert.rule.created_by":      "elastic",
		"kibana.space_ids":                  []string{"default"},
		"kibana.version":                    "8.17.0",
		"ecs":                               map[string]any{"version": "8.11.0"},
		"host":                              map[string]any{"name": e.host, "hostname": e.host, "os": map[string]any{"family": osFamily(e.plat)}},
		"user":                              map[string]any{"name": e.user},
	}
	if r.Source == "falco" {
		text, fields := falcoOutput(r, e)
		doc["message"] = text
		doc["falco"] = map[string]any{"rule": r.ID, "priority": priority(r), "source": r.LogSource.Service, "output_fields": fields}
		doc["kibana.alert.rule.license"] = "Apache-2.0"
		doc["event"] = map[string]any{"kind": "signal", "module": "falco", "dataset": "falco.alerts", "category": []string{category}, "type": evType}
	} else {
		doc["kibana.alert.rule.license"] = "DRL-1.1"
		doc["event"] = map[string]any{"kind": "signal", "category": []string{category}, "type": evType}
	}
	switch e.plat {
	case linux, windows, macos:
		doc["process"] = map[string]any{
			"pid": e.pid, "name": e.proc, "executable": e.exe, "command_line": e.cmdline,
			"parent": map[string]any{"pid": e.ppid, "name": e.pproc, "executable": e.pexe},
		}
		reason = fmt.Sprintf("process event with process %s, parent process %s, by %s on %s created %s alert %s.", e.proc, e.pproc, e.user, e.host, sev, name)
		if e.container {
			doc["container"] = map[string]any{"id": e.containerID, "name": e.ctrName, "image": map[string]any{"name": e.image, "tag": []string{e.tag}}}
			doc["orchestrator"] = map[string]any{"namespace": e.namespace, "resource": map[string]any{"name": e.pod, "type": "pod"}}
		}
	case aws, gcp, azure, okta, github, kubernetes:
		provider := map[platform]string{aws: "aws", gcp: "gcp", azure: "azure", okta: "okta", github: "github", kubernetes: "kubernetes"}[e.plat]
		doc["source"] = map[string]any{"ip": e.srcIP, "geo": map[string]any{"country_name": e.country}}
		doc["cloud"] = map[string]any{"provider": provider, "region": e.region, "account": map[string]any{"id": e.account}, "project": map[string]any{"id": e.project}}
		doc["user"] = map[string]any{"name": e.email}
		doc["event"].(map[string]any)["category"] = []string{"iam"}
		doc["event"].(map[string]any)["type"] = []string{"change"}
		reason = fmt.Sprintf("event by %s created %s alert %s.", e.email, sev, name)
	default:
		doc["source"] = map[string]any{"ip": e.srcIP, "port": e.srcPort}
		doc["destination"] = map[string]any{"ip": e.dstIP, "port": e.dstPort}
		doc["event"].(map[string]any)["category"] = []string{"network"}
		doc["event"].(map[string]any)["type"] = []string{"connection"}
		reason = fmt.Sprintf("network event with source %s:%d, destination %s:%d, on %s created %s alert %s.", e.srcIP, e.srcPort, e.dstIP, e.dstPort, e.host, sev, name)
	}
	doc["kibana.alert.reason"] = reason
	return map[string]any{
		"date":          ts,
		"kibanaBaseUrl": "https://kibana.example:5601",
		"rule": map[string]any{
			"id":      ruleUUID,
			"name":    name,
			"spaceId": "default",
			"tags":    append([]string{}, r.Tags...),
			"url":     "https://kibana.example:5601/app/security/rules/id/" + ruleUUID,
		},
		"results_link":  "https://kibana.example:5601/app/security/detections/rules/id/" + ruleUUID + "?timerange=(global:(linkTo:!(timeline),timerange:(from:" + strconv.FormatInt(e.time.Add(-6*time.Minute).UnixMilli(), 10) + ",kind:absolute,to:" + strconv.FormatInt(created.UnixMilli(), 10) + ")))",
		"signals_count": 1,
		"alerts":        []any{doc},
	}
}

func osFamily(p platform) string {
	switch p {
	case windows:
		return "windows"
	case macos:
		return "macos"
	}
	return "linux"
}

// unsafeLabel is what falcosidekick replaces in an output field's name to
// make it a label name.
var unsafeLabel = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func safeLabel(name string) string {
	s := unsafeLabel.ReplaceAllString(name, "_")
	s = strings.ReplaceAll(s, "__", "_")
	return strings.Trim(s, "_")
}

// alertmanager builds the webhook Alertmanager sends for the alert
// falcosidekick's Alertmanager output posts for the firing.
func alertmanager(r Rule, e *event, seed int64) map[string]any {
	p := sidekick(r, e, seed)
	labels := map[string]string{}
	for k, v := range p.OutputFields {
		if strings.HasPrefix(k, "n_evts") {
			continue
		}
		switch v := v.(type) {
		case string:
			labels[safeLabel(k)] = v
		case int:
			labels[safeLabel(k)] = strconv.Itoa(v)
		case int64:
			labels[safeLabel(k)] = strconv.FormatInt(v, 10)
		}
	}
	labels["source"] = "falco"
	labels["rule"] = p.Rule
	labels["alertname"] = p.Rule
	labels["eventsource"] = p.Source
	if p.Hostname != "" {
		labels["hostname"] = p.Hostname
	}
	if len(p.Tags) > 0 {
		tags := append([]string(nil), p.Tags...)
		sort.Strings(tags)
		labels["tags"] = strings.Join(tags, ",")
	}
	labels["priority"] = p.Priority
	labels["severity"] = map[string]string{
		"Debug": "information", "Informational": "information", "Notice": "information",
		"Warning": "warning", "Error": "warning",
		"Critical": "critical", "Alert": "critical", "Emergency": "critical",
	}[p.Priority]
	annotations := map[string]string{"info": p.Output, "description": p.Output, "summary": p.Rule}
	alert := map[string]any{
		"status":       "firing",
		"labels":       labels,
		"annotations":  annotations,
		"startsAt":     e.time.Add(120 * time.Millisecond).Format(time.RFC3339Nano),
		"endsAt":       "0001-01-01T00:00:00Z",
		"generatorURL": "",
		"fingerprint":  amFingerprint(labels),
	}
	return map[string]any{
		"receiver":          "openrecall",
		"status":            "firing",
		"alerts":            []any{alert},
		"groupLabels":       map[string]string{"alertname": p.Rule},
		"commonLabels":      labels,
		"commonAnnotations": annotations,
		"externalURL":       "http://alertmanager.example:9093",
		"version":           "4",
		"groupKey":          `{}:{alertname=` + strconv.Quote(p.Rule) + `}`,
		"truncatedAlerts":   0,
	}
}

// amFingerprint is Alertmanager's alert fingerprint: FNV-1a-64 over the
// sorted label names and values, each followed by a 0xFF byte.
func amFingerprint(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	sort.Strings(names)
	h := fnv.New64a()
	for _, k := range names {
		h.Write([]byte(k))
		h.Write([]byte{0xff})
		h.Write([]byte(labels[k]))
		h.Write([]byte{0xff})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
