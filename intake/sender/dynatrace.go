package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// dynatraceScale maps Dynatrace's problem severity levels ({ProblemSeverity},
// ProblemDetailsJSON.severityLevel): an outage of availability is critical,
// errors high, slowdowns, resource contention and custom alerts medium,
// a monitoring gap high (nothing is watched), info info.
var dynatraceScale = Scale{
	"availability": openrecall.SeverityCritical, "error": openrecall.SeverityHigh,
	"performance": openrecall.SeverityMedium, "resourcecontention": openrecall.SeverityMedium,
	"customalert": openrecall.SeverityMedium, "monitoringunavailable": openrecall.SeverityHigh,
	"info": openrecall.SeverityInfo,
}

// dynatrace is the Dynatrace adapter: the problem notification of a custom
// integration (webhook), whose JSON payload is written with placeholders
// ({State}, {ProblemID}, {PID}, {ProblemTitle}, {ImpactedEntity},
// {ImpactedEntities}, {ImpactedEntityNames}, {ProblemImpact},
// {ProblemSeverity}, {ProblemURL}, {ProblemDetailsJSON}, {Tags}). Keys are
// read case-insensitively, spaces ignored (the default payload writes
// "Problem URL").
//
// Rule: the problem title, as sent. Davis titles a problem by its type ("High
// CPU", "Response time degradation", "Host or monitoring unavailable") and a
// custom or metric event by the event's own title, with the entity
// elsewhere, so the title names the check.
//
// Service: the first impacted entity that is a service or an application
// (ImpactedEntities[].type SERVICE, APPLICATION, PROCESS_GROUP, …), else a
// tag service; a host or a process group instance is Host. Environment: a
// tag env, environment or stage.
//
// Severity: {ProblemSeverity}, else ProblemDetailsJSON.severityLevel
// (AVAILABILITY critical, ERROR high, PERFORMANCE, RESOURCE_CONTENTION and
// CUSTOM_ALERT medium, MONITORING_UNAVAILABLE high, INFO info). The default
// payload sends no severity; {ProblemImpact} (APPLICATION, SERVICE,
// INFRASTRUCTURE, ENVIRONMENT) is how far the problem reaches, not how bad
// it is, and is a label.
//
// ID: "dt-" + {PID} (the problem's system id), else {ProblemID} (its display
// number): one problem is one episode. Status: OPEN firing, RESOLVED and
// CLOSED resolved, MERGED (folded into another problem) a notice.
func dynatrace() Sender {
	return Sender{
		Name: "dynatrace", Display: "Dynatrace", Security: false, Episode: true,
		Match: func(v Value) bool {
			p := dynatraceParams(v)
			return p.has("problemtitle") && (p.has("problemid") || p.has("pid")) &&
				(p.has("state") || p.has("impactedentity") || p.has("impactedentities") || p.has("problemdetailsjson") || p.has("problemurl"))
		},
		Map: func(v Value) ([]Event, error) {
			p := dynatraceParams(v)
			details := p.raw("problemdetailsjson")
			var e Event
			title, tk := p.first("problemtitle")
			e.Set(PartTitle, title, tk)
			e.Set(PartRule, title, tk)
			if sev, k := p.first("problemseverity"); sev != "" {
				e.Set(PartSeverity, sev, k)
			} else {
				e.Set(PartSeverity, details.Get("severityLevel").String(), p.key("problemdetailsjson")+".severityLevel")
			}
			if id, k := p.first("pid"); !e.SetID(k, "dt-", "", id) {
				id, k := p.first("problemid")
				e.SetID(k, "dt-", "", id)
			}
			state, _ := p.first("state")
			if state == "" {
				state = details.Get("status").String()
			}
			switch strings.ToUpper(state) {
			case "RESOLVED", "CLOSED":
				e.Status = openrecall.StatusResolved
			case "MERGED":
				e.Status = openrecall.StatusNotice
			default:
				e.Status = openrecall.StatusFiring
			}
			tags := dynatraceTags(p.raw("tags"))
			for _, en := range p.raw("impactedentities").Elements() {
				typ, name := strings.ToUpper(en.Get("type").String()), Rendered(en.Get("name").String())
				switch typ {
				case "SERVICE", "APPLICATION", "MOBILE_APPLICATION", "CUSTOM_APPLICATION", "PROCESS_GROUP", "SYNTHETIC_TEST", "HTTP_CHECK", "KUBERNETES_SERVICE", "CLOUD_APPLICATION":
					if e.Service == "" {
						e.Set(PartService, name, p.key("impactedentities")+".name")
					}
				default:
					if e.Host == "" {
						e.Host = name
					}
				}
			}
			if e.Host == "" && e.Service == "" {
				e.Host = p.get("impactedentitynames", "namesofimpactedentities")
			}
			if e.Service == "" {
				if s := Rendered(tags["service"]); s != "" {
					e.Set(PartService, s, p.key("tags")+".service")
				}
			}
			for _, k := range []string{"env", "environment", "stage"} {
				if s := Rendered(tags[k]); s != "" {
					e.Set(PartEnvironment, s, p.key("tags")+"."+k)
					break
				}
			}
			for k, t := range tags {
				if k != "service" {
					e.Label("tag."+k, t)
				}
			}
			e.Timestamp = details.Get("startTime").Time()
			problemURL, _ := p.first("problemurl")
			impact, _ := p.first("problemimpact")
			e.Label("problem_id", p.get("problemid"))
			e.Label("impact", impact)
			e.Label("url", problemURL)
			e.Link(openrecall.LinkSource, problemURL)
			e.Label("impacted_entity_names", p.get("impactedentitynames"))
			var rootCause string
			if rc := details.Get("rootCauseEntity"); rc.IsObject() {
				rootCause = rc.Get("name").String()
			}
			e.Text = JoinText(p.get("problemdetailstext", "problemdetails"), Evidence(
				[2]string{"impacted", p.get("impactedentity")},
				[2]string{"entities", p.get("impactedentitynames", "namesofimpactedentities")},
				[2]string{"impact", impact},
				[2]string{"root cause", rootCause},
				[2]string{"problem", p.get("problemid")},
				[2]string{"tags", p.raw("tags").Text()},
				[2]string{"url", problemURL},
			))
			return []Event{e}, nil
		},
		Severity: dynatraceScale.Map,
		Levels:   []string{"AVAILABILITY", "ERROR", "PERFORMANCE", "RESOURCE_CONTENTION", "CUSTOM_ALERT", "MONITORING_UNAVAILABLE", "INFO"},
		Doc: Doc{
			Point: "Settings → Integration → Problem notifications → Custom integration, webhook URL http://HOST:9555/api/v1/alerts/dynatrace, the default payload plus \"ProblemSeverity\": \"{ProblemSeverity}\", \"ImpactedEntities\": {ImpactedEntities}; notify closed problems",
			Auth:  "a custom header of the integration: Authorization: Bearer TOKEN",
			Title: "ProblemTitle", Severity: "ProblemSeverity, else ProblemDetailsJSON.severityLevel",
			Service: "the first impacted SERVICE/APPLICATION/PROCESS_GROUP entity, else tag service", Rule: "ProblemTitle",
			ID: "dt- + PID, else ProblemID", Source: "Dynatrace's documented webhook payload placeholders and default payload; Keep's Dynatrace payload template (keephq/keep); values written after Dynatrace's Problems API v2 examples",
		},
	}
}

// dynatraceParamSet is a Dynatrace payload's top-level keys, folded.
type dynatraceParamSet struct {
	v    Value
	keys map[string]string
}

func dynatraceParams(v Value) dynatraceParamSet {
	p := dynatraceParamSet{v: v, keys: map[string]string{}}
	for _, k := range v.Keys() {
		f := FoldLevel(k)
		if _, dup := p.keys[f]; !dup {
			p.keys[f] = k
		}
	}
	return p
}

func (p dynatraceParamSet) key(name string) string { return p.keys[name] }

func (p dynatraceParamSet) has(name string) bool {
	k, ok := p.keys[name]
	return ok && p.v.Has(k)
}

func (p dynatraceParamSet) raw(name string) Value {
	if k, ok := p.keys[name]; ok {
		return p.v.Get(k)
	}
	return Value{}
}

// first returns the first rendered non-blank scalar of the names, and its
// key as sent.
func (p dynatraceParamSet) first(names ...string) (string, string) {
	for _, n := range names {
		if k, ok := p.keys[n]; ok {
			if s := Rendered(p.v.Get(k).String()); s != "" {
				return s, k
			}
		}
	}
	return "", ""
}

func (p dynatraceParamSet) get(names ...string) string { s, _ := p.first(names...); return s }

// dynatraceTags reads {Tags}: "key:value, key2, [Context]key3:value"
// (a comma-separated string), or an array of such strings or of
// {key, value} objects.
func dynatraceTags(v Value) map[string]string {
	out := map[string]string{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if i := strings.Index(s, "]"); strings.HasPrefix(s, "[") && i > 0 {
			s = s[i+1:]
		}
		k, val, ok := strings.Cut(s, ":")
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" {
			return
		}
		if !ok {
			val = "true"
		}
		out[k] = strings.TrimSpace(val)
	}
	if v.IsArray() {
		for _, t := range v.Elements() {
			if t.IsObject() {
				if k := strings.ToLower(t.Get("key").String()); k != "" {
					val := t.Get("value").String()
					if val == "" {
						val = "true"
					}
					out[k] = val
				}
				continue
			}
			add(t.String())
		}
		return out
	}
	for _, part := range strings.Split(Rendered(v.String()), ",") {
		add(part)
	}
	return out
}
