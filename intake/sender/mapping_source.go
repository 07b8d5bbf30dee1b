package sender

import (
	"reflect"
	"slices"
	"strings"

	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"
)

// This file reads the candidates and the conditions of a mapping file.

// sourceKeys are the keys of a candidate written as a mapping.
var sourceKeys = []string{"path", "expr", "value", "of", "join", "evidence", "tag", "pair", "member", "in", "prefix", "sep", "map", "then", "each", "pick", "decode", "origin", "when", "as", "numbers", "blank"}

// sources reads a candidate list: one candidate, or a list of them. origin
// says the part names its origin: a candidate must name one.
func (l *loader) sources(n *yaml.Node, field string, origin bool) []source {
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) == 0 {
			l.fail(n, field, "an empty list")
		}
		var out []source
		for i, e := range n.Content {
			if s, ok := l.source(e, fieldElem(field, i), origin); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if s, ok := l.source(n, field, origin); ok {
		return []source{s}
	}
	return nil
}

// source reads one candidate.
func (l *loader) source(n *yaml.Node, field string, origin bool) (source, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		return l.scalarSource(n, field, origin)
	case yaml.MappingNode:
	default:
		l.fail(n, field, "want a path, $let, or {path|expr|value|of|join|tag: …}")
		return source{}, false
	}
	if e := memberNode(n, "each"); e != nil && n != l.eachNode {
		if l.inEach {
			l.fail(e, fieldKey(field, "each"), "each inside each")
			return source{}, false
		}
		// The candidate reads each element of an array: its paths and
		// expressions read the element, as an item's conditions do.
		p, ok := l.path(e, fieldKey(field, "each"))
		savedEnv := l.env
		l.env, l.inEach, l.eachNode = map[string]any{scopeVar: (*scope)(nil), eachKey: ""}, true, n
		s, ok2 := l.source(n, field, origin)
		l.env, l.inEach, l.eachNode = savedEnv, false, nil
		if !ok || !ok2 {
			return source{}, false
		}
		s.each = &p
		if k := memberNode(n, "pick"); k != nil {
			switch v, _ := l.scalar(k, fieldKey(field, "pick")); v {
			case "last":
				s.last = true
			case "first":
			default:
				l.fail(k, fieldKey(field, "pick"), "%q: want first or last (the element whose value wins)", v)
			}
		}
		s.decode = l.eachDecode(n, field)
		return s, true
	}
	f := l.members(n, field, sourceKeys)
	if f["pick"] != nil && f["each"] == nil {
		l.fail(f["pick"], fieldKey(field, "pick"), "pick goes with each")
	}
	if f["decode"] != nil && f["each"] == nil {
		l.fail(f["decode"], fieldKey(field, "decode"), "decode goes with each")
	}
	var s source
	kinds := 0
	for _, k := range []string{"path", "expr", "value", "of", "join", "tag", "pair", "member"} {
		if f[k] != nil {
			kinds++
		}
	}
	if kinds != 1 {
		l.fail(n, field, "want exactly one of path, expr, value, of, join, tag, pair, member")
		return source{}, false
	}
	if (f["in"] != nil) != (f["member"] != nil) {
		l.fail(n, field, "member and in go together: the member's exact name and the path of its object")
		return source{}, false
	}
	if a := f["as"]; a != nil {
		s.as, _ = l.scalar(a, fieldKey(field, "as"))
		s.hasAs = true
	}
	if o := f["origin"]; o != nil {
		if f["as"] != nil {
			l.fail(o, fieldKey(field, "origin"), "as or origin, not both: as names a constant origin, origin computes one")
		}
		s.origin = l.compile(o, fieldKey(field, "origin"), reflect.String)
		s.hasAs = true // the origin is named
	}
	switch {
	case f["path"] != nil:
		sc, ok := l.scalarSource(f["path"], fieldKey(field, "path"), false)
		if !ok {
			return source{}, false
		}
		sc.as, sc.hasAs, sc.origin = s.as, s.hasAs, s.origin
		s = sc
	case f["expr"] != nil:
		s.kind = srcExpr
		s.prog = l.compile(f["expr"], fieldKey(field, "expr"), reflect.String)
		if origin && !s.hasAs {
			l.fail(n, fieldKey(field, "as"), "missing: an expression says which field it reads (as: path), for the alert's origin")
		}
	case f["value"] != nil:
		s.kind = srcValue
		s.value, _ = l.scalar(f["value"], fieldKey(field, "value"))
		if origin && !s.hasAs {
			l.fail(n, fieldKey(field, "as"), "missing: a constant says what it stands for (as: …), for the alert's origin")
		}
	case f["of"] != nil:
		s.kind = srcOf
		on := f["of"]
		if on.Kind != yaml.SequenceNode || len(on.Content) == 0 {
			l.fail(on, fieldKey(field, "of"), "want a list of the parts, each a candidate list")
			return source{}, false
		}
		for i, e := range on.Content {
			s.parts = append(s.parts, l.sources(e, fieldElem(fieldKey(field, "of"), i), false))
		}
		if p := f["prefix"]; p != nil {
			s.prefix, _ = l.scalar(p, fieldKey(field, "prefix"))
		}
		if p := f["sep"]; p != nil {
			s.sep, _ = l.scalar(p, fieldKey(field, "sep"))
		}
	case f["join"] != nil:
		s.kind = srcJoin
		jn := f["join"]
		if jn.Kind != yaml.SequenceNode {
			l.fail(jn, fieldKey(field, "join"), "want a list of texts, each a candidate list")
			return source{}, false
		}
		for i, e := range jn.Content {
			s.parts = append(s.parts, l.sources(e, fieldElem(fieldKey(field, "join"), i), false))
		}
	case f["pair"] != nil:
		s.kind = srcPair
		if l.m.pairs == nil {
			l.fail(f["pair"], fieldKey(field, "pair"), "the mapping declares no pairs (pairs: …)")
		}
		if l.inEach {
			l.fail(f["pair"], fieldKey(field, "pair"), "inside each a candidate reads the element: pairs are the alert's")
		}
		pn := f["pair"]
		if pn.Kind == yaml.SequenceNode {
			for i, e := range pn.Content {
				if k, ok := l.scalar(e, fieldElem(fieldKey(field, "pair"), i)); ok {
					s.keys = append(s.keys, k)
				}
			}
		} else if k, ok := l.scalar(pn, fieldKey(field, "pair")); ok {
			s.keys = []string{k}
		}
	case f["member"] != nil:
		if !l.memberSource(&s, f["member"], f["in"], field) {
			return source{}, false
		}
	case f["tag"] != nil:
		s.kind = srcTag
		if l.inEach {
			l.fail(f["tag"], fieldKey(field, "tag"), "inside each a candidate reads the element: tags are the alert's")
		}
		if l.m.tags == nil {
			l.fail(f["tag"], fieldKey(field, "tag"), "the mapping declares no tags (tags: …)")
		}
		tn := f["tag"]
		if tn.Kind == yaml.SequenceNode {
			for i, e := range tn.Content {
				if k, ok := l.scalar(e, fieldElem(fieldKey(field, "tag"), i)); ok {
					s.keys = append(s.keys, strings.ToLower(k))
				}
			}
		} else if k, ok := l.scalar(tn, fieldKey(field, "tag")); ok {
			s.keys = []string{strings.ToLower(k)}
		}
	}
	if e := f["evidence"]; e != nil {
		if s.kind != srcJoin {
			l.fail(e, fieldKey(field, "evidence"), "evidence goes with join")
		} else {
			s.lines = l.evidence(e, fieldKey(field, "evidence"))
		}
	}
	if (f["prefix"] != nil || f["sep"] != nil) && s.kind != srcOf {
		l.fail(n, field, "prefix and sep go with of")
	}
	if t := f["map"]; t != nil {
		s.table = map[string]string{}
		if t.Kind != yaml.MappingNode {
			l.fail(t, fieldKey(field, "map"), "want a table VALUE: TEXT")
		}
		for i := 0; i+1 < len(t.Content); i += 2 {
			if v, ok := l.scalar(t.Content[i+1], fieldKey(fieldKey(field, "map"), t.Content[i].Value)); ok {
				s.table[t.Content[i].Value] = v
			}
		}
	}
	if t := f["then"]; t != nil {
		// The value, as text, is the name value of the expression.
		l.env[thenVar] = ""
		s.then = l.compile(t, fieldKey(field, "then"), reflect.String)
		delete(l.env, thenVar)
	}
	if w := f["when"]; w != nil {
		s.when = l.condExpr(w, fieldKey(field, "when"))
	}
	l.readSourceSent(&s, f, field)
	return s, true
}

// memberSource reads {member: name, in: path}: the member of that exact
// name of the object at path (a name a path cannot spell: dots, brackets).
// The mapping records the names it reads of each object (membersRead).
func (l *loader) memberSource(s *source, mn, in *yaml.Node, field string) bool {
	name, ok := l.scalar(mn, fieldKey(field, "member"))
	if !ok || name == "" {
		if ok {
			l.fail(mn, fieldKey(field, "member"), "an empty member name")
		}
		return false
	}
	p, ok := l.path(in, fieldKey(field, "in"))
	if !ok {
		return false
	}
	s.kind, s.path, s.value = srcMember, p, name
	if l.m.memberNames == nil {
		l.m.memberNames = map[string][]string{}
	}
	key := in.Value
	if !slices.Contains(l.m.memberNames[key], name) {
		l.m.memberNames[key] = append(l.m.memberNames[key], name)
	}
	return true
}

// eachDecode reads each's decode option: json says an array sent as JSON
// text (a string "[…]") is read as the array it encodes.
func (l *loader) eachDecode(n *yaml.Node, field string) bool {
	k := memberNode(n, "decode")
	if k == nil {
		return false
	}
	v, _ := l.scalar(k, fieldKey(field, "decode"))
	if v != "json" {
		l.fail(k, fieldKey(field, "decode"), "%q: want json (an array sent as JSON text)", v)
	}
	return v == "json"
}

// eachKey is the name, inside each, of the element's member name (an
// object's) or index (an array's), as text.
const eachKey = "key"

// thenVar is the name of a candidate's value in its then expression.
const thenVar = "value"

// memberNode returns the value of a mapping node's member, nil when it has
// none.
func memberNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalarSource reads a candidate written as a scalar: $name (a let) or a
// path.
func (l *loader) scalarSource(n *yaml.Node, field string, origin bool) (source, bool) {
	s, ok := l.scalar(n, field)
	if !ok {
		return source{}, false
	}
	if name, isLet := strings.CutPrefix(s, "$"); isLet {
		if l.inEach {
			l.fail(n, field, "inside each a candidate reads the element: lets are the alert's")
			return source{}, false
		}
		i, found := l.letIndex[name]
		switch {
		case name == "tags" && l.m.tags != nil:
			l.fail(n, field, "$tags is a list: take one tag's value with {tag: KEY}, all of them with {expr: 'join(tags, \",\")'}")
			return source{}, false
		case !found:
			l.fail(n, field, "unknown let %q (lets are declared under let:, before they are read)", name)
			return source{}, false
		}
		lt := l.m.lets[i]
		if lt.typ != nil && lt.typ.Kind() != reflect.String && lt.typ.Kind() != reflect.Interface {
			l.fail(n, field, "let %q is a %s, not text", name, lt.typ)
			return source{}, false
		}
		if origin && lt.prog != nil && !lt.hasAs {
			l.fail(n, field, "let %q is an expression without as: say which field it reads, for the alert's origin", name)
		}
		return source{kind: srcLet, let: i}, true
	}
	p, err := parsePath(s)
	if err != nil {
		l.fail(n, field, "%v", err)
		return source{}, false
	}
	return source{kind: srcPath, path: p}, true
}

// evidence reads the "key: value" lines of a text, in order.
func (l *loader) evidence(n *yaml.Node, field string) []evidence {
	if n.Kind == yaml.SequenceNode {
		return l.evidenceList(n, field)
	}
	if n.Kind != yaml.MappingNode {
		l.fail(n, field, "want a mapping of line keys to candidate lists, in order")
		return nil
	}
	var out []evidence
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := fieldKey(field, k.Value)
		if strings.Contains(k.Value, "*") {
			if e, ok := l.evidenceEach(k, v, f); ok {
				out = append(out, e)
			}
			continue
		}
		out = append(out, evidence{key: k.Value, from: l.sources(v, f, false)})
	}
	return out
}

// evidenceEach reads an evidence key with "*": one line per member of an
// object, the path alone or {from: path, except: [names], limit: n}; or,
// with {key: k, value: v}, one per element of an array of objects.
func (l *loader) evidenceEach(k, v *yaml.Node, field string) (evidence, bool) {
	e := evidence{key: k.Value}
	if strings.Count(k.Value, "*") > 1 {
		l.fail(k, field, "one * a key (it stands for the member's name)")
		return e, false
	}
	from := v
	if v.Kind == yaml.MappingNode {
		f := l.members(v, field, []string{"from", "except", "limit", "key", "value", "flatten", "skip", "expr"})
		if n := f["expr"]; n != nil {
			return l.evidenceExpr(e, v, n, f, field)
		}
		if n := f["skip"]; n != nil {
			e.skip = l.skipValues(n, fieldKey(field, "skip"))
		}
		if n := f["flatten"]; n != nil {
			e.flatten = l.boolean(n, fieldKey(field, "flatten"))
		}
		if from = f["from"]; from == nil {
			l.fail(v, fieldKey(field, "from"), "missing: the path of the object whose members are lines")
			return e, false
		}
		if n := f["except"]; n != nil {
			e.except = l.names(n, fieldKey(field, "except"))
		}
		if n := f["limit"]; n != nil {
			if n.Kind != yaml.ScalarNode || n.Decode(&e.limit) != nil || e.limit < 1 {
				l.fail(n, fieldKey(field, "limit"), "want a number of lines, at least 1")
			}
		}
		if (f["key"] == nil) != (f["value"] == nil) {
			l.fail(v, field, "key and value go together: the members of each element that hold a line's key and value")
		}
		if n := f["key"]; n != nil {
			e.kvKey, _ = l.scalar(n, fieldKey(field, "key"))
		}
		if n := f["value"]; n != nil {
			e.kvValue, _ = l.scalar(n, fieldKey(field, "value"))
		}
	}
	p, ok := l.path(from, field)
	if !ok {
		return e, false
	}
	e.each = &p
	return e, true
}

// skipValues reads an evidence line's skip: a list of values.
func (l *loader) skipValues(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		l.fail(n, field, "want a list of values that make no line")
		return nil
	}
	var out []string
	for i, x := range n.Content {
		if s, ok := l.scalar(x, fieldElem(field, i)); ok {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// condKeys are the keys of a condition written as a mapping.
var condKeys = []string{"has", "is", "equals", "one_of", "expr", "any", "all", "not"}

// conds reads a list of conditions (or one).
func (l *loader) conds(n *yaml.Node, field string) []cond {
	if n.Kind == yaml.SequenceNode {
		var out []cond
		for i, e := range n.Content {
			if c, ok := l.cond(e, fieldElem(field, i)); ok {
				out = append(out, c)
			}
		}
		return out
	}
	if c, ok := l.cond(n, field); ok {
		return []cond{c}
	}
	return nil
}

// kinds are the kinds is: tests.
var kinds = []string{"null", "object", "array", "string", "number", "bool"}

// cond reads one condition: an expression (a scalar), or one of has, is,
// equals, one_of, expr, any, all, not.
func (l *loader) cond(n *yaml.Node, field string) (cond, bool) {
	if n.Kind == yaml.ScalarNode {
		p := l.condExpr(n, field)
		return cond{kind: condExpr, prog: p}, p != nil
	}
	f := l.members(n, field, condKeys)
	if len(f) != 1 {
		if len(f) > 1 {
			l.fail(n, field, "one test a condition: put several in all: […]")
		}
		return cond{}, false
	}
	for k, v := range f {
		field := fieldKey(field, k)
		switch k {
		case "expr":
			p := l.condExpr(v, field)
			return cond{kind: condExpr, prog: p}, p != nil
		case "has":
			ps := l.paths(v, field)
			return cond{kind: condHas, paths: ps}, len(ps) > 0
		case "is":
			c := cond{kind: condIs}
			if v.Kind != yaml.MappingNode {
				l.fail(v, field, "want {path: %s}", strings.Join(kinds, "|"))
				return c, false
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				p, ok := l.path(v.Content[i], field)
				kind, ok2 := "null", true // is: {path: null}, unquoted, is YAML's null
				if kn := v.Content[i+1]; kn.Tag != "!!null" {
					kind, ok2 = l.scalar(kn, fieldKey(field, v.Content[i].Value))
				}
				if ok2 && !slices.Contains(kinds, kind) {
					l.fail(v.Content[i+1], fieldKey(field, v.Content[i].Value), "%q: want one of %s", kind, strings.Join(kinds, ", "))
					ok2 = false
				}
				if ok && ok2 {
					c.paths, c.kinds = append(c.paths, p), append(c.kinds, kind)
				}
			}
			return c, len(c.paths) > 0
		case "equals", "one_of":
			c := cond{kind: condEquals}
			if k == "one_of" {
				c.kind = condOneOf
			}
			if v.Kind != yaml.MappingNode {
				l.fail(v, field, "want {path: value} (one_of: {path: [values]})")
				return c, false
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				src, ok := l.scalarSource(v.Content[i], field, false)
				vf := fieldKey(field, v.Content[i].Value)
				var vals []string
				vn := v.Content[i+1]
				if c.kind == condOneOf {
					if vn.Kind != yaml.SequenceNode {
						l.fail(vn, vf, "want a list of values")
						ok = false
					}
					for j, e := range vn.Content {
						if s, ok2 := l.scalar(e, fieldElem(vf, j)); ok2 {
							vals = append(vals, FoldLevel(s))
						}
					}
				} else if s, ok2 := l.scalar(vn, vf); ok2 {
					vals = []string{FoldLevel(s)}
				} else {
					ok = false
				}
				if ok {
					c.fields, c.values = append(c.fields, []source{src}), append(c.values, vals)
				}
			}
			return c, len(c.fields) > 0
		case "any", "all":
			c := cond{kind: condAny}
			if k == "all" {
				c.kind = condAll
			}
			if v.Kind != yaml.SequenceNode {
				l.fail(v, field, "want a list of conditions")
				return c, false
			}
			c.sub = l.conds(v, field)
			return c, len(c.sub) > 0
		case "not":
			sub, ok := l.cond(v, field)
			return cond{kind: condNot, sub: []cond{sub}}, ok
		}
	}
	return cond{}, false
}

// condExpr compiles a condition's expression: it must be true or false.
func (l *loader) condExpr(n *yaml.Node, field string) *vm.Program {
	return l.compile(n, field, reflect.Bool)
}
