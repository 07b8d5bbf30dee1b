package fingerprint

import (
	"strings"
	"unicode"

	"github.com/openrecall/openrecall"
)

// serviceLabels are the labels that name the service an alert is about, in
// precedence order (DESIGN §4). Hosts, instances, pods and PagerDuty sources
// are deliberately absent: the same rule on another instance is the same
// alert.
var serviceLabels = []string{"service", "app", "app.kubernetes.io/name", "container", "component", "job"}

// Identify returns the alert's identity (DESIGN §4): the rule that fired —
// an alertname label, else a PagerDuty class, else the masked template of
// the summary or title — and the service it fired for.
func (e *Extractor) Identify(a openrecall.Alert) openrecall.Identity {
	var id openrecall.Identity
	switch {
	case strings.TrimSpace(a.Labels["alertname"]) != "":
		id.Rule = strings.TrimSpace(a.Labels["alertname"])
	case strings.TrimSpace(a.Labels["class"]) != "" && a.Format == "pagerduty":
		id.Rule = strings.TrimSpace(a.Labels["class"])
	default:
		title := a.Annotations["summary"]
		if strings.TrimSpace(title) == "" {
			title = a.Title
		}
		id.Rule = Template(title)
	}
	if id.Rule == "" {
		return openrecall.Identity{}
	}
	for _, k := range serviceLabels {
		if v := strings.TrimSpace(a.Labels[k]); v != "" {
			id.Service = strings.ToLower(v)
			return id
		}
	}
	if a.Format != "pagerduty" {
		id.Service = strings.ToLower(strings.TrimSpace(a.Service))
	}
	return id
}

// Template returns the template of a summary or title: its first line,
// lowercased and whitespace-collapsed, with every token that holds a digit
// masked as "*", so two renderings of one rule with other values share it.
func Template(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	fields := strings.Fields(strings.ToLower(s))
	for i, f := range fields {
		if strings.IndexFunc(f, unicode.IsDigit) >= 0 {
			fields[i] = "*"
		}
	}
	return strings.Join(fields, " ")
}
