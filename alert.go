package openrecall

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Severity is a normalized alert severity.
type Severity string

// Normalized severities, most urgent first.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
	SeverityInfo     Severity = "info"
	// SeverityUnknown is a missing or unrecognized severity, kept distinct
	// and never guessed (DESIGN §3).
	SeverityUnknown Severity = "unknown"
)

// Severities lists the normalized severities, most urgent first, then
// unknown. Callers must not modify it.
var Severities = []Severity{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo, SeverityUnknown}

// Valid reports whether s is one of Severities.
func (s Severity) Valid() bool {
	for _, v := range Severities {
		if s == v {
			return true
		}
	}
	return false
}

// rank orders known severities: info 0 … critical 4; -1 for unknown or
// anything else.
func (s Severity) rank() int {
	switch s {
	case SeverityCritical:
		return 4
	case SeverityHigh:
		return 3
	case SeverityMedium:
		return 2
	case SeverityLow:
		return 1
	case SeverityInfo:
		return 0
	}
	return -1
}

// MoreSevere reports whether an alert of severity alert is more severe than
// a memory of severity memory, as the guard's severity clause compares them
// (DESIGN §6 clause e): an alert of unknown (or empty) severity counts as
// critical, a memory of unknown (or empty) severity as medium — except that
// an unknown alert is not more severe than unknown memories. Neither then
// says anything about the other, and a source that never sends a severity
// (plain text, many generic senders) would otherwise never be vouched for;
// a missing severity next to a known one keeps the conservative reading.
// memory is what MostSevere returns: SeverityUnknown there means supporting
// memories that are all of unknown severity, "" none at all.
func MoreSevere(alert, memory Severity) bool {
	a, m := alert.rank(), memory.rank()
	if a < 0 && memory == SeverityUnknown {
		return false
	}
	if a < 0 {
		a = SeverityCritical.rank()
	}
	if m < 0 {
		m = SeverityMedium.rank()
	}
	return a > m
}

// MostSevere returns the most severe of memory severities as the severity
// clause ranks them: unknown when every one is unknown (or empty); else the
// most severe known one, or medium when an unknown one (counting as medium)
// outranks every known one. "" when there are none.
func MostSevere(memories ...Severity) Severity {
	if len(memories) == 0 {
		return ""
	}
	best, bestRank, unknown := Severity(""), -1, false
	for _, s := range memories {
		r := s.rank()
		if r < 0 {
			unknown = true
			continue
		}
		if r > bestRank {
			best, bestRank = s, r
		}
	}
	switch {
	case bestRank < 0:
		return SeverityUnknown
	case unknown && bestRank < SeverityMedium.rank():
		return SeverityMedium
	}
	return best
}

// Alert statuses. Only a firing alert is triaged: an acknowledged or
// resolved notice is recorded (a person already has it, or it is over).
const (
	StatusFiring       = "firing"
	StatusAcknowledged = "acknowledged"
	StatusResolved     = "resolved"
	// StatusNotice is a sender's message that is not an alert but needs a
	// person (an SNS subscription to confirm): shown, never triaged.
	StatusNotice = "notice"
)

// SenderOwn is the Sender of the product's own alert object (DESIGN §3).
const SenderOwn = "openrecall"

// SenderGeneric is the Sender of an alert read from a JSON object that no
// sender adapter recognises (DESIGN §3): it names no rule of its own
// unless a documented rule key holds one, so without one it has no
// identity and memory never vouches for it.
const SenderGeneric = "json"

// Host returns the host, instance or resource a sender adapter says the
// alert fired on (its Source, DESIGN §4): evidence, never a part of its
// Alert DNA or identity. It is empty for the formats whose Source names
// the sender itself (Alertmanager, Grafana) and for the product's own
// object and plain text, which name no sender.
func (a Alert) Host() string {
	if a.Sender == "" || a.Source == a.Sender {
		return ""
	}
	return a.Source
}

// Triaged reports whether an alert of status s is triaged: firing or no
// status at all.
func Triaged(status string) bool {
	return status != StatusResolved && status != StatusAcknowledged && status != StatusNotice
}

// Position says where a record was in its input: a 1-based line for line
// formats, a 0-based index into a JSON array or an Alertmanager alerts[]
// list, or both (a webhook on line 3, its alerts[1]).
type Position struct {
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
	Index  int    `json:"index"`
	// HasIndex tells an index of 0 from no index.
	HasIndex bool `json:"has_index,omitempty"`
}

// String returns the position as a person reads it, such as "line 3" or
// "line 1, alerts[2]" or "index 4".
func (p Position) String() string {
	s := ""
	switch {
	case p.Line > 0 && p.HasIndex:
		s = fmt.Sprintf("line %d, item %d", p.Line, p.Index)
	case p.Line > 0:
		s = fmt.Sprintf("line %d", p.Line)
	case p.HasIndex:
		s = fmt.Sprintf("index %d", p.Index)
	default:
		s = "input"
	}
	if p.Source != "" {
		s = p.Source + ": " + s
	}
	return s
}

// Alert is one normalized alert, whatever its source format.
type Alert struct {
	// ID is stable: the source's own id, fingerprint or dedup key when it has
	// one, else a hash of the normalized content, so a re-sent alert is
	// recognised.
	ID          string            `json:"id"`
	Format      string            `json:"format"`
	Title       string            `json:"title,omitempty"`
	Text        string            `json:"text,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Severity    Severity          `json:"severity,omitempty"`
	Service     string            `json:"service,omitempty"`
	// Environment is prod, staging, dev or empty.
	Environment string    `json:"environment,omitempty"`
	Source      string    `json:"source,omitempty"`
	Status      string    `json:"status,omitempty"`
	Timestamp   time.Time `json:"timestamp,omitzero"`
	Position    Position  `json:"position"`
	// Sender names the sender adapter that read the alert ("datadog",
	// "falcosidekick"; DESIGN §3); empty for the product's own alert object
	// and plain text.
	Sender string `json:"sender,omitempty"`
	// Rule is the sender's check exactly as sent — its monitor, alarm,
	// condition, trigger, rule or signature id or name — or empty when the
	// sender names none. When set it is the rule of the alert's identity,
	// never masked (DESIGN §4).
	Rule string `json:"rule,omitempty"`
	// Security says the alert comes from a security detection source: it
	// is an attack whatever its text says (DESIGN §4).
	Security bool `json:"security,omitempty"`
	// Episode says ID names one firing episode: a new firing of the same
	// check gets a new id, and a redelivery of this one keeps it.
	Episode bool `json:"episode,omitempty"`
	// SentFingerprint is the fingerprint an Alertmanager or Grafana alert
	// carried, kept as sent for people: never its identity (ID is
	// openrecall's own hash of the labels and startsAt), since whoever may
	// post an alert can send another's fingerprint.
	SentFingerprint string `json:"sent_fingerprint,omitempty"`
	// Entities are the fields that name what acted (process, user, image,
	// command, account), by name; never an instance id, time or counter.
	Entities map[string]string `json:"entities,omitempty"`
	// Dropped is the number of alerts the sender says it left out of the
	// delivery (Alertmanager's truncatedAlerts, when max_alerts cut a
	// notification), carried by a notice: they never reached openrecall.
	Dropped int `json:"dropped,omitempty"`
	// Origin says which field of the sender's payload each part came from,
	// by part ("title", "severity", "service", "rule", "id",
	// "environment"), for explanations.
	Origin map[string]string `json:"origin,omitempty"`
	// Links are the sender's links for the alert, by kind (LinkKinds):
	// its own page for the alert, the runbook, the dashboard, the silence
	// form. Each is a URL LinkOK accepts, checked at intake; openrecall
	// never fetches one, and like Fields they are never part of the id,
	// the identity, Alert DNA or the content id (DESIGN §12a).
	Links map[string]string `json:"links,omitempty"`
	// Fields are the strings of the payload's members that no other part
	// of the alert took — nested objects and arrays flattened by path
	// ("rule.level", "tags.0", "logsource.product") — as the generic reading
	// finds them. They are read for security evidence only (ATT&CK, the
	// tool that sent the alert, a detection's shape; DESIGN §4), never for
	// identity, Alert DNA or the content id.
	Fields map[string]string `json:"fields,omitempty"`
}

// Kinds of an alert's links (Alert.Links), by what they open.
const (
	// LinkSource is the sender's own page for the alert: Alertmanager's
	// generatorURL (the rule's expression in Prometheus), a Datadog event,
	// a PagerDuty incident, a Sentry issue.
	LinkSource = "source"
	// LinkRunbook is what to do about it (a runbook_url annotation).
	LinkRunbook = "runbook"
	// LinkDashboard is a dashboard that shows it.
	LinkDashboard = "dashboard"
	// LinkPanel is the one panel of a dashboard that fired (Grafana).
	LinkPanel = "panel"
	// LinkSilence is the sender's form to silence it (Grafana).
	LinkSilence = "silence"
	// LinkAlertmanager is the Alertmanager that delivered it (its
	// webhook's externalURL).
	LinkAlertmanager = "alertmanager"
)

// LinkKinds lists the link kinds in the order a person reads them.
// Callers must not modify it.
var LinkKinds = []string{LinkSource, LinkRunbook, LinkDashboard, LinkPanel, LinkSilence, LinkAlertmanager}

// MaxLinkBytes caps a link: a longer one is dropped, not cut.
const MaxLinkBytes = 2 << 10

// LinkOK reports whether s is a link openrecall keeps and shows: an
// absolute http or https URL with a host and no user info, at most
// MaxLinkBytes, with no white space or control character. Nothing else —
// javascript:, data:, a relative or scheme-relative URL — is a link: a
// person clicks what the review page shows, and alert text is hostile.
func LinkOK(s string) bool {
	if s == "" || len(s) > MaxLinkBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Opaque == "" && u.User == nil && u.Hostname() != ""
}

// CleanLinks returns the links of m, trimmed, that LinkOK accepts under
// a non-blank kind; nil for none. m itself is returned when it keeps every
// link as it is.
func CleanLinks(m map[string]string) map[string]string {
	same := true
	for k, v := range m {
		if strings.TrimSpace(k) != k || !LinkOK(v) {
			same = false
			break
		}
	}
	if same {
		if len(m) == 0 {
			return nil
		}
		return m
	}
	// Kinds that trim to the same kind: the one written clean wins, else
	// the first in byte order, whatever the map's order.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out map[string]string
	for _, raw := range keys {
		k, v := strings.TrimSpace(raw), strings.TrimSpace(m[raw])
		if k == "" || !LinkOK(v) {
			continue
		}
		if _, taken := out[k]; taken && raw != k {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
