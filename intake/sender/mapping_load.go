package sender

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
)

// mapping is a compiled mapping file: every path checked, every expression
// compiled, nothing left to parse while reading an alert. It is immutable
// once parseMapping returns.
type mapping struct {
	file     string
	name     string
	nameLine int
	display  string
	security bool
	episode  bool
	// keep says values read by a path are kept as sent, template
	// placeholders too (placeholders: keep); by default a placeholder the
	// sender left unrendered reads as blank (Rendered).
	keep bool
	// foldKeys says the payload's own member names are matched folded
	// (keys: fold; foldKey).
	foldKeys bool
	// decode are the members (keys, one a level) read as the object whose
	// JSON text they hold (decode: …).
	decode [][]string
	levels []string
	scale  Scale
	// ranges are the severity table's ranges of whole numbers ("4..":
	// 4 and above), tried when the table lacks a value.
	ranges []sevRange
	// globs are the table's keys with a * at one end ("apm.*",
	// "*.fired"), tried in order when no value matches.
	globs []sevGlob
	doc   Doc
	// reject are the payloads recognised that carry no alert, and why.
	reject []rejectRule
	// open is the envelope's content, opened when openWhen holds.
	open     *fieldPath
	openWhen []cond
	// openDecode says open's path holds the payload as JSON text (an SNS
	// notification's Message): the object it encodes.
	openDecode bool
	// blanks are the values (trimmed, as written) a path reads as blank:
	// the sender's word for "none" ("-", "N/A").
	blanks []string
	// blankRes are the patterns of values that read as blank.
	blankRes []*regexp.Regexp
	// pairs are where the alert's key/value pairs are (pairs: …).
	pairs *pairSpec
	// memberNames are the member names {member: name, in: path}
	// candidates read, by the path as written, in the order first read.
	memberNames map[string][]string

	recognise []cond
	items     *fieldPath
	// itemsElse are items' other paths (from: a list), tried in order
	// when the one before holds no array and no object.
	itemsElse []fieldPath
	// only are the conditions an element of items holds to be an alert
	// (read with the element as the alert); self says a payload that
	// holds them is itself the one alert; origin says the origins of an
	// item's parts start with the items path ("data[]." for an element,
	// "data." for the object).
	only       []cond
	self       bool
	itemOrigin bool
	// one says the value at items is the one alert whatever it holds
	// (items.one): no element is read, and anything but an object reads
	// as an alert with no member.
	one  bool
	tags *tagSpec
	lets []let

	title, text, severity, service, environment, host, rule, id, timestamp []source
	// fingerprint is the sender's own fingerprint of the alert, kept as
	// sent and never its id (parts.fingerprint).
	fingerprint                   []source
	status                        []statusRule
	labels, entities, annotations []labelRule
	links                         []labelRule

	// matchLets are the lets (indexes, in order) recognise reads, and
	// matchTags whether it reads the tags: Match computes only those.
	matchLets []int
	matchTags bool
	// envTags says some expression reads tags; envSize is the size of the
	// expressions' environment.
	envTags bool
	envSize int
	// paths are the constant paths the expressions read, parsed once.
	paths map[string]fieldPath
	// regexps are the patterns of the regular expression functions,
	// compiled once.
	regexps map[string]*regexp.Regexp
	// plucks are the paths of pluck, parsed once.
	plucks map[string][]fieldPath
	// versions are the shapes of the sender's payload, each read as a
	// mapping of its own (versions: …); the file's own recognise and parts
	// are none then.
	versions []version

	// joinArrays says a path holding an array reads as its scalars
	// joined by ", " (arrays: join); by default an array reads as blank.
	joinArrays bool

	// scopes keeps scopes (with their expression machine and
	// environment) for reuse; it is safe for concurrent use.
	scopes sync.Pool
}

// pairSpec says where an alert's key/value pairs are: the elements of an
// array of objects, key and value their members of those names.
type pairSpec struct {
	from       fieldPath
	key, value string
}

// sevRange is a severity table's range of whole numbers, its ends
// included; an open end is the widest int.
type sevRange struct {
	lo, hi int
	sev    openrecall.Severity
}

// rejectRule refuses a recognised payload that carries no alert: when its
// condition holds, reading it fails with the text reason gives.
type rejectRule struct {
	when   []cond
	reason *vm.Program
}

// severityOf returns the severity the mapping's table gives a value:
// the value folded, else a range holding it as a whole number; unknown
// when neither does.
func (m *mapping) severityOf(raw string) openrecall.Severity {
	if v, ok := m.scale[FoldLevel(raw)]; ok {
		return v
	}
	if v, ok := m.globSeverity(raw); ok {
		return v
	}
	if len(m.ranges) > 0 {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			// A decimal is read by its whole part ("10.0" is 10).
			f, ok := Of(strings.TrimSpace(raw)).Float()
			if !ok || f != f || f >= math.MaxInt64 || f <= math.MinInt64 {
				return openrecall.SeverityUnknown
			}
			n = int(f)
		}
		for _, r := range m.ranges {
			if n >= r.lo && n <= r.hi {
				return r.sev
			}
		}
	}
	return openrecall.SeverityUnknown
}

// parseRange reads a range of whole numbers: "N..M", "N.." or "..M".
func parseRange(s string) (lo, hi int, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "..")
	if !found || a == "" && b == "" {
		return 0, 0, false
	}
	lo, hi = math.MinInt, math.MaxInt
	var err error
	if a != "" {
		if lo, err = strconv.Atoi(a); err != nil {
			return 0, 0, false
		}
	}
	if b != "" {
		if hi, err = strconv.Atoi(b); err != nil {
			return 0, 0, false
		}
	}
	return lo, hi, lo <= hi
}

// fieldPath is a dotted path as Value.Path reads it, from the item (an
// alert of items, or the payload) or, written with a leading "/", from the
// payload's top. The empty path is the item itself.
type fieldPath struct {
	root  bool
	path  string
	parts []string // path split at its dots, for Value.path
	// steps is the path split at its indexes ("a.b[0].c": a.b, then
	// element 0, then c); nil when it has none and parts is read whole.
	steps []pathStep
}

// pathStep is a run of dotted keys then, when index >= 0, an element of
// the array they lead to.
type pathStep struct {
	parts []string
	index int
}

// sourceKind says where a candidate reads its value.
type sourceKind int

const (
	srcPath  sourceKind = iota // a path
	srcLet                     // $name: a let
	srcExpr                    // expr: an expression
	srcValue                   // value: a constant
	srcOf                      // of: parts that must all be present, joined
	srcJoin                    // join: texts joined by blank lines, then evidence
	srcTag                     // tag: the value of the first tag of these keys
	srcPair                    // pair: the value of the first pair of these keys
)

// srcMember is a candidate {member: name, in: path}: an object's member
// by its exact name.
const srcMember sourceKind = 100

// source is one candidate for a part: where its value is read, when it
// applies, and the origin it names.
type source struct {
	kind   sourceKind
	path   fieldPath
	let    int
	prog   *vm.Program
	value  string
	parts  [][]source // of, join
	prefix string     // of
	sep    string     // of
	lines  []evidence // join
	keys   []string   // tag
	table  map[string]string
	then   *vm.Program // an expression of the value (thenVar)
	// each is an array: the candidate is read with each element as the
	// alert, and the first element's non-blank value wins (last: the
	// last's).
	each *fieldPath
	last bool
	// origin, when set, computes the origin the candidate names (origin:
	// 'expression'), run once its value is read.
	origin *vm.Program
	// decode says each's array may be sent as JSON text (decode: json).
	decode bool
	when   *vm.Program
	as     string
	hasAs  bool
	// unixMs (numbers: ms) reads a timestamp's JSON number as intake
	// does (unixNumber); keep (blank: keep) a label's value as read.
	unixMs, keep bool
	// keepEmpty (blank: empty) is keep with an empty value kept too: the
	// candidate that applies sets the label, whatever it reads.
	keepEmpty bool
}

// evidence is one "key: value" line of a text, or (each) one line per
// member of an object.
type evidence struct {
	key  string
	from []source
	// each is the object whose members are lines (a key with "*"):
	// members named in except (a trailing * a prefix) are left out, and
	// at most limit lines are written (0: no limit). With key and value,
	// each is an array of objects: a line per element, its key and value
	// the element's members of those names.
	each           *fieldPath
	except         []string
	limit          int
	kvKey, kvValue string
	// flatten says each line is a scalar at any depth of the object, by
	// its dotted path (array elements by index: "answers.0.rdata").
	flatten bool
	// list is an expression giving [name, value] pairs: a line each.
	list *vm.Program
	// skip are values (trimmed, as written) that make no line: the
	// sender's word for none (Falco's "<NA>"); with flatten, limit counts
	// them.
	skip []string
}

// let is a named value computed once per alert: a candidate list (a
// string, with the origin of the candidate that gave it) or an expression
// of any type.
type let struct {
	name  string
	list  []source
	prog  *vm.Program
	typ   reflect.Type
	as    string
	hasAs bool
	// inEnv says some expression reads the let: only those are put in
	// the expressions' environment.
	inEnv bool
}

// tagSpec says where an alert's tags are: the first of the paths that holds
// a list (an array, or text "a,b" or "[a, b]"); an element is "key:value"
// text, or an object whose members key and value hold them.
type tagSpec struct {
	from       []fieldPath
	key, value string
	as         string
}

// statusRule sets a status when any of its conditions holds, or (from) the
// status a state word says (Status).
type statusRule struct {
	status string
	any    []cond
	from   []source
}

// labelRule sets a label (an entity, a link) from a candidate list, or one
// per member of an object or per tag (key holds "*").
type labelRule struct {
	key  string
	from []source
	each *fieldPath // a key with "*": the object whose members are copied
	tags bool       // a key with "*" from $tags
	// keys and except choose the members (tags) a key with "*" copies:
	// those whose name matches keys and is not in except (a trailing *
	// a prefix); blank says a tag without a value is skipped, not "true".
	keys   *regexp.Regexp
	except []string
	blank  bool
	// asSent (blank: keep) says each member of the object is copied as
	// sent: its text not trimmed, an empty one kept (nulls skipped), as a
	// sender whose label set is its identity (Alertmanager) sends them.
	asSent bool
	// join, when set, says a member that is an array is its scalars
	// joined by it (objects skipped), not its JSON.
	join    string
	hasJoin bool
	// list is an expression giving "key:value" texts: a label each.
	list *vm.Program
	// keepOne says a label of one key keeps its value as read (a
	// candidate with blank: keep): not trimmed, kept when not empty.
	keepOne bool

	// every, for a key with "*" whose path has "[]": the steps to every
	// object whose members are copied (as pluck reads them).
	every []fieldPath
}

// condKind says what a condition tests.
type condKind int

const (
	condExpr condKind = iota
	condHas
	condIs
	condEquals
	condOneOf
	condAny
	condAll
	condNot
)

// cond is a condition of recognise or status.
type cond struct {
	kind   condKind
	prog   *vm.Program
	paths  []fieldPath
	kinds  []string   // is: the kind at each of paths
	fields [][]source // equals, one_of: the field compared
	values [][]string // equals, one_of: its values, folded
	sub    []cond
}

// loadError is a mapping file's error at a line, naming the field.
type loadError struct {
	file  string
	line  int
	field string
	msg   string
}

func (e *loadError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.file, e.line, e.field, e.msg)
}

// loader reads one mapping file, collecting its errors.
type loader struct {
	m    *mapping
	errs []error
	// env is the expression environment at the point being read: the
	// lets declared so far, the tags.
	env map[string]any
	// letIndex finds a let by name.
	letIndex map[string]int
	// read are the names of the environment some expression reads.
	read map[string]bool
	// inEach says the candidate being read is inside each: it reads an
	// element, not the alert, so no let and no tag.
	inEach   bool
	eachNode *yaml.Node
	// prefix names the version being read (versions[1]): every error's
	// field starts with it.
	prefix string
}

func (l *loader) fail(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	l.errs = append(l.errs, &loadError{file: l.m.file, line: line, field: l.field(field), msg: fmt.Sprintf(format, args...)})
}

var (
	nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	letRe  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
)

// topKeys are the keys of a mapping file, in the order they are read.
var topKeys = []string{"name", "display", "security", "episode", "placeholders", "keys", "arrays", "decode", "blank", "levels", "severity", "doc",
	"recognise", "open", "reject", "items", "tags", "pairs", "let", "parts", "versions"}

// partKeys are the keys of parts.
var partKeys = []string{"title", "text", "severity", "service", "environment", "host", "rule", "id", "timestamp",
	"status", "labels", "entities", "links", "annotations", "fingerprint"}

// originParts are the parts whose origin an event names: a candidate of
// one that is no path must say (as) what it reads.
var originParts = map[string]bool{"title": true, "severity": true, "service": true, "environment": true, "rule": true, "id": true}

// parseMapping reads and validates one mapping file.
func parseMapping(file string, body []byte) (*mapping, error) {
	l := &loader{m: &mapping{file: file, paths: map[string]fieldPath{}, regexps: map[string]*regexp.Regexp{}, plucks: map[string][]fieldPath{}}, env: map[string]any{scopeVar: (*scope)(nil)}, letIndex: map[string]int{}, read: map[string]bool{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &loadError{file: file, line: 1, msg: "empty: a mapping needs at least name, recognise and parts"}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &loadError{file: file, line: top.Line, msg: "a mapping file is a YAML mapping (name: …, recognise: …, parts: …)"}
	}
	fields := l.members(top, "", topKeys)
	l.readHead(top, fields)
	l.readShape(fields)
	if n := fields["versions"]; n != nil {
		l.readVersions(top, n, fields)
	} else {
		l.readBody(top, fields)
	}
	if n := fields["open"]; n != nil {
		l.readOpen(n)
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return l.m, nil
}

// readBody reads how the payload is recognised and read: a mapping file's
// keys after its head, or a version's (versions: …).
func (l *loader) readBody(top *yaml.Node, fields map[string]*yaml.Node) {
	// The tags and the lets come before recognise in the environment:
	// recognise may read them when the payload is the alert.
	if n := fields["tags"]; n != nil {
		l.m.tags = l.readTags(n, "tags")
		l.env["tags"] = []string(nil)
	}
	if n := fields["pairs"]; n != nil {
		l.readPairs(n)
	}
	if n := fields["let"]; n != nil {
		l.readLets(n)
	}
	if n := fields["items"]; n != nil {
		l.readItems(n)
	}
	if n := fields["recognise"]; n != nil {
		env := l.env
		if l.m.items != nil {
			// Recognise reads the payload: the lets and tags are an
			// item's.
			env = map[string]any{scopeVar: (*scope)(nil)}
		}
		saved := l.env
		l.env = env
		l.m.recognise = l.conds(n, "recognise")
		l.env = saved
		if len(l.m.recognise) == 0 && len(l.errs) == 0 {
			l.fail(n, "recognise", "at least one condition: without one every payload would be this sender's")
		}
		l.matchNeeds()
	} else {
		l.fail(top, "recognise", "missing: say what the sender's payload must hold")
	}
	if n := fields["reject"]; n != nil {
		l.readReject(n)
	}
	if n := fields["parts"]; n != nil {
		l.readParts(n)
	} else {
		l.fail(top, "parts", "missing: say where the title, rule and id come from")
	}
	if len(l.errs) > 0 {
		return
	}
	l.m.envSize = 1
	for i := range l.m.lets {
		if lt := &l.m.lets[i]; l.read[lt.name] {
			lt.inEnv = true
			l.m.envSize++
		}
	}
	if l.m.envTags = l.read["tags"]; l.m.envTags {
		l.m.envSize++
	}
}

// members returns a mapping node's members by key, failing on a key not
// among known and on a key written twice.
func (l *loader) members(n *yaml.Node, field string, known []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		l.fail(n, field, "want a mapping of %s", strings.Join(known, ", "))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := fieldKey(field, k.Value)
		if !slices.Contains(known, k.Value) {
			l.fail(k, name, "unknown key (known: %s)", strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			l.fail(k, name, "written twice")
			continue
		}
		out[k.Value] = v
	}
	return out
}

// fieldKey names a field inside another.
func fieldKey(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// fieldElem names an element of a list field.
func fieldElem(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// scalar returns a node's text when it is a scalar.
func (l *loader) scalar(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.fail(n, field, "want a single value")
		return "", false
	}
	return n.Value, true
}

func (l *loader) boolean(n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		l.fail(n, field, "want true or false")
	}
	return b
}

// readHead reads what the mapping says about the sender as a whole.
func (l *loader) readHead(top *yaml.Node, f map[string]*yaml.Node) {
	m := l.m
	if n := f["name"]; n != nil {
		m.name, _ = l.scalar(n, "name")
		m.nameLine = n.Line
		if m.name != "" && !nameRe.MatchString(m.name) {
			l.fail(n, "name", "%q: want a lowercase URL path segment (letters, digits, ., - and _)", m.name)
		}
	} else {
		l.fail(top, "name", "missing: the sender's name (POST /api/v1/alerts/{name}, --format name)")
	}
	m.display = m.name
	if n := f["display"]; n != nil {
		m.display, _ = l.scalar(n, "display")
	}
	if n := f["security"]; n != nil {
		m.security = l.boolean(n, "security")
	}
	if n := f["episode"]; n != nil {
		m.episode = l.boolean(n, "episode")
	}
	if n := f["placeholders"]; n != nil {
		switch s, _ := l.scalar(n, "placeholders"); s {
		case "keep":
			m.keep = true
		case "blank":
		default:
			l.fail(n, "placeholders", "%q: want blank (an unrendered template placeholder reads as blank) or keep", s)
		}
	}
	if n := f["keys"]; n != nil {
		switch k, _ := l.scalar(n, "keys"); k {
		case "fold":
			m.foldKeys = true
		case "exact":
		default:
			l.fail(n, "keys", "%q: want fold (the payload's member names matched folded) or exact", k)
		}
	}
	if n := f["arrays"]; n != nil {
		l.readArrays(n)
	}
	if n := f["blank"]; n != nil {
		if n.Kind != yaml.SequenceNode {
			l.fail(n, "blank", "want a list of the values that mean none (\"-\", \"N/A\")")
		}
		for i, e := range n.Content {
			field := fieldElem("blank", i)
			if e.Kind == yaml.MappingNode {
				// {matches: pattern}
				mf := l.members(e, field, []string{"matches"})
				if mf["matches"] == nil {
					l.fail(e, field, "want a value, or {matches: a regular expression}")
					continue
				}
				if pat, ok := l.scalar(mf["matches"], fieldKey(field, "matches")); ok {
					re, err := regexp.Compile(pat)
					if err != nil {
						l.fail(mf["matches"], fieldKey(field, "matches"), "%v", err)
						continue
					}
					m.blankRes = append(m.blankRes, re)
				}
				continue
			}
			if s, ok := l.scalar(e, field); ok {
				if strings.TrimSpace(s) == "" {
					l.fail(e, field, "a blank value is blank already")
					continue
				}
				m.blanks = append(m.blanks, strings.TrimSpace(s))
			}
		}
	}
	if n := f["severity"]; n != nil {
		m.scale = Scale{}
		if n.Kind != yaml.MappingNode {
			l.fail(n, "severity", "want a table of the sender's values: VALUE: critical|high|medium|low|info")
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := fieldKey("severity", k.Value)
			sev, ok := l.scalar(v, field)
			if !ok {
				continue
			}
			if s := openrecall.Severity(sev); !s.Valid() || s == openrecall.SeverityUnknown {
				l.fail(v, field, "%q: want critical, high, medium, low or info", sev)
				continue
			}
			if FoldLevel(k.Value) == "" {
				l.fail(k, field, "a blank value")
				continue
			}
			if strings.Contains(k.Value, "..") {
				lo, hi, ok := parseRange(k.Value)
				if !ok {
					l.fail(k, field, "%q: a range is N..M, N.. or ..M of whole numbers, N <= M", k.Value)
					continue
				}
				m.ranges = append(m.ranges, sevRange{lo: lo, hi: hi, sev: openrecall.Severity(sev)})
				continue
			}
			if strings.Contains(k.Value, "*") {
				// A pattern, never a level of its own.
				l.severityGlob(k, field, openrecall.Severity(sev))
				continue
			}
			m.scale[FoldLevel(k.Value)] = openrecall.Severity(sev)
			if f["levels"] == nil {
				m.levels = append(m.levels, k.Value)
			}
		}
	}
	if n := f["levels"]; n != nil {
		if n.Kind != yaml.SequenceNode {
			l.fail(n, "levels", "want a list of the sender's documented severity values")
		}
		for i, e := range n.Content {
			field := fieldElem("levels", i)
			s, ok := l.scalar(e, field)
			if !ok {
				continue
			}
			if m.scale != nil && m.severityOf(s) == openrecall.SeverityUnknown {
				l.fail(e, field, "%q is not in the severity table: every documented level maps to a severity", s)
			}
			m.levels = append(m.levels, s)
		}
	}
	if n := f["doc"]; n != nil {
		d := l.members(n, "doc", []string{"point", "auth", "title", "severity", "service", "rule", "id", "source"})
		for k, v := range d {
			s, _ := l.scalar(v, fieldKey("doc", k))
			switch k {
			case "point":
				m.doc.Point = s
			case "auth":
				m.doc.Auth = s
			case "title":
				m.doc.Title = s
			case "severity":
				m.doc.Severity = s
			case "service":
				m.doc.Service = s
			case "rule":
				m.doc.Rule = s
			case "id":
				m.doc.ID = s
			case "source":
				m.doc.Source = s
			}
		}
	}
}

// readPairs reads pairs: {from: path, key: member, value: member}.
func (l *loader) readPairs(n *yaml.Node) {
	f := l.members(n, "pairs", []string{"from", "key", "value"})
	if f["from"] == nil || f["key"] == nil || f["value"] == nil {
		l.fail(n, "pairs", "want {from: the array of pairs, key: the member holding a key, value: the member holding its value}")
		return
	}
	p, ok := l.path(f["from"], "pairs.from")
	if !ok {
		return
	}
	ps := &pairSpec{from: p}
	ps.key, _ = l.scalar(f["key"], "pairs.key")
	ps.value, _ = l.scalar(f["value"], "pairs.value")
	l.m.pairs = ps
}

// readOpen reads open: {path: the envelope's content, when: conditions on
// the payload, decode: json when the content is JSON text}.
func (l *loader) readOpen(n *yaml.Node) {
	f := l.members(n, "open", []string{"path", "when", "decode"})
	if f["path"] == nil || f["when"] == nil {
		l.fail(n, "open", "want {path: the payload the envelope carries, when: conditions that make it an envelope}")
		return
	}
	p, ok := l.path(f["path"], "open.path")
	if !ok {
		return
	}
	saved := l.env
	l.env = map[string]any{scopeVar: (*scope)(nil)}
	l.m.openWhen = l.conds(f["when"], "open.when")
	l.env = saved
	l.m.open = &p
	if k := f["decode"]; k != nil {
		v, _ := l.scalar(k, "open.decode")
		if v != "json" {
			l.fail(k, "open.decode", "%q: want json (the payload sent as JSON text)", v)
		}
		l.m.openDecode = v == "json"
	}
}

// readReject reads reject: a rule {when: conditions, reason: expression},
// or a list of them, read against the payload as recognise is.
func (l *loader) readReject(n *yaml.Node) {
	list := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		list = n.Content
	}
	saved := l.env
	l.env = map[string]any{scopeVar: (*scope)(nil)}
	defer func() { l.env = saved }()
	for i, e := range list {
		field := "reject"
		if n.Kind == yaml.SequenceNode {
			field = fieldElem(field, i)
		}
		f := l.members(e, field, []string{"when", "reason"})
		if f["when"] == nil || f["reason"] == nil {
			l.fail(e, field, "want {when: conditions, reason: an expression giving the reason}")
			continue
		}
		r := rejectRule{when: l.conds(f["when"], fieldKey(field, "when"))}
		r.reason = l.compile(f["reason"], fieldKey(field, "reason"), reflect.String)
		l.m.reject = append(l.m.reject, r)
	}
}

// readItems reads items: a path, or {from: path, only: [conditions],
// self: bool, origin: prefix}.
func (l *loader) readItems(n *yaml.Node) {
	from := n
	var f map[string]*yaml.Node
	if n.Kind == yaml.MappingNode {
		f = l.members(n, "items", []string{"from", "only", "self", "origin", "one"})
		if from = f["from"]; from == nil {
			l.fail(n, "items.from", "missing: the path of the array of alerts")
			return
		}
	}
	field := "items"
	if f != nil {
		field = "items.from"
	}
	if from.Kind == yaml.SequenceNode && f != nil {
		// Alternatives: the first that holds an array or an object.
		ps := l.paths(from, field)
		if len(ps) == 0 {
			return
		}
		l.m.items, l.m.itemsElse = &ps[0], ps[1:]
	} else {
		p, ok := l.path(from, field)
		if !ok {
			return
		}
		l.m.items = &p
	}
	if c := f["only"]; c != nil {
		// An element's conditions read the element, as recognise reads
		// the payload: no let, no tag.
		saved := l.env
		l.env = map[string]any{scopeVar: (*scope)(nil)}
		l.m.only = l.conds(c, "items.only")
		l.env = saved
	}
	if b := f["self"]; b != nil {
		l.m.self = l.boolean(b, "items.self")
		if l.m.self && f["only"] == nil {
			l.fail(b, "items.self", "self needs only: the conditions that make the payload itself an alert")
		}
	}
	if o := f["origin"]; o != nil {
		l.m.itemOrigin = l.boolean(o, "items.origin")
	}
	if o := f["one"]; o != nil {
		l.m.one = l.boolean(o, "items.one")
	}
}

// path reads a path: dotted keys, each non-empty; a leading "/" reads
// from the payload's top.
func (l *loader) path(n *yaml.Node, field string) (fieldPath, bool) {
	s, ok := l.scalar(n, field)
	if !ok {
		return fieldPath{}, false
	}
	p, err := parsePath(s)
	if err != nil {
		l.fail(n, field, "%v", err)
		return fieldPath{}, false
	}
	return p, true
}

// parsePath reads a path as written in a mapping.
func parsePath(s string) (fieldPath, error) {
	var p fieldPath
	if rest, ok := strings.CutPrefix(s, "/"); ok {
		p.root, s = true, rest
	}
	if s == "" {
		return p, nil
	}
	if strings.TrimSpace(s) != s {
		return p, fmt.Errorf("bad path %q: blanks around it", s)
	}
	p.path = s
	rest := s
	for rest != "" {
		var st pathStep
		keys, after, indexed := strings.Cut(rest, "[")
		st.index = -1
		if keys != "" {
			st.parts = strings.Split(keys, ".")
			for _, part := range st.parts {
				if part == "" {
					return p, fmt.Errorf("bad path %q: an empty key (two dots, or a dot at an end)", s)
				}
			}
		}
		rest = ""
		if indexed {
			n, tail, ok := strings.Cut(after, "]")
			i, err := strconv.Atoi(n)
			if !ok || err != nil || i < 0 || n != strconv.Itoa(i) {
				return p, fmt.Errorf("bad path %q: an index is [N], N a number from 0", s)
			}
			st.index = i
			switch {
			case tail == "":
			case strings.HasPrefix(tail, "."):
				if rest = tail[1:]; rest == "" {
					return p, fmt.Errorf("bad path %q: an empty key (two dots, or a dot at an end)", s)
				}
			case strings.HasPrefix(tail, "["):
				rest = tail
			default:
				return p, fmt.Errorf("bad path %q: a key after an index follows a dot (a[0].b)", s)
			}
		}
		p.steps = append(p.steps, st)
	}
	if len(p.steps) == 1 && p.steps[0].index < 0 {
		p.parts, p.steps = p.steps[0].parts, nil
	}
	return p, nil
}

// readTags reads where the tags are.
func (l *loader) readTags(n *yaml.Node, field string) *tagSpec {
	t := &tagSpec{}
	switch n.Kind {
	case yaml.ScalarNode, yaml.SequenceNode:
		t.from = l.paths(n, field)
	case yaml.MappingNode:
		f := l.members(n, field, []string{"from", "key", "value", "as"})
		if f["from"] == nil {
			l.fail(n, fieldKey(field, "from"), "missing: the path (or paths) of the tags")
		} else {
			t.from = l.paths(f["from"], fieldKey(field, "from"))
		}
		if f["key"] != nil {
			t.key, _ = l.scalar(f["key"], fieldKey(field, "key"))
			if f["value"] == nil {
				l.fail(n, fieldKey(field, "value"), "missing: the member of each tag object that holds its value")
			}
		}
		if f["value"] != nil {
			t.value, _ = l.scalar(f["value"], fieldKey(field, "value"))
			if f["key"] == nil {
				l.fail(n, fieldKey(field, "key"), "missing: the member of each tag object that holds its key")
			}
		}
		if f["as"] != nil {
			t.as, _ = l.scalar(f["as"], fieldKey(field, "as"))
		}
	default:
		l.fail(n, field, "want a path, a list of paths, or {from, key, value, as}")
	}
	return t
}

// paths reads one path or a list of them.
func (l *loader) paths(n *yaml.Node, field string) []fieldPath {
	if n.Kind == yaml.SequenceNode {
		var out []fieldPath
		for i, e := range n.Content {
			if p, ok := l.path(e, fieldElem(field, i)); ok {
				out = append(out, p)
			}
		}
		if len(out) == 0 && len(n.Content) == 0 {
			l.fail(n, field, "an empty list")
		}
		return out
	}
	if p, ok := l.path(n, field); ok {
		return []fieldPath{p}
	}
	return nil
}

// readLets reads the lets, in order: each may read those before it.
func (l *loader) readLets(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		l.fail(n, "let", "want a mapping of names to candidate lists or expressions")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := fieldKey("let", k.Value)
		switch {
		case !letRe.MatchString(k.Value):
			l.fail(k, field, "a let's name is a letter then letters, digits and _")
			continue
		case reserved(k.Value):
			l.fail(k, field, "%q is the name of a function or variable of the expressions", k.Value)
			continue
		}
		if _, dup := l.letIndex[k.Value]; dup {
			l.fail(k, field, "written twice")
			continue
		}
		lt := let{name: k.Value, typ: reflect.TypeFor[string]()}
		if f, single := l.singleExpr(v); single {
			// {expr: …, as: …}: a value of any type.
			lt.prog = l.compile(f["expr"], fieldKey(field, "expr"), reflect.Invalid)
			if lt.prog != nil {
				lt.typ = lt.prog.Node().Type()
			}
			if a := f["as"]; a != nil {
				lt.as, _ = l.scalar(a, fieldKey(field, "as"))
				lt.hasAs = true
			}
		} else {
			lt.list = l.sources(v, field, false)
		}
		l.letIndex[lt.name] = len(l.m.lets)
		l.m.lets = append(l.m.lets, lt)
		l.env[lt.name] = zeroOf(lt.typ)
	}
}

// singleExpr reports whether n is {expr: …} with at most as beside it, and
// returns its members.
func (l *loader) singleExpr(n *yaml.Node) (map[string]*yaml.Node, bool) {
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	f := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "expr", "as":
			f[k] = n.Content[i+1]
		default:
			return nil, false
		}
	}
	return f, f["expr"] != nil
}

// zeroOf is a value of type t for the expression environment: what the
// compiler checks a name against.
func zeroOf(t reflect.Type) any {
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	return reflect.Zero(t).Interface()
}

// readParts reads parts.
func (l *loader) readParts(n *yaml.Node) {
	f := l.members(n, "parts", partKeys)
	m := l.m
	list := func(key string) []source {
		if v := f[key]; v != nil {
			return l.sources(v, fieldKey("parts", key), originParts[key])
		}
		return nil
	}
	m.title, m.text, m.severity, m.service = list("title"), list("text"), list("severity"), list("service")
	m.environment, m.host, m.rule, m.id, m.timestamp = list("environment"), list("host"), list("rule"), list("id"), list("timestamp")
	m.fingerprint = list("fingerprint")
	for i, list := range [][]source{m.title, m.text, m.severity, m.service, m.environment, m.host, m.rule, m.id, m.timestamp, m.fingerprint} {
		k := [...]string{"title", "text", "severity", "service", "environment", "host", "rule", "id", "timestamp", "fingerprint"}[i]
		l.checkSourceSent(f[k], fieldKey("parts", k), list, k == "timestamp", false)
	}
	if f["title"] == nil && f["text"] == nil {
		l.fail(n, "parts.title", "missing: an alert needs a title (or a text)")
	}
	if v := f["status"]; v != nil {
		m.status = l.readStatus(v)
	}
	m.labels = l.readLabels(f["labels"], "parts.labels", true)
	m.entities = l.readLabels(f["entities"], "parts.entities", true)
	m.annotations = l.readLabels(f["annotations"], "parts.annotations", true)
	for i, r := range m.entities {
		if r.asSent {
			l.fail(f["entities"], fieldKey("parts.entities", m.entities[i].key), "blank: keep is for labels and annotations (an entity is never blank)")
		}
	}
	for _, r := range m.entities {
		l.checkSourceSent(f["entities"], fieldKey("parts.entities", r.key), r.from, false, false)
	}
	for _, r := range append(slices.Clone(m.labels), m.annotations...) {
		l.checkSourceSent(f["labels"], fieldKey("parts.labels", r.key), r.from, false, true)
	}
	m.links = l.readLabels(f["links"], "parts.links", false)
	for _, r := range m.links {
		l.checkSourceSent(f["links"], fieldKey("parts.links", r.key), r.from, false, false)
	}
	for _, r := range m.links {
		if !slices.Contains(openrecall.LinkKinds, r.key) {
			l.fail(f["links"], fieldKey("parts.links", r.key), "unknown link (known: %s)", strings.Join(openrecall.LinkKinds, ", "))
		}
	}
}

// statuses are the statuses a mapping may set.
var statuses = []string{openrecall.StatusFiring, openrecall.StatusAcknowledged, openrecall.StatusResolved, openrecall.StatusNotice}

// readStatus reads parts.status: rules in order, the first that holds
// decides; none is firing.
func (l *loader) readStatus(n *yaml.Node) []statusRule {
	const field = "parts.status"
	if n.Kind != yaml.MappingNode {
		l.fail(n, field, "want {resolved: [conditions], acknowledged: […], notice: […], from: STATE-FIELD}")
		return nil
	}
	var out []statusRule
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := fieldKey(field, k.Value)
		if seen[k.Value] {
			l.fail(k, f, "written twice")
			continue
		}
		seen[k.Value] = true
		switch {
		case k.Value == "from":
			out = append(out, statusRule{from: l.sources(v, f, false)})
		case slices.Contains(statuses, k.Value):
			out = append(out, statusRule{status: k.Value, any: l.conds(v, f)})
		default:
			l.fail(k, f, "unknown key (known: %s, from)", strings.Join(statuses, ", "))
		}
	}
	return out
}

// readLabels reads labels, entities or links: keys to candidate lists, a
// key with "*" to an object's path or $tags (expand).
func (l *loader) readLabels(n *yaml.Node, field string, expand bool) []labelRule {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.fail(n, field, "want a mapping of keys to candidate lists")
		return nil
	}
	var out []labelRule
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := fieldKey(field, k.Value)
		if strings.TrimSpace(k.Value) == "" {
			l.fail(k, f, "a blank key")
			continue
		}
		r := labelRule{key: k.Value}
		if strings.Contains(k.Value, "*") {
			if !expand || strings.Count(k.Value, "*") > 1 {
				l.fail(k, f, "a key with * (one per member) is for labels and entities, once a key")
				continue
			}
			from := v
			if v.Kind == yaml.MappingNode {
				o := l.members(v, f, []string{"from", "expr", "keys", "except", "blank", "join"})
				if n := o["join"]; n != nil {
					r.join, _ = l.scalar(n, fieldKey(f, "join"))
					r.hasJoin = true
				}
				if n := o["expr"]; n != nil {
					if o["from"] != nil {
						l.fail(v, f, "from or expr, not both")
						continue
					}
					r.list = l.compile(n, fieldKey(f, "expr"), reflect.Invalid)
					if r.list != nil {
						if t := r.list.Node().Type(); t != nil && t.Kind() != reflect.Slice && t.Kind() != reflect.Interface {
							l.fail(n, fieldKey(f, "expr"), "want a list of \"key:value\" texts, not a %s", t)
							continue
						}
					}
					out = append(out, r)
					continue
				}
				if from = o["from"]; from == nil {
					l.fail(v, fieldKey(f, "from"), "missing: $tags, or the path of an object")
					continue
				}
				if n := o["keys"]; n != nil {
					if pat, ok := l.scalar(n, fieldKey(f, "keys")); ok {
						re, err := regexp.Compile(pat)
						if err != nil {
							l.fail(n, fieldKey(f, "keys"), "%v", err)
						}
						r.keys = re
					}
				}
				if n := o["except"]; n != nil {
					r.except = l.names(n, fieldKey(f, "except"))
				}
				if n := o["blank"]; n != nil {
					switch b, _ := l.scalar(n, fieldKey(f, "blank")); b {
					case "skip":
						r.blank = true
					case "true":
					case "keep":
						r.asSent = true
					default:
						l.fail(n, fieldKey(f, "blank"), "%q: want skip (a tag without a value is no label), true, or keep (every member as sent)", b)
					}
				}
			}
			s, ok := l.scalar(from, f)
			if !ok {
				continue
			}
			if s == "$tags" {
				if l.m.tags == nil {
					l.fail(from, f, "the mapping declares no tags (tags: …)")
					continue
				}
				r.tags = true
			} else if strings.Contains(s, "[]") {
				if r.hasJoin {
					l.fail(from, f, "join goes with the path of one object, not of every element's ([])")
					continue
				}
				if r.every = l.everyPath(from, f, s); r.every == nil {
					continue
				}
			} else {
				p, err := parsePath(s)
				if err != nil {
					l.fail(from, f, "%v", err)
					continue
				}
				r.each = &p
			}
			if r.asSent && (r.each == nil || r.hasJoin || r.keys != nil || r.except != nil) {
				l.fail(v, fieldKey(f, "blank"), "keep copies every member of one object as sent: from the path of an object, without keys, except or join")
				continue
			}
			out = append(out, r)
			continue
		}
		r.from = l.sources(v, f, false)
		for i := range r.from {
			r.keepOne = r.keepOne || r.from[i].keep
		}
		out = append(out, r)
	}
	return out
}

// names reads a list of member names, a trailing * a prefix.
func (l *loader) names(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode {
		l.fail(n, field, "want a list of member names (name* for a prefix)")
		return nil
	}
	var out []string
	for j, x := range n.Content {
		if s, ok := l.scalar(x, fieldElem(field, j)); ok {
			if strings.Contains(strings.TrimSuffix(s, "*"), "*") {
				l.fail(x, fieldElem(field, j), "%q: a * only at the end (a prefix)", s)
				continue
			}
			out = append(out, s)
		}
	}
	return out
}

// matchNeeds finds the lets and tags recognise reads (and the lets those
// read, and so on): Match computes only those.
func (l *loader) matchNeeds() {
	if l.m.items != nil {
		return
	}
	need := map[string]bool{}
	var visitConds func([]cond)
	var visitSources func([]source)
	visitSources = func(ss []source) {
		for _, s := range ss {
			names(s.prog, need)
			names(s.when, need)
			names(s.then, need)
			if s.kind == srcLet {
				need[l.m.lets[s.let].name] = true
			}
			if s.kind == srcTag {
				need["tags"] = true
			}
			for _, p := range s.parts {
				visitSources(p)
			}
		}
	}
	visitConds = func(cs []cond) {
		for _, c := range cs {
			names(c.prog, need)
			for _, f := range c.fields {
				visitSources(f)
			}
			visitConds(c.sub)
		}
	}
	visitConds(l.m.recognise)
	for i := len(l.m.lets) - 1; i >= 0; i-- {
		lt := l.m.lets[i]
		if !need[lt.name] {
			continue
		}
		names(lt.prog, need)
		visitSources(lt.list)
	}
	for i, lt := range l.m.lets {
		if need[lt.name] {
			l.m.matchLets = append(l.m.matchLets, i)
		}
	}
	l.m.matchTags = need["tags"]
}
