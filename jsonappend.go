package openrecall

import (
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The hand-written JSON encoders of the types encoded for every alert (a
// result, a case file) append exactly what encoding/json writes for them;
// these are their pieces, and tests compare the encoders with encoding/json
// on values where every field is set.

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are, HTML
// escaping on.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendJSONString appends s as a JSON string the way encoding/json does:
// '"', '\\' and control characters escaped (\b, \f, \n, \r, \t by name),
// invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped, and '<', '>'
// and '&' escaped when escapeHTML.
func AppendJSONString(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes at a time; a word that may hold anything
		// else (the test has false alarms, never misses) goes byte by byte.
		for i+8 <= len(s) && plainWord(load8(s, i), escapeHTML) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] || (!escapeHTML && (c == '<' || c == '>' || c == '&')) {
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
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// load8 returns the 8 bytes of s from i as a little-endian word.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hasZeroByte is non-zero when a byte of w is 0.
func hasZeroByte(w uint64) uint64 { return (w - ones) & ^w & high }

// plainWord reports whether the 8 bytes of w are ASCII a JSON string holds
// as they are: none below 0x20 or from 0x80, no '"' or '\\', and no '<',
// '>' or '&' when escapeHTML. It may say false of a plain word, never true
// of another.
func plainWord(w uint64, escapeHTML bool) bool {
	bad := w&high | (w-0x20*ones)&^w&high | hasZeroByte(w^'"'*ones) | hasZeroByte(w^'\\'*ones)
	if escapeHTML {
		bad |= hasZeroByte(w^'<'*ones) | hasZeroByte(w^'>'*ones) | hasZeroByte(w^'&'*ones)
	}
	return bad == 0
}

// AppendJSONFloat appends f the way encoding/json does: the shortest
// decimal that reads back exactly, in exponent form below 1e-6 and from
// 1e21 on, a one-digit negative exponent written without its zero. ok is
// false for NaN and the infinities, which JSON cannot hold.
func AppendJSONFloat(b []byte, f float64) (_ []byte, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// AppendJSONStringMap appends m as a JSON object with sorted keys.
func AppendJSONStringMap(b []byte, m map[string]string, escapeHTML bool) []byte {
	if m == nil {
		return append(b, "null"...)
	}
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
		b = AppendJSONString(b, k, escapeHTML)
		b = append(b, ':')
		b = AppendJSONString(b, m[k], escapeHTML)
	}
	return append(b, '}')
}

// AppendJSONStrings appends xs as a JSON array of strings (null when nil).
func AppendJSONStrings(b []byte, xs []string, escapeHTML bool) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, x, escapeHTML)
	}
	return append(b, ']')
}

// jsonObject appends the members of one JSON object, commas included.
type jsonObject struct {
	b          []byte
	escapeHTML bool
	n          int
	ok         bool // false once a value cannot be encoded as encoding/json would
}

func (o *jsonObject) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObject) str(name, v string) {
	o.key(name)
	o.b = AppendJSONString(o.b, v, o.escapeHTML)
}

func (o *jsonObject) strOmit(name, v string) {
	if v != "" {
		o.str(name, v)
	}
}

func (o *jsonObject) int(name string, v int64) {
	o.key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObject) intOmit(name string, v int64) {
	if v != 0 {
		o.int(name, v)
	}
}

func (o *jsonObject) bool(name string, v bool) {
	o.key(name)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObject) boolOmit(name string, v bool) {
	if v {
		o.bool(name, v)
	}
}

func (o *jsonObject) float(name string, v float64) {
	o.key(name)
	var ok bool
	if o.b, ok = AppendJSONFloat(o.b, v); !ok {
		o.ok = false
	}
}

func (o *jsonObject) time(name string, t time.Time) {
	o.key(name)
	text, err := t.MarshalJSON()
	if err != nil {
		o.ok = false
		return
	}
	o.b = append(o.b, text...)
}

func (o *jsonObject) strings(name string, xs []string) {
	o.key(name)
	o.b = AppendJSONStrings(o.b, xs, o.escapeHTML)
}

func (o *jsonObject) stringsOmit(name string, xs []string) {
	if len(xs) > 0 {
		o.strings(name, xs)
	}
}

func (o *jsonObject) stringMapOmit(name string, m map[string]string) {
	if len(m) > 0 {
		o.key(name)
		o.b = AppendJSONStringMap(o.b, m, o.escapeHTML)
	}
}

// object appends a nested object whose members fill writes, through o
// itself (its member count saved and restored), so nesting allocates
// nothing.
func (o *jsonObject) object(name string, fill func(*jsonObject)) {
	o.key(name)
	o.nested(fill)
}

func (o *jsonObject) nested(fill func(*jsonObject)) {
	o.b = append(o.b, '{')
	n := o.n
	o.n = 0
	fill(o)
	o.n = n
	o.b = append(o.b, '}')
}

// array appends a JSON array of n objects, element i written by fill (null
// when null).
func (o *jsonObject) array(name string, n int, null bool, fill func(int, *jsonObject)) {
	o.key(name)
	if null {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = append(o.b, '[')
	for i := range n {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.nested(func(o *jsonObject) { fill(i, o) })
	}
	o.b = append(o.b, ']')
}
