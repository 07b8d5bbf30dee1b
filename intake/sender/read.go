package sender

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// maxEnvelopes bounds how many envelopes Read opens, one inside another.
const maxEnvelopes = 3

// Detect returns the first adapter of senders (built-in senders skipped)
// whose Match accepts v, and whether there is one.
func Detect(senders []Sender, v Value) (Sender, bool) {
	for _, s := range senders {
		if !s.Builtin && s.Match != nil && s.Match(v) {
			return s, true
		}
	}
	return Sender{}, false
}

// ErrNoSender says that no adapter recognises a payload.
var ErrNoSender = errors.New("no sender recognises the payload")

// Read recognises v among senders and reads its events, opening envelopes
// on the way: the sender returned is the one whose Map read the events.
// It returns ErrNoSender when no adapter recognises v (or what an envelope
// carries: then the envelope itself is read).
func Read(senders []Sender, v Value) (Sender, []Event, error) {
	s, ok := Detect(senders, v)
	if !ok {
		return Sender{}, nil, ErrNoSender
	}
	return readAs(senders, s, v, v, 0)
}

// ReadAs reads v as the payload of s, whether or not s.Match accepts it
// (the sender was named: POST /api/v1/alerts/{sender}, --format).
func ReadAs(senders []Sender, s Sender, v Value) (Sender, []Event, error) {
	if s.Map == nil {
		return s, nil, fmt.Errorf("%s is read by intake itself", s.Name)
	}
	return readAs(senders, s, v, v, 0)
}

// readAs reads v, the payload top carries (top itself, or inside its
// envelopes), as s's; each event's PayloadID hashes top, all that was sent.
func readAs(senders []Sender, s Sender, top, v Value, depth int) (Sender, []Event, error) {
	if s.Open != nil && depth < maxEnvelopes {
		if inner, ok := s.Open(v); ok {
			if is, found := Detect(senders, inner); found {
				return readAs(senders, is, top, inner, depth+1)
			}
		}
	}
	events, err := s.Map(v)
	for i := range events {
		events[i].PayloadID = PayloadID(s.Name, top, i)
	}
	return s, events, err
}

// PayloadID is "h-" and the first 16 hex digits of SHA-256 over a sender's
// name, an event's index in its payload and the payload v as canonical
// JSON (members sorted, numbers as sent): the id of an event whose sender
// gave none. It reads everything the payload carries — not only what a
// mapping takes from it — so two payloads that differ anywhere get
// different ids, and a redelivery of one (its members in any order) the
// same.
func PayloadID(name string, v Value, index int) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(name))))
	h.Write([]byte{':'})
	h.Write([]byte(name))
	h.Write([]byte(strconv.Itoa(index)))
	h.Write([]byte{':'})
	if err := json.NewEncoder(h).Encode(v.v); err != nil {
		// A Value holds what encoding/json decoded, which it encodes;
		// anything else is hashed as Go prints it.
		fmt.Fprintf(h, "%#v", v.v)
	}
	sum := h.Sum(nil)
	return "h-" + hex.EncodeToString(sum[:8])
}

// Keys the generic reading of a JSON object that no sender recognises
// looks for (DESIGN §3), each list in precedence order. A rule key names
// the check that fired; without one the alert has no rule of its own, so
// its identity falls back to its title's template.
var (
	GenericTitleKeys = []string{"title", "summary", "name", "subject", "message", "msg", "rule_name", "ruleName", "alert_name", "alertName",
		"event", "description", "text", "details"}
	GenericRuleKeys     = []string{"rule", "rule_id", "ruleId", "rule_name", "ruleName", "alertname", "alert_name", "alertName", "check", "check_name", "monitor", "monitor_name", "alarm_name", "AlarmName", "signature", "signature_id"}
	GenericSeverityKeys = []string{"severity", "priority", "level", "urgency", "criticality"}
	GenericServiceKeys  = []string{"service", "service_name", "app", "application", "component"}
	GenericEnvKeys      = []string{"environment", "env", "stage"}
	GenericIDKeys       = []string{"id", "uuid", "event_id", "eventId", "alert_id", "alertId", "incident_id", "dedup_key", "fingerprint"}
	GenericHostKeys     = []string{"host", "hostname", "host_name", "instance", "resource"}
	GenericTimeKeys     = []string{"timestamp", "time", "@timestamp", "date", "created_at", "createdAt", "datetime"}
	GenericStatusKeys   = []string{"status", "state"}
)

// maxGenericLeaves caps the scalar fields a generic reading renders.
const maxGenericLeaves = 64

// Generic reads a JSON object that no sender recognises (DESIGN §3): its
// title is the first present of GenericTitleKeys (a scalar, at the top
// level), else a compact rendering of its scalar fields; its text renders
// every scalar field as "path: value" lines (capped); it has a rule only
// when one of GenericRuleKeys is present, so memory never vouches for an
// alert nobody named. An object with no non-blank scalar at all gives an
// event with neither title nor text, which intake rejects as empty.
func Generic(v Value) Event {
	var e Event
	pick := func(part string, keys []string) {
		for _, k := range keys {
			if e.Set(part, v.Get(k).String(), k) {
				return
			}
		}
	}
	pick(PartTitle, GenericTitleKeys)
	pick(PartRule, GenericRuleKeys)
	pick(PartSeverity, GenericSeverityKeys)
	pick(PartService, GenericServiceKeys)
	pick(PartEnvironment, GenericEnvKeys)
	for _, k := range GenericIDKeys {
		if e.SetID(k, "json-", "", v.Get(k).String()) {
			break
		}
	}
	e.PayloadID = PayloadID(openrecall.SenderGeneric, v, 0)
	e.Host, _ = v.First(GenericHostKeys...)
	for _, k := range GenericTimeKeys {
		if t := v.Get(k).Time(); !t.IsZero() {
			e.Timestamp = t
			break
		}
	}
	status, _ := v.First(GenericStatusKeys...)
	e.Status = Status(status)
	leaves := v.Scalars(maxGenericLeaves)
	pairs := make([][2]string, len(leaves))
	for i, l := range leaves {
		pairs[i] = [2]string{l[0], l[1]}
	}
	e.Text = Evidence(pairs...)
	if e.Title == "" && len(leaves) > 0 {
		var parts []string
		for _, l := range leaves {
			parts = append(parts, l[0]+"="+l[1])
			if len(strings.Join(parts, " ")) > 160 {
				break
			}
		}
		e.Set(PartTitle, strings.Join(parts, " "), "(rendered)")
	}
	return e
}
