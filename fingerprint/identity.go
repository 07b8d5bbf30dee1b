package fingerprint

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/openrecall/openrecall"
)

// serviceLabels are the labels that name the service an alert is about, in
// precedence order (DESIGN §4); "component" is also where intake keeps a
// PagerDuty payload.component. Hosts, instances, pods and PagerDuty sources
// are deliberately absent: the same rule on another instance is the same
// alert.
var serviceLabels = []string{"service", "app", "app.kubernetes.io/name", "container", "component", "job"}

// Identity evidence: the Field of an Evidence about the identity, and the
// Rule that names the built-in precedence of DESIGN §4.
const (
	IdentityRule       = "rule"
	IdentityService    = "service"
	IdentityPrecedence = "identity precedence"
)

// compiledIdentity is an identity rule of the rules file, ready to match.
type compiledIdentity struct {
	name  string
	rules map[string]bool
	// alts are the alternatives of the rule's regex (alternativesOf), none
	// without one.
	alts   []*regexp.Regexp
	labels [][]string
}

func compileIdentity(rules *Rules) ([]compiledIdentity, error) {
	var out []compiledIdentity
	for _, ir := range rules.identity {
		if ir.disabled {
			continue
		}
		if len(ir.labels) == 0 || (len(ir.rules) == 0 && ir.regex == "") {
			return nil, fmt.Errorf("rules %s (%s): identity: rule %q needs labels and rules or a regex: %w", rules.name, ir.origin, ir.name, openrecall.ErrInvalid)
		}
		ci := compiledIdentity{name: ir.name, rules: map[string]bool{}, labels: ir.labels}
		for _, r := range ir.rules {
			ci.rules[r] = true
		}
		if ir.regex != "" {
			re, err := compilePattern(ir.regex)
			if err != nil {
				return nil, fmt.Errorf("rules %s (%s): identity: rule %q: regex: %v: %w", rules.name, ir.origin, ir.name, err, openrecall.ErrInvalid)
			}
			ci.alts = alternativesOf(re)
		}
		out = append(out, ci)
	}
	return out, nil
}

// matches reports whether the identity rule applies to the alert rule named
// lower (lowercased).
func (c compiledIdentity) matches(lower string) bool {
	if c.rules[lower] {
		return true
	}
	for _, re := range c.alts {
		if re.MatchString(lower) {
			return true
		}
	}
	return false
}

// Identify returns the alert's identity (DESIGN §4): the rule that fired —
// an alertname label (in any format; PagerDuty custom_details land in the
// labels), else a PagerDuty class, else the Template of the summary
// annotation or title — and the service it fired for: the first present of
// the service, app, app.kubernetes.io/name, container, component (PagerDuty
// payload.component) and job labels, else the alert's service (never a
// PagerDuty source), lowercased, trimmed and whitespace-collapsed. When an
// identity rule of the rules file matches the rule, the values of its
// labels follow the service, each after a "/" (a pod's hash suffix or
// ordinal removed, so the pod names its owner): KubePodCrashLooping of pod
// checkout-7d9f8b6c5-x2x9z in namespace shop from kube-state-metrics is
// "KubePodCrashLooping @ kube-state-metrics/shop/checkout". An alert with
// neither a rule nor a title that holds a word has no identity.
func (e *Extractor) Identify(a openrecall.Alert) openrecall.Identity {
	id, _ := e.identify(a, false)
	return id
}

// ExplainIdentity returns the identity, as Identify does, with one Evidence
// per part that set it: Field is IdentityRule or IdentityService, Rule is
// IdentityPrecedence or "identity NAME" (an identity rule of the rules
// file), and Source says where the value came from ("label:alertname",
// "class", "template:summary", "template:title", "label:job", "service").
func (e *Extractor) ExplainIdentity(a openrecall.Alert) (openrecall.Identity, []Evidence) {
	return e.identify(a, true)
}

func (e *Extractor) identify(a openrecall.Alert, withEvidence bool) (openrecall.Identity, []Evidence) {
	var id openrecall.Identity
	var ev []Evidence
	note := func(field, value, rule, source string) {
		if withEvidence {
			ev = append(ev, Evidence{Field: field, Value: value, Rule: rule, Source: source})
		}
	}
	pagerduty := a.Format == "pagerduty"
	sent := collapse(a.Rule)
	switch {
	case sent != "":
		// A sender's rule is its check's id or name exactly as sent, never a
		// template (DESIGN §4): CVE-2021-42278 and CVE-2021-42287 are two
		// detections.
		id.Rule = sent
		note(IdentityRule, id.Rule, IdentityPrecedence, senderSource(a, "rule"))
	case a.Sender == openrecall.SenderGeneric:
		// A JSON object that no sender recognises and that names no rule has
		// no identity: memory never vouches for it (DESIGN §3).
		return openrecall.Identity{}, nil
	case collapse(a.Labels["alertname"]) != "":
		id.Rule = collapse(a.Labels["alertname"])
		note(IdentityRule, id.Rule, IdentityPrecedence, SourceLabelPrefix+"alertname")
	case pagerduty && collapse(a.Labels["class"]) != "":
		id.Rule = collapse(a.Labels["class"])
		note(IdentityRule, id.Rule, IdentityPrecedence, "class")
	case strings.TrimSpace(a.Annotations["summary"]) != "":
		id.Rule = Template(a.Annotations["summary"])
		note(IdentityRule, id.Rule, IdentityPrecedence, "template:summary")
	default:
		id.Rule = Template(a.Title)
		note(IdentityRule, id.Rule, IdentityPrecedence, "template:title")
	}
	if id.Rule == "" {
		return openrecall.Identity{}, nil
	}
	if sent != "" {
		// The adapter read the sender's own service field: it comes first.
		if v := normalizeService(a.Service); v != "" {
			id.Service = v
			note(IdentityService, v, IdentityPrecedence, senderSource(a, "service"))
		}
	}
	for _, k := range serviceLabels {
		if id.Service != "" {
			break
		}
		if v := normalizeService(a.Labels[k]); v != "" {
			id.Service = v
			note(IdentityService, v, IdentityPrecedence, SourceLabelPrefix+k)
			break
		}
	}
	if id.Service == "" && !pagerduty {
		if v := normalizeService(a.Service); v != "" {
			id.Service = v
			note(IdentityService, v, IdentityPrecedence, SourceService)
		}
	}
	lower := strings.ToLower(id.Rule)
	for _, ci := range e.identity {
		if !ci.matches(lower) {
			continue
		}
		parts := []string{}
		if id.Service != "" {
			parts = append(parts, id.Service)
		}
		var used []string
		for _, alts := range ci.labels {
			for _, l := range alts {
				v := normalizeService(a.Labels[l])
				if v == "" {
					continue
				}
				v = e.identityValue(l, v)
				parts = append(parts, v)
				used = append(used, SourceLabelPrefix+l)
				break
			}
		}
		if len(used) > 0 {
			id.Service = strings.Join(parts, "/")
			note(IdentityService, id.Service, "identity "+ci.name, strings.Join(used, ", "))
		}
		break
	}
	return id, ev
}

// senderSource names where a sender alert's part came from: "sender
// datadog: tags.service".
func senderSource(a openrecall.Alert, part string) string {
	s := "sender " + a.Sender
	if f := a.Origin[part]; f != "" {
		s += ": " + f
	}
	return s
}

// podOwner returns the name of a pod without its hash suffix or ordinal:
// the Deployment, DaemonSet or StatefulSet that owns it.
func (e *Extractor) podOwner(pod string) string {
	if podSuffix.MatchString(pod) {
		i := strings.LastIndexByte(pod, '-')
		return pod[:strings.LastIndexByte(pod[:i], '-')]
	}
	return e.norm.name(pod)
}

// IdentityLabels returns the labels that the rules file's identity section
// makes part of the identity of alerts of the given rule (every alternative,
// in order), or nil. Two firings of the rule that differ in one of these
// labels are two alerts: a blackbox probe of another target, a crash loop
// of another workload.
func (e *Extractor) IdentityLabels(rule string) []string {
	lower := strings.ToLower(collapse(rule))
	for _, ci := range e.identity {
		if ci.matches(lower) {
			var out []string
			for _, alts := range ci.labels {
				out = append(out, alts...)
			}
			return out
		}
	}
	return nil
}

// collapse trims s and collapses its runs of white space to one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// normalizeService lowercases, trims and whitespace-collapses a service
// name.
func normalizeService(s string) string { return strings.ToLower(collapse(s)) }

// podSuffix is a Deployment pod's replica-set hash and pod suffix, written
// in Kubernetes' vowel-free alphabet (so a hash without digits is still
// recognised and an ordinary word is not).
var podSuffix = regexp.MustCompile(`^[a-z0-9]+(?:[-_.][a-z0-9]+)*?-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
