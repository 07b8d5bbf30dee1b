package sender

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Value is a decoded JSON value read leniently: a field that is absent, null
// or of another type than a reader expects reads as the zero value of what
// was asked for, never as an error. That is what DESIGN §3 asks of every
// sender: an optional field of an unexpected type never rejects an alert.
// The zero Value is JSON null. Values are immutable and safe for concurrent
// use.
type Value struct{ v any }

// Parse decodes raw as one JSON value (numbers kept as their text).
func Parse(raw []byte) (Value, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return Value{}, err
	}
	return Value{v}, nil
}

// Of wraps a value decoded by encoding/json (with or without UseNumber).
func Of(v any) Value { return Value{v} }

// Get follows object members by exact key, one key per level: Get("alert",
// "message"). A level that is not an object, or lacks the key, gives null.
func (v Value) Get(keys ...string) Value {
	cur := v.v
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return Value{}
		}
		cur = m[k]
	}
	return Value{cur}
}

// Path reads a dotted path the way senders write one both ways (Elastic's
// "kibana.alert.rule.name" is a flat key in one payload and nested objects
// in another): at each level the longest run of the remaining parts that is
// a key wins.
func (v Value) Path(path string) Value {
	return v.path(strings.Split(path, "."))
}

func (v Value) path(parts []string) Value {
	if len(parts) == 0 {
		return v
	}
	m, ok := v.v.(map[string]any)
	if !ok {
		return Value{}
	}
	for n := len(parts); n >= 1; n-- {
		if x, ok := m[strings.Join(parts[:n], ".")]; ok {
			if got := (Value{x}).path(parts[n:]); !got.IsNull() || n == len(parts) {
				return got
			}
		}
	}
	return Value{}
}

// First returns the first of the paths (read with Path) whose value is a
// non-blank scalar, and that path; "" and "" when none is.
func (v Value) First(paths ...string) (string, string) {
	for _, p := range paths {
		if s := strings.TrimSpace(v.Path(p).String()); s != "" {
			return s, p
		}
	}
	return "", ""
}

// At returns element i of an array, or null.
func (v Value) At(i int) Value {
	a, ok := v.v.([]any)
	if !ok || i < 0 || i >= len(a) {
		return Value{}
	}
	return Value{a[i]}
}

// Len is the number of elements of an array or members of an object, else
// 0.
func (v Value) Len() int {
	switch x := v.v.(type) {
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 0
}

// Elements returns the elements of an array, or nil.
func (v Value) Elements() []Value {
	a, ok := v.v.([]any)
	if !ok {
		return nil
	}
	out := make([]Value, len(a))
	for i, x := range a {
		out[i] = Value{x}
	}
	return out
}

// Keys returns the keys of an object, sorted, or nil.
func (v Value) Keys() []string {
	m, ok := v.v.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Has reports whether an object has key with a non-null value.
func (v Value) Has(key string) bool { return !v.Get(key).IsNull() }

// IsNull reports whether the value is null or absent.
func (v Value) IsNull() bool { return v.v == nil }

// IsObject reports whether the value is an object.
func (v Value) IsObject() bool { _, ok := v.v.(map[string]any); return ok }

// IsArray reports whether the value is an array.
func (v Value) IsArray() bool { _, ok := v.v.([]any); return ok }

// IsString reports whether the value is a string.
func (v Value) IsString() bool { _, ok := v.v.(string); return ok }

// String returns a scalar as text: a string as itself, a number as written,
// a boolean as true or false; "" for null, objects and arrays.
func (v Value) String() string {
	switch x := v.v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// Text returns a scalar as String does, and an object or array as its
// compact JSON; "" for null.
func (v Value) Text() string {
	switch v.v.(type) {
	case map[string]any, []any:
		return v.Compact()
	}
	return v.String()
}

// Float returns a number, or a string holding one, as a float64; ok is
// false otherwise.
func (v Value) Float() (float64, bool) {
	s := strings.TrimSpace(v.String())
	if s == "" {
		return 0, false
	}
	if _, isBool := v.v.(bool); isBool {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// Bool returns a boolean, or a string "true"/"false", and whether it was
// one.
func (v Value) Bool() (bool, bool) {
	switch x := v.v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	}
	return false, false
}

// Time reads a time leniently (ParseTime): a string in any ISO 8601 form
// senders use, or a number of unix seconds (milliseconds above 1e12).
// Anything else is the zero time.
func (v Value) Time() time.Time {
	switch x := v.v.(type) {
	case string:
		t, _ := ParseTime(x)
		return t
	case json.Number, float64:
		t, _ := ParseTime(v.String())
		return t
	}
	return time.Time{}
}

// Strings returns the scalar elements of an array as text (other elements
// skipped), a single scalar as a one-element slice, else nil.
func (v Value) Strings() []string {
	if a, ok := v.v.([]any); ok {
		out := make([]string, 0, len(a))
		for _, x := range a {
			if s := strings.TrimSpace((Value{x}).String()); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if s := strings.TrimSpace(v.String()); s != "" {
		return []string{s}
	}
	return nil
}

// Labels returns an object's members as labels: scalars as text, objects
// and arrays as their compact JSON, nulls skipped; nil when it is no object.
func (v Value) Labels() map[string]string {
	m, ok := v.v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s := (Value{x}).Text(); s != "" {
			out[k] = s
		}
	}
	return out
}

// Compact returns the value as compact JSON, keys sorted, with <, > and &
// written as they are (not HTML-escaped: a label or text holds what was
// sent; whoever shows it in HTML or JSON escapes it then).
func (v Value) Compact() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v.v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Scalars returns every scalar leaf of the value by dotted path (array
// elements by index: "tags.0"), in path order, at most limit of them
// (limit <= 0: all). Blank strings are skipped.
func (v Value) Scalars(limit int) [][2]string {
	var out [][2]string
	var walk func(prefix string, x any) bool
	walk = func(prefix string, x any) bool {
		if limit > 0 && len(out) >= limit {
			return false
		}
		switch t := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				if !walk(p, t[k]) {
					return false
				}
			}
		case []any:
			for i, e := range t {
				if !walk(prefix+"."+strconv.Itoa(i), e) {
					return false
				}
			}
		case nil:
		default:
			if s := strings.TrimSpace((Value{x}).String()); s != "" {
				out = append(out, [2]string{prefix, s})
			}
		}
		return true
	}
	walk("", v.v)
	return out
}
