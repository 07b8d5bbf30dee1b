package sender

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/openrecall/openrecall"
)

// scope is one alert being read by a mapping: the payload, the alert (the
// payload, or an element of its items), its tags and its lets as far as
// they are computed. It belongs to one reading.
type scope struct {
	m          *mapping
	root, item Value
	// env is the expressions' environment, filled at the first
	// expression (envReady); env and machine are kept with the scope for
	// its next use.
	env      map[string]any
	envReady bool
	machine  vm.VM
	lets     []letValue
	tags     []tag
	tagText  []string
	tagFrom  string
	// pairs are the alert's pairs by key, read at the first pair.
	pairs     map[string]Value
	pairsRead bool
	// top says the alert is the payload itself (keys: fold reads its
	// members folded); foldIndex are the payload's members by folded
	// name, read at the first folded path.
	top       bool
	foldIndex map[string]string
}

// letValue is a let's value in one scope, once computed.
type letValue struct {
	v      any
	origin string
	done   bool
}

// tag is one of an alert's tags: its key lowercased, its value as the
// mapping reads values, and its text.
type tag struct{ key, value, text string }

// newScope returns a scope of the mapping for an alert, reused when one
// is free; release it when done.
func (m *mapping) newScope(root, item Value) *scope {
	s, ok := m.scopes.Get().(*scope)
	if !ok {
		s = &scope{m: m, lets: make([]letValue, len(m.lets))}
	}
	s.root, s.item = root, item
	s.top = m.foldKeys && sameObject(root, item)
	return s
}

// release makes the scope free for another alert: nothing read from it
// (strings, fresh maps) refers to it.
func (s *scope) release() {
	clear(s.lets)
	clear(s.env)
	s.envReady = false
	s.root, s.item = Value{}, Value{}
	s.tags, s.tagText, s.tagFrom = nil, nil, ""
	clear(s.pairs)
	s.pairsRead = false
	s.top, s.foldIndex = false, nil
	s.m.scopes.Put(s)
}

// match reports whether v is the mapping's payload: every condition of
// recognise holds (only the lets and tags those read are computed).
func (m *mapping) match(v Value) bool {
	v = m.decoded(v)
	s := m.newScope(v, v)
	defer s.release()
	if m.matchTags {
		s.readTags()
	}
	for _, i := range m.matchLets {
		s.let(i)
	}
	for i := range m.recognise {
		if !s.holds(&m.recognise[i]) {
			return false
		}
	}
	return true
}

// openEnvelope is the Sender's Open: the payload at open's path (with
// decode: json, the object its text holds), when open's conditions hold.
func (m *mapping) openEnvelope(v Value) (Value, bool) {
	s := m.newScope(v, v)
	defer s.release()
	if !s.holdsAll(m.openWhen) {
		return Value{}, false
	}
	if m.openDecode {
		return decodeObject(s.at(*m.open))
	}
	return s.at(*m.open), true
}

// read reads a payload into its events: one per item (the payload itself
// when the mapping names no items). A payload whose items path holds no
// array and no object carries no alert.
func (m *mapping) read(v Value) ([]Event, error) {
	v = m.decoded(v)
	if len(m.reject) > 0 {
		s := m.newScope(v, v)
		for _, r := range m.reject {
			if s.holdsAll(r.when) {
				reason, _ := s.run(r.reason).(string)
				s.release()
				if reason == "" {
					reason = "the payload carries no alert"
				}
				return nil, errors.New(reason)
			}
		}
		s.release()
	}
	items := []Value{v}
	prefix := ""
	if m.items != nil {
		s := m.newScope(v, v)
		self := m.self && s.holdsAll(m.only)
		x, from := s.itemsAt()
		s.release()
		switch {
		case self:
		case m.one:
			if !x.IsObject() {
				x = Value{}
			}
			items = []Value{x}
			if m.itemOrigin {
				prefix = from + "."
			}
		case x.IsArray():
			items = x.Elements()
			if m.itemOrigin {
				prefix = from + "[]."
			}
		case x.IsObject():
			items = []Value{x}
			if m.itemOrigin {
				prefix = from + "."
			}
		default:
			return nil, nil
		}
		if !self && !m.one && m.only != nil {
			kept := items[:0:0]
			for _, it := range items {
				s := m.newScope(v, it)
				if s.holdsAll(m.only) {
					kept = append(kept, it)
				}
				s.release()
			}
			items = kept
		}
	}
	events := make([]Event, 0, len(items))
	for _, it := range items {
		s := m.newScope(v, it)
		e := s.event()
		s.release()
		itemOrigins(&e, prefix)
		events = append(events, e)
	}
	return events, nil
}

// itemsAt reads the items path: the first of items' paths (from: a list)
// that holds an array or an object, and that path; else the last's.
func (s *scope) itemsAt() (Value, string) {
	x, from := s.at(*s.m.items), s.m.items.path
	for _, p := range s.m.itemsElse {
		if x.IsArray() || x.IsObject() {
			break
		}
		x, from = s.at(p), p.path
	}
	return x, from
}

// event reads the scope's alert.
func (s *scope) event() Event {
	m := s.m
	if m.tags != nil {
		s.readTags()
	}
	for i := range m.lets {
		s.let(i)
	}
	var e Event
	for _, p := range []struct {
		part string
		from []source
	}{
		{PartTitle, m.title}, {PartSeverity, m.severity}, {PartService, m.service},
		{PartEnvironment, m.environment}, {PartRule, m.rule}, {PartID, m.id},
	} {
		if v, origin := s.first(p.from); v != "" {
			e.Set(p.part, v, origin)
		}
	}
	e.Text, _ = s.first(m.text)
	e.Host, _ = s.first(m.host)
	e.Fingerprint, _ = s.first(m.fingerprint)
	for i := range m.timestamp {
		src := &m.timestamp[i]
		if src.when != nil && !s.truth(src.when) {
			continue
		}
		if e.Timestamp = s.timeOf(src); !e.Timestamp.IsZero() {
			break
		}
	}
	e.Status = openrecall.StatusFiring
	for _, r := range m.status {
		if r.from != nil {
			v, _ := s.first(r.from)
			e.Status = Status(v)
			break
		}
		if s.holdsAny(r.any) {
			e.Status = r.status
			break
		}
	}
	s.labels(m.labels, e.Label, func(k, v string) { setLabel(&e.Labels, k, v, true) })
	s.labels(m.entities, e.Entity, nil)
	s.labels(m.annotations, e.Annotate, func(k, v string) { setLabel(&e.Annotations, k, v, true) })
	for _, r := range m.links {
		if v := s.firstLink(r.from); v != "" {
			if e.Links == nil {
				e.Links = map[string]string{}
			}
			e.Links[r.key] = v
		}
	}
	return e
}

// labels applies label rules (of labels, entities or annotations) through
// set, and a rule's members copied as sent (blank: keep) through sent.
func (s *scope) labels(rules []labelRule, set, sent func(key, value string)) {
	for _, r := range rules {
		switch {
		case r.keepOne:
			s.keptLabel(&r, sent)
		case r.tags:
			for _, t := range s.tags {
				if t.key == "" || !r.chosen(t.key) {
					continue
				}
				v := t.value
				if v == "" && !r.blank {
					v = "true"
				}
				set(strings.Replace(r.key, "*", t.key, 1), v)
			}
		case r.list != nil:
			items, _ := s.run(r.list).([]any)
			if items == nil {
				if ss, ok := s.run(r.list).([]string); ok {
					for _, x := range ss {
						items = append(items, x)
					}
				}
			}
			for _, x := range items {
				t, _ := x.(string)
				k, v, ok := strings.Cut(strings.TrimSpace(t), ":")
				if k = strings.TrimSpace(k); ok && k != "" && r.chosen(k) {
					set(strings.Replace(r.key, "*", k, 1), v)
				}
			}
		case r.asSent:
			obj := s.at(*r.each)
			for _, k := range obj.Keys() {
				if x := obj.Get(k); !x.IsNull() {
					sent(strings.Replace(r.key, "*", k, 1), x.Text())
				}
			}
		case r.every != nil:
			s.everyLabels(&r, set)
		case r.each != nil && r.hasJoin:
			obj := s.at(*r.each)
			for _, k := range obj.Keys() {
				if !r.chosen(k) {
					continue
				}
				if x := obj.Get(k); x.IsArray() {
					set(strings.Replace(r.key, "*", k, 1), strings.Join(x.Strings(), r.join))
				} else {
					set(strings.Replace(r.key, "*", k, 1), s.read(x))
				}
			}
		case r.each != nil:
			labels := s.at(*r.each).Labels()
			keys := make([]string, 0, len(labels))
			for k := range labels {
				if r.chosen(k) {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				set(strings.Replace(r.key, "*", k, 1), labels[k])
			}
		default:
			v, _ := s.first(r.from)
			set(r.key, v)
		}
	}
}

// chosen reports whether a key with "*" copies the member (tag) named k.
func (r *labelRule) chosen(k string) bool {
	return (r.keys == nil || r.keys.MatchString(k)) && !excluded(k, r.except)
}

// pluck is the expressions' pluck(path): the non-blank scalars at path,
// "[]" every element of an array.
func (s *scope) pluck(path string) []string {
	steps, ok := s.m.plucks[path]
	if !ok {
		var err error
		if steps, err = parsePluck(path); err != nil {
			return []string{}
		}
	}
	vals := []Value{s.at(steps[0])}
	for _, st := range steps[1:] {
		var next []Value
		for _, v := range vals {
			for _, el := range v.Elements() {
				next = append(next, readPath(el, st))
			}
		}
		vals = next
	}
	out := []string{}
	for _, v := range vals {
		if x := s.read(v); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// at reads a path of the mapping.
func (s *scope) at(p fieldPath) Value {
	base := s.item
	if p.root {
		base = s.root
	}
	if s.folds(p) {
		p, _ = s.foldPath(p)
	}
	return readPath(base, p)
}

// readPath reads a path from base.
func readPath(base Value, p fieldPath) Value {
	if p.path == "" {
		return base
	}
	if p.steps == nil {
		return base.path(p.parts)
	}
	v := base
	for _, st := range p.steps {
		if len(st.parts) > 0 {
			v = v.path(st.parts)
		}
		if st.index >= 0 {
			v = v.At(st.index)
		}
	}
	return v
}

// atText reads a path given to an expression function: one the mapping
// wrote as a constant is parsed already.
func (s *scope) atText(path string) Value {
	p, ok := s.m.paths[path]
	if !ok {
		var err error
		if p, err = parsePath(path); err != nil {
			return Value{}
		}
	}
	return s.at(p)
}

// read returns a scalar as text, as the mapping reads values: an
// unrendered placeholder is blank unless the mapping keeps them.
func (s *scope) read(v Value) string {
	out := v.String()
	if s.m.joinArrays && v.IsArray() {
		out = joined(v)
	}
	if !s.m.keep {
		out = Rendered(out)
	}
	if len(s.m.blanks) > 0 && slices.Contains(s.m.blanks, strings.TrimSpace(out)) {
		return ""
	}
	for _, re := range s.m.blankRes {
		if re.MatchString(strings.TrimSpace(out)) {
			return ""
		}
	}
	return out
}

// pair reads the pair of key: the value of the first element of the pairs
// with that key, else the alert's own member of that name; its origin is
// the member's name when the alert has it, else the pairs' path and key.
func (s *scope) pair(key string) (Value, string) {
	ps := s.m.pairs
	origin := ps.from.path + "." + key
	if s.item.Has(key) {
		origin = key
	}
	if !s.pairsRead {
		s.pairsRead = true
		if s.pairs == nil {
			s.pairs = map[string]Value{}
		}
		for _, el := range s.at(ps.from).Elements() {
			k := strings.TrimSpace(el.Get(ps.key).String())
			if _, dup := s.pairs[k]; !dup {
				s.pairs[k] = el.Get(ps.value)
			}
		}
	}
	if x, ok := s.pairs[key]; ok {
		return x, origin
	}
	if key == ps.from.path {
		return Value{}, origin
	}
	return s.item.Get(key), origin
}

// str is the expressions' str(path).
func (s *scope) str(path string) string { return s.read(s.atText(path)) }

// text is the expressions' text(path).
func (s *scope) text(path string) string {
	v := s.atText(path)
	if v.IsObject() || v.IsArray() {
		return v.Compact()
	}
	return s.read(v)
}

// first returns the first candidate that applies and gives a non-blank
// value, trimmed, and the origin it names; "" and "" when none does.
func (s *scope) first(list []source) (string, string) {
	for i := range list {
		if v, origin := s.candidate(&list[i]); v != "" {
			return v, origin
		}
	}
	return "", ""
}

// firstLink returns the first candidate that gives a link (isLink).
func (s *scope) firstLink(list []source) string {
	for i := range list {
		if v, _ := s.candidate(&list[i]); v != "" && isLink(v) {
			return v
		}
	}
	return ""
}

// candidate reads one candidate: its value trimmed ("" when it does not
// apply) and its origin.
func (s *scope) candidate(src *source) (string, string) {
	if src.each != nil {
		return s.eachCandidate(src)
	}
	if src.when != nil && !s.truth(src.when) {
		return "", ""
	}
	v, origin := s.value(src)
	if src.table != nil {
		v = src.table[strings.TrimSpace(v)]
	}
	if src.then != nil && strings.TrimSpace(v) != "" {
		v = s.runThen(src.then, v)
	}
	switch {
	case src.origin != nil:
		origin, _ = s.run(src.origin).(string)
	case src.hasAs:
		origin = src.as
	}
	return strings.TrimSpace(v), origin
}

// eachCandidate reads a candidate with each element of its array as the
// alert: the first (or last) non-blank value, and its origin.
func (s *scope) eachCandidate(src *source) (string, string) {
	inner := *src
	inner.each = nil
	var v, origin string
	x := s.at(*src.each)
	if src.decode {
		x = decodeArray(x)
	}
	keys := x.Keys()
	n := len(keys)
	if keys == nil {
		n = x.Len()
	}
	for i := 0; i < n; i++ {
		var el Value
		var key string
		if keys != nil {
			key, el = keys[i], x.Get(keys[i])
		} else {
			key, el = strconv.Itoa(i), x.At(i)
		}
		sub := s.m.newScope(s.root, el)
		sub.run(nil) // the environment ready for key
		sub.env[eachKey] = key
		y, o := sub.candidate(&inner)
		delete(sub.env, eachKey)
		sub.release()
		if y != "" {
			if keys != nil && inner.kind == srcPath && inner.path.path == "" && !inner.hasAs {
				// A member's own value names the member.
				o = src.each.path + "." + key
			}
			v, origin = y, o
			if !src.last {
				break
			}
		}
	}
	return v, origin
}

// decodeArray reads an array sent as JSON text ("[…]", as the
// SecurityAlert table holds Entities) as that array; any other value is
// returned as it is.
func decodeArray(x Value) Value {
	t := strings.TrimSpace(x.String())
	if !x.IsString() || !strings.HasPrefix(t, "[") {
		return x
	}
	if parsed, err := Parse([]byte(t)); err == nil && parsed.IsArray() {
		return parsed
	}
	return x
}

// decodeObject reads an object sent as JSON text ("{…}"), and whether the
// text was one.
func decodeObject(x Value) (Value, bool) {
	t := strings.TrimSpace(x.String())
	if !x.IsString() || !strings.HasPrefix(t, "{") {
		return Value{}, false
	}
	if parsed, err := Parse([]byte(t)); err == nil && parsed.IsObject() {
		return parsed, true
	}
	return Value{}, false
}

// value reads a candidate's value and origin.
func (s *scope) value(src *source) (string, string) {
	switch src.kind {
	case srcPath:
		return s.read(s.at(src.path)), s.originOf(src.path)
	case srcLet:
		v, _ := s.lets[src.let].v.(string)
		return v, s.lets[src.let].origin
	case srcExpr:
		v, _ := s.run(src.prog).(string)
		return v, ""
	case srcValue:
		return src.value, ""
	case srcOf:
		// Every part present (and rendered), or none: SetID's rule.
		parts := make([]string, len(src.parts))
		origins := make([]string, len(src.parts))
		for i, p := range src.parts {
			v, o := s.first(p)
			if parts[i] = Rendered(v); parts[i] == "" {
				return "", ""
			}
			origins[i] = o
		}
		return src.prefix + strings.Join(parts, src.sep), strings.Join(origins, "+")
	case srcJoin:
		texts := make([]string, 0, len(src.parts)+1)
		for _, p := range src.parts {
			v, _ := s.first(p)
			texts = append(texts, v)
		}
		if len(src.lines) > 0 {
			pairs := make([][2]string, 0, len(src.lines))
			for _, l := range src.lines {
				if l.list != nil {
					pairs = s.exprLines(l, pairs)
					continue
				}
				if l.each != nil {
					pairs = s.eachLine(l, pairs)
					continue
				}
				v, _ := s.first(l.from)
				pairs = append(pairs, [2]string{l.key, v})
			}
			texts = append(texts, Evidence(pairs...))
		}
		return JoinText(texts...), ""
	case srcPair:
		for _, k := range src.keys {
			x, origin := s.pair(k)
			if v := s.read(x); v != "" {
				return v, origin
			}
		}
	case srcMember:
		origin := src.value
		if src.path.path != "" {
			origin = src.path.path + "." + src.value
		}
		return s.read(s.at(src.path).Get(src.value)), origin
	case srcTag:
		for _, t := range s.tags {
			if t.value != "" && slices.Contains(src.keys, t.key) {
				return t.value, s.tagFrom
			}
		}
	}
	return "", ""
}

// eachLine appends an evidence line per member of l's object, in name
// order: scalars as sent, an array's scalars joined by ", "; objects,
// blanks and the members l leaves out are skipped, and at most l.limit
// lines are added.
func (s *scope) eachLine(l evidence, pairs [][2]string) [][2]string {
	obj := s.at(*l.each)
	n := 0
	if l.flatten {
		walk := 0
		if len(l.except) == 0 {
			walk = l.limit
		}
		for _, p := range obj.Scalars(walk) {
			if l.limit > 0 && n >= l.limit {
				break
			}
			if !excluded(p[0], l.except) {
				// A skipped value counts toward the limit.
				if !slices.Contains(l.skip, p[1]) {
					pairs = append(pairs, [2]string{strings.Replace(l.key, "*", p[0], 1), p[1]})
				}
				n++
			}
		}
		return pairs
	}
	if l.kvKey != "" {
		for _, el := range obj.Elements() {
			if l.limit > 0 && n >= l.limit {
				break
			}
			k := el.Get(l.kvKey).String()
			if excluded(k, l.except) {
				continue
			}
			if v := el.Get(l.kvValue).String(); strings.TrimSpace(v) != "" && !slices.Contains(l.skip, strings.TrimSpace(v)) {
				pairs = append(pairs, [2]string{strings.Replace(l.key, "*", k, 1), v})
				n++
			}
		}
		return pairs
	}
	for _, k := range obj.Keys() {
		if l.limit > 0 && n >= l.limit {
			break
		}
		if excluded(k, l.except) {
			continue
		}
		x := obj.Get(k)
		v := x.String()
		if x.IsArray() {
			v = strings.Join(x.Strings(), ", ")
		}
		if strings.TrimSpace(v) != "" && !slices.Contains(l.skip, strings.TrimSpace(v)) {
			pairs = append(pairs, [2]string{strings.Replace(l.key, "*", k, 1), v})
			n++
		}
	}
	return pairs
}

// excluded reports whether a member name is among names: a name ending
// in * is a prefix.
func excluded(k string, names []string) bool {
	for _, x := range names {
		if p, ok := strings.CutSuffix(x, "*"); ok && strings.HasPrefix(k, p) || x == k {
			return true
		}
	}
	return false
}

// runThen runs a then expression on a candidate's value.
func (s *scope) runThen(p *vm.Program, v string) string {
	s.run(nil) // the environment ready
	s.env[thenVar] = v
	out, _ := s.run(p).(string)
	delete(s.env, thenVar)
	return out
}

// timeOf reads a timestamp candidate: a path as Value.Time reads it, any
// other candidate's text as ParseTime does; the zero time when none.
func (s *scope) timeOf(src *source) time.Time {
	if src.unixMs {
		if t, ok := s.unixTimeOf(src); ok {
			return t
		}
	}
	if src.each != nil {
		v, _ := s.candidate(src)
		t, _ := ParseTime(v)
		return t
	}
	if src.kind == srcPath {
		return s.at(src.path).Time()
	}
	v, _ := s.value(src)
	t, _ := ParseTime(v)
	return t
}

// let computes let i (once).
func (s *scope) let(i int) {
	lv := &s.lets[i]
	if lv.done {
		return
	}
	lv.done = true
	lt := &s.m.lets[i]
	if lt.prog != nil {
		v := s.run(lt.prog)
		if v == nil {
			v = zeroOf(lt.typ)
		}
		lv.v, lv.origin = v, lt.as
	} else {
		v, origin := s.first(lt.list)
		lv.v, lv.origin = v, origin
	}
	if s.envReady && lt.inEnv {
		s.env[lt.name] = lv.v
	}
}

// readTags reads the alert's tags: from the first of the tag paths that
// holds an array, or text.
func (s *scope) readTags() {
	t := s.m.tags
	s.tags, s.tagText = nil, []string{}
	for _, p := range t.from {
		v := s.at(p)
		var found bool
		switch {
		case v.IsArray() && t.key != "":
			found = true
			for _, el := range v.Elements() {
				name := strings.TrimSpace(el.Path(t.key).String())
				val := strings.TrimSpace(s.read(el.Path(t.value)))
				text := name
				if val != "" {
					text += ":" + val
				}
				s.tags = append(s.tags, tag{key: strings.ToLower(name), value: val, text: text})
			}
		case v.IsArray() || Rendered(v.String()) != "" && t.key == "":
			found = true
			for _, x := range listOf(v) {
				k, val, _ := strings.Cut(x, ":")
				s.tags = append(s.tags, tag{key: strings.ToLower(strings.TrimSpace(k)), value: strings.TrimSpace(s.readText(val)), text: x})
			}
		}
		if found {
			s.tagFrom = p.path
			if t.as != "" {
				s.tagFrom = t.as
			}
			break
		}
	}
	for _, tg := range s.tags {
		s.tagText = append(s.tagText, tg.text)
	}
	if s.envReady && s.m.envTags {
		s.env["tags"] = s.tagText
	}
}

// readText reads text found inside a value (a tag's value) as the mapping
// reads values.
func (s *scope) readText(v string) string {
	if s.m.keep {
		return v
	}
	return Rendered(v)
}

// holds reports whether a condition holds.
func (s *scope) holds(c *cond) bool {
	switch c.kind {
	case condExpr:
		return s.truth(c.prog)
	case condHas:
		for _, p := range c.paths {
			if s.at(p).IsNull() {
				return false
			}
		}
		return true
	case condIs:
		for i, p := range c.paths {
			if kindOf(s.at(p)) != c.kinds[i] {
				return false
			}
		}
		return true
	case condEquals, condOneOf:
		for i, f := range c.fields {
			v, _ := s.first(f)
			if !slices.Contains(c.values[i], FoldLevel(v)) {
				return false
			}
		}
		return true
	case condAny:
		return s.holdsAny(c.sub)
	case condAll:
		for i := range c.sub {
			if !s.holds(&c.sub[i]) {
				return false
			}
		}
		return true
	case condNot:
		return !s.holds(&c.sub[0])
	}
	return false
}

// holdsAll reports whether every condition holds.
func (s *scope) holdsAll(cs []cond) bool {
	for i := range cs {
		if !s.holds(&cs[i]) {
			return false
		}
	}
	return true
}

func (s *scope) holdsAny(cs []cond) bool {
	for i := range cs {
		if s.holds(&cs[i]) {
			return true
		}
	}
	return false
}

// truth runs a condition's program: an error or another result is false.
func (s *scope) truth(p *vm.Program) bool {
	b, _ := s.run(p).(bool)
	return b
}

// run runs a program on the scope; an error at run time (an index out of
// range, a nil where a value was wanted) gives nil, read as blank or false:
// a payload is never rejected for what an expression made of it.
func (s *scope) run(p *vm.Program) any {
	if !s.envReady {
		// Only the names some expression reads.
		if s.env == nil {
			s.env = make(map[string]any, s.m.envSize)
		}
		s.envReady = true
		s.env[scopeVar] = s
		if s.m.envTags {
			s.env["tags"] = s.tagText
		}
		for i := range s.m.lets {
			if lt := &s.m.lets[i]; lt.inEnv {
				if s.lets[i].done {
					s.env[lt.name] = s.lets[i].v
				} else {
					s.env[lt.name] = zeroOf(lt.typ)
				}
			}
		}
	}
	if p == nil {
		return nil
	}
	out, err := s.machine.Run(p, s.env)
	if err != nil {
		return nil
	}
	return out
}
