package fingerprint

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
)

//go:embed rules.yaml
var defaultRulesYAML []byte

// DefaultRulesName is the name under which the embedded rules file is loaded
// and reported in errors.
const DefaultRulesName = "rules.yaml (embedded)"

// Source names a place in an alert that a rule reads.
const (
	SourceEnvironment = "environment" // Alert.Environment
	SourceService     = "service"     // Alert.Service
	SourceTitle       = "title"       // Alert.Title
	SourceText        = "text"        // Alert.Text and the summary and description annotations
	SourceLabelPrefix = "label:"      // "label:NAME": the value of label NAME
	SourceFields      = "fields"      // every label and annotation value, one per line, normalized like text
)

// Rules is a parsed rules file: per Alert DNA field, exact-lookup tables and
// ordered patterns. It is immutable after loading and safe for concurrent
// use; Merge returns a new Rules.
type Rules struct {
	name     string
	replace  bool
	fields   map[string]*fieldRules
	identity []identityRule
	// securitySources are the team's own names of security products
	// (security_sources), added to the embedded list (DESIGN §4).
	securitySources []string
}

// identityRule names, for the alert rules it matches, the labels that are
// part of the identity's service (DESIGN §4), such as the namespace and
// workload of a Kubernetes crash loop or the target of a blackbox probe.
type identityRule struct {
	name string
	// rules lists alert rule names, lowercased (matched case-insensitively).
	rules []string
	regex string
	// labels lists the identity labels in order; each entry holds
	// alternatives of which the first present is taken.
	labels   [][]string
	disabled bool
	origin   string
}

type fieldRules struct {
	tables   []table
	patterns []pattern
}

// table is an exact, case-insensitive lookup of a whole value.
type table struct {
	name     string
	sources  []string
	fallback *bool
	// values maps a lowercased key to its entry; an entry with an empty
	// value removes the key when merged.
	values map[string]tableEntry
	origin string // file:line, for errors
}

type tableEntry struct {
	key   string // as written
	value string
}

type pattern struct {
	name     string
	value    string
	regex    string
	sources  []string
	fallback *bool
	disabled bool
	origin   string
}

// Name returns the name the rules were loaded under, such as a file name.
func (r *Rules) Name() string { return r.name }

// DefaultRules parses the embedded rules file.
func DefaultRules() (*Rules, error) {
	return LoadRules(bytes.NewReader(defaultRulesYAML), DefaultRulesName)
}

// LoadRules parses a rules file read from r. name (usually the file name)
// prefixes every error, which also names the line, field and rule at fault
// and wraps openrecall.ErrInvalid. Regular expressions are checked here and
// compiled by New.
func LoadRules(r io.Reader, name string) (*Rules, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read rules %s: %w", name, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("rules %s: %v: %w", name, err, openrecall.ErrInvalid)
	}
	p := parser{file: name}
	rules := &Rules{name: name, fields: map[string]*fieldRules{}}
	if len(doc.Content) == 0 {
		return rules, nil
	}
	root := doc.Content[0]
	err = p.mapping(root, "top level", func(key string, val *yaml.Node) error {
		switch key {
		case "version":
			var v int
			if err := val.Decode(&v); err != nil || v != 1 {
				return p.errf(val, "version: want 1")
			}
		case "replace":
			return p.boolean(val, "replace", &rules.replace)
		case "identity":
			if val.Kind != yaml.SequenceNode {
				return p.errf(val, "identity: want a list")
			}
			for _, n := range val.Content {
				ir, err := p.identityRule(n)
				if err != nil {
					return err
				}
				if slices.ContainsFunc(rules.identity, func(o identityRule) bool { return o.name == ir.name }) {
					return p.errf(n, "identity: rule %q defined twice", ir.name)
				}
				rules.identity = append(rules.identity, ir)
			}
		case "fields":
			return p.mapping(val, "fields", func(field string, fv *yaml.Node) error {
				if openrecall.Vocabulary(field) == nil {
					return p.errf(fv, "unknown field %q (want one of %s)", field, strings.Join(openrecall.FingerprintFields, ", "))
				}
				if _, dup := rules.fields[field]; dup {
					return p.errf(fv, "field %s given twice", field)
				}
				fr, err := p.field(field, fv)
				if err != nil {
					return err
				}
				rules.fields[field] = fr
				return nil
			})
		case "security_sources":
			if val.Kind != yaml.SequenceNode {
				return p.errf(val, "security_sources: want a list of product names")
			}
			for _, n := range val.Content {
				s, err := p.str(n, "security_sources")
				if err != nil {
					return err
				}
				if !hasAlnum(s) {
					return p.errf(n, "security_sources: %q names no product (it has no letter or digit)", s)
				}
				rules.securitySources = append(rules.securitySources, s)
			}
		default:
			return p.errf(val, "unknown top-level key %q (want version, replace, fields, identity, security_sources)", key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rules, nil
}

type parser struct{ file string }

func (p parser) origin(n *yaml.Node) string { return fmt.Sprintf("%s:%d", p.file, n.Line) }

func (p parser) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("rules %s: %s: %w", p.origin(n), fmt.Sprintf(format, args...), openrecall.ErrInvalid)
}

// mapping calls fn for each key of a mapping node, in file order.
func (p parser) mapping(n *yaml.Node, what string, fn func(key string, val *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping", what)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, "%s: keys must be plain strings", what)
		}
		if err := fn(k.Value, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (p parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, "%s: want a string", what)
	}
	return n.Value, nil
}

// entryName reads the name of a table, pattern or identity rule (what, as
// "field error_class: table", names it in errors): a non-empty string.
func (p parser) entryName(n *yaml.Node, what string) (string, error) {
	var name string
	if nn := lookup(n, "name"); nn != nil {
		s, err := p.str(nn, what+" name")
		if err != nil {
			return "", err
		}
		name = s
	}
	if name == "" {
		return "", p.errf(n, "%s without a name", what)
	}
	return name, nil
}

// regex reads a rule's regular expression: a non-empty string that
// compiles.
func (p parser) regex(n *yaml.Node, what string) (string, error) {
	s, err := p.str(n, what+": regex")
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", p.errf(n, "%s: regex: empty", what)
	}
	if _, err := compilePattern(s); err != nil {
		return "", p.errf(n, "%s: regex: %v", what, err)
	}
	return s, nil
}

func (p parser) boolean(n *yaml.Node, what string, dst *bool) error {
	if n.Kind != yaml.ScalarNode || n.Decode(dst) != nil {
		return p.errf(n, "%s: want true or false", what)
	}
	return nil
}

func (p parser) sources(n *yaml.Node, what string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s: sources: want a list", what)
	}
	var out []string
	for _, item := range n.Content {
		s, err := p.str(item, what+": sources")
		if err != nil {
			return nil, err
		}
		if err := checkSource(s); err != nil {
			return nil, p.errf(item, "%s: sources: %v", what, err)
		}
		if slices.Contains(out, s) {
			return nil, p.errf(item, "%s: sources: %q listed twice", what, s)
		}
		out = append(out, s)
	}
	return out, nil
}

func checkSource(s string) error {
	switch s {
	case SourceEnvironment, SourceService, SourceTitle, SourceText, SourceFields:
		return nil
	}
	if name, ok := strings.CutPrefix(s, SourceLabelPrefix); ok && name != "" && strings.TrimSpace(name) == name {
		return nil
	}
	return fmt.Errorf("unknown source %q (want environment, service, title, text, fields or label:NAME)", s)
}

func (p parser) identityRule(n *yaml.Node) (identityRule, error) {
	ir := identityRule{origin: p.origin(n)}
	if n.Kind != yaml.MappingNode {
		return ir, p.errf(n, "identity: rule: want a mapping")
	}
	var err error
	if ir.name, err = p.entryName(n, "identity: rule"); err != nil {
		return ir, err
	}
	what := fmt.Sprintf("identity: rule %q", ir.name)
	err = p.mapping(n, what, func(key string, val *yaml.Node) error {
		switch key {
		case "name":
		case "rules":
			if val.Kind != yaml.SequenceNode {
				return p.errf(val, "%s: rules: want a list", what)
			}
			for _, item := range val.Content {
				s, err := p.str(item, what+": rules")
				if err != nil {
					return err
				}
				k := strings.ToLower(strings.TrimSpace(s))
				if k == "" {
					return p.errf(item, "%s: rules: empty rule name", what)
				}
				if slices.Contains(ir.rules, k) {
					return p.errf(item, "%s: rules: %q listed twice (names are case-insensitive)", what, s)
				}
				ir.rules = append(ir.rules, k)
			}
		case "regex":
			s, err := p.regex(val, what)
			if err != nil {
				return err
			}
			ir.regex = s
		case "labels":
			if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
				return p.errf(val, "%s: labels: want a non-empty list", what)
			}
			for _, item := range val.Content {
				s, err := p.str(item, what+": labels")
				if err != nil {
					return err
				}
				var alts []string
				for _, l := range strings.Split(s, "|") {
					if l == "" || strings.TrimSpace(l) != l {
						return p.errf(item, "%s: labels: %q is not a label name or NAME|NAME alternatives", what, s)
					}
					alts = append(alts, l)
				}
				ir.labels = append(ir.labels, alts)
			}
		case "disabled":
			return p.boolean(val, what+": disabled", &ir.disabled)
		default:
			return p.errf(val, "%s: unknown key %q (want name, rules, regex, labels, disabled)", what, key)
		}
		return nil
	})
	return ir, err
}

func (p parser) field(field string, n *yaml.Node) (*fieldRules, error) {
	fr := &fieldRules{}
	err := p.mapping(n, "field "+field, func(key string, val *yaml.Node) error {
		switch key {
		case "tables":
			if val.Kind != yaml.SequenceNode {
				return p.errf(val, "field %s: tables: want a list", field)
			}
			for _, tn := range val.Content {
				t, err := p.table(field, tn)
				if err != nil {
					return err
				}
				if slices.ContainsFunc(fr.tables, func(o table) bool { return o.name == t.name }) {
					return p.errf(tn, "field %s: table %q defined twice", field, t.name)
				}
				fr.tables = append(fr.tables, t)
			}
		case "patterns":
			if val.Kind != yaml.SequenceNode {
				return p.errf(val, "field %s: patterns: want a list", field)
			}
			for _, pn := range val.Content {
				pt, err := p.pattern(field, pn)
				if err != nil {
					return err
				}
				if slices.ContainsFunc(fr.patterns, func(o pattern) bool { return o.name == pt.name }) {
					return p.errf(pn, "field %s: pattern %q defined twice", field, pt.name)
				}
				fr.patterns = append(fr.patterns, pt)
			}
		default:
			return p.errf(val, "field %s: unknown key %q (want tables, patterns)", field, key)
		}
		return nil
	})
	return fr, err
}

func (p parser) table(field string, n *yaml.Node) (table, error) {
	t := table{origin: p.origin(n)}
	if n.Kind != yaml.MappingNode {
		return t, p.errf(n, "field %s: table: want a mapping", field)
	}
	var err error
	if t.name, err = p.entryName(n, "field "+field+": table"); err != nil {
		return t, err
	}
	what := fmt.Sprintf("field %s: table %q", field, t.name)
	err = p.mapping(n, what, func(key string, val *yaml.Node) error {
		switch key {
		case "name":
		case "sources":
			s, err := p.sources(val, what)
			if err != nil {
				return err
			}
			t.sources = s
		case "fallback":
			var b bool
			if err := p.boolean(val, what+": fallback", &b); err != nil {
				return err
			}
			t.fallback = &b
		case "values":
			t.values = map[string]tableEntry{}
			return p.mapping(val, what+": values", func(k string, v *yaml.Node) error {
				value, err := p.valueOf(v, fmt.Sprintf("%s: entry %q", what, k), true)
				if err != nil {
					return err
				}
				lk := strings.ToLower(strings.TrimSpace(k))
				if lk == "" {
					return p.errf(v, "%s: empty key", what)
				}
				if prev, dup := t.values[lk]; dup {
					return p.errf(v, "%s: entry %q repeats %q (keys are case-insensitive)", what, k, prev.key)
				}
				t.values[lk] = tableEntry{key: k, value: value}
				return nil
			})
		default:
			return p.errf(val, "%s: unknown key %q (want name, sources, fallback, values)", what, key)
		}
		return nil
	})
	return t, err
}

func (p parser) pattern(field string, n *yaml.Node) (pattern, error) {
	pt := pattern{origin: p.origin(n)}
	if n.Kind != yaml.MappingNode {
		return pt, p.errf(n, "field %s: pattern: want a mapping", field)
	}
	var err error
	if pt.name, err = p.entryName(n, "field "+field+": pattern"); err != nil {
		return pt, err
	}
	what := fmt.Sprintf("field %s: pattern %q", field, pt.name)
	err = p.mapping(n, what, func(key string, val *yaml.Node) error {
		switch key {
		case "name":
		case "value":
			v, err := p.valueOf(val, what+": value", false)
			if err != nil {
				return err
			}
			pt.value = v
		case "regex":
			s, err := p.regex(val, what)
			if err != nil {
				return err
			}
			pt.regex = s
		case "sources":
			s, err := p.sources(val, what)
			if err != nil {
				return err
			}
			pt.sources = s
		case "fallback":
			var b bool
			if err := p.boolean(val, what+": fallback", &b); err != nil {
				return err
			}
			pt.fallback = &b
		case "disabled":
			return p.boolean(val, what+": disabled", &pt.disabled)
		default:
			return p.errf(val, "%s: unknown key %q (want name, value, regex, sources, fallback, disabled)", what, key)
		}
		return nil
	})
	return pt, err
}

// valueOf reads a field value: a canonical token, or (in a table, where it
// removes an entry on merge) empty.
func (p parser) valueOf(n *yaml.Node, what string, emptyOK bool) (string, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && emptyOK {
		return "", nil
	}
	s, err := p.str(n, what)
	if err != nil {
		return "", err
	}
	if s == "" && emptyOK {
		return "", nil
	}
	if !openrecall.IsCanonicalToken(s) {
		hint := ""
		if c := openrecall.CanonicalToken(s); c != "" {
			hint = fmt.Sprintf("; did you mean %q?", c)
		}
		return "", p.errf(n, "%s: %q is not a canonical token (lowercase [a-z0-9_]+)%s", what, s, hint)
	}
	return s, nil
}

func lookup(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// compilePattern compiles a rule's regular expression so that it matches
// case-insensitively. The extractor lowercases everything the rules read, so
// instead of case folding at match time (slow) the expression's own letters
// are lowercased once here.
func compilePattern(s string) (*regexp.Regexp, error) {
	tree, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s in %q", se.Code, s)
		}
		return nil, err
	}
	lowerRegexp(tree)
	return regexp.Compile(tree.String())
}

// lowerRegexp rewrites literals and character classes of re to their
// lowercase forms, so that re matches lowercased input as (?i)re would.
func lowerRegexp(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		for i, r := range re.Rune {
			re.Rune[i] = unicode.ToLower(r)
		}
		re.Flags &^= syntax.FoldCase
	case syntax.OpCharClass:
		var add []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo > 0x400 {
				continue // wide classes such as \S already hold both cases
			}
			for r := lo; r <= hi; r++ {
				if l := unicode.ToLower(r); l != r {
					add = append(add, l, l)
				}
			}
		}
		re.Rune = append(re.Rune, add...)
	}
	for _, sub := range re.Sub {
		lowerRegexp(sub)
	}
}

// Merge returns the rules of r extended by o; neither is modified. When o
// says `replace: true`, the result is o alone. Otherwise, per field: a table
// of o with the name of one of r's adds its entries to it (same key: o's
// value wins; an empty value removes the key) and takes o's sources and
// fallback when o states them; a pattern of o with the name of one of r's
// replaces it in place (keeping r's regex, value or sources where o omits
// them), or removes it when o says `disabled: true`. Tables and patterns new
// in o come before r's, so o's rules win where both match. Identity rules
// merge by name as patterns do.
func (r *Rules) Merge(o *Rules) *Rules {
	name := r.name
	if o.name != "" {
		name = r.name + " + " + o.name
	}
	if o.replace {
		out := o.clone()
		out.name = o.name
		return out
	}
	out := &Rules{name: name, replace: r.replace, fields: map[string]*fieldRules{}}
	for _, field := range openrecall.FingerprintFields {
		rf, of := r.fields[field], o.fields[field]
		switch {
		case rf == nil && of == nil:
			continue
		case of == nil:
			out.fields[field] = rf.clone()
			continue
		case rf == nil:
			rf = &fieldRules{}
		}
		out.fields[field] = mergeField(rf, of)
	}
	out.identity = mergeIdentity(r.identity, o.identity)
	out.securitySources = append(slices.Clone(r.securitySources), o.securitySources...)
	return out
}

// SecuritySources returns the security product names the rules add to the
// embedded list (security_sources), in file order.
func (r *Rules) SecuritySources() []string { return slices.Clone(r.securitySources) }

// hasAlnum reports whether s holds an ASCII letter or digit.
func hasAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; 'a' <= c && c <= 'z' || '0' <= s[i] && s[i] <= '9' {
			return true
		}
	}
	return false
}

// mergeIdentity merges identity rules as patterns merge: o's new rules come
// first; one of o's with the name of one of r's replaces it in place,
// keeping r's parts where o omits them, or removes it when disabled.
func mergeIdentity(r, o []identityRule) []identityRule {
	var out []identityRule
	for _, oi := range o {
		if !slices.ContainsFunc(r, func(x identityRule) bool { return x.name == oi.name }) {
			out = append(out, oi.clone())
		}
	}
	for _, ri := range r {
		i := slices.IndexFunc(o, func(x identityRule) bool { return x.name == ri.name })
		if i < 0 {
			out = append(out, ri.clone())
			continue
		}
		oi, mi := o[i], ri.clone()
		if oi.rules != nil {
			mi.rules = slices.Clone(oi.rules)
		}
		if oi.regex != "" {
			mi.regex = oi.regex
		}
		if oi.labels != nil {
			mi.labels = slices.Clone(oi.labels)
		}
		mi.disabled = oi.disabled
		mi.origin = oi.origin
		out = append(out, mi)
	}
	return out
}

func (ir identityRule) clone() identityRule {
	ir.rules = slices.Clone(ir.rules)
	ir.labels = slices.Clone(ir.labels)
	return ir
}

func mergeField(r, o *fieldRules) *fieldRules {
	out := &fieldRules{}
	var newTables []table
	for _, ot := range o.tables {
		if !slices.ContainsFunc(r.tables, func(t table) bool { return t.name == ot.name }) {
			newTables = append(newTables, ot.clone())
		}
	}
	out.tables = append(out.tables, newTables...)
	for _, rt := range r.tables {
		i := slices.IndexFunc(o.tables, func(t table) bool { return t.name == rt.name })
		if i < 0 {
			out.tables = append(out.tables, rt.clone())
			continue
		}
		ot := o.tables[i]
		mt := rt.clone()
		if ot.sources != nil {
			mt.sources = slices.Clone(ot.sources)
		}
		if ot.fallback != nil {
			mt.fallback = ot.fallback
		}
		for k, e := range ot.values {
			if e.value == "" {
				delete(mt.values, k)
				continue
			}
			mt.values[k] = e
		}
		mt.origin = ot.origin
		out.tables = append(out.tables, mt)
	}

	for _, op := range o.patterns {
		if !slices.ContainsFunc(r.patterns, func(p pattern) bool { return p.name == op.name }) {
			out.patterns = append(out.patterns, op.clone())
		}
	}
	for _, rp := range r.patterns {
		i := slices.IndexFunc(o.patterns, func(p pattern) bool { return p.name == rp.name })
		if i < 0 {
			out.patterns = append(out.patterns, rp.clone())
			continue
		}
		op := o.patterns[i]
		mp := rp.clone()
		if op.regex != "" {
			mp.regex = op.regex
		}
		if op.value != "" {
			mp.value = op.value
		}
		if op.sources != nil {
			mp.sources = slices.Clone(op.sources)
		}
		if op.fallback != nil {
			mp.fallback = op.fallback
		}
		mp.disabled = op.disabled
		mp.origin = op.origin
		out.patterns = append(out.patterns, mp)
	}
	return out
}

func (r *Rules) clone() *Rules {
	out := &Rules{name: r.name, replace: r.replace, fields: map[string]*fieldRules{}}
	for k, f := range r.fields {
		out.fields[k] = f.clone()
	}
	for _, ir := range r.identity {
		out.identity = append(out.identity, ir.clone())
	}
	out.securitySources = slices.Clone(r.securitySources)
	return out
}

func (f *fieldRules) clone() *fieldRules {
	out := &fieldRules{}
	for _, t := range f.tables {
		out.tables = append(out.tables, t.clone())
	}
	for _, p := range f.patterns {
		out.patterns = append(out.patterns, p.clone())
	}
	return out
}

func (t table) clone() table {
	t.sources = slices.Clone(t.sources)
	vals := make(map[string]tableEntry, len(t.values))
	for k, v := range t.values {
		vals[k] = v
	}
	t.values = vals
	return t
}

func (p pattern) clone() pattern {
	p.sources = slices.Clone(p.sources)
	return p
}

// FieldSpec is one field's rules as plain data, in evaluation order within
// each kind: its tables, then its patterns, as the file (after merging)
// lists them.
type FieldSpec struct {
	Tables   []TableSpec
	Patterns []PatternSpec
}

// TableSpec is one lookup table as plain data. Values maps a lowercased key
// to its value; Keys maps the same key to the key as written.
type TableSpec struct {
	Name     string
	Sources  []string
	Fallback bool
	Values   map[string]string
	Keys     map[string]string
}

// PatternSpec is one pattern as plain data. Sources is nil when the file
// leaves it to the default, [title, text].
type PatternSpec struct {
	Name     string
	Regex    string
	Value    string
	Sources  []string
	Fallback bool
	Disabled bool
}

// Spec returns the rules of field as plain data (a copy), for tools that
// interpret the rules themselves, such as the reference interpreter of the
// equivalence tests.
func (r *Rules) Spec(field string) FieldSpec {
	var out FieldSpec
	fr := r.fields[field]
	if fr == nil {
		return out
	}
	for _, t := range fr.tables {
		ts := TableSpec{Name: t.name, Sources: slices.Clone(t.sources), Fallback: t.fallback != nil && *t.fallback,
			Values: map[string]string{}, Keys: map[string]string{}}
		for k, e := range t.values {
			ts.Values[k], ts.Keys[k] = e.value, e.key
		}
		out.Tables = append(out.Tables, ts)
	}
	for _, p := range fr.patterns {
		out.Patterns = append(out.Patterns, PatternSpec{Name: p.name, Regex: p.regex, Value: p.value, Sources: slices.Clone(p.sources),
			Fallback: p.fallback != nil && *p.fallback, Disabled: p.disabled})
	}
	return out
}

// CompilePattern compiles a rule's regular expression as the extractor does:
// literals and character classes lowercased, to match lowercased input.
func CompilePattern(regex string) (*regexp.Regexp, error) {
	return compilePattern(regex)
}

// IdentitySpec is one identity rule as plain data: the alert rule names it
// matches (lowercased) or its regex, and its labels, each a list of
// alternatives of which the first present is taken.
type IdentitySpec struct {
	Name     string
	Rules    []string
	Regex    string
	Labels   [][]string
	Disabled bool
}

// IdentitySpecs returns the identity rules as plain data (a copy), in file
// order, for tools that interpret the rules themselves.
func (r *Rules) IdentitySpecs() []IdentitySpec {
	var out []IdentitySpec
	for _, ir := range r.identity {
		is := IdentitySpec{Name: ir.name, Rules: slices.Clone(ir.rules), Regex: ir.regex, Disabled: ir.disabled}
		for _, alts := range ir.labels {
			is.Labels = append(is.Labels, slices.Clone(alts))
		}
		out = append(out, is)
	}
	return out
}
