package jsonfast

import (
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are, HTML
// escaping on.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s as a JSON string the way encoding/json does:
// '"', '\\' and control characters escaped (\b, \f, \n, \r, \t by name),
// invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped, and '<', '>'
// and '&' escaped when escapeHTML.
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes at a time; a word that may hold anything
		// else goes byte by byte.
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

// AppendFloat appends f the way encoding/json does: the shortest decimal
// that reads back exactly, in exponent form below 1e-6 and from 1e21 on, a
// one-digit negative exponent written without its zero. ok is false for
// NaN and the infinities, which JSON cannot hold.
func AppendFloat(b []byte, f float64) (_ []byte, ok bool) {
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

// AppendStringMap appends m as a JSON object with sorted keys (null when
// nil).
func AppendStringMap(b []byte, m map[string]string, escapeHTML bool) []byte {
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
		b = AppendString(b, k, escapeHTML)
		b = append(b, ':')
		b = AppendString(b, m[k], escapeHTML)
	}
	return append(b, '}')
}

// AppendStrings appends xs as a JSON array of strings (null when nil).
func AppendStrings(b []byte, xs []string, escapeHTML bool) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, x, escapeHTML)
	}
	return append(b, ']')
}

// Object appends the members of one JSON object to a buffer, commas
// included, each as encoding/json writes it: a method per kind of member,
// the ones named Omit leaving out an empty value as omitempty does, and
// nested objects and arrays between an Open and a Close. Every method
// returns o, so that the members of one type are written as one chain (the
// generated encoders of domain_gen.go). The buffer it is given escapes to
// the heap (it is stored through a pointer). Names are written as they are
// (they must need no escaping). It is not safe for concurrent use.
type Object struct {
	b          []byte
	escapeHTML bool
	n          int
	ok         bool // false once a value cannot be encoded as encoding/json would
	// stack holds the member counts of the enclosing values, depth of
	// them: nesting takes no function values, so that an Object and its
	// buffer can stay on the caller's stack.
	stack [maxNesting]int
	depth int
}

// NewObject returns an Object that appends to b, starting with its '{'.
func NewObject(b []byte, escapeHTML bool) Object {
	return Object{b: append(b, '{'), escapeHTML: escapeHTML, ok: true}
}

// End appends the closing '}' and returns the buffer; ok is false when a
// member could not be written as encoding/json writes it (a non-finite
// number, a time outside RFC 3339), which encoding/json refuses.
func (o *Object) End() (b []byte, ok bool) {
	return append(o.b, '}'), o.ok
}

// Key appends the name of the next member and its ':'.
func (o *Object) Key(name string) *Object {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
	return o
}

// Str appends a string member.
func (o *Object) Str(name, v string) *Object {
	o.Key(name)
	o.b = AppendString(o.b, v, o.escapeHTML)
	return o
}

// StrOmit appends a string member unless v is "".
func (o *Object) StrOmit(name, v string) *Object {
	if v != "" {
		o.Str(name, v)
	}
	return o
}

// Int appends an integer member.
func (o *Object) Int(name string, v int64) *Object {
	o.Key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
	return o
}

// IntOmit appends an integer member unless v is 0.
func (o *Object) IntOmit(name string, v int64) *Object {
	if v != 0 {
		o.Int(name, v)
	}
	return o
}

// Bool appends a boolean member.
func (o *Object) Bool(name string, v bool) *Object {
	o.Key(name)
	o.b = strconv.AppendBool(o.b, v)
	return o
}

// BoolOmit appends a boolean member unless v is false.
func (o *Object) BoolOmit(name string, v bool) *Object {
	if v {
		o.Bool(name, v)
	}
	return o
}

// Float appends a number member, as AppendFloat writes it.
func (o *Object) Float(name string, v float64) *Object {
	o.Key(name)
	var ok bool
	if o.b, ok = AppendFloat(o.b, v); !ok {
		o.ok = false
	}
	return o
}

// Time appends a time member as time.Time's MarshalJSON writes it.
func (o *Object) Time(name string, t time.Time) *Object {
	o.Key(name)
	// t.MarshalJSON's bytes (a quoted strict RFC 3339 text), appended in
	// place rather than allocated per call.
	n := len(o.b)
	b, err := t.AppendText(append(o.b, '"'))
	if err != nil {
		o.b = o.b[:n]
		o.ok = false
		return o
	}
	o.b = append(b, '"')
	return o
}

// TimeOmit appends a time member unless t is the zero time (omitzero).
func (o *Object) TimeOmit(name string, t time.Time) *Object {
	if !t.IsZero() {
		o.Time(name, t)
	}
	return o
}

// Strings appends an array of strings member (null when nil).
func (o *Object) Strings(name string, xs []string) *Object {
	o.Key(name)
	o.b = AppendStrings(o.b, xs, o.escapeHTML)
	return o
}

// StringsOmit appends an array of strings member unless xs is empty.
func (o *Object) StringsOmit(name string, xs []string) *Object {
	if len(xs) > 0 {
		o.Strings(name, xs)
	}
	return o
}

// StringMap appends an object of strings member, keys sorted (null when
// nil).
func (o *Object) StringMap(name string, m map[string]string) *Object {
	o.Key(name)
	o.b = AppendStringMap(o.b, m, o.escapeHTML)
	return o
}

// StringMapOmit appends an object of strings member, keys sorted, unless m
// is empty.
func (o *Object) StringMapOmit(name string, m map[string]string) *Object {
	if len(m) > 0 {
		o.StringMap(name, m)
	}
	return o
}

// Open starts a nested object member: its members follow, written through
// o itself, until Close.
func (o *Object) Open(name string) *Object {
	o.Key(name)
	return o.open('{')
}

// Close ends the object that Open or OpenElem started.
func (o *Object) Close() *Object {
	o.b = append(o.b, '}')
	return o.pop()
}

// OpenArray starts an array member whose elements, objects each started
// by OpenElem and ended by Close, follow until CloseArray; when null it
// appends a null member instead and reports false (a nil slice without
// omitempty).
func (o *Object) OpenArray(name string, null bool) bool {
	o.Key(name)
	if null {
		o.b = append(o.b, "null"...)
		return false
	}
	o.open('[')
	return true
}

// OpenElem starts the next object element of the array OpenArray started.
func (o *Object) OpenElem() *Object {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	return o.open('{')
}

// CloseArray ends the array that OpenArray started.
func (o *Object) CloseArray() *Object {
	o.b = append(o.b, ']')
	return o.pop()
}

// Null appends a null member.
func (o *Object) Null(name string) *Object {
	o.Key(name)
	o.b = append(o.b, "null"...)
	return o
}

func (o *Object) open(c byte) *Object {
	o.b = append(o.b, c)
	o.stack[o.depth] = o.n
	o.depth++
	o.n = 0
	return o
}

func (o *Object) pop() *Object {
	o.depth--
	o.n = o.stack[o.depth]
	return o
}
