package routing

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendCaseFileJSON appends the JSON encoding of c to b, byte for byte what
// encoding/json's Encoder with HTML escaping writes for it, newline
// included (property P43 checks it against the encoder): keys in
// declaration order, map keys sorted, empty fields omitted, '<', '>', '&',
// U+2028 and U+2029 escaped, invalid UTF-8 replaced. It is hand-written
// because the case file is encoded for every analysed alert and the
// reflective encoder cost about 8 µs of the ~200 an alert took.
func AppendCaseFileJSON(b []byte, c CaseFile) []byte {
	b = append(b, `{"alert":`...)
	b = appendCaseAlert(b, c.Alert)
	if len(c.Fingerprint) > 0 {
		b = append(b, `,"fingerprint":`...)
		b = appendStringMap(b, c.Fingerprint)
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
				b = appendStrings(b, m.DeadEnds)
				b = append(b, ',')
			}
			b = append(b, `"decision":`...)
			b = appendJSONString(b, m.Decision)
			b = append(b, `,"id":`...)
			b = appendJSONString(b, m.ID)
			if m.Note != "" {
				b = append(b, `,"note":`...)
				b = appendJSONString(b, m.Note)
			}
			b = append(b, `,"score":`...)
			b = appendJSONFloat(b, m.Score)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if t := c.Triage; t != nil {
		b = append(b, `,"triage":{"confidence":`...)
		b = appendJSONFloat(b, t.Confidence)
		b = append(b, `,"consistency":`...)
		b = appendJSONFloat(b, t.Consistency)
		b = append(b, `,"consistent_count":`...)
		b = strconv.AppendInt(b, int64(t.ConsistentCount), 10)
		b = append(b, `,"decision":`...)
		b = appendJSONString(b, t.Decision)
		b = append(b, `,"strong_count":`...)
		b = strconv.AppendInt(b, int64(t.StrongCount), 10)
		if len(t.Supporting) > 0 {
			b = append(b, `,"supporting":`...)
			b = appendStrings(b, t.Supporting)
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
		b = appendStringMap(b, a.Annotations)
	}
	for _, f := range [...]struct{ name, value string }{
		{"environment", a.Environment}, {"id", a.ID},
	} {
		if f.value != "" {
			field(f.name)
			b = appendJSONString(b, f.value)
		}
	}
	if len(a.Labels) > 0 {
		field("labels")
		b = appendStringMap(b, a.Labels)
	}
	for _, f := range [...]struct{ name, value string }{
		{"service", a.Service}, {"severity", a.Severity}, {"source", a.Source}, {"text", a.Text}, {"title", a.Title},
	} {
		if f.value != "" {
			field(f.name)
			b = appendJSONString(b, f.value)
		}
	}
	return append(b, '}')
}

func appendStringMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

func appendStrings(b []byte, xs []string) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, x)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json does
// with HTML escaping on.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat appends a finite float64 the way encoding/json does: the
// shortest decimal that reads back exactly, in exponent form below 1e-6 and
// from 1e21 on, with a one-digit negative exponent written without a zero.
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
