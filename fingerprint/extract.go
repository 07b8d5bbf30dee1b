package fingerprint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// Extractor turns alerts into Alert DNA with one set of compiled rules. It is
// immutable after New and safe for concurrent use.
type Extractor struct {
	norm     *normalizer
	fields   [6]compiledField
	identity []compiledIdentity
	// labels lists every label name any rule reads, sorted.
	labels []string
	// fieldsRead: some rule reads SourceFields.
	fieldsRead bool
}

type compiledField struct {
	name  string
	steps []step
}

// step is one rule applied to one source, in evaluation order.
type step struct {
	source string
	rule   string
	table  map[string]tableEntry
	re     *regexp.Regexp
	value  string
}

// Evidence says which rule set a fingerprint field and where it looked.
type Evidence struct {
	// Field is the Alert DNA field name, such as "error_class".
	Field string `json:"field"`
	// Value is the value the rule gave the field.
	Value string `json:"value"`
	// Rule names the rule: "table NAME[KEY]" or "pattern NAME".
	Rule string `json:"rule"`
	// Source is where the rule matched: "environment", "label:NAME",
	// "service", "title" or "text".
	Source string `json:"source"`
}

// New compiles rules into an Extractor. It fails, naming the rule, when a
// table has no sources or a pattern lacks its regex or value (possible in a
// partial rules file meant to be merged). nil rules mean DefaultRules.
func New(rules *Rules) (*Extractor, error) {
	if rules == nil {
		var err error
		if rules, err = DefaultRules(); err != nil {
			return nil, err
		}
	}
	e := &Extractor{norm: newNormalizer()}
	seen := map[string]bool{}
	for i, field := range openrecall.FingerprintFields {
		cf, err := compileField(rules, field)
		if err != nil {
			return nil, err
		}
		e.fields[i] = cf
		for _, s := range cf.steps {
			e.fieldsRead = e.fieldsRead || s.source == SourceFields
			if name, ok := strings.CutPrefix(s.source, SourceLabelPrefix); ok && !seen[name] {
				seen[name] = true
				e.labels = append(e.labels, name)
			}
		}
	}
	slices.Sort(e.labels)
	var err error
	if e.identity, err = compileIdentity(rules); err != nil {
		return nil, err
	}
	return e, nil
}

type rule struct {
	name     string
	sources  []string
	fallback bool
	table    map[string]tableEntry
	re       *regexp.Regexp
	value    string
}

func compileField(rules *Rules, field string) (compiledField, error) {
	cf := compiledField{name: field}
	fr := rules.fields[field]
	if fr == nil {
		return cf, nil
	}
	var list []rule
	for _, t := range fr.tables {
		if len(t.sources) == 0 {
			return cf, fmt.Errorf("rules %s (%s): field %s: table %q has no sources: %w", rules.name, t.origin, field, t.name, openrecall.ErrInvalid)
		}
		list = append(list, rule{name: "table " + t.name, sources: t.sources, fallback: t.fallback != nil && *t.fallback, table: t.values})
	}
	for _, p := range fr.patterns {
		if p.disabled {
			continue
		}
		if p.regex == "" || p.value == "" {
			return cf, fmt.Errorf("rules %s (%s): field %s: pattern %q needs both regex and value: %w", rules.name, p.origin, field, p.name, openrecall.ErrInvalid)
		}
		re, err := compilePattern(p.regex)
		if err != nil {
			return cf, fmt.Errorf("rules %s (%s): field %s: pattern %q: regex: %v: %w", rules.name, p.origin, field, p.name, err, openrecall.ErrInvalid)
		}
		sources := p.sources
		if sources == nil {
			sources = []string{SourceTitle, SourceText}
		}
		list = append(list, rule{name: "pattern " + p.name, sources: sources, fallback: p.fallback != nil && *p.fallback, re: re, value: p.value})
	}
	for _, fallback := range []bool{false, true} {
		for _, src := range sourceOrder(list, fallback) {
			for _, r := range list {
				if r.fallback != fallback || !slices.Contains(r.sources, src) {
					continue
				}
				cf.steps = append(cf.steps, step{source: src, rule: r.name, table: r.table, re: r.re, value: r.value})
			}
		}
	}
	return cf, nil
}

// sourceOrder lists the sources the rules read, in precedence order:
// environment, labels (in order of first appearance), service, title, text.
func sourceOrder(list []rule, fallback bool) []string {
	var labels []string
	has := map[string]bool{}
	for _, r := range list {
		if r.fallback != fallback {
			continue
		}
		for _, s := range r.sources {
			if strings.HasPrefix(s, SourceLabelPrefix) && !has[s] {
				labels = append(labels, s)
			}
			has[s] = true
		}
	}
	var out []string
	if has[SourceEnvironment] {
		out = append(out, SourceEnvironment)
	}
	out = append(out, labels...)
	for _, s := range []string{SourceService, SourceTitle, SourceText, SourceFields} {
		if has[s] {
			out = append(out, s)
		}
	}
	return out
}

// input is an alert prepared for the rules.
type input struct {
	// raw holds lowercased, trimmed values and name the same without a pod
	// hash or ordinal, per source, for environment, service and labels.
	raw, name map[string]string
	title     string
	text      string
	fields    string // SourceFields, when a rule reads it
}

// MaxFieldBytes caps each field of an alert (title, text, each annotation
// and label value) that the rules read: only its first MaxFieldBytes bytes
// are normalized and matched, so one huge alert costs no more CPU than a
// few KiB of text.
const MaxFieldBytes = 8 << 10

// capField returns the first MaxFieldBytes bytes of s, cut at a rune
// boundary.
func capField(s string) string {
	if len(s) <= MaxFieldBytes {
		return s
	}
	i := MaxFieldBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func (e *Extractor) prepare(a openrecall.Alert) input {
	in := input{raw: make(map[string]string, len(e.labels)+2), name: make(map[string]string, len(e.labels)+2)}
	put := func(src, v string) {
		v = capField(v)
		if strings.TrimSpace(v) == "" {
			return
		}
		in.raw[src] = strings.ToLower(strings.TrimSpace(v))
		in.name[src] = e.norm.name(v)
	}
	put(SourceEnvironment, a.Environment)
	put(SourceService, a.Service)
	for _, l := range e.labels {
		put(SourceLabelPrefix+l, a.Labels[l])
	}
	in.title = e.norm.normalize(capField(a.Title))
	in.text = e.norm.normalize(alertText(a))
	if e.fieldsRead {
		in.fields = e.norm.normalize(alertFields(a))
	}
	return in
}

// alertFields is every label and annotation value of a, capped, one per
// line, in key order.
func alertFields(a openrecall.Alert) string {
	var b strings.Builder
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteString(capField(m[k]))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// alertText joins the alert's text with its summary and description
// annotations, skipping parts that repeat another.
func alertText(a openrecall.Alert) string {
	var parts []string
	for _, p := range []string{a.Text, a.Annotations["summary"], a.Annotations["description"]} {
		p = strings.TrimSpace(capField(p))
		if p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n")
}

// Extract returns the Alert DNA of a. It is deterministic: the same alert
// always gives the same fingerprint, whatever the order of its labels, and
// alerts that differ only in pods, addresses, numbers or timestamps give the
// same fingerprint. Every value is a canonical token or empty.
func (e *Extractor) Extract(a openrecall.Alert) openrecall.Fingerprint {
	fp, _ := e.explain(a, false)
	return fp
}

// Explain returns the Alert DNA of a, as Extract does, with one Evidence per
// known field, in canonical field order.
func (e *Extractor) Explain(a openrecall.Alert) (openrecall.Fingerprint, []Evidence) {
	return e.explain(a, true)
}

func (e *Extractor) explain(a openrecall.Alert, withEvidence bool) (openrecall.Fingerprint, []Evidence) {
	in := e.prepare(a)
	var fp openrecall.Fingerprint
	var ev []Evidence
	for _, cf := range e.fields {
		for _, s := range cf.steps {
			value, key, ok := s.match(in)
			if !ok {
				continue
			}
			fp, _ = fp.With(cf.name, value)
			if withEvidence {
				name := s.rule
				if key != "" {
					name += "[" + key + "]"
				}
				ev = append(ev, Evidence{Field: cf.name, Value: value, Rule: name, Source: s.source})
			}
			break
		}
	}
	return fp, ev
}

// match applies one step to the prepared input and returns the value and, for
// a table, the key as written in the rules.
func (s step) match(in input) (value, key string, ok bool) {
	switch s.source {
	case SourceTitle, SourceText, SourceFields:
		text := in.title
		switch s.source {
		case SourceText:
			text = in.text
		case SourceFields:
			text = in.fields
		}
		if s.re != nil && text != "" && s.re.MatchString(text) {
			return s.value, "", true
		}
		return "", "", false
	}
	raw, present := in.raw[s.source]
	if !present {
		return "", "", false
	}
	name := in.name[s.source]
	if s.table != nil {
		for _, k := range []string{raw, name} {
			if ent, found := s.table[k]; found && ent.value != "" {
				return ent.value, ent.key, true
			}
		}
		return "", "", false
	}
	if s.re != nil && s.re.MatchString(name) {
		return s.value, "", true
	}
	return "", "", false
}

// Normalize lowercases s and replaces its high-cardinality noise with
// placeholders, exactly as the extractor does before its patterns run:
// timestamps <ts>, UUIDs <uuid>, IPv4/IPv6 addresses with an optional port
// <ip> (the cloud metadata address <metadata_ip>), pod hashes NAME-<pod>, hex
// ids of eight or more characters <hex>, durations <dur> and other numbers
// <num>. HTTP status codes after a keyword ("http 503", "status 502",
// "code=500", "returned 404") or before their reason phrase ("503 service
// unavailable") are kept, as are words such as 5xx. Normalize is idempotent.
func (e *Extractor) Normalize(s string) string {
	return e.norm.normalize(s)
}
