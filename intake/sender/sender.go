package sender

import (
	"strings"
	"time"
	"unicode"

	"github.com/openrecall/openrecall"
)

// Sender is one alert sender's adapter: how to recognise its payload and
// how to read it into events (DESIGN §3). A Sender is a value: its
// functions are pure and safe for concurrent use.
type Sender struct {
	// Name is the sender's key: the Alert's Sender, the path segment of
	// POST /api/v1/alerts/{sender} and the --format name ("datadog").
	Name string
	// Display is the sender's name as its users write it ("Datadog").
	Display string
	// Security says the sender is a security detection source: every alert
	// it sends is an attack (DESIGN §4).
	Security bool
	// Episode says the ids Map gives name one firing episode: a new firing
	// of the same check gets a new id, a redelivery of one keeps it.
	Episode bool
	// Builtin says intake's own reader recognises the sender's payloads
	// (Alertmanager, Grafana, Prometheus, PagerDuty Events v2, the
	// product's own alert object), which Detect never offers it: Match and
	// Map are nil, or its embedded mapping's (Grafana's reads what intake
	// hands it; Alertmanager's is the definition intake's fast path is
	// held equal to).
	Builtin bool
	// Match reports whether a decoded JSON object is this sender's
	// payload. It must hold only for the sender's own shape: every
	// fixture of every other sender fails it.
	Match func(v Value) bool
	// Open, when set, opens an envelope: the payload it carries, to be
	// recognised again (an SNS notification's Message), and whether it
	// carries one; when it does not, Map reads the envelope itself.
	Open func(v Value) (Value, bool)
	// Map reads a payload Match accepted into its events (most payloads
	// carry one). An error means the payload is the sender's but unusable;
	// a field of an unexpected type is no error (Value reads it as zero).
	Map func(v Value) ([]Event, error)
	// Severity maps a value of the sender's own severity scale (as Map put
	// it in Event.Severity) to the normalized one; nil means intake's
	// NormalizeSeverity. Every value of Levels maps to a known severity.
	Severity func(raw string) openrecall.Severity
	// Levels are the values of the sender's documented severity scale.
	Levels []string
	// Doc says how to point the sender at openrecall and where each part
	// comes from, for README's table and for explanations.
	Doc Doc
	// mapping is the mapping the sender was built from, nil for a Go
	// adapter.
	mapping *mapping
}

// Doc documents a sender for people.
type Doc struct {
	// Point says how to point the sender at openrecall: where its webhook
	// URL goes.
	Point string
	// Auth says how it authenticates: a header, a token field in its
	// payload, or ?token= in the URL.
	Auth string
	// Title, Severity, Service, Rule and ID name the payload fields each
	// part comes from.
	Title, Severity, Service, Rule, ID string
	// Source says where the fixtures' payloads come from.
	Source string
}

// Event is one alert as a sender's payload states it, before intake
// cleans and normalizes it.
type Event struct {
	// ID is the sender's stable id of the alert, prefixed by the sender
	// ("dd-…"), set by SetID only when whole; empty when the sender gave
	// none, and the alert's id is then PayloadID.
	ID string
	// Title is the human title the sender shows its users; Text the
	// description and the evidence (event output, matched values, command
	// line).
	Title, Text string
	// Severity is the value of the sender's own scale, as sent.
	Severity string
	// Service and Environment as the sender names them; Host is the host,
	// instance or resource the alert fired on (never part of the identity).
	Service, Environment, Host string
	// Rule is the sender's check exactly as sent.
	Rule string
	// Status is openrecall.StatusFiring, StatusAcknowledged,
	// StatusResolved or StatusNotice; empty means firing.
	Status    string
	Timestamp time.Time
	// Labels are the sender's key-value fields worth keeping (tags,
	// dimensions, custom details).
	Labels map[string]string
	// Annotations are the sender's own annotations of the alert
	// (Alertmanager's summary, description, runbook_url), by name.
	Annotations map[string]string
	// Fingerprint is the sender's own fingerprint of the alert, as sent:
	// kept (Alert.SentFingerprint), never the alert's id.
	Fingerprint string
	// Entities name what acted (process, user, image, command, account).
	Entities map[string]string
	// Links are the sender's links for the alert, by kind
	// (openrecall.LinkKinds: "source", the sender's own page for it,
	// "runbook", "dashboard", …); only URLs openrecall.LinkOK accepts
	// (absolute http and https). Set them with Link.
	Links map[string]string
	// Origin names the payload field each part came from, by part: title,
	// severity, service, environment, rule, id (and, for the generic
	// reading, status).
	Origin map[string]string
	// PayloadID is the id of the payload the event was read from (see
	// PayloadID), set by Read, ReadAs and Generic: the alert's id when the
	// sender gave none (ID empty). Never a constant: two payloads that
	// differ anywhere have different ones, a redelivery the same.
	PayloadID string
}

// SetID sets the event's id to prefix and parts joined by sep, when every
// part is non-blank and rendered (Rendered): an id missing any of its
// parts is no id — "sentry-" alone would name every event the sender sends
// without one, and each after the first would be dropped as a duplicate —
// and the alert's id then falls back to its PayloadID. field names where
// the id came from. It reports whether the id was set.
func (e *Event) SetID(field, prefix, sep string, parts ...string) bool {
	if len(parts) == 0 {
		return false
	}
	clean := make([]string, len(parts))
	for i, p := range parts {
		if clean[i] = Rendered(p); clean[i] == "" {
			return false
		}
	}
	return e.Set(PartID, prefix+strings.Join(clean, sep), field)
}

// Set records a part's value and the field it came from, when the value
// is not blank; it returns whether it was.
func (e *Event) Set(part, value, field string) bool {
	value = strings.TrimSpace(value)
	if value == "" {
		return false
	}
	switch part {
	case PartTitle:
		e.Title = value
	case PartSeverity:
		e.Severity = value
	case PartService:
		e.Service = value
	case PartEnvironment:
		e.Environment = value
	case PartRule:
		e.Rule = value
	case PartID:
		e.ID = value
	default:
		return false
	}
	if e.Origin == nil {
		e.Origin = map[string]string{}
	}
	e.Origin[part] = field
	return true
}

// Label sets a label when its value is not blank.
func (e *Event) Label(key, value string) { setLabel(&e.Labels, key, value, false) }

// Link records the link of a kind (openrecall.LinkKinds) when url,
// trimmed, is one openrecall.LinkOK accepts and the kind has none yet: an
// adapter names its candidates best first. It reports whether it did.
func (e *Event) Link(kind, url string) bool {
	url = strings.TrimSpace(url)
	if _, taken := e.Links[kind]; taken || !openrecall.LinkOK(url) {
		return false
	}
	if e.Links == nil {
		e.Links = map[string]string{}
	}
	e.Links[kind] = url
	return true
}

// setLabel records value under key in *m: trimmed and only when not
// blank, or exactly as sent (a mapping's blank: keep).
func setLabel(m *map[string]string, key, value string, sent bool) {
	if !sent {
		if value = strings.TrimSpace(value); value == "" {
			return
		}
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[key] = value
}

// Annotate records an annotation when its value is not blank.
func (e *Event) Annotate(key, value string) { setLabel(&e.Annotations, key, value, false) }

// Entity records an entity field when its value is not blank.
func (e *Event) Entity(key, value string) {
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	if e.Entities == nil {
		e.Entities = map[string]string{}
	}
	e.Entities[key] = value
}

// Parts of an event that Origin names.
const (
	PartTitle       = "title"
	PartSeverity    = "severity"
	PartService     = "service"
	PartEnvironment = "environment"
	PartRule        = "rule"
	PartID          = "id"
	// PartStatus is where the generic reading found a status (Generic).
	PartStatus = "status"
)

// MaxEvidence caps the evidence an adapter appends to an event's text.
const MaxEvidence = 4 << 10

// Evidence renders key-value evidence as lines "key: value", in the given
// order, blank values skipped, capped at MaxEvidence bytes.
func Evidence(pairs ...[2]string) string {
	var b strings.Builder
	for _, p := range pairs {
		v := strings.TrimSpace(p[1])
		if v == "" {
			continue
		}
		line := p[0] + ": " + v
		if b.Len()+len(line)+1 > MaxEvidence {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}

// JoinText joins the non-blank parts of a text with blank lines.
func JoinText(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// Scale is a sender's documented severity scale, keyed by its values
// folded (FoldLevel). Look it up with Map.
type Scale map[string]openrecall.Severity

// Map returns the severity of a value of the scale, folded; unknown when
// the scale lacks it.
func (s Scale) Map(raw string) openrecall.Severity {
	if v, ok := s[FoldLevel(raw)]; ok {
		return v
	}
	return openrecall.SeverityUnknown
}

// FoldLevel folds a severity value for lookup: lowercased, with spaces,
// '-' and '_' removed ("SEV-1" and "sev 1" are "sev1").
func FoldLevel(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// Status maps a sender's state word to an alert status: the words for
// resolved (resolved, ok, closed, recovered, up…) and acknowledged
// (acknowledged, ack…) are those statuses, everything else is firing.
func Status(raw string) string {
	switch FoldLevel(raw) {
	case "resolved", "resolve", "ok", "closed", "close", "recovered", "recovery", "up", "inactive", "normal", "cleared", "clear", "deleted", "dismissed", "fixed", "succeeded", "success", "passed", "pass":
		return openrecall.StatusResolved
	case "acknowledged", "acknowledge", "ack", "acked":
		return openrecall.StatusAcknowledged
	}
	return openrecall.StatusFiring
}

// Rendered returns s trimmed, or "" when it is a template placeholder the
// sender left unrendered — a Zabbix macro ("{HOST.HOST}", "{$MACRO}"), a
// shell-style variable ("$SERVICE", "${service}"), a Go or Handlebars
// template ("{{ .Labels.x }}", "{{service}}"), or Go's "<no value>" — so
// that no unrendered text becomes a service, rule or title.
func Rendered(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "", s == "<no value>", s == "null", s == "undefined":
		return ""
	case strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}"):
		return ""
	case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && !strings.ContainsAny(s, " \":,"):
		return ""
	case strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}"):
		return ""
	case strings.HasPrefix(s, "$") && len(s) > 1 && strings.IndexFunc(s[1:], func(r rune) bool {
		return (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' && r != '.'
	}) < 0:
		return ""
	}
	return s
}

// Tags reads the service and the environment from "key:value" tags
// ("service:api", "env:prod", "environment:staging"), as many senders
// write them, into the parts still unset; field names where they came
// from. Unrendered values are skipped.
func (e *Event) Tags(tags []string, field string) {
	for _, t := range tags {
		key, val, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "service":
			if e.Service == "" {
				e.Set(PartService, Rendered(val), field)
			}
		case "env", "environment":
			if e.Environment == "" {
				e.Set(PartEnvironment, Rendered(val), field)
			}
		}
	}
}
