package gen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// The generic reading of a JSON object no sender maps (DESIGN §3, "The
// generic reading"): objects of unknown senders, drawn from pools of keys
// and words.

// GenericWords are the words the strings of a generated object are made
// of: none is a key, a state word or a severity, so where one lands in the
// reading says where it was read.
func GenericWords() []string {
	return []string{"checkout", "payments", "Nightly backup", "disk quota", "eu-west", "Heroku", "replica lag",
		"TLS handshake timed out", "Web Server", "queue depth", "api gateway", "billing export", "Amsterdam probe",
		"login page", "DNS lookup failed for shop.example", "cron job", "Mail relay", "search index", "ledger",
		"café Straße"}
}

// GenericKeys are the member names of the filler: neither a name, a
// message, a status, a severity, an id nor a time key, nor one the
// product's own object reads into a part (service, source, environment).
func GenericKeys() []string {
	return []string{"region", "probe", "location", "team_note", "owner_group", "detail_text", "os", "hardware",
		"check_type", "component_path", "notes", "contact_group", "site_code_label", "plan", "zone"}
}

// GenericNameKeys are where a generated object names its check: the key
// and, for a name inside an object, the key of that object.
func GenericNameKeys() [][2]string {
	return [][2]string{{"", "check_name"}, {"", "monitor_friendly_name"}, {"", "alertName"}, {"", "ruleName"},
		{"", "monitor_name"}, {"monitor", "name"}, {"service", "display_name"}, {"incident", "name"}, {"check", "name"},
		{"alert", "title"}, {"", "name"}, {"data", "check_name"}}
}

// GenericMessageKeys describe the alert: the reading puts them after a
// name.
func GenericMessageKeys() []string {
	return []string{"description", "message", "msg", "details", "output", "long_description", "cause", "text"}
}

// GenericIDKeys name the ids a generated object carries: the reading may
// leave them to its id and its evidence cap.
func GenericIDKeys() []string { return []string{"id", "event_id", "check_id", "uuid"} }

// GenericTimeKeys name the times a generated object carries, likewise.
func GenericTimeKeys() []string { return []string{"timestamp", "created_at", "state_changed_utc_time"} }

// GenericMember is one member of a generated object: a key of
// GenericKeys (or, with Nest, an object of one to three members under
// it), holding a word, a number or a boolean.
type GenericMember struct {
	Key, Word, Kind int
	Nest            []GenericLeafMember
}

// GenericLeafMember is a member of a nested object.
type GenericLeafMember struct{ Key, Word, Kind int }

// GenericObject is an object of a sender openrecall does not map: filler
// members, and optionally a name of its check (Name ≥ 1: where, of
// GenericNameKeys, one-based), a message, an id and a time (likewise; 0 is
// none).
type GenericObject struct {
	Members []GenericMember
	Name    int // 1 + index into GenericNameKeys, or 0 for none
	NameW   int
	Message int // 1 + index into GenericMessageKeys, or 0
	MsgW    int
	ID      int // 1 + index into GenericIDKeys, or 0
	Time    int // 1 + index into GenericTimeKeys, or 0
}

// at returns the element of pool an index names, any int being an index.
func at[T any](pool []T, i int) T {
	n := len(pool)
	return pool[((i%n)+n)%n]
}

// leafValue is the JSON value of a filler leaf: a word (kind 0–2), a
// number (3) or a boolean (4).
func leafValue(word, kind int) any {
	switch ((kind % 5) + 5) % 5 {
	case 3:
		return 17 + word
	case 4:
		return word%2 == 0
	}
	return at(GenericWords(), word)
}

// Map returns the object as a JSON-ready map.
func (o GenericObject) Map() map[string]any {
	m := map[string]any{}
	keys := GenericKeys()
	for i, mem := range o.Members {
		k := at(keys, mem.Key)
		if _, taken := m[k]; taken {
			k = fmt.Sprintf("%s_%d", k, i)
		}
		if len(mem.Nest) == 0 {
			m[k] = leafValue(mem.Word, mem.Kind)
			continue
		}
		sub := map[string]any{}
		for j, n := range mem.Nest {
			sk := at(keys, n.Key)
			if _, taken := sub[sk]; taken {
				sk = fmt.Sprintf("%s_%d", sk, j)
			}
			sub[sk] = leafValue(n.Word, n.Kind)
		}
		m[k] = sub
	}
	if o.Name > 0 {
		nk := at(GenericNameKeys(), o.Name-1)
		name := o.NameValue()
		if nk[0] == "" {
			m[nk[1]] = name
		} else {
			sub, ok := m[nk[0]].(map[string]any)
			if !ok {
				sub = map[string]any{}
			}
			sub[nk[1]] = name
			m[nk[0]] = sub
		}
	}
	if o.Message > 0 {
		m[at(GenericMessageKeys(), o.Message-1)] = "probe reports " + at(GenericWords(), o.MsgW)
	}
	if o.ID > 0 {
		m[at(GenericIDKeys(), o.ID-1)] = fmt.Sprintf("a1b2c3-%d", o.ID)
	}
	if o.Time > 0 {
		m[at(GenericTimeKeys(), o.Time-1)] = "2026-01-05T10:00:00Z"
	}
	if len(m) == 0 {
		m["region"] = GenericWords()[0]
	}
	return m
}

// NameValue is the check's name the object carries (when Name ≥ 1).
func (o GenericObject) NameValue() string {
	return "chk " + at(GenericWords(), o.NameW)
}

// JSON returns the object as one JSON line.
func (o GenericObject) JSON() []byte {
	b, err := json.Marshal(o.Map())
	if err != nil {
		panic(err)
	}
	return b
}

// ReadableLeaves returns the string leaves of the object a person reads
// (not its id or time) by dotted path.
func (o GenericObject) ReadableLeaves() map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x)
			}
		case string:
			last := prefix[strings.LastIndex(prefix, ".")+1:]
			for _, k := range append(GenericIDKeys(), GenericTimeKeys()...) {
				if last == k {
					return
				}
			}
			out[prefix] = t
		}
	}
	walk("", o.Map())
	return out
}

func genericLeafMemberGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(GenericLeafMember{}), map[string]gopter.Gen{
		"Key":  Index(len(GenericKeys()), 0),
		"Word": Index(len(GenericWords()), 0),
		"Kind": Index(5, 0),
	})
}

func genericMemberGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(GenericMember{}), map[string]gopter.Gen{
		"Key":  Index(len(GenericKeys()), 0),
		"Word": Index(len(GenericWords()), 0),
		"Kind": Index(5, 0),
		"Nest": SliceUpTo(3, genericLeafMemberGen(), reflect.TypeOf(GenericLeafMember{})),
	})
}

// GenericObjectGen generates objects of senders openrecall does not map:
// up to 8 filler members (a third of them objects of up to 3 members),
// words, numbers and booleans, with or without a name of the check, a
// message, an id and a time. Shrinks toward fewer members and no name.
func GenericObjectGen() gopter.Gen {
	opt := func(n int) gopter.Gen { return Index(n+1, 0) }
	return gg.Struct(reflect.TypeOf(GenericObject{}), map[string]gopter.Gen{
		"Members": SliceUpTo(8, genericMemberGen(), reflect.TypeOf(GenericMember{})),
		"Name":    opt(len(GenericNameKeys())),
		"NameW":   Index(len(GenericWords()), 0),
		"Message": opt(len(GenericMessageKeys())),
		"MsgW":    Index(len(GenericWords()), 0),
		"ID":      opt(len(GenericIDKeys())),
		"Time":    opt(len(GenericTimeKeys())),
	})
}

// GenericNamedGen generates what GenericObjectGen does, read through
// Named: an object that always names its check.
func GenericNamedGen() gopter.Gen { return GenericObjectGen() }

// Named returns the object with a name of its check: its own, else one
// placed by its other fields.
func (o GenericObject) Named() GenericObject {
	if o.Name <= 0 {
		o.Name = 1 + (o.NameW+len(o.Members))%len(GenericNameKeys())
	}
	return o
}

// GenericNotice is a generated object of an unknown sender whose state is
// stated one way of several (Form): a status-like key at the top or nested
// (Key, of GenericStateKeys) holding a recovery, acknowledgement or firing
// value (Value, of GenericStateValues), or a title in a recovery form (of
// GenericTitleForms) or its firing twin.
type GenericNotice struct {
	Object GenericObject
	Title  bool // the state is in the title (a form), not a key
	Key    int
	Value  int
	Form   int
	Firing bool // the liveness twin: the same shape, firing
}

// GenericStateKeys are status-like keys, nested ones as "object.key".
func GenericStateKeys() []string {
	return []string{"status", "state", "current_state", "event", "eventType", "alert_type_friendly_name",
		"notification_type", "incident.status", "check_result.state", "webhook_event_data.check_state_name",
		"data.attributes.status", "monitor_status", "new_status"}
}

// GenericStateValues pairs each recovery or acknowledgement value with a
// firing value of the same shape: [notice, firing, want status of the
// notice].
func GenericStateValues() [][3]string {
	return [][3]string{
		{"resolved", "firing", "resolved"}, {"OK", "CRITICAL", "resolved"}, {"UP", "DOWN", "resolved"},
		{"Recovered", "Failing", "resolved"}, {"CLEAR", "TRIGGERED", "resolved"}, {"closed", "open", "resolved"},
		{"Available", "Not Available", "resolved"}, {"ended", "started", "resolved"}, {"RECOVERY", "PROBLEM", "resolved"},
		{"DOWN -> UP", "UP -> DOWN", "resolved"}, {"ALERT_NOTIFICATION_CLEAR", "ALERT_NOTIFICATION_TRIGGER", "resolved"},
		{"check.up", "check.down", "resolved"}, {"normal", "alerting", "resolved"}, {"operational", "major_outage", "resolved"},
		{"acknowledged", "triggered", "acknowledged"}, {"Acknowledged", "Started", "acknowledged"}, {"ack", "alert", "acknowledged"},
	}
}

// GenericTitleForms pairs a title in a recovery form with its firing
// twin (%s is the check's name).
func GenericTitleForms() [][2]string {
	return [][2]string{
		{"RESOLVED: %s", "FIRING: %s"}, {"OK: %s", "CRITICAL: %s"}, {"%s DOWN -> UP", "%s UP -> DOWN"},
		{"[RECOVERED] %s", "[ALERT] %s"}, {"Device web-3 recovered from %s", "Alert for device web-3 - %s"},
		{"Health Rule Violation Ended - %s", "Health Rule Violation Started - %s"}, {"%s is back up", "%s is down"},
		{"%s CRITICAL -> OK", "%s OK -> CRITICAL"}, {"Recovery: %s", "Problem: %s"},
	}
}

// Map returns the notice (or its twin) as a JSON-ready map: the object
// with its name removed and the state added.
func (n GenericNotice) Map() map[string]any {
	o := n.Object
	o.Name = 0
	m := o.Map()
	if n.Title {
		f := at(GenericTitleForms(), n.Form)
		form := f[0]
		if n.Firing {
			form = f[1]
		}
		m["title"] = fmt.Sprintf(form, at(GenericWords(), o.NameW))
		return m
	}
	m["check_name"] = "chk " + at(GenericWords(), o.NameW)
	v := at(GenericStateValues(), n.Value)
	val := v[0]
	if n.Firing {
		val = v[1]
	}
	key := at(GenericStateKeys(), n.Key)
	cur := m
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := cur[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			cur[p] = sub
		}
		cur = sub
	}
	cur[parts[len(parts)-1]] = val
	return m
}

// JSON returns the notice (or its twin) as one JSON line.
func (n GenericNotice) JSON() []byte {
	b, err := json.Marshal(n.Map())
	if err != nil {
		panic(err)
	}
	return b
}

// Want is the status the notice must read as: resolved or acknowledged
// (its twin: firing).
func (n GenericNotice) Want() string {
	switch {
	case n.Firing:
		return "firing"
	case n.Title:
		return "resolved"
	}
	return at(GenericStateValues(), n.Value)[2]
}

// GenericNoticeGen generates notices of unknown senders — a status-like
// key (top level or nested) or a title form — over GenericObjectGen's
// filler, and their firing twins.
func GenericNoticeGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(GenericNotice{}), map[string]gopter.Gen{
		"Object": GenericObjectGen(),
		"Title":  gg.Bool(),
		"Key":    Index(len(GenericStateKeys()), 0),
		"Value":  Index(len(GenericStateValues()), 0),
		"Form":   Index(len(GenericTitleForms()), 0),
		"Firing": gg.Bool(),
	})
}

// validGenericObject checks a generated object: its members within the
// generator's bounds, and its JSON an object.
func validGenericObject(o GenericObject) error {
	if len(o.Members) > 8 {
		return fmt.Errorf("%d members, at most 8", len(o.Members))
	}
	for _, m := range o.Members {
		if len(m.Nest) > 3 {
			return fmt.Errorf("a nested object of %d members, at most 3", len(m.Nest))
		}
	}
	var m map[string]any
	return json.Unmarshal(o.JSON(), &m)
}
