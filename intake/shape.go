package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// parser turns one JSON value into records. It holds no state between
// values.
type parser struct {
	// shape is the forced shape (alertmanager, prometheus, pagerduty) or ""
	// to classify each object.
	shape Format
	// container names generic objects: FormatJSONL or FormatJSON.
	container Format
	maxRecord int
	source    string
	// senders are the sender adapters, in detection order.
	senders []sender.Sender
	// forced is the sender whose Map reads every object, when the format
	// names one (shape is then its name).
	forced *sender.Sender
	// explain keeps each alert's severity as sent (Options.Explain).
	explain bool
}

// reject appends a rejected record.
func reject(out []Record, pos openrecall.Position, format string, args ...any) []Record {
	return append(out, Record{Err: &RecordError{Position: pos, Reason: fmt.Sprintf(format, args...)}})
}

// oversize is the reason for a record over the limit.
func oversize(size, limit int) string {
	return fmt.Sprintf("record is %d bytes, over the limit of %d bytes", size, limit)
}

// value parses one top-level JSON value (a JSON Lines line, an element of a
// streamed array, or a document) that starts on line. pos is the position of
// the single record it yields; webhook items get line and their index.
func (p *parser) value(out []Record, raw []byte, pos openrecall.Position, line int, nested bool) []Record {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return reject(out, pos, "invalid JSON: empty value")
	}
	switch raw[0] {
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return reject(out, pos, "%s", jsonReason(err))
		}
		return p.object(out, object(m), raw, pos, line)
	case '"':
		// jsonfast decodes a string line as json.Unmarshal does, in one
		// pass; json.Unmarshal runs again only to say why one is invalid.
		s, ok := jsonfast.DecodeString(raw)
		if !ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return reject(out, pos, "%s", jsonReason(err))
			}
		}
		if p.shape != "" {
			return reject(out, pos, "%s", shapeMismatch(p.shape, "a JSON string"))
		}
		a, err := textAlert(s)
		if err != nil {
			return reject(out, pos, "%v", err)
		}
		a.Position = pos
		return append(out, Record{Alert: a})
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return reject(out, pos, "%s", jsonReason(err))
		}
		if nested {
			return reject(out, pos, "an array element must be an alert object or string, not an array")
		}
		if len(items) == 0 {
			return reject(out, pos, "empty array: no alerts")
		}
		for i, item := range items {
			ipos := openrecall.Position{Source: p.source, Line: line, Index: i, HasIndex: true}
			if len(item) > p.maxRecord {
				out = reject(out, ipos, "[%d]: %s", i, oversize(len(item), p.maxRecord))
				continue
			}
			out = p.value(out, item, ipos, line, true)
		}
		return out
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return reject(out, pos, "%s", jsonReason(err))
	}
	return reject(out, pos, "an alert must be a JSON object or string, not %s", jsonKind(raw))
}

// jsonKind names the kind of a valid JSON scalar.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case '"':
		return "a string"
	}
	return "a number"
}

// shapeMismatch explains why a value is not the forced shape.
func shapeMismatch(shape Format, got string) string {
	switch shape {
	case FormatAlertmanager:
		return got + " is not an Alertmanager webhook (it needs an alerts array)"
	case FormatPagerDuty:
		return got + " is not a PagerDuty Events v2 event (it needs event_action and payload)"
	case FormatPrometheus:
		return got + " is not a Prometheus alert (it needs a labels object)"
	default:
		return got + " is not a " + string(shape) + " payload (a JSON object)"
	}
}

// classify names the shape of an object.
func (p *parser) classify(o object) Format {
	switch {
	case o.has("alerts"):
		return FormatAlertmanager
	case o.has("event_action") && (o.has("payload") || o.has("dedup_key") || o.has("routing_key")):
		return FormatPagerDuty
	case o.has("labels") && !o.has("title") && !o.has("text") &&
		(o.has("startsAt") || o.has("endsAt") || o.has("generatorURL") || p.shape == FormatPrometheus):
		return FormatPrometheus
	}
	return p.container
}

// object parses one JSON object by its shape.
func (p *parser) object(out []Record, o object, raw []byte, pos openrecall.Position, line int) []Record {
	if _, ok := p.forcedSender(); ok {
		return p.senderObject(out, o, raw, pos)
	}
	shape := p.classify(o)
	if shape == p.container && (p.shape == "" || p.shape == FormatAlertmanager) {
		if v, s, ok := grafanaLegacy(o, raw); ok {
			// Grafana's legacy alerting notification: Grafana's own older
			// payload, read where its webhooks are (DESIGN §3).
			return p.grafanaLegacyObject(out, s, v, pos)
		}
	}
	if p.shape != "" && shape != p.shape {
		return reject(out, pos, "%s", shapeMismatch(p.shape, "the object"))
	}
	if shape == FormatAlertmanager {
		return p.webhook(out, o, pos, line)
	}
	if shape == FormatPagerDuty || shape == FormatPrometheus {
		return p.shapeObject(out, shape, raw, pos)
	}
	return p.senderObject(out, o, raw, pos)
}

// webhook expands an Alertmanager or Grafana webhook into one record per
// alerts[] item.
func (p *parser) webhook(out []Record, o object, pos openrecall.Position, line int) []Record {
	var items []json.RawMessage
	if raw, ok := o["alerts"]; !ok || json.Unmarshal(raw, &items) != nil {
		return reject(out, pos, "alerts must be an array")
	}
	status, err := o.str("status")
	if err != nil {
		return reject(out, pos, "%v", err)
	}
	if len(items) == 0 {
		return reject(out, pos, "webhook has no alerts")
	}
	source, batch := webhookKind(o, p.shape)
	n := len(out)
	for i, item := range items {
		ipos := openrecall.Position{Source: p.source, Line: line, Index: i, HasIndex: true}
		if len(item) > p.maxRecord {
			out = reject(out, ipos, "alerts[%d]: %s", i, oversize(len(item), p.maxRecord))
			continue
		}
		if batch {
			n := len(out)
			out = p.value(out, item, ipos, line, true)
			for _, rec := range out[n:] {
				if rec.Err != nil {
					rec.Err.Reason = fmt.Sprintf("alerts[%d]: %s", i, rec.Err.Reason)
				}
			}
			continue
		}
		a, err := webhookAlert(item, status, source)
		if err != nil {
			out = reject(out, ipos, "alerts[%d]: %v", i, err)
			continue
		}
		a.Position = ipos
		out = append(out, Record{Alert: a})
	}
	if !batch {
		if source == "alertmanager" {
			withAlertmanagerLink(out[n:], o.lenient("externalURL"))
		}
		out = truncated(out, o, source, pos)
	}
	return out
}

// webhookKind tells by a webhook's own members (all of them, or those
// read so far) its sender, alertmanager or grafana (version "1" or an
// orgId), and whether it is a batch: {"alerts": [...]} with none of a
// webhook's own members is a batch of alerts of any shape, unless the
// shape is forced to Alertmanager's. A version of another type is read as
// its text (DESIGN §3).
func webhookKind(o object, shape Format) (source string, batch bool) {
	version := o.lenient("version")
	status, _ := o.str("status")
	source = "alertmanager"
	if version == "1" || o.has("orgId") {
		source = "grafana"
	}
	batch = shape != FormatAlertmanager && version == "" && status == "" &&
		!o.has("receiver") && !o.has("groupKey") && !o.has("groupLabels") && !o.has("commonLabels")
	return source, batch
}

// truncated appends the notice of a webhook whose sender says it left
// alerts out (Alertmanager's truncatedAlerts, set when max_alerts cut the
// notification): those alerts never arrived, and a person must know.
func truncated(out []Record, fields object, source string, pos openrecall.Position) []Record {
	raw, ok := fields["truncatedAlerts"]
	if !ok {
		return out
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || n <= 0 {
		return out
	}
	group, _ := fields.str("groupKey")
	receiver, _ := fields.str("receiver")
	a := openrecall.Alert{
		Format:  string(FormatAlertmanager),
		Sender:  source,
		Status:  openrecall.StatusNotice,
		Dropped: n,
		Title:   fmt.Sprintf("%s left %d alerts out of this notification (max_alerts): they were not delivered", senderDisplay(source), n),
		Text:    fmt.Sprintf("truncatedAlerts: %d\nreceiver: %s\ngroupKey: %s", n, receiver, group),
		Labels:  map[string]string{"truncated_alerts": strconv.Itoa(n)},
	}
	if err := finish(&a, "", "", ""); err != nil {
		return out
	}
	a.Position = pos
	return append(out, Record{Alert: a})
}

// senderDisplay names a webhook's sender for people.
func senderDisplay(source string) string {
	if source == "grafana" {
		return "Grafana"
	}
	return "Alertmanager"
}

// webhookAlert parses one alerts[] item of a webhook. Its labels, status
// and startsAt make the alert and its id and are checked; an optional field
// of another type never rejects it (DESIGN §3): annotations that are no
// object are left out, a fingerprint that is no string is kept as its text,
// an endsAt that is no time is ignored.
func webhookAlert(raw json.RawMessage, groupStatus, source string) (openrecall.Alert, error) {
	var o object
	if err := json.Unmarshal(raw, &o); err != nil || o == nil {
		return openrecall.Alert{}, errors.New("alert must be an object")
	}
	labels, err := o.strMap("labels")
	if err != nil {
		return openrecall.Alert{}, err
	}
	annotations, _ := o.strMap("annotations")
	status, err := o.str("status")
	if err != nil {
		return openrecall.Alert{}, err
	}
	if status == "" {
		status = groupStatus
	}
	status, err = alertStatus(status)
	if err != nil {
		return openrecall.Alert{}, err
	}
	startsAt, err := o.time("startsAt")
	if err != nil {
		return openrecall.Alert{}, err
	}
	fp := o.lenient("fingerprint")
	if source == "alertmanager" && grafanaItem(o) {
		source = "grafana"
	}
	return newWebhookAlert(labels, annotations, status, fp, startsAt, source, webhookLinks(o, annotations))
}

// grafanaItemFields are fields of a Grafana alerts[] item that
// Alertmanager's items never carry.
var grafanaItemFields = [...]string{"silenceURL", "dashboardURL", "panelURL", "imageURL", "values", "valueString"}

// grafanaItem reports whether an alerts[] item is Grafana's: so a Grafana
// webhook whose orgId and version come after its alerts (keys sorted) is
// not read as Alertmanager's.
func grafanaItem(o object) bool {
	for _, k := range grafanaItemFields {
		if o.has(k) {
			return true
		}
	}
	return false
}

// newWebhookAlert builds the alert of a webhook item from its read fields.
// Its id is openrecall's own hash of the label set plus startsAt: the
// fingerprint as sent is kept (SentFingerprint) but never taken as the
// identity, since whoever can post an alert can send another's. Its links
// (webhookLinks) are no part of it either.
func newWebhookAlert(labels, annotations map[string]string, status, fp string, startsAt time.Time, source string, links map[string]string) (openrecall.Alert, error) {
	if len(labels) == 0 && annotations["summary"] == "" && annotations["description"] == "" {
		return openrecall.Alert{}, errors.New("empty alert: no labels, summary or description")
	}
	a := openrecall.Alert{
		ID:              episodeID(labelSetID(labels, annotations), startsAt),
		SentFingerprint: cleanLine(fp),
		Format:          string(FormatAlertmanager),
		Title:           annotations["summary"],
		Text:            annotations["description"],
		Labels:          labels,
		Annotations:     annotations,
		Source:          source,
		Status:          status,
		Timestamp:       startsAt,
		Sender:          source,
		Episode:         true,
		Links:           links,
	}
	if err := finish(&a, "", "", ""); err != nil {
		return openrecall.Alert{}, err
	}
	forwarded(&a)
	return a, nil
}

// alertStatus checks an Alertmanager status: firing (also when empty) or
// resolved.
func alertStatus(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", openrecall.StatusFiring:
		return openrecall.StatusFiring, nil
	case openrecall.StatusResolved:
		return openrecall.StatusResolved, nil
	}
	return "", fmt.Errorf("status must be firing or resolved, not %q", s)
}

// textAlert is a free-text alert: the first line is its title, and the
// whole text its text when it has more than one line.
func textAlert(s string) (openrecall.Alert, error) {
	a := openrecall.Alert{Format: string(FormatText), Title: firstLine(s)}
	if text := cleanText(s); strings.Contains(text, "\n") {
		a.Text = text
	}
	if a.Title == "" {
		return openrecall.Alert{}, errors.New("empty alert: the text is blank")
	}
	if err := finish(&a, "", "", ""); err != nil {
		return openrecall.Alert{}, err
	}
	return a, nil
}

// object is a decoded JSON object whose values are still raw.
type object map[string]json.RawMessage

// has reports whether key is present with a non-null value.
func (o object) has(key string) bool {
	raw, ok := o[key]
	return ok && string(raw) != "null"
}

// str returns a string field; absent or null is "".
func (o object) str(key string) (string, error) {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	s, ok := decodeString(raw)
	if !ok {
		return "", fmt.Errorf("%s is not a string", key)
	}
	return s, nil
}

// lenient returns a scalar field as text (a string as itself, a number or
// boolean as written); "" when absent, null, an object or an array.
func (o object) lenient(key string) string {
	raw, ok := o[key]
	if !ok || len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{', '[', 'n':
		return ""
	}
	s, _ := scalarString(raw)
	return s
}

// scalarString returns a JSON value as a label value: a string as itself,
// null as absent, anything else as its compact JSON text.
func scalarString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		if s, ok := decodeString(raw); ok {
			return s, true
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw), true
	}
	return buf.String(), true
}

// strMap returns an object field as a string map; absent or null is nil.
// Values that are not strings are kept as their JSON text.
func (o object) strMap(key string) (map[string]string, error) {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var m object
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s must be an object", key)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := scalarString(v); ok {
			out[k] = s
		}
	}
	return out, nil
}

// time returns a time field: an RFC 3339 string, or a number of unix
// seconds (milliseconds when above 1e12). Absent, null, "" and Go's zero
// time are the zero time.
func (o object) time(key string) (time.Time, error) {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		return time.Time{}, nil
	}
	if raw[0] == '"' {
		s, ok := decodeString(raw)
		if !ok {
			return time.Time{}, fmt.Errorf("%s is not a string", key)
		}
		return timeText(key, s)
	}
	return unixTime(key, string(raw))
}

// timeText reads a time field given as a JSON string, s decoded, in any
// form sender.ParseTime reads (ISO 8601 as senders write it, RFC 1123, unix
// seconds); blank and Go's zero time are the zero time.
func timeText(key, s string) (time.Time, error) {
	t, err := sender.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %s is not an ISO 8601 time or unix seconds", key, strconv.Quote(truncate(strings.TrimSpace(s), 64)))
	}
	return t, nil
}

// unixTime reads s as unix seconds, or milliseconds when above 1e12.
func unixTime(key, s string) (time.Time, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e17 {
		return time.Time{}, fmt.Errorf("%s %s is not an ISO 8601 time or unix seconds", key, strconv.Quote(truncate(s, 64)))
	}
	if f > 1e12 {
		return time.UnixMilli(int64(f)).UTC(), nil
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// truncate shortens s to at most n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// maxJSONDepth is encoding/json's limit on the nesting of arrays and
// objects: a value nested deeper is rejected.
const maxJSONDepth = 10000

// jsonReason turns a decoding error into a reason for a person.
func jsonReason(err error) string {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return "invalid JSON: " + err.Error()
	}
	msg := syn.Error()
	if strings.HasSuffix(msg, " exceeded max depth") {
		// encoding/json words its nesting limit as an invalid character.
		return fmt.Sprintf("invalid JSON: nested deeper than %d levels (the limit) at byte %d", maxJSONDepth, syn.Offset)
	}
	if strings.HasPrefix(msg, "unexpected end of JSON input") {
		return fmt.Sprintf("invalid JSON: unexpected end of input after %d bytes", syn.Offset)
	}
	const prefix = "invalid character "
	if strings.HasPrefix(msg, prefix) {
		rest := msg[len(prefix):]
		if end := strings.Index(rest[1:], "' "); end >= 0 {
			char := rest[:end+2]
			if strings.Contains(rest, "after top-level value") {
				return fmt.Sprintf("invalid JSON: unexpected character %s after the end of the value at byte %d", char, syn.Offset)
			}
			return fmt.Sprintf("invalid JSON: unexpected character %s at byte %d", char, syn.Offset)
		}
	}
	return fmt.Sprintf("invalid JSON: %s at byte %d", msg, syn.Offset)
}
