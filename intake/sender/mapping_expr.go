package sender

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
)

// The expressions of a mapping are expr-lang/expr programs, compiled once
// when the mapping loads against a typed environment: the lets (by name),
// tags (the alert's tags as text, when the mapping declares them) and the
// functions below. A name the environment lacks, a function called with
// the wrong arguments, or a result of the wrong type (a condition that is
// not true or false, a candidate that is not text) is an error of the
// file, with its line. Running one has no side effect and reads only the
// payload, through Value.
//
// Functions that read the payload take a path, read as a path candidate
// is (from the alert; "/a.b" from the payload's top; "" the alert itself):
//
//	str(path)        the scalar at path as text ("" for objects, arrays, null);
//	                 a template placeholder reads as "" unless placeholders: keep
//	raw(path)        the scalar at path exactly as sent: no placeholder or
//	                 blank value read as blank (to recognise a payload by
//	                 what was sent, whatever it holds)
//	text(path)       str, but an object or array as its compact JSON
//	compact(path)    the value at path as compact JSON, keys sorted, <>&
//	                 as they are (a string quoted, null "null", absent
//	                 "null")
//	has(path)        the path holds a value (not null, not absent)
//	isNumber(path)   the path holds a number, or text that reads as one
//	kind(path)       "null", "object", "array", "string", "number" or "bool"
//	members(path)    an object's keys, sorted
//	list(path)       an array's scalars, or text "a, b" or "[a, b]" split at commas
//	count(path)      the number of elements of an array, 0 for anything else
//	firstOf(p, ...)  the first of the paths whose str is not blank, trimmed
//	pluck(path)      the scalars at path, where "[]" stands for every element
//	                 of an array ("indicators[].tactics[].name"), in order;
//	                 blanks skipped
//	data(path)       the value at path as data for expr's own functions: an
//	                 object a map, an array a list, a number its text as
//	                 written, null nil (to walk an array of mixed elements:
//	                 map(data("tags"), type(#) == "map" ? #.key : #))
//	elements(path)   the paths of an array's elements ("a[0]", "a[1]", …),
//	                 [path] for an object, [] otherwise: a list of objects
//	                 or one object, each read by its path ("a[0].id")
//
// Helpers, each the Go function the adapters use, so a mapping reads as
// the code did:
//
//	evidence(k, v, ...)  "k: v" lines, blank values skipped, capped (Evidence)
//	evidenceOf(list)     the same of a list [k, v, k, v, …] an expression
//	                     builds (keys named by the payload: "input A"); an
//	                     element that is not text reads as blank
//	joinText(t, ...)     the non-blank texts joined by blank lines (JoinText)
//	rendered(s)          s trimmed, "" when an unrendered placeholder (Rendered)
//	fold(s)              s lowercased without blanks, - and _ (FoldLevel)
//	scale(s)             the severity the mapping's table gives s, "" if unlisted
//	status(s)            the status a state word means (Status)
//	urlHost(s)           the host name of a URL, "" if none
//	urlQuery(s, name)    the first value of a URL's query parameter, "" if none
//	json(s)              s read as JSON into data (as data(path) gives it),
//	                     nil when s is no JSON
//	coalesce(s, ...)     the first non-blank of the texts, trimmed
//	utcTime(s)           s read as a time (ParseTime) and written as RFC 3339
//	                     in UTC, so that one instant written two ways is one
//	                     text; s trimmed when it reads as no time
//	isTime(s)            s reads as a time (ParseTime), or is blank (no time)
//	isUnix(s)            s is a number of unix seconds (milliseconds above
//	                     1e12) from 0 to 1e17: a time as numbers: ms reads it
//	isLink(s)            s is a link a mapping keeps (an absolute http or
//	                     https URL, openrecall.LinkOK)
//	firstLine(s)         the first non-blank line of s, trimmed
//	quote(s)             s in double quotes, escaped as Go writes it
//	truncate(s, n)       s cut to at most n bytes (never inside a character),
//	                     "…" appended when it was cut
//
// and two of regular expressions (Go's RE2 syntax), whose pattern is a
// constant string compiled when the mapping loads (a bad pattern, or one
// that is not a constant, is an error of the file):
//
//	reFind(s, pattern)       the first match in s, or its first group when
//	                         the pattern has one; "" when none
//	reReplace(s, pattern, r) s with every match replaced by r ($1 its groups)
//
// and expr's own (lower, upper, trim, split, join, replace, hasPrefix,
// contains, in, matches, len, map, filter, ?:, ??, …).

// scopeVar is the environment's name of the alert being read: the
// functions that read the payload are given it as their first argument by
// scopeArg, never written by a mapping.
const scopeVar = "_scope"

// readerFuncs are the functions that read the payload: they take the scope.
var readerFuncs = map[string]bool{"str": true, "text": true, "has": true, "kind": true, "members": true,
	"list": true, "firstOf": true, "scale": true, "reFind": true, "reReplace": true, "pluck": true, "isNumber": true, "raw": true, "count": true, "data": true, "elements": true, "compact": true}

// regexFuncs are the functions whose second argument is a regular
// expression: a constant, compiled when the mapping loads.
var regexFuncs = map[string]bool{"reFind": true, "reReplace": true}

// helperFuncs are the other functions.
var helperFuncs = map[string]bool{"evidence": true, "joinText": true, "rendered": true, "fold": true,
	"status": true, "urlHost": true, "coalesce": true, "firstLine": true, "truncate": true, "quote": true,
	"json": true, "urlQuery": true, "evidenceOf": true, "utcTime": true, "isTime": true, "isUnix": true, "isLink": true}

// reserved reports whether a let may not take name: a function's, tags,
// or one of expr's builtins and words.
func reserved(name string) bool {
	if readerFuncs[name] || helperFuncs[name] || name == "tags" || name == thenVar {
		return true
	}
	if _, ok := builtin.Index[name]; ok {
		return true
	}
	switch name {
	case "true", "false", "nil", "not", "and", "or", "in", "matches", "contains", "startsWith", "endsWith", "let", "if", "else":
		return true
	}
	return false
}

// scopeArg passes the scope to the functions that read the payload.
type scopeArg struct{}

func (scopeArg) Visit(node *ast.Node) {
	call, ok := (*node).(*ast.CallNode)
	if !ok {
		return
	}
	id, ok := call.Callee.(*ast.IdentifierNode)
	if !ok || !readerFuncs[id.Value] {
		return
	}
	ast.Patch(node, &ast.CallNode{
		Callee:    call.Callee,
		Arguments: append([]ast.Node{&ast.IdentifierNode{Value: scopeVar}}, call.Arguments...),
	})
}

// functions are the expression functions, as expr options.
func functions() []expr.Option {
	sc := func(p []any) *scope { return p[0].(*scope) }
	strs := func(p []any) []string {
		out := make([]string, len(p))
		for i, x := range p {
			out[i], _ = x.(string)
		}
		return out
	}
	return []expr.Option{
		expr.Function("str", func(p ...any) (any, error) { return sc(p).str(p[1].(string)), nil },
			new(func(*scope, string) string)),
		expr.Function("raw", func(p ...any) (any, error) { return sc(p).atText(p[1].(string)).String(), nil },
			new(func(*scope, string) string)),
		expr.Function("text", func(p ...any) (any, error) { return sc(p).text(p[1].(string)), nil },
			new(func(*scope, string) string)),
		expr.Function("has", func(p ...any) (any, error) { return !sc(p).atText(p[1].(string)).IsNull(), nil },
			new(func(*scope, string) bool)),
		expr.Function("isNumber", func(p ...any) (any, error) {
			_, ok := sc(p).atText(p[1].(string)).Float()
			return ok, nil
		}, new(func(*scope, string) bool)),
		expr.Function("kind", func(p ...any) (any, error) { return kindOf(sc(p).atText(p[1].(string))), nil },
			new(func(*scope, string) string)),
		expr.Function("members", func(p ...any) (any, error) {
			k := sc(p).atText(p[1].(string)).Keys()
			if k == nil {
				k = []string{}
			}
			return k, nil
		}, new(func(*scope, string) []string)),
		expr.Function("compact", func(p ...any) (any, error) { return sc(p).atText(p[1].(string)).Compact(), nil },
			new(func(*scope, string) string)),
		expr.Function("count", func(p ...any) (any, error) { return len(sc(p).atText(p[1].(string)).Elements()), nil },
			new(func(*scope, string) int)),
		expr.Function("list", func(p ...any) (any, error) { return listOf(sc(p).atText(p[1].(string))), nil },
			new(func(*scope, string) []string)),
		expr.Function("data", func(p ...any) (any, error) { return dataOf(sc(p).atText(p[1].(string)).v), nil },
			new(func(*scope, string) any)),
		expr.Function("pluck", func(p ...any) (any, error) { return sc(p).pluck(p[1].(string)), nil },
			new(func(*scope, string) []string)),
		expr.Function("elements", func(p ...any) (any, error) { return sc(p).elements(p[1].(string)), nil },
			new(func(*scope, string) []string)),
		expr.Function("firstOf", func(p ...any) (any, error) {
			s := sc(p)
			for _, path := range strs(p[1:]) {
				if v := strings.TrimSpace(s.str(path)); v != "" {
					return v, nil
				}
			}
			return "", nil
		}, new(func(*scope, ...string) string)),
		expr.Function("scale", func(p ...any) (any, error) {
			s := sc(p)
			if v := s.m.severityOf(p[1].(string)); v != openrecall.SeverityUnknown {
				return string(v), nil
			}
			return "", nil
		}, new(func(*scope, string) string)),
		expr.Function("reFind", func(p ...any) (any, error) {
			re := sc(p).m.regexps[p[2].(string)]
			if re == nil {
				return "", nil
			}
			m := re.FindStringSubmatch(p[1].(string))
			switch {
			case m == nil:
				return "", nil
			case len(m) > 1:
				return m[1], nil
			}
			return m[0], nil
		}, new(func(*scope, string, string) string)),
		expr.Function("reReplace", func(p ...any) (any, error) {
			re := sc(p).m.regexps[p[2].(string)]
			if re == nil {
				return p[1].(string), nil
			}
			return re.ReplaceAllString(p[1].(string), p[3].(string)), nil
		}, new(func(*scope, string, string, string) string)),
		expr.Function("quote", func(p ...any) (any, error) { return strconv.Quote(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("firstLine", func(p ...any) (any, error) { return firstLineOf(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("truncate", func(p ...any) (any, error) { return truncate(p[0].(string), p[1].(int)), nil },
			new(func(string, int) string)),
		expr.Function("evidence", func(p ...any) (any, error) {
			s := strs(p)
			pairs := make([][2]string, 0, len(s)/2)
			for i := 0; i+1 < len(s); i += 2 {
				pairs = append(pairs, [2]string{s[i], s[i+1]})
			}
			return Evidence(pairs...), nil
		}, new(func(...string) string)),
		expr.Function("evidenceOf", func(p ...any) (any, error) { return evidenceOf(p[0]), nil },
			new(func([]any) string), new(func([]string) string)),
		expr.Function("isTime", func(p ...any) (any, error) { _, err := ParseTime(p[0].(string)); return err == nil, nil },
			new(func(string) bool)),
		expr.Function("isUnix", func(p ...any) (any, error) { return isUnixText(p[0].(string)), nil },
			new(func(string) bool)),
		expr.Function("isLink", func(p ...any) (any, error) { return isLink(p[0].(string)), nil },
			new(func(string) bool)),
		expr.Function("utcTime", func(p ...any) (any, error) { return utcTime(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("joinText", func(p ...any) (any, error) { return JoinText(strs(p)...), nil },
			new(func(...string) string)),
		expr.Function("rendered", func(p ...any) (any, error) { return Rendered(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("fold", func(p ...any) (any, error) { return FoldLevel(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("status", func(p ...any) (any, error) { return Status(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("json", func(p ...any) (any, error) { return jsonOf(p[0].(string)), nil },
			new(func(string) any)),
		expr.Function("urlQuery", func(p ...any) (any, error) { return urlQuery(p[0].(string), p[1].(string)), nil },
			new(func(string, string) string)),
		expr.Function("urlHost", func(p ...any) (any, error) { return urlHost(p[0].(string)), nil },
			new(func(string) string)),
		expr.Function("coalesce", func(p ...any) (any, error) {
			for _, s := range strs(p) {
				if s = strings.TrimSpace(s); s != "" {
					return s, nil
				}
			}
			return "", nil
		}, new(func(...string) string)),
	}
}

// evidenceOf is the expressions' evidenceOf(list): Evidence of the pairs
// a list of texts holds, key then value; a last key without its value is
// dropped.
func evidenceOf(list any) string {
	var s []string
	switch l := list.(type) {
	case []string:
		s = l
	case []any:
		s = make([]string, len(l))
		for i, x := range l {
			s[i], _ = x.(string)
		}
	}
	pairs := make([][2]string, 0, len(s)/2)
	for i := 0; i+1 < len(s); i += 2 {
		pairs = append(pairs, [2]string{s[i], s[i+1]})
	}
	return Evidence(pairs...)
}

// utcTime is the expressions' utcTime(s): s as ParseTime reads it, in UTC
// as RFC 3339 (with the fraction it has); s trimmed when it is no time.
func utcTime(s string) string {
	t, err := ParseTime(s)
	if err != nil || t.IsZero() {
		return strings.TrimSpace(s)
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// truncate cuts s to at most n bytes, never inside a character, and
// appends "…" when it cut.
func truncate(s string, n int) string {
	if n < 0 || len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// firstLineOf returns the first non-blank line of s.
func firstLineOf(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// urlHost returns the host name of a URL, "" when it has none.
func urlHost(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// kindOf names the kind of a value.
func kindOf(v Value) string {
	switch v.v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "number"
}

// listOf reads a list leniently: an array's scalars (Strings), or text
// split at commas, its brackets and each element's quotes dropped ("a, b",
// `["a", "b"]` as a template renders an array); unrendered text is none.
func listOf(v Value) []string {
	if v.IsArray() {
		return v.Strings()
	}
	s := Rendered(v.String())
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(strings.Trim(s, "[]"), ",") {
		if p = strings.Trim(strings.TrimSpace(p), `"'`); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// compile compiles an expression of the mapping at the current
// environment; want is the kind it must give (reflect.Invalid: any). An
// error names the line of the expression in the file.
func (l *loader) compile(n *yaml.Node, field string, want reflect.Kind) *vm.Program {
	src, ok := l.scalar(n, field)
	if !ok {
		return nil
	}
	if strings.TrimSpace(src) == "" {
		l.fail(n, field, "an empty expression")
		return nil
	}
	// now() would make a reading depend on when it ran: readings are
	// deterministic (P48).
	opts := []expr.Option{expr.Env(l.env), expr.Patch(scopeArg{}), expr.DisableBuiltin("now")}
	opts = append(opts, functions()...)
	switch want {
	case reflect.Bool:
		opts = append(opts, expr.AsBool())
	case reflect.String:
		opts = append(opts, expr.AsKind(reflect.String))
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		line, msg := n.Line, err.Error()
		var fe *file.Error
		if errors.As(err, &fe) {
			msg = strings.TrimSpace(fe.Message)
			if fe.Line > 0 {
				line += fe.Line - 1
				if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
					line++
				}
			}
			if fe.Column >= 0 && fe.Line > 0 {
				msg += " (column " + strconv.Itoa(fe.Column+1) + ")"
			}
		}
		switch {
		case strings.HasPrefix(msg, "expected bool"):
			msg += ": a condition is true or false"
		case strings.HasPrefix(msg, "expected string"):
			msg += ": a candidate gives text"
		case strings.Contains(msg, scopeVar):
			msg = strings.ReplaceAll(msg, scopeVar+", ", "")
		}
		l.errs = append(l.errs, &loadError{file: l.m.file, line: line, field: l.field(field), msg: msg})
		return nil
	}
	// A path written as a constant is checked now.
	root := prog.Node()
	ast.Walk(&root, pathCheck{l: l, n: n, field: field})
	names(prog, l.read)
	return prog
}

// pathCheck checks the constant paths the reader functions are given.
type pathCheck struct {
	l     *loader
	n     *yaml.Node
	field string
}

func (c pathCheck) Visit(node *ast.Node) {
	call, ok := (*node).(*ast.CallNode)
	if !ok {
		return
	}
	id, ok := call.Callee.(*ast.IdentifierNode)
	if ok && id.Value == "evidence" && len(call.Arguments)%2 == 1 {
		c.l.fail(c.n, c.field, "evidence takes pairs: key, value, key, value, …")
	}
	if ok && regexFuncs[id.Value] {
		// The scope passed first (scopeArg), the pattern is the
		// third argument.
		if len(call.Arguments) >= 3 {
			c.regex(id.Value, call.Arguments[2])
		}
		return
	}
	if ok && id.Value == "pluck" {
		if len(call.Arguments) >= 2 {
			if s, isStr := call.Arguments[1].(*ast.StringNode); isStr {
				steps, err := parsePluck(s.Value)
				if err != nil {
					c.l.fail(c.n, c.field, "pluck: %v", err)
					return
				}
				c.l.m.plucks[s.Value] = steps
			}
		}
		return
	}
	if !ok || !readerFuncs[id.Value] || id.Value == "scale" {
		return
	}
	for _, a := range call.Arguments {
		if s, ok := a.(*ast.StringNode); ok {
			p, err := parsePath(s.Value)
			if err != nil {
				c.l.fail(c.n, c.field, "%s: %v", id.Value, err)
				continue
			}
			c.l.m.paths[s.Value] = p
		}
	}
}

// regex compiles the pattern a regular expression function is given: a
// constant, compiled once for the mapping.
func (c pathCheck) regex(fn string, n ast.Node) {
	s, ok := n.(*ast.StringNode)
	if !ok {
		c.l.fail(c.n, c.field, "%s: the pattern is a constant string (compiled when the mapping loads)", fn)
		return
	}
	re, err := regexp.Compile(s.Value)
	if err != nil {
		c.l.fail(c.n, c.field, "%s: %v", fn, err)
		return
	}
	c.l.m.regexps[s.Value] = re
}

// parsePluck reads a path of pluck: paths joined by "[]" (every element).
func parsePluck(s string) ([]fieldPath, error) {
	var out []fieldPath
	for i, seg := range strings.Split(s, "[]") {
		if i > 0 {
			if seg != "" && !strings.HasPrefix(seg, ".") {
				return nil, fmt.Errorf("bad path %q: a key after [] follows a dot (a[].b)", s)
			}
			seg = strings.TrimPrefix(seg, ".")
			if strings.HasPrefix(seg, "/") {
				return nil, fmt.Errorf("bad path %q: / only at its start", s)
			}
		}
		p, err := parsePath(seg)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// names adds to need the names of the environment a program reads.
func names(p *vm.Program, need map[string]bool) {
	if p == nil {
		return
	}
	root := p.Node()
	ast.Walk(&root, nameCollector(need))
}

type nameCollector map[string]bool

func (c nameCollector) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok {
		c[id.Value] = true
	}
}
