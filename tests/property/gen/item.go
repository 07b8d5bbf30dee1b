package gen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// ItemKeys are the keys an alerts[] item is written with, as JSON text
// (quotes and escapes included): the fields an Alertmanager item is read
// by, fields read by nobody, title and text (an item with either is not an
// Alertmanager item in a batch), a key in another case, read keys spelled
// with escapes, the empty key and a key with an invalid UTF-8 byte.
func ItemKeys() []string {
	return []string{`"labels"`, `"annotations"`, `"status"`, `"startsAt"`, `"fingerprint"`, `"endsAt"`, `"generatorURL"`,
		`"title"`, `"text"`, `"values"`, `"Labels"`, `"\u006cabels"`, `"stat\u0075s"`, `""`, "\"\xffkey\"", `"silenceURL"`}
}

// ItemEntryKeys are keys of the entries of an object value (labels,
// annotations): the names the reader and the normalization look at,
// white space around a name, an escaped name, the empty key and a control
// character.
func ItemEntryKeys() []string {
	return []string{`"alertname"`, `"severity"`, `"summary"`, `"description"`, `"instance"`, `"service"`, `"env"`, `"job"`,
		`" severity "`, `"sev\u0065rity"`, `""`, `"a\tb"`, `"pod"`, `"\u00e9t\u00e9"`}
}

// ItemValueKinds are the kinds of value a field or an entry gets: the
// kind that fits the field (an object of strings for labels and
// annotations, a status, a time, a fingerprint; a text for an entry), or
// another kind.
func ItemValueKinds() []string {
	return []string{"fitting", "string", "object", "null", "number", "boolean", "array", "broken"}
}

// ItemStatuses are statuses as sources write them, and some that are not.
func ItemStatuses() []string {
	return []string{"firing", "resolved", " Resolved ", "FIRING", "", "pending", "  "}
}

// ItemTimes are times in every form the reader takes and some it rejects.
func ItemTimes() []string {
	return []string{"2026-11-29T21:10:00Z", "0001-01-01T00:00:00Z", "2026-11-29T21:10:00.123456789+02:00", "2026-11-29 21:10:00", "2026-11-29T21:10:00",
		"", "1764450600", "1764450600123", "1.5e9", "-1", "1e18", "NaN", "yesterday"}
}

// ItemFingerprints are fingerprints: Alertmanager's, padded, blank.
func ItemFingerprints() []string {
	return []string{"c91d997d55db7a73", " c91d997d55db7a73 ", "", "x"}
}

// ItemScalars are the strings of the other fields.
func ItemScalars() []string {
	return []string{"disk full on db-1", "", "http://prometheus.local:9090/graph?g0.expr=up%3D%3D0&x=<>", "critical", "prod"}
}

// ItemNumbers are number values, a huge and a tiny one included.
func ItemNumbers() []string {
	return []string{"0", "-0", "1764450600", "1.5", "1e400", "123456789012345678901234567890", "-1e-7"}
}

// ItemBroken are values that are not valid JSON.
func ItemBroken() []string {
	return []string{`"unterminated`, `{`, `tru`, "\"a\x01b\"", `"\'"`, `"\u12"`, `"\x"`, `01`, `[1,]`, `{"a" "b"}`, `{"a":}`, `nul`}
}

// ItemEscapes are pieces written inside a JSON string after its text:
// escapes of every kind, surrogate pairs, lone and broken surrogates.
func ItemEscapes() []string {
	return []string{``, `\n`, `\u003e`, `\ud83d\ude00`, `\uD83D\uDE00`, `\ud800`, `\udc00x`, `\ud83d\u0041`, `\ud83d\ud83d\ude00`,
		`\u0000`, `\/`, `\b\f\r\t`, `\"`, `\\u0041`, `\u00e9`, `\\`}
}

// ItemRawBytes are pieces written as they are inside a JSON string between
// its text and its escape: invalid UTF-8 (bytes that are no character, a
// surrogate encoded in UTF-8, a cut sequence), a valid two-byte character,
// and control characters, which JSON allows only escaped.
func ItemRawBytes() []string {
	return []string{"", "\xff\xfe", "\xed\xa0\x80", "\xe2\x82", "\xc3\xa9", "\t", "\x01"}
}

// StringEncodings are the ways a text is written as a JSON string, and one
// that is not JSON.
func StringEncodings() []string {
	return []string{"minimal", "json.Marshal", "ASCII", "every rune escaped", "raw control characters"}
}

// ItemSpaces are the runs written between the tokens of an item: JSON's
// white space, and two that are not (a no-break space, a form feed).
func ItemSpaces() []string { return []string{"", " ", "\n  ", "\t", "\r\n", "\u00a0", "\f"} }

// ItemGroups are the webhooks around the items (%s is the alerts array):
// the group's own fields before or after its alerts (streamed as a webhook,
// or as a batch of alerts of any shape), a Grafana webhook, a group status
// that is not a string, a webhook inside a top-level array, pretty-printed.
func ItemGroups() []string {
	return []string{
		`{"version":"4","status":"firing","receiver":"openrecall","groupKey":"{}","alerts":%s}`,
		`{"alerts":%s,"status":"resolved","version":"4","receiver":"openrecall"}`,
		`{"alerts":%s}`,
		`{"status":"resolved","alerts":%s}`,
		`{"version":"1","orgId":1,"status":"firing","alerts":%s}`,
		`{"status":5,"alerts":%s}`,
		`[{"status":"firing","version":"4","alerts":%s}]`,
		"{\n  \"status\": \"firing\",\n  \"alerts\": %s\n}",
	}
}

// ItemFormats are the formats a webhook is read with ("" detects it).
func ItemFormats() []string { return []string{"", "alertmanager", "jsonl", "json", "prometheus"} }

// ItemValue is one value of an item: a leaf, or an object of entries.
type ItemValue struct {
	ItemLeaf
	Entries []ItemEntry
}

// ItemEntry is an entry of an object value.
type ItemEntry struct {
	Key   int
	Value ItemLeaf
}

// ItemLeaf is a value without entries of its own, by indexes into the
// tables above (a nested object is written empty or with one entry).
type ItemLeaf struct {
	Kind     int
	Text     Text
	Scalar   int
	Encoding int
	Escape   int
	Raw      int
	Other    int // the number, the boolean, the array or the broken value
}

// ItemField is one field of an item.
type ItemField struct {
	Key   int
	Value ItemValue
}

// ItemCore are the fields of a real Alertmanager item, in Alertmanager's
// order. Fitting labels start with an alertname, fitting annotations with
// a summary.
func ItemCore() []string {
	return []string{"status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"}
}

// WebhookItem is one alerts[] item: the fields of ItemCore that Drop does
// not name (a bit per field), rotated by Rotate, then Extra fields.
type WebhookItem struct {
	Core   []ItemValue // values of ItemCore, in its order; missing ones are written fitting
	Drop   int
	Rotate int
	Extra  []ItemField
}

// WebhookItems is one to three alerts[] items (First, then More) with the
// white space between their tokens, to be written in each of ItemGroups
// and read with each of ItemFormats.
type WebhookItems struct {
	First WebhookItem
	More  []WebhookItem
	Space int
	// Tidy, when 1, writes the items as a real sender would: values of
	// the fitting kind, a string or null; extra fields of strings or null;
	// JSON white space; no raw control character. Escapes, surrogates,
	// invalid UTF-8, null and repeated entries and fields, title and text
	// stay.
	Tidy int
}

// tidy returns w as written when Tidy is set.
func (w WebhookItems) tidy() WebhookItems {
	if w.Tidy == 0 {
		return w
	}
	tidyLeaf := func(l ItemLeaf) ItemLeaf {
		switch ItemValueKinds()[l.Kind%len(ItemValueKinds())] {
		case "fitting", "string", "null":
		default:
			l.Kind = 0
		}
		if StringEncodings()[l.Encoding%len(StringEncodings())] == "raw control characters" {
			l.Encoding = 0
		}
		if p := ItemRawBytes()[l.Raw%len(ItemRawBytes())]; p != "" && p[0] < 0x20 {
			l.Raw = 0
		}
		return l
	}
	if sp := ItemSpaces()[w.Space%len(ItemSpaces())]; sp == "\u00a0" || sp == "\f" {
		w.Space = 1
	}
	items := w.Items()
	for i, it := range items {
		extra := make([]ItemField, len(it.Extra))
		for j, f := range it.Extra {
			f.Value.ItemLeaf = tidyLeaf(f.Value.ItemLeaf)
			f.Value.Entries = nil
			extra[j] = f
		}
		it.Extra = extra
		core := make([]ItemValue, len(it.Core))
		for j, v := range it.Core {
			v.ItemLeaf = tidyLeaf(v.ItemLeaf)
			entries := make([]ItemEntry, len(v.Entries))
			for k, e := range v.Entries {
				entries[k] = ItemEntry{Key: e.Key, Value: tidyLeaf(e.Value)}
			}
			v.Entries = entries
			core[j] = v
		}
		it.Core = core
		items[i] = it
	}
	w.First, w.More = items[0], items[1:]
	return w
}

// field is an item's field as written: its key as JSON text, its value.
type field struct {
	key   string
	value ItemValue
	core  string // the ItemCore name, "" for an extra field
}

// fields lists the item's fields as written.
func (it WebhookItem) fields() []field {
	var out []field
	core := ItemCore()
	for i := range core {
		j := (i + it.Rotate) % len(core)
		if it.Drop&(1<<j) != 0 {
			continue
		}
		var v ItemValue
		if j < len(it.Core) {
			v = it.Core[j]
		}
		out = append(out, field{key: `"` + core[j] + `"`, value: v, core: core[j]})
	}
	for _, f := range it.Extra {
		out = append(out, field{key: ItemKeys()[f.Key%len(ItemKeys())], value: f.Value})
	}
	return out
}

// Items returns the items in order.
func (w WebhookItems) Items() []WebhookItem { return append([]WebhookItem{w.First}, w.More...) }

// Body returns the items written in the webhook ItemGroups()[group].
func (w WebhookItems) Body(group int) string {
	return w.body(ItemGroups()[group%len(ItemGroups())], nil)
}

// body returns the items written in the webhook group (%s is the alerts
// array), each followed by the members more gives it ("key:value" texts,
// written with the items' white space; nil: none).
func (w WebhookItems) body(group string, more func(i int, sp string, tidy bool) []string) string {
	tidy := w.Tidy == 1
	w = w.tidy()
	sp := ItemSpaces()[w.Space%len(ItemSpaces())]
	items := make([]string, len(w.Items()))
	for i, it := range w.Items() {
		var b strings.Builder
		b.WriteString("{" + sp)
		n := 0
		for _, f := range it.fields() {
			if n > 0 {
				b.WriteString("," + sp)
			}
			b.WriteString(f.key + sp + ":" + sp + f.value.json(sp, f.core))
			n++
		}
		if more != nil {
			for _, m := range more(i, sp, tidy) {
				if n > 0 {
					b.WriteString("," + sp)
				}
				b.WriteString(m)
				n++
			}
		}
		b.WriteString(sp + "}")
		items[i] = b.String()
	}
	return fmt.Sprintf(group, "["+sp+strings.Join(items, ","+sp)+sp+"]") + "\n"
}

// Common reports whether item i has the shape nearly every real item has:
// strings, null and booleans as values, objects of strings only under
// labels and annotations, no title or text, no read field twice, JSON
// white space only. (It does not look inside strings: one with a raw
// control character is not JSON.)
func (w WebhookItems) Common(i int) bool {
	w = w.tidy()
	if sp := ItemSpaces()[w.Space%len(ItemSpaces())]; sp == "\u00a0" || sp == "\f" {
		return false
	}
	seen := map[string]bool{}
	for _, f := range w.Items()[i].fields() {
		var name string
		if json.Unmarshal([]byte(f.key), &name) != nil {
			return false
		}
		kind := ItemValueKinds()[f.value.Kind%len(ItemValueKinds())]
		switch name {
		case "title", "text":
			return false
		case "labels", "annotations":
			if kind == "fitting" && f.core == "" {
				kind = "string"
			}
			if seen[name] || (kind != "null" && kind != "object" && kind != "fitting") {
				return false
			}
			if kind != "null" {
				for _, e := range f.value.Entries {
					if k := ItemValueKinds()[e.Value.Kind%len(ItemValueKinds())]; k != "fitting" && k != "string" && k != "null" {
						return false
					}
				}
			}
		case "status", "startsAt", "endsAt", "fingerprint":
			if seen[name] || (kind != "fitting" && kind != "string" && kind != "null") {
				return false
			}
		default:
			if kind != "fitting" && kind != "string" && kind != "null" && kind != "boolean" {
				return false
			}
		}
		seen[name] = true
	}
	return true
}

func (v ItemValue) json(sp, core string) string {
	kind := ItemValueKinds()[v.Kind%len(ItemValueKinds())]
	if kind == "object" || (kind == "fitting" && (core == "labels" || core == "annotations")) {
		var b strings.Builder
		b.WriteString("{" + sp)
		if kind == "fitting" {
			// What a real item has: a rule name, a summary.
			if core == "labels" {
				b.WriteString(`"alertname":"HighErrorRate"`)
			} else {
				b.WriteString(`"summary":"` + encodeText(v.Text.String(), v.Encoding) + `"`)
			}
		}
		for i, e := range v.Entries {
			if i > 0 || kind == "fitting" {
				b.WriteString("," + sp)
			}
			b.WriteString(ItemEntryKeys()[e.Key%len(ItemEntryKeys())] + ":" + sp + e.Value.json(""))
		}
		b.WriteString(sp + "}")
		return b.String()
	}
	return v.ItemLeaf.json(core)
}

// json writes the leaf as the value of the core field core ("" for an
// entry or an extra field).
func (l ItemLeaf) json(core string) string {
	pick := func(pool []string) string { return pool[l.Other%len(pool)] }
	quote := func(s string) string { return `"` + encodeText(s, l.Encoding) + `"` }
	switch ItemValueKinds()[l.Kind%len(ItemValueKinds())] {
	case "fitting":
		switch core {
		case "status":
			return quote(ItemStatuses()[l.Scalar%len(ItemStatuses())])
		case "startsAt", "endsAt":
			return quote(ItemTimes()[l.Scalar%len(ItemTimes())])
		case "fingerprint":
			return quote(ItemFingerprints()[l.Scalar%len(ItemFingerprints())])
		case "generatorURL":
			return quote(ItemScalars()[l.Scalar%len(ItemScalars())])
		}
		return l.text()
	case "string":
		return l.text()
	case "object":
		if l.Other%2 == 0 {
			return `{}`
		}
		return `{"summary":` + quote(l.Text.String()) + `}`
	case "null":
		return "null"
	case "number":
		return pick(ItemNumbers())
	case "boolean":
		return pick([]string{"true", "false"})
	case "array":
		return pick([]string{`[]`, `["a"]`, `[1, null]`, `[{"b":"c"}]`})
	}
	return pick(ItemBroken())
}

// text writes the leaf's text as a JSON string, its raw bytes and escape
// after it.
func (l ItemLeaf) text() string {
	return `"` + encodeText(l.Text.String(), l.Encoding) + ItemRawBytes()[l.Raw%len(ItemRawBytes())] + ItemEscapes()[l.Escape%len(ItemEscapes())] + `"`
}

// encodeText writes s as the inside of a JSON string in one of
// StringEncodings. Invalid UTF-8 stays as it is, except where json.Marshal
// replaces it.
func encodeText(s string, encoding int) string {
	var b strings.Builder
	switch StringEncodings()[encoding%len(StringEncodings())] {
	case "json.Marshal":
		raw, _ := json.Marshal(s) // a string always marshals
		return string(raw[1 : len(raw)-1])
	case "raw control characters":
		// Not JSON: control characters must be escaped.
		return strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(s)
	case "ASCII", "every rune escaped":
		all := StringEncodings()[encoding%len(StringEncodings())] == "every rune escaped"
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				b.WriteByte(s[i])
			case r >= 0x10000:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04X`, r1, r2)
			case all || r >= utf8.RuneSelf || r < 0x20 || r == '"' || r == '\\':
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
			i += n
		}
		return b.String()
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func itemLeafGen(p0 float64) gopter.Gen {
	return gg.Struct(reflect.TypeOf(ItemLeaf{}), map[string]gopter.Gen{
		"Kind":     Index(len(ItemValueKinds()), p0),
		"Text":     TextGen(),
		"Scalar":   Index(len(ItemTimes()), 0.4), // the longest pool of fitting values
		"Encoding": Index(len(StringEncodings()), 0.5),
		"Escape":   Index(len(ItemEscapes()), 0.5),
		"Raw":      Index(len(ItemRawBytes()), 0.7),
		"Other":    Index(len(ItemBroken()), 0.3),
	})
}

func itemValueGen(p0 float64) gopter.Gen {
	return gg.Struct(reflect.TypeOf(ItemValue{}), map[string]gopter.Gen{
		"ItemLeaf": itemLeafGen(p0),
		"Entries": SliceUpTo(8, gg.Struct(reflect.TypeOf(ItemEntry{}), map[string]gopter.Gen{
			"Key":   Index(len(ItemEntryKeys()), 0.3),
			"Value": itemLeafGen(0.5),
		}), reflect.TypeOf(ItemEntry{})),
	})
}

// WebhookItemsGen generates webhooks of up to three alerts[] items: mostly
// the fields of a real item (labels and annotations objects of texts,
// status, times, fingerprint) in a rotated order, some left out, with
// escapes, surrogates, invalid UTF-8, keys spelled with escapes, and up to
// three extra fields (a read field again, title or text, values of every
// kind, broken JSON); white space that is not JSON's; around the items
// every kind of webhook a reader meets. It shrinks toward fewer, simpler
// items.
func WebhookItemsGen() gopter.Gen {
	item := gg.Struct(reflect.TypeOf(WebhookItem{}), map[string]gopter.Gen{
		"Core":   SliceUpTo(len(ItemCore()), itemValueGen(0.92), reflect.TypeOf(ItemValue{})),
		"Drop":   Of([]int{0, 0x60, 0x10, 0x02, 0x04, 0x06, 0x01, 0x08, 0x41, 0x79, 0x7f}, 0.6),
		"Rotate": Index(len(ItemCore()), 0.7),
		"Extra": SliceUpTo(2, gg.Struct(reflect.TypeOf(ItemField{}), map[string]gopter.Gen{
			"Key":   Index(len(ItemKeys()), 0.1),
			"Value": itemValueGen(0.3),
		}), reflect.TypeOf(ItemField{})),
	})
	return gg.Struct(reflect.TypeOf(WebhookItems{}), map[string]gopter.Gen{
		"First": item,
		"More":  SliceUpTo(2, item, reflect.TypeOf(WebhookItem{})),
		"Space": Index(len(ItemSpaces()), 0.7),
		"Tidy":  Index(2, 0.5),
	})
}

// ValidWebhookItems reports whether w is a value WebhookItemsGen produces.
func ValidWebhookItems(w WebhookItems) error {
	if w.Space < 0 || w.Tidy < 0 || w.Tidy > 1 {
		return fmt.Errorf("index out of range: space %d, tidy %d", w.Space, w.Tidy)
	}
	if len(w.More) > 2 {
		return fmt.Errorf("%d more items, more than 2", len(w.More))
	}
	for _, it := range w.Items() {
		if it.Drop < 0 || it.Rotate < 0 || len(it.Core) > len(ItemCore()) || len(it.Extra) > 2 {
			return fmt.Errorf("item out of range: %+v", it)
		}
		for _, f := range it.fields() {
			v := f.value
			if v.Kind < 0 || v.Scalar < 0 || v.Encoding < 0 || v.Escape < 0 || v.Raw < 0 || v.Other < 0 {
				return fmt.Errorf("negative index in %+v", v)
			}
			if err := indexesIn(v.Text.Atoms, len(TextAtoms()), "atom"); err != nil {
				return err
			}
		}
	}
	return nil
}
