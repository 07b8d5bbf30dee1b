package routing

import (
	"strconv"

	"github.com/openrecall/openrecall/internal/jsonfast"
)

// AppendCaseFileJSON appends the JSON encoding of c to b, byte for byte what
// encoding/json's Encoder with HTML escaping writes for it, newline
// included (property P43 checks it against the encoder): keys in
// declaration order, map keys sorted, empty fields omitted, '<', '>', '&',
// U+2028 and U+2029 escaped, invalid UTF-8 replaced. It is hand-written
// because the case file is encoded for every analysed alert and the
// reflective encoder cost about 8 µs of the ~200 an alert took. It writes
// its keys itself around jsonfast's value encoders rather than through a
// jsonfast.Object, which would move the caller's buffer (wrapCaseFile's,
// on its stack) to the heap.
func AppendCaseFileJSON(b []byte, c CaseFile) []byte {
	b = append(b, `{"alert":`...)
	b = appendCaseAlert(b, c.Alert)
	if len(c.Fingerprint) > 0 {
		b = append(b, `,"fingerprint":`...)
		b = jsonfast.AppendStringMap(b, c.Fingerprint, true)
	}
	if len(c.Memories) > 0 {
		b = append(b, `,"memories":[`...)
		for i, m := range c.Memories {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if len(m.DeadEnds) > 0 {
				b = append(b, `"dead_ends":`...)
				b = jsonfast.AppendStrings(b, m.DeadEnds, true)
				b = append(b, ',')
			}
			b = append(b, `"decision":`...)
			b = jsonfast.AppendString(b, m.Decision, true)
			b = append(b, `,"id":`...)
			b = jsonfast.AppendString(b, m.ID, true)
			if m.Note != "" {
				b = append(b, `,"note":`...)
				b = jsonfast.AppendString(b, m.Note, true)
			}
			b = append(b, `,"score":`...)
			b, _ = jsonfast.AppendFloat(b, m.Score) // round3 left it finite
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if t := c.Triage; t != nil {
		b = append(b, `,"triage":{"confidence":`...)
		b, _ = jsonfast.AppendFloat(b, t.Confidence)
		b = append(b, `,"consistency":`...)
		b, _ = jsonfast.AppendFloat(b, t.Consistency)
		b = append(b, `,"consistent_count":`...)
		b = strconv.AppendInt(b, int64(t.ConsistentCount), 10)
		b = append(b, `,"decision":`...)
		b = jsonfast.AppendString(b, t.Decision, true)
		b = append(b, `,"strong_count":`...)
		b = strconv.AppendInt(b, int64(t.StrongCount), 10)
		if len(t.Supporting) > 0 {
			b = append(b, `,"supporting":`...)
			b = jsonfast.AppendStrings(b, t.Supporting, true)
		}
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

func appendCaseAlert(b []byte, a CaseAlert) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
	}
	if len(a.Annotations) > 0 {
		field("annotations")
		b = jsonfast.AppendStringMap(b, a.Annotations, true)
	}
	for _, f := range [...]struct{ name, value string }{
		{"environment", a.Environment}, {"id", a.ID},
	} {
		if f.value != "" {
			field(f.name)
			b = jsonfast.AppendString(b, f.value, true)
		}
	}
	if len(a.Labels) > 0 {
		field("labels")
		b = jsonfast.AppendStringMap(b, a.Labels, true)
	}
	for _, f := range [...]struct{ name, value string }{
		{"service", a.Service}, {"severity", a.Severity}, {"source", a.Source}, {"text", a.Text}, {"title", a.Title},
	} {
		if f.value != "" {
			field(f.name)
			b = jsonfast.AppendString(b, f.value, true)
		}
	}
	return append(b, '}')
}
