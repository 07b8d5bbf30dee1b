package sender

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
)

// This file holds two features of the format: keys: fold (a payload whose
// top-level member names are written by hand, in a template, and read
// whatever their case and spacing) and the expressions' data(path).

// foldKey folds a member name for keys: fold: lowercased, without blanks,
// '.', '-' and '_' ("Problem URL", "problem_url" and "PROBLEM.URL" are one).
func foldKey(s string) string { return strings.ReplaceAll(FoldLevel(s), ".", "") }

// sameObject reports whether a and b are the one same object.
func sameObject(a, b Value) bool {
	x, ok := a.v.(map[string]any)
	y, ok2 := b.v.(map[string]any)
	return ok && ok2 && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

// folds reports whether a path read from base has its first key matched
// folded: keys: fold, and the path read from the payload's top.
func (s *scope) folds(p fieldPath) bool {
	return s.m.foldKeys && (p.root || s.top)
}

// topKey returns the payload's member of the name key, else the one whose
// name folds as key does (of several, the first in name order); ok is
// false when none does.
func (s *scope) topKey(key string) (string, bool) {
	if m, ok := s.root.v.(map[string]any); ok {
		if _, exact := m[key]; exact {
			return key, true
		}
	}
	if s.foldIndex == nil {
		s.foldIndex = map[string]string{}
		for _, k := range s.root.Keys() {
			f := foldKey(k)
			if _, dup := s.foldIndex[f]; !dup {
				s.foldIndex[f] = k
			}
		}
	}
	k, ok := s.foldIndex[foldKey(key)]
	return k, ok
}

// foldPath returns p with its first key the payload's member it names
// folded, and the path as sent (its origin); p itself when none matches.
func (s *scope) foldPath(p fieldPath) (fieldPath, string) {
	first := ""
	switch {
	case p.steps == nil && len(p.parts) > 0:
		first = p.parts[0]
	case len(p.steps) > 0 && len(p.steps[0].parts) > 0:
		first = p.steps[0].parts[0]
	default:
		return p, p.path
	}
	k, ok := s.topKey(first)
	if !ok || k == first {
		return p, p.path
	}
	q := p
	q.path = k + p.path[len(first):]
	if p.steps == nil {
		q.parts = append([]string{k}, p.parts[1:]...)
	} else {
		q.steps = append([]pathStep(nil), p.steps...)
		q.steps[0].parts = append([]string{k}, p.steps[0].parts[1:]...)
	}
	return q, q.path
}

// originOf is the origin a path candidate names: its path, as sent.
func (s *scope) originOf(p fieldPath) string {
	o := p.path
	if s.folds(p) {
		_, o = s.foldPath(p)
	}
	if p.root {
		return "/" + o // the payload's top: itemOrigins drops the "/" and adds no item prefix
	}
	return o
}

// dataOf is the expressions' data(path): the value as expression data,
// an object a map, an array a list, a number its text as written, text
// and booleans themselves, null nil.
func dataOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = dataOf(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dataOf(e)
		}
		return out
	case json.Number:
		return x.String()
	case float64:
		return Value{x}.String()
	}
	return v
}

// jsonOf is the expressions' json(s): s read as JSON, as data does (nil
// when s is no JSON), for a JSON text inside a value (Zabbix's
// {EVENT.TAGSJSON} sent as a string).
func jsonOf(s string) any {
	v, err := Parse([]byte(s))
	if err != nil {
		return nil
	}
	return dataOf(v.v)
}

// urlQuery is the expressions' urlQuery(s, name): the first value of the
// query parameter name of the URL s (after its first "?"); "" when it has
// none or its query is malformed.
func urlQuery(s, name string) string {
	_, q, ok := strings.Cut(s, "?")
	if !ok {
		return ""
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return ""
	}
	return vals.Get(name)
}
