package sender

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file holds two readings of arrays a mapping may ask for: a path
// holding an array read as its scalars joined (arrays: join), and labels
// copied from the objects of every element of an array ("*": {from:
// targets[].labels}).

// readArrays reads arrays: how a path holding an array reads.
func (l *loader) readArrays(n *yaml.Node) {
	switch s, _ := l.scalar(n, "arrays"); s {
	case "join":
		l.m.joinArrays = true
	case "blank":
	default:
		l.fail(n, "arrays", "%q: want blank (a path holding an array reads as blank) or join (its scalars joined by \", \")", s)
	}
}

// joined returns the text a path holding an array reads as under
// arrays: join: its scalars (trimmed, blanks skipped) joined by ", ".
func joined(v Value) string { return strings.Join(v.Strings(), ", ") }

// everyPath reads the path of a label key with "*" that holds "[]": the
// objects it leads to through every element of an array. nil when it is
// bad (the error recorded).
func (l *loader) everyPath(n *yaml.Node, field, s string) []fieldPath {
	steps, err := parsePluck(s)
	if err != nil {
		l.fail(n, field, "%v", err)
		return nil
	}
	return steps
}

// everyLabels applies a label rule whose path holds "[]": one label per
// member of every object the path leads to, objects in order, members in
// name order, as Value.Labels reads them; the first object's value of a
// name wins.
func (s *scope) everyLabels(r *labelRule, set func(key, value string)) {
	vals := []Value{s.at(r.every[0])}
	for _, st := range r.every[1:] {
		var next []Value
		for _, v := range vals {
			for _, el := range v.Elements() {
				next = append(next, readPath(el, st))
			}
		}
		vals = next
	}
	var seen map[string]bool
	for _, v := range vals {
		labels := v.Labels()
		keys := make([]string, 0, len(labels))
		for k := range labels {
			if r.chosen(k) && !seen[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[k] = true
			set(strings.Replace(r.key, "*", k, 1), labels[k])
		}
	}
}
