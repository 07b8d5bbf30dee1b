package sender

import (
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file reads the evidence lines a mapping writes as a list (a key
// written twice) or from an expression.

// evidenceList reads evidence written as a list of mappings of line keys,
// in order: the way to write a key twice ("*" over two objects).
func (l *loader) evidenceList(n *yaml.Node, field string) []evidence {
	var out []evidence
	for i, e := range n.Content {
		f := fieldElem(field, i)
		if e.Kind != yaml.MappingNode {
			l.fail(e, f, "want a mapping of line keys to candidate lists")
			continue
		}
		out = append(out, l.evidence(e, f)...)
	}
	if len(n.Content) == 0 {
		l.fail(n, field, "an empty list")
	}
	return out
}

// evidenceExpr reads an evidence key with "*" whose lines an expression
// gives: a list of [name, value] pairs, a line each, the name in place of
// the *. It goes alone.
func (l *loader) evidenceExpr(e evidence, v, n *yaml.Node, f map[string]*yaml.Node, field string) (evidence, bool) {
	if len(f) > 1 {
		l.fail(v, field, "expr goes alone: it gives the lines")
		return e, false
	}
	e.list = l.compile(n, fieldKey(field, "expr"), reflect.Invalid)
	if e.list == nil {
		return e, false
	}
	if t := e.list.Node().Type(); t != nil && t.Kind() != reflect.Slice && t.Kind() != reflect.Interface {
		l.fail(n, fieldKey(field, "expr"), "want a list of [name, value] pairs, not a %s", t)
		return e, false
	}
	return e, true
}

// exprLines appends the lines an evidence expression gives: one per
// [name, value] pair of texts (anything else skipped), blanks left to
// Evidence.
func (s *scope) exprLines(l evidence, pairs [][2]string) [][2]string {
	list, _ := s.run(l.list).([]any)
	for _, x := range list {
		var kv [2]string
		switch p := x.(type) {
		case []any:
			if len(p) != 2 {
				continue
			}
			k, ok1 := p[0].(string)
			v, ok2 := p[1].(string)
			if !ok1 || !ok2 {
				continue
			}
			kv = [2]string{k, v}
		case []string:
			if len(p) != 2 {
				continue
			}
			kv = [2]string{p[0], p[1]}
		default:
			continue
		}
		pairs = append(pairs, [2]string{strings.Replace(l.key, "*", kv[0], 1), kv[1]})
	}
	return pairs
}
