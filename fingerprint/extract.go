package fingerprint

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint/attack"
	"github.com/openrecall/openrecall/fingerprint/product"
)

// Extractor turns alerts into Alert DNA with one set of compiled rules. It is
// immutable after New and safe for concurrent use.
type Extractor struct {
	norm     *normalizer
	fields   [6]compiledField
	identity []compiledIdentity
	// labels lists every label name any rule reads, sorted.
	labels []string
	// sources lists every source any rule reads other than title and text
	// (environment, service, label:NAME), in a fixed order: the order of
	// input.raw and input.name.
	sources []string
	// patterns counts the compiled patterns (step.pattern numbers them);
	// always marks those the prefilter cannot skip, and exact those whose
	// literals found are their match. clauses[p] lists, per clause of
	// pattern p, the literal sets (numbered as the prefix automaton's) that
	// must all occur for the clause to hold.
	patterns int
	always   []uint64
	exact    []uint64
	clauses  [][][]int
	// single[p] is the one literal set of pattern p when it has one
	// clause of one set (the common case), else -1.
	single []int
	// prefix holds one automaton per kind of source (prefixLabels,
	// prefixTitleText, prefixFields), each over the literal sets of the
	// patterns some step runs on that kind only, numbered alike: a mask
	// says nothing of the patterns its source is never matched against.
	prefix [3]*matcher
	cache  *dnaCache
	// labelSrc indexes sources by label name, for the labels any rule
	// reads.
	labelSrc map[string]int
	// inputs pools the source values of prepared inputs (*[]string of
	// twice len(sources)).
	inputs sync.Pool
	// fieldsRead: some rule reads SourceFields.
	fieldsRead bool
	// attack maps ATT&CK techniques and tactics to attack patterns.
	attack *attack.Table
	// products are the security products' names a source-like field may
	// give (the embedded list and the rules' security_sources).
	products *product.List
}

type compiledField struct {
	name  string
	steps []step
}

// step is one rule applied to one source, in evaluation order.
type step struct {
	source string
	// kind is source as a small number: title, text, fields or another
	// (a label, the service or the environment).
	kind sourceKind
	// src indexes Extractor.sources; -1 for title and text.
	src   int
	rule  string
	table map[string]tableEntry
	re    *regexp.Regexp
	// pattern numbers the pattern (shared by its steps on every source):
	// the number of its first alternative; -1 for a table.
	pattern int
	// alts are the pattern's alternatives (alternativesOf), each with its
	// own prefilter number: the pattern matches a string exactly when one
	// of them does.
	alts  []alternative
	value string
}

// sourceKind tells the sources a step reads apart without comparing
// strings.
type sourceKind uint8

const (
	kindOther sourceKind = iota
	kindTitle
	kindText
	kindFields
)

func kindOf(source string) sourceKind {
	switch source {
	case SourceTitle:
		return kindTitle
	case SourceText:
		return kindText
	case SourceFields:
		return kindFields
	}
	return kindOther
}

// alternative is one top-level branch of a pattern, numbered for the
// prefilter; re is nil for a branch of literals alone (Extractor.exact).
type alternative struct {
	pattern int
	re      *regexp.Regexp
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
	e := &Extractor{norm: newNormalizer(), cache: newDNACache(dnaCacheEntries, dnaCacheBytes), attack: attack.Enterprise(), products: product.Default()}
	if names := rules.SecuritySources(); len(names) > 0 {
		l, err := e.products.With(names, "rules "+rules.Name())
		if err != nil {
			return nil, fmt.Errorf("rules %s: security_sources: %v: %w", rules.Name(), err, openrecall.ErrInvalid)
		}
		e.products = l
	}
	seen := map[string]bool{}
	var literals []literalSet
	for i, field := range openrecall.FingerprintFields {
		cf, err := compileField(rules, field, &literals)
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
	e.sources = append(e.sources, SourceEnvironment, SourceService)
	e.labelSrc = make(map[string]int, len(e.labels))
	for _, l := range e.labels {
		e.labelSrc[l] = len(e.sources)
		e.sources = append(e.sources, SourceLabelPrefix+l)
	}
	for i := range e.fields {
		for j := range e.fields[i].steps {
			st := &e.fields[i].steps[j]
			st.src = slices.Index(e.sources, st.source)
		}
	}
	e.patterns = len(literals)
	words := max(1, (e.patterns+63)/64)
	e.always, e.exact = make([]uint64, words), make([]uint64, words)
	e.clauses = make([][][]int, e.patterns)
	e.single = make([]int, e.patterns)
	// kinds[p] marks the kinds of source pattern p runs on.
	kinds := make([][3]bool, e.patterns)
	for i := range e.fields {
		for _, st := range e.fields[i].steps {
			for _, a := range st.alts {
				kinds[a.pattern][prefixOf(st.kind)] = true
			}
		}
	}
	var sets [][]string
	var setKinds [][3]bool
	for p, ls := range literals {
		if ls.clauses == nil {
			e.always[p/64] |= 1 << (p % 64)
		}
		if ls.exact {
			e.exact[p/64] |= 1 << (p % 64)
		}
		for _, c := range ls.clauses {
			var ids []int
			for _, set := range c {
				ids = append(ids, len(sets))
				sets = append(sets, set)
				setKinds = append(setKinds, kinds[p])
			}
			e.clauses[p] = append(e.clauses[p], ids)
		}
		e.single[p] = -1
		if len(e.clauses[p]) == 1 && len(e.clauses[p][0]) == 1 {
			e.single[p] = e.clauses[p][0][0]
		}
	}
	for k := range e.prefix {
		only := make([][]string, len(sets))
		for g, set := range sets {
			if setKinds[g][k] {
				only[g] = set
			}
		}
		e.prefix[k] = newMatcher(only)
	}
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
	pattern  int
	alts     []alternative
	value    string
}

// compileField compiles the rules of one field into steps. Each pattern gets
// the next number and its literal set appended to literals.
func compileField(rules *Rules, field string, literals *[]literalSet) (compiledField, error) {
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
		list = append(list, rule{name: "table " + t.name, sources: t.sources, fallback: t.fallback != nil && *t.fallback, table: t.values, pattern: -1})
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
		var alts []alternative
		for _, alt := range alternativesOf(re) {
			ls := patternLiterals(alt)
			*literals = append(*literals, ls)
			if ls.exact {
				alt = nil // its literals found are its match: it never runs
			}
			alts = append(alts, alternative{pattern: len(*literals) - 1, re: alt})
		}
		list = append(list, rule{name: "pattern " + p.name, sources: sources, fallback: p.fallback != nil && *p.fallback, re: re,
			pattern: alts[0].pattern, alts: alts, value: p.value})
	}
	for _, fallback := range []bool{false, true} {
		for _, src := range sourceOrder(list, fallback) {
			for _, r := range list {
				if r.fallback != fallback || !slices.Contains(r.sources, src) {
					continue
				}
				cf.steps = append(cf.steps, step{source: src, kind: kindOf(src), rule: r.name, table: r.table, re: r.re, pattern: r.pattern, alts: r.alts, value: r.value})
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
	// raw holds the lowercased, trimmed value and name the same without a
	// pod hash or ordinal, of each of Extractor.sources ("" when absent).
	raw, name []string
	// both holds raw and name, from Extractor.inputs.
	both   *[]string
	title  string
	text   string
	fields string // SourceFields, when a rule reads it
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
	n := len(e.sources)
	both, _ := e.inputs.Get().(*[]string)
	if both == nil {
		b := make([]string, 2*n)
		both = &b
	}
	in := input{raw: (*both)[:n:n], name: (*both)[n:], both: both}
	// The host an adapter says the alert fired on is evidence (DESIGN §4):
	// masked wherever it is written (in each label value, the title, the
	// text and the fields, as capped; never in the service or the
	// environment, which name what the alert is about), so that
	// one check on db-1 and on db-2 keeps one Alert DNA, and a host named
	// after a database is no database failure.
	host := a.Host()
	if strings.EqualFold(host, a.Service) {
		host = "" // the sender names the service as its source: no host
	}
	set := func(i int, v string) {
		if v = strings.TrimSpace(capField(v)); v != "" {
			in.raw[i] = strings.ToLower(v)
			in.name[i] = nameOf(in.raw[i])
		}
	}
	// sources starts with the environment and the service, then the labels.
	set(0, a.Environment)
	set(1, a.Service)
	for k, v := range a.Labels {
		if i, ok := e.labelSrc[k]; ok {
			set(i, maskHost(capField(v), host))
		}
	}
	// The title, the text's parts and the field values repeat one another
	// (the title is often the summary, which is in the text and the
	// fields): each distinct line is normalized once.
	var memo partMemo
	var buf [16]string
	in.title = memo.get(e.norm, maskHost(capField(a.Title), host)).norm
	in.text = e.normalizeLines(&memo, maskHosts(alertText(a, buf[:0]), host), false)
	if e.fieldsRead {
		in.fields = e.normalizeLines(&memo, maskHosts(alertFields(a, buf[:0]), host), true)
	}
	return in
}

// partMemo holds the lines of one alert normalized so far.
type partMemo struct {
	parts []normPart
	buf   [8]normPart
}

// get returns s normalized alone, normalizing it when it is new.
func (m *partMemo) get(n *normalizer, s string) normPart {
	for _, p := range m.parts {
		if p.raw == s {
			return p
		}
	}
	if m.parts == nil {
		m.parts = m.buf[:0]
	}
	p := n.part(s)
	m.parts = append(m.parts, p)
	return p
}

// normalizeLines returns what normalize returns for the lines joined with
// "\n" (and ended with one when terminated), from each line normalized
// alone, or from the joined text when a line's numbers could read across a
// line break (normPart's head and tail; after the last line there is at most
// a newline, which reads as the end of the text).
func (e *Extractor) normalizeLines(memo *partMemo, lines []string, terminated bool) string {
	if len(lines) == 0 {
		return ""
	}
	if len(lines) == 1 && !terminated {
		return memo.get(e.norm, lines[0]).norm
	}
	size := len(lines)
	for i, l := range lines {
		p := memo.get(e.norm, l)
		if i > 0 && p.head || i < len(lines)-1 && p.tail {
			joined := strings.Join(lines, "\n")
			if terminated {
				joined += "\n"
			}
			return e.norm.normalize(joined)
		}
		size += len(p.norm)
	}
	var b strings.Builder
	b.Grow(size)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(memo.get(e.norm, l).norm)
	}
	if terminated {
		b.WriteByte('\n')
	}
	return b.String()
}

// release returns the source values of a prepared input, no longer read,
// to the pool.
func (e *Extractor) release(in *input) {
	clear(*in.both)
	e.inputs.Put(in.both)
	in.raw, in.name, in.both = nil, nil, nil
}

// appendKey appends to b the cache key of a prepared input: everything the
// rules read, each part preceded by its length, so that two inputs never
// share a key.
func (in *input) appendKey(b []byte) []byte {
	for _, v := range in.raw {
		b = appendPart(b, v)
	}
	b = appendPart(b, in.title)
	b = appendPart(b, in.text)
	return appendPart(b, in.fields)
}

func appendPart(b []byte, v string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// alertFields appends to dst every label and annotation value of a, capped,
// in key order: the lines of the fields source.
func alertFields(a openrecall.Alert, dst []string) []string {
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		var buf [16]string
		keys := buf[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			dst = append(dst, capField(m[k]))
		}
	}
	return dst
}

// alertText appends to dst the alert's text and its summary and description
// annotations, capped and trimmed, skipping empty parts and parts that
// repeat another: the lines of the text source.
func alertText(a openrecall.Alert, dst []string) []string {
	start := len(dst)
	for _, p := range []string{a.Text, a.Annotations["summary"], a.Annotations["description"]} {
		p = strings.TrimSpace(capField(p))
		if p != "" && !slices.Contains(dst[start:], p) {
			dst = append(dst, p)
		}
	}
	return dst
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
	// why says what makes the alert a security detection: its sender, a
	// security product a source-like field names, or its shape (DESIGN §4).
	why, ok := e.detection(a)
	switch {
	case ok:
		a.Security = true
	case a.Security:
		why = "security sender " + a.Sender
	}
	if a.Security && !withEvidence {
		// A detection's DNA drops what its evidence text alone says
		// (detectionDNA), which needs the evidence: computed uncached.
		fp, _ := e.explainAs(a, why, true)
		return fp, nil
	}
	return e.explainAs(a, why, withEvidence)
}

func (e *Extractor) explainAs(a openrecall.Alert, why string, withEvidence bool) (openrecall.Fingerprint, []Evidence) {
	in := e.prepare(a)
	var buf [2048]byte
	var key []byte
	cached := !withEvidence && !e.cache.off
	if !withEvidence && e.cache.off {
		e.cache.lookups.Add(1) // a miss, as get counts it, without its key
	}
	if cached {
		key = in.appendKey(buf[:0])
		if fp, ok := e.cache.get(key); ok {
			e.release(&in)
			e.applyAttack(a, why, &fp, nil)
			return fp, nil
		}
	}
	run := e.newRun(&in)
	var fp openrecall.Fingerprint
	var ev []Evidence
	for _, cf := range e.fields {
		evidenceOnly := a.Security && detectionField(cf.name)
		for i := range cf.steps {
			s := &cf.steps[i]
			if evidenceOnly && (s.kind == kindText || s.kind == kindFields) {
				continue // a detection's text is evidence (detectionField)
			}
			value, k, ok := run.match(s)
			if !ok {
				continue
			}
			fp, _ = fp.With(cf.name, value)
			if withEvidence {
				name := s.rule
				if k != "" {
					name += "[" + k + "]"
				}
				ev = append(ev, Evidence{Field: cf.name, Value: value, Rule: name, Source: s.source})
			}
			break
		}
	}
	if cached {
		e.cache.put(string(key), fp)
	}
	e.release(&in)
	if withEvidence {
		e.applyAttack(a, why, &fp, &ev)
	} else {
		e.applyAttack(a, why, &fp, nil)
	}
	return fp, ev
}

// run is the state of one extraction: the prefilter's verdicts per source,
// computed when a pattern first asks.
type run struct {
	e  *Extractor
	in *input
	// masks[i] are the literal sets found in source i of
	// Extractor.sources; the last three are title, text and fields. nil
	// until scanned.
	masks [][]uint64
	// triedTitle marks patterns already run on the title, when the text
	// is the same string (their text step would repeat the title's).
	triedTitle []uint64
	words      int
}

func (e *Extractor) newRun(in *input) *run {
	words := len(e.always)
	return &run{e: e, in: in, masks: make([][]uint64, len(e.sources)+3), triedTitle: make([]uint64, words), words: words}
}

// mask returns the prefilter's verdicts on source i (len(sources) for the
// title, one more for the text, two more for the fields) over the string s.
func (r *run) mask(i int, s string) []uint64 {
	if m := r.masks[i]; m != nil {
		return m
	}
	title := len(r.e.sources)
	if i == title+1 && r.in.text == r.in.title && r.masks[title] != nil {
		r.masks[i] = r.masks[title]
		return r.masks[i]
	}
	k := prefixLabels
	switch {
	case i == title+2:
		k = prefixFields
	case i >= title:
		k = prefixTitleText
	}
	m := make([]uint64, r.e.prefix[k].words)
	r.e.prefix[k].scan(s, m)
	r.masks[i] = m
	return m
}

// The automata of Extractor.prefix, by kind of source.
const (
	prefixLabels    = iota // the environment, the service and the labels
	prefixTitleText        // the title and the text
	prefixFields           // the fields
)

// prefixOf returns the automaton of Extractor.prefix for a kind of source.
func prefixOf(k sourceKind) int {
	switch k {
	case kindTitle, kindText:
		return prefixTitleText
	case kindFields:
		return prefixFields
	}
	return prefixLabels
}

// allowed reports whether the prefilter lets pattern p run on a string
// holding the literal sets found: p has no required literal, or one of its
// clauses holds.
func (e *Extractor) allowed(p int, found []uint64) bool {
	if g := e.single[p]; g >= 0 {
		return found[g/64]&(1<<(g%64)) != 0
	}
	if e.always[p/64]&(1<<(p%64)) != 0 {
		return true
	}
	for _, c := range e.clauses[p] {
		all := true
		for _, g := range c {
			if found[g/64]&(1<<(g%64)) == 0 {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// runPattern applies pattern step s to the string v of source i: it
// matches when one of its alternatives does. An alternative the prefilter
// rules out is skipped; one made of literals alone matches when the
// prefilter found one, so those are looked at before any regex runs.
func (r *run) runPattern(s *step, i int, v string) bool {
	found := r.mask(i, v)
	// run marks the alternatives (the first 64) whose regex must run; one
	// past the 64th is judged again in the second pass.
	var run uint64
	regex := false
	for j, a := range s.alts {
		if !r.e.allowed(a.pattern, found) {
			continue
		}
		if r.e.exact[a.pattern/64]&(1<<(a.pattern%64)) != 0 {
			return true
		}
		if j < 64 {
			run |= 1 << j
		}
		regex = true
	}
	if !regex {
		return false
	}
	for j, a := range s.alts {
		if j < 64 {
			if run&(1<<j) == 0 {
				continue
			}
		} else if r.e.exact[a.pattern/64]&(1<<(a.pattern%64)) != 0 || !r.e.allowed(a.pattern, found) {
			continue
		}
		if a.re.MatchString(v) {
			return true
		}
	}
	return false
}

// match applies one step to the prepared input and returns the value and, for
// a table, the key as written in the rules.
func (r *run) match(s *step) (value, key string, ok bool) {
	in := r.in
	switch s.kind {
	case kindTitle, kindText, kindFields:
		if s.re == nil {
			return "", "", false
		}
		title := len(r.e.sources)
		text, i := in.title, title
		switch s.kind {
		case kindText:
			text, i = in.text, title+1
			bit, w := uint64(1)<<(s.pattern%64), s.pattern/64
			if r.triedTitle[w]&bit != 0 && in.text == in.title {
				return "", "", false // the title step found no match in this same string
			}
		case kindFields:
			text, i = in.fields, title+2
		default:
			r.triedTitle[s.pattern/64] |= 1 << (s.pattern % 64)
		}
		if text != "" && r.runPattern(s, i, text) {
			return s.value, "", true
		}
		return "", "", false
	}
	if s.src < 0 || in.raw[s.src] == "" {
		return "", "", false
	}
	raw, name := in.raw[s.src], in.name[s.src]
	if s.table != nil {
		for _, k := range []string{raw, name} {
			if ent, found := s.table[k]; found && ent.value != "" {
				return ent.value, ent.key, true
			}
		}
		return "", "", false
	}
	if s.re != nil && r.runPattern(s, s.src, name) {
		return s.value, "", true
	}
	return "", "", false
}

// Normalized returns the alert's title, text and fields as the patterns read
// them: the title normalized as Normalize does; the text (the alert's text,
// summary and description, trimmed, without repeats) and the fields (every
// label and annotation value in key order, each on its own line) joined with
// newlines and normalized as Normalize does the joined string. fields is
// empty when no rule reads it.
func (e *Extractor) Normalized(a openrecall.Alert) (title, text, fields string) {
	in := e.prepare(a)
	return in.title, in.text, in.fields
}

// Name returns a label, service or environment value as the rules read it:
// lowercased, trimmed, and without a trailing pod hash or ordinal
// (checkout-api-7d9f8c6b5-x2x9z and postgres-primary-0 read as checkout-api
// and postgres-primary; a hash without a digit is a word and stays).
func (e *Extractor) Name(v string) string {
	return e.norm.name(v)
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
