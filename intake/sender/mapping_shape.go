package sender

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
)

// This file holds three features of the format about the payload's shape:
// decode
// (members holding an object's JSON as text read as the object), the
// expressions' elements(path), and the origins of the payload's top ("/a") that an item's prefix leaves alone.

// readShape reads decode: of a mapping's head (arrays: is readArrays').
func (l *loader) readShape(f map[string]*yaml.Node) {
	if n := f["decode"]; n != nil {
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			l.fail(n, "decode", "want a list of the members that may hold an object's JSON as text")
			return
		}
		for i, e := range n.Content {
			field := fieldElem("decode", i)
			s, ok := l.scalar(e, field)
			if !ok {
				continue
			}
			keys := strings.Split(s, ".")
			if strings.HasPrefix(s, "/") || slices.Contains(keys, "") || strings.ContainsAny(s, "[] ") {
				l.fail(e, field, "bad member %q: keys joined by dots, one key a level, from the payload's top", s)
				continue
			}
			l.m.decode = append(l.m.decode, keys)
		}
	}
}

// decoded returns the payload with each decode member that holds the JSON
// text of an object (trimmed, it starts with "{") replaced by the object,
// in a copy: the payload itself is never changed. A member holding
// anything else is left as it is.
func (m *mapping) decoded(v Value) Value {
	for _, keys := range m.decode {
		if x := v.Get(keys...); x.IsString() && strings.HasPrefix(strings.TrimSpace(x.String()), "{") {
			if obj, err := Parse([]byte(x.String())); err == nil && obj.IsObject() {
				v = Value{withMember(v.v, keys, obj.v)}
			}
		}
	}
	return v
}

// withMember returns a copy of the object cur with the member at keys set
// to x, copying each object on the way.
func withMember(cur any, keys []string, x any) any {
	if len(keys) == 0 {
		return x
	}
	obj, _ := cur.(map[string]any)
	out := make(map[string]any, len(obj))
	for k, y := range obj {
		out[k] = y
	}
	out[keys[0]] = withMember(obj[keys[0]], keys[1:], x)
	return out
}

// itemOrigins finishes an event's origins: each field of an origin (a+b)
// gets the item's prefix ("data[].") unless it names the payload's top
// ("/a", which reads as "a").
func itemOrigins(e *Event, prefix string) {
	for k, o := range e.Origin {
		if prefix == "" && !strings.Contains(o, "/") {
			continue
		}
		fields := strings.Split(o, "+")
		for i, f := range fields {
			if r, top := strings.CutPrefix(f, "/"); top {
				fields[i] = r
			} else {
				fields[i] = prefix + f
			}
		}
		e.Origin[k] = strings.Join(fields, "+")
	}
}

// elements is the expressions' elements(path): the paths of the elements
// of the array at path, [path] when it holds an object, none otherwise.
func (s *scope) elements(path string) []string {
	x := s.atText(path)
	if x.IsObject() {
		return []string{path}
	}
	out := make([]string, x.Len())
	if !x.IsArray() {
		return []string{}
	}
	for i := range out {
		out[i] = path + "[" + strconv.Itoa(i) + "]"
	}
	return out
}

// sevGlob is a severity table's key with a * at one end: a value (folded)
// that starts with prefix, or ends with suffix.
type sevGlob struct {
	prefix, suffix string
	sev            openrecall.Severity
}

// severityGlob reads a severity table's key with a *: at its start or
// its end, once.
func (l *loader) severityGlob(k *yaml.Node, field string, sev openrecall.Severity) bool {
	f := FoldLevel(k.Value)
	var g sevGlob
	switch {
	case strings.Count(f, "*") != 1 || f == "*":
		l.fail(k, field, "%q: one * at the start or the end of a key (\"apm.*\", \"*.fired\")", k.Value)
		return false
	case strings.HasPrefix(f, "*"):
		g.suffix = f[1:]
	case strings.HasSuffix(f, "*"):
		g.prefix = f[:len(f)-1]
	default:
		l.fail(k, field, "%q: one * at the start or the end of a key (\"apm.*\", \"*.fired\")", k.Value)
		return false
	}
	g.sev = sev
	l.m.globs = append(l.m.globs, g)
	return true
}

// globSeverity is the severity of the first table key with a * that raw
// (folded) matches.
func (m *mapping) globSeverity(raw string) (openrecall.Severity, bool) {
	if len(m.globs) == 0 {
		return "", false
	}
	f := FoldLevel(raw)
	for _, g := range m.globs {
		if g.prefix != "" && strings.HasPrefix(f, g.prefix) || g.suffix != "" && strings.HasSuffix(f, g.suffix) {
			return g.sev, true
		}
	}
	return "", false
}
