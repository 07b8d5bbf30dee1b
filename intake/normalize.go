package intake

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint/product"
)

// NormalizeSeverity maps a source severity or priority to one of the
// normalized severities: crit/fatal/emergency/p1/sev1/page are critical;
// error/err/major/p2/sev2 high; warning/warn/moderate/p3/sev3 medium;
// minor/low/p4/sev4/notice low; info/informational/ok/debug/p5 info. Case,
// spaces, '-' and '_' are ignored ("SEV-1", "P 2"). Missing or unrecognized
// values are unknown (DESIGN §3): kept distinct and never guessed, so an
// alert is neither silently demoted to info nor promoted to medium.
func NormalizeSeverity(s string) openrecall.Severity {
	k := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
	switch k {
	case "critical", "crit", "fatal", "emergency", "emerg", "alert", "disaster", "p0", "p1", "sev0", "sev1", "page", "urgent", "highest", "blocker":
		return openrecall.SeverityCritical
	case "high", "error", "err", "major", "p2", "sev2":
		return openrecall.SeverityHigh
	case "medium", "warning", "warn", "moderate", "average", "p3", "sev3":
		return openrecall.SeverityMedium
	case "low", "minor", "p4", "sev4", "notice", "lowest":
		return openrecall.SeverityLow
	case "info", "informational", "information", "ok", "debug", "p5", "sev5", "none":
		return openrecall.SeverityInfo
	}
	return openrecall.SeverityUnknown
}

// NormalizeEnvironment maps an environment, stage, cluster or namespace
// name to "prod", "staging", "dev" or "" (unknown). The name is split into
// words at every character that is not a letter or digit, and the first
// known word decides: production/prod/prd/live are prod ("prod-eu-1",
// "shop-prod"); staging/stage/stg/preprod/uat/qa are staging;
// development/dev/test/sandbox/local are dev. "pre-prod" is staging and
// "non-prod" is unknown, not prod.
func NormalizeEnvironment(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	if strings.Contains(s, "prod") {
		for _, pair := range [...][2]string{
			{"pre-prod", "preprod"}, {"pre_prod", "preprod"}, {"pre prod", "preprod"}, {"pre.prod", "preprod"},
			{"non-prod", "nonprod"}, {"non_prod", "nonprod"}, {"non prod", "nonprod"}, {"non.prod", "nonprod"},
		} {
			s = strings.ReplaceAll(s, pair[0], pair[1])
		}
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		switch w {
		case "production", "prod", "prd", "live":
			return "prod"
		case "staging", "stage", "stg", "preprod", "uat", "qa":
			return "staging"
		case "development", "dev", "test", "sandbox", "local":
			return "dev"
		}
	}
	return ""
}

// cleanText trims s and removes control characters other than newline and
// tab; invalid UTF-8 becomes U+FFFD. "\r\n" becomes "\n".
func cleanText(s string) string {
	if plainText(s) {
		return strings.TrimSpace(s)
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) && r != '\n' && r != '\t' {
				return -1
			}
			return r
		}, s)
	}
	return strings.TrimSpace(s)
}

// plainText reports whether s is ASCII with no control character but
// newline and tab: cleanText then only trims it.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// cleanLine is cleanText on one line: newlines and tabs become spaces.
func cleanLine(s string) string {
	s = cleanText(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// firstLine returns the first non-empty line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return cleanLine(l)
		}
	}
	return ""
}

// cleanMap cleans keys and values, dropping empty keys; nil for no entries.
// m itself is returned, not a copy, when cleaning changes none of them. Of
// keys that clean to the same key, the one written clean wins, else the
// first in byte order.
func cleanMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	clean := true
	for k, v := range m {
		if k == "" || cleanLine(k) != k || cleanText(v) != v {
			clean = false
			break
		}
	}
	if clean {
		return m
	}
	// Keys that clean to the same key (" env" and "env"): the key written
	// clean wins, else the first in byte order, so that the result does
	// not depend on the order of a map.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, len(m))
	for _, raw := range keys {
		k := cleanLine(raw)
		if k == "" {
			continue
		}
		if _, taken := out[k]; taken && raw != k {
			continue
		}
		out[k] = cleanText(m[raw])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// first returns the first non-empty value of keys in m.
func first(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(m[k]); v != "" {
			return v
		}
	}
	return ""
}

// environmentFrom returns the first environment that normalizes to a known
// one among the candidates, in order.
func environmentFrom(candidates ...string) string {
	for _, c := range candidates {
		if e := NormalizeEnvironment(c); e != "" {
			return e
		}
	}
	return ""
}

// finish cleans and completes a built alert: title fallback, severity,
// environment and service from labels, and a content hash id when the source
// gave none. It refuses a firing alert that cleaning left empty (no title,
// text or label: its fields held only white space and control characters),
// which the shapes' own checks, made before cleaning, let through.
func finish(a *openrecall.Alert, severity, environment, service string) error {
	a.Title = cleanLine(a.Title)
	a.Text = cleanText(a.Text)
	a.Labels = cleanMap(a.Labels)
	a.Annotations = cleanMap(a.Annotations)
	a.Source = cleanLine(a.Source)
	a.ID = cleanLine(a.ID)
	if a.Title == "" {
		a.Title = first(a.Labels, "alertname")
	}
	if a.Title == "" {
		a.Title = firstLine(a.Text)
	}
	if a.Title == "" && a.Text == "" && len(a.Labels) == 0 && openrecall.Triaged(a.Status) {
		return errors.New("empty alert: nothing left but white space and control characters")
	}
	if severity == "" {
		severity = first(a.Labels, "severity", "priority", "level")
	}
	a.Severity = NormalizeSeverity(severity)
	a.Environment = environmentFrom(environment, a.Labels["env"], a.Labels["environment"], a.Labels["stage"], a.Labels["cluster"], a.Labels["namespace"])
	if service == "" {
		service = first(a.Labels, "service", "app", "app.kubernetes.io/name", "job", "container")
	}
	a.Service = cleanLine(service)
	if a.Status == "" {
		a.Status = openrecall.StatusFiring
	}
	if !a.Security {
		a.Security = securityNamed(a.Labels) || securityNamed(a.Annotations)
	}
	if !a.Security && a.Sender == openrecall.SenderOwn {
		_, a.Security = product.Default().Match(a.Source)
	}
	if a.ID == "" {
		a.ID = contentID(*a)
	}
	return nil
}

// securityNamed reports whether a label (or a field) whose key says it
// names the tool that sent the alert (source, sender, tool, product,
// vendor, provider, integration, detector, logsource, …) names a security
// product in any of its spellings (fingerprint/product's list; DESIGN §4).
func securityNamed(labels map[string]string) bool {
	for k, v := range labels {
		if product.SourceKey(k) {
			if _, ok := product.Default().Match(v); ok {
				return true
			}
		}
	}
	return false
}

// contentID is "h-" and the first 16 hex digits of SHA-256 over the
// normalized content, so that a re-sent alert gets the same id.
func contentID(a openrecall.Alert) string {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	field(a.Title)
	field(a.Text)
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	field(strconv.Itoa(len(keys)))
	for _, k := range keys {
		field(k)
		field(a.Labels[k])
	}
	field(string(a.Severity))
	field(a.Service)
	field(a.Environment)
	field(a.Source)
	ts := ""
	if !a.Timestamp.IsZero() {
		ts = a.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	field(ts)
	// The rule and the entities a sender names tell two alerts apart as
	// well; absent, they leave the hash of an alert without them as it was.
	if a.Rule != "" {
		field("rule")
		field(a.Rule)
	}
	if len(a.Entities) > 0 {
		keys := make([]string, 0, len(a.Entities))
		for k := range a.Entities {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		field("entities")
		for _, k := range keys {
			field(k)
			field(a.Entities[k])
		}
	}
	sum := h.Sum(nil)
	return "h-" + hex.EncodeToString(sum[:8])
}

// labelSetID is openrecall's own id of an Alertmanager, Grafana or
// Prometheus alert's label set: the first 16 hex digits of SHA-256 over the
// sorted label names and values, each length-prefixed — a Prometheus
// postable alert gets the same id as the webhook Alertmanager later sends
// for it. Not Alertmanager's fingerprint: that arrives as sent (anyone who
// may post an alert can send another's) and is FNV-1a, whose collisions
// can be made to order. An alert without labels is told apart by its
// annotations.
func labelSetID(labels, annotations map[string]string) string {
	h := sha256.New()
	pairs := func(m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, s := range [2]string{k, m[k]} {
				h.Write([]byte(strconv.Itoa(len(s))))
				h.Write([]byte{':'})
				h.Write([]byte(s))
			}
		}
	}
	pairs(labels)
	if len(labels) == 0 {
		h.Write([]byte("annotations"))
		pairs(annotations)
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:8])
}

// episodeID is "am-" + the label set's id + "-" + startsAt in unix seconds:
// one id per firing episode, the same for its resolved notice.
func episodeID(fingerprint string, startsAt time.Time) string {
	if startsAt.IsZero() {
		return "am-" + fingerprint
	}
	return "am-" + fingerprint + "-" + strconv.FormatInt(startsAt.Unix(), 10)
}
