package sender

import (
	"regexp"
	"strings"

	"github.com/openrecall/openrecall"
)

// falcosidekick is the Falco adapter: the event falcosidekick's webhook
// output posts, which is Falco's JSON event (uuid, output, priority, rule,
// time, source, tags, hostname, output_fields) with falcosidekick's uuid
// and custom fields added. The same JSON posted by Falco's own http_output
// is read too (it has no uuid: its id is then a content hash).
//
// The title and the rule are the Falco rule's name exactly as sent ("Write
// below binary dir"): it is what Falco's outputs headline, the same on
// every host, and distinct between rules. The text is Falco's output line
// and then every output field ("proc.cmdline: touch /bin/hack"). The id is
// "falco-" + uuid: one event is one detection (Episode).
//
// The service is the workload the detection is about, never the host,
// container id, pid or address: the Kubernetes namespace and the pod's
// owner (k8s.ns.name + "/" + k8s.pod.name without its replica-set hash, pod
// suffix or ordinal), for a k8s_audit event the target's namespace and name
// (ka.target.namespace, ka.target.name); else the container image
// repository; else the namespace alone. The host is the hostname. The
// environment is an "environment", "env" or "cluster" custom field.
// Entities are what acted: process (proc.name), parent_process
// (proc.pname), command (proc.cmdline, else a k8s_audit exec's
// ka.uri.param[command]), user (user.name, ka.user.name,
// aws.user, okta.actor.name, github.user), image
// (container.image.repository) and namespace.
//
// Severity maps Falco's priorities (syslog's): Emergency, Alert and
// Critical are critical; Error high; Warning medium; Notice low;
// Informational (Info) and Debug info.
func falcosidekick() Sender {
	scale := Scale{
		"emergency": openrecall.SeverityCritical, "alert": openrecall.SeverityCritical, "critical": openrecall.SeverityCritical,
		"error": openrecall.SeverityHigh, "warning": openrecall.SeverityMedium, "notice": openrecall.SeverityLow,
		"informational": openrecall.SeverityInfo, "info": openrecall.SeverityInfo, "debug": openrecall.SeverityInfo,
	}
	return Sender{
		Name: "falcosidekick", Display: "Falco (falcosidekick)", Security: true, Episode: true,
		Match: func(v Value) bool {
			if _, ok := scale[FoldLevel(v.Get("priority").String())]; !ok {
				return false
			}
			if !v.Get("rule").IsString() || !v.Get("output").IsString() {
				return false
			}
			return v.Get("output_fields").IsObject() || (v.Has("time") && (v.Has("source") || v.Has("hostname")))
		},
		Map:      falcoMap,
		Severity: scale.Map,
		Levels:   []string{"Emergency", "Alert", "Critical", "Error", "Warning", "Notice", "Informational", "Info", "Debug"},
		Doc: Doc{
			Point:    "falcosidekick config: webhook: address: http://HOST:9555/api/v1/alerts/falcosidekick (or Falco's http_output url)",
			Auth:     "webhook: customheaders: Authorization: Bearer TOKEN",
			Title:    "rule",
			Severity: "priority (Emergency/Alert/Critical critical, Error high, Warning medium, Notice low, Informational/Debug info)",
			Service:  "output_fields k8s.ns.name + the owner of k8s.pod.name, else container.image.repository",
			Rule:     "rule",
			ID:       "uuid (one event is one detection)",
			Source:   "the event of falcosidekick's README (falcosecurity/falcosidekick, Apache-2.0) and payloads written for openrecall after falcosidekick's FalcoPayload type",
		},
	}
}

// falcoPodSuffixes strip what a controller adds to a workload's name to
// name its pods: a Deployment's replica-set hash and pod suffix, a
// DaemonSet's or Job's pod suffix, a StatefulSet's ordinal (Kubernetes
// writes the hashes in its vowel-free alphabet).
var falcoPodSuffixes = []*regexp.Regexp{
	regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`),
	regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{5}$`),
	regexp.MustCompile(`^(.+)-[0-9]+$`),
}

// falcoPodOwner returns the workload that owns a pod, by its name.
func falcoPodOwner(pod string) string {
	for _, re := range falcoPodSuffixes {
		if m := re.FindStringSubmatch(pod); m != nil {
			return m[1]
		}
	}
	return pod
}

// falcoEntity records an entity when its value is not blank, and says
// whether it was.
func falcoEntity(e *Event, key, value string) bool {
	if strings.TrimSpace(value) == "" {
		return false
	}
	e.Entity(key, value)
	return true
}

// falcoField reads an output field as text; Falco's "<NA>" is absent.
func falcoField(of Value, key string) string {
	s := Rendered(of.Get(key).String())
	if s == "<NA>" {
		return ""
	}
	return s
}

func falcoMap(v Value) ([]Event, error) {
	var e Event
	of := v.Get("output_fields")
	f := func(k string) string { return falcoField(of, k) }
	rule := v.Get("rule").String()
	e.Set(PartTitle, rule, "rule")
	e.Set(PartRule, rule, "rule")
	e.Set(PartSeverity, v.Get("priority").String(), "priority")
	e.SetID("uuid", "falco-", "", v.Get("uuid").String())
	e.Timestamp = v.Get("time").Time()
	e.Host, _ = v.First("hostname")
	if e.Host == "" {
		e.Host = f("evt.hostname")
		if e.Host == "" {
			e.Host = f("hostname")
		}
	}
	falcoEvent(&e, f, func(k string) string { return "output_fields." + k })

	tags := v.Get("tags").Strings()
	e.Label("tags", strings.Join(tags, ","))
	e.Label("source", v.Get("source").String())
	e.Label("priority", v.Get("priority").String())
	for _, k := range []string{"k8s.ns.name", "k8s.pod.name", "container.name", "container.image.repository", "container.image.tag"} {
		e.Label(k, f(k))
	}

	fields := of.Scalars(64)
	pairs := make([][2]string, 0, len(fields)+2)
	pairs = append(pairs, [2]string{"source", v.Get("source").String()}, [2]string{"tags", strings.Join(tags, ", ")})
	for _, p := range fields {
		if p[1] != "<NA>" {
			pairs = append(pairs, p)
		}
	}
	e.Text = JoinText(v.Get("output").String(), Evidence(pairs...))
	return []Event{e}, nil
}

// falcoEvent reads what a Falco event's output fields say into e: the
// service (the workload), the environment and the entity fields. f reads an
// output field by Falco's name ("proc.name"), "" when absent or "<NA>";
// where names the payload field an output field came from. The webhook
// path and the Alertmanager path (falcoAlertmanager) both read the event
// through it, so one event carries the same service and entities on both.
func falcoEvent(e *Event, f func(string) string, where func(string) string) {
	// The workload: namespace and pod owner, or the audited target.
	ns, nsField := f("k8s.ns.name"), where("k8s.ns.name")
	workload, wField := "", ""
	if pod := f("k8s.pod.name"); pod != "" {
		workload, wField = falcoPodOwner(pod), where("k8s.pod.name")
	}
	if ns == "" && workload == "" {
		if tns := f("ka.target.namespace"); tns != "" {
			ns, nsField = tns, where("ka.target.namespace")
			if name := f("ka.target.name"); name != "" {
				workload, wField = falcoPodOwner(name), where("ka.target.name")
			}
		}
	}
	image := f("container.image.repository")
	switch {
	case ns != "" && workload != "":
		e.Set(PartService, ns+"/"+workload, nsField+"+"+wField)
	case workload != "":
		e.Set(PartService, workload, wField)
	case image != "":
		e.Set(PartService, image, where("container.image.repository"))
	case ns != "":
		e.Set(PartService, ns, nsField)
	}
	for _, k := range []string{"environment", "env", "cluster"} {
		if e.Set(PartEnvironment, f(k), where(k)) {
			break
		}
	}

	e.Entity("process", f("proc.name"))
	e.Entity("parent_process", f("proc.pname"))
	if !falcoEntity(e, "command", f("proc.cmdline")) {
		e.Entity("command", f("ka.uri.param[command]"))
	}
	for _, k := range []string{"user.name", "ka.user.name", "aws.user", "okta.actor.name", "github.user"} {
		if u := f(k); u != "" {
			e.Entity("user", u)
			break
		}
	}
	e.Entity("image", image)
	e.Entity("namespace", ns)
}
