package sender

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/openrecall/openrecall"
)

// A mapping is a sender written as data (DESIGN §3, "Senders as data"): a
// YAML file that says how the sender's payload is recognised, where its
// alerts are, and for each part of an event an ordered list of candidate
// fields, with small expressions (expr-lang/expr, compiled once when the
// file loads; mapping_expr.go lists their functions) where a path is not
// enough. Every mapping reads its payload through Value, the one lenient
// reader, and compiles to an ordinary Sender. The built-in ones are
// mappings/*.yaml; a team's are loaded by LoadMappings.
//
// The format, every key but name, recognise and parts optional:
//
//	name: acme                 # POST /api/v1/alerts/acme, --format acme
//	display: Acme Monitor      # as its users write it (default: name)
//	security: false            # every alert is an attack (DESIGN §4)
//	episode: true              # its ids name one firing episode
//	placeholders: blank        # an unrendered template placeholder ("{{x}}",
//	                           # "$SERVICE", "null") reads as blank; keep: as sent
//	keys: fold                 # the payload's own member names (a path's first
//	                           # key, read from the payload's top) are matched
//	                           # folded: case, blanks, '.', '-' and '_' ignored
//	                           # (a member of the name exactly, else the first
//	                           # in name order that folds alike), as a
//	                           # template's hand-written keys are; an origin
//	                           # names the member as sent (default: exact)
//	arrays: join               # a path holding an array reads as its scalars
//	                           # joined by ", " (a one-element array as its
//	                           # element); default blank: it reads as none
//	blank: ["-", {matches: '(?i)^\*insert.*\*$'}]
//	                           # values (trimmed) a path reads as blank: as
//	                           # written, or matching a regular expression
//	arrays: join               # a path holding an array reads as its scalars
//	                           # joined by ", " (default blank: as blank)
//	decode: [annotations, result.annotations]
//	                           # members (one key a level, from the payload's
//	                           # top) that may hold an object's JSON as text:
//	                           # read as that object, by every path
//	severity: {P1: critical, P2: high, OK: info, "5..": info}
//	                           # the sender's value table, values folded (case,
//	                           # blanks, - and _ ignored); a key N..M, N.. or
//	                           # ..M is a range of whole numbers (a decimal is
//	                           # read by its whole part), tried when no value
//	                           # matches; a key with one * at an end ("apm.*",
//	                           # "*.fired") matches the values it starts or
//	                           # ends, tried in order before the ranges (a
//	                           # pattern is no level); an unlisted value is
//	                           # unknown; no table: intake's
//	                           # NormalizeSeverity reads it
//	levels: [P1, P2, OK]       # the documented scale (default: the table's keys)
//	doc: {point: …, auth: …, title: …, severity: …, service: …, rule: …, id: …, source: …}
//	recognise:                 # every condition holds (see below)
//	  - equals: {source: acme}
//	  - is: {alerts: array}
//	open:                      # an envelope: the payload it carries, read by
//	  path: wrapped            # the sender that recognises it (Sender.Open),
//	  when: [{not: {has: rule}}]   # when these hold of the payload;
//	  decode: json             # the path holds the payload as JSON text
//	                           # (SNS's Message): opened only when the text,
//	                           # trimmed, is a JSON object
//	reject:                    # recognised, but no alert: reading fails with
//	  when: 'str("type") != "alert"'   # the reason (a list of these, or one)
//	  reason: '"a " + quote(str("type")) + " record is no alert"'
//	                           # the first whose when holds, in order: a
//	                           # malformed record's reason, as intake words
//	                           # it (prometheus.yaml, pagerduty.yaml); its
//	                           # expressions read the payload, not the lets
//	items: alerts              # alerts are the elements of this array (an
//	                           # object: the one alert); default: the payload;
//	                           # or {from: alerts, only: [conditions],
//	                           # self: true, origin: true}: only the elements
//	                           # for which the conditions hold (read of the
//	                           # element, as recognise reads the payload;
//	                           # from: [a, b]: the first holding an array
//	                           # or an object);
//	                           # self: the payload is the one alert when they
//	                           # hold of it; origin: an element's origins start
//	                           # "alerts[]." (the object's "alerts."), but for
//	                           # a path (or as:) of the payload's top ("/id");
//	                           # one: true: the value at from is the one alert
//	                           # whatever it holds (no object: an alert with no
//	                           # member, its /paths still read), only then
//	                           # choosing self alone
//	tags: tags                 # where tags are: the first of the paths holding
//	                           # an array or text "a,b"; elements "key:value";
//	                           # {from: monitor.tags, key: name, value: value}
//	                           # for objects; as: the origin they name
//	pairs: {from: fields, key: key, value: value}
//	                           # the alert's key/value pairs: an array of
//	                           # objects (keys trimmed, the first of a key
//	                           # wins), read by {pair: name}
//	let:                       # named values, computed once per alert in order
//	  check: [check.name, check_name]        # a candidate list: text
//	  beat: {expr: 'kind("heartbeat") == "object"'}   # an expression: any type
//	parts:
//	  title: [title, {expr: 'check + " failed"', as: check.name}]
//	  text:
//	    join: [message]        # texts joined by blank lines (JoinText) …
//	    evidence:              # … then "key: value" lines (Evidence)
//	      check: $check
//	      "*": {from: result, except: [_*, punct], limit: 40}
//	                           # a line per member of an object, in name
//	                           # order (an array's scalars joined by ", ",
//	                           # objects skipped), values as sent
//	      "field *": {from: fields, key: key, value: value}
//	                           # a line per element of an array of objects
//	      "http.*": {from: http, flatten: true, limit: 24, skip: ["<NA>"]}
//	                           # a line per scalar at any depth, by its
//	                           # dotted path (Value.Scalars); skip: values
//	                           # (trimmed) that make no line (with flatten,
//	                           # limit counts them)
//	      "msg *": {expr: 'map(filter(0..4, # < count("msgs")), [str("msgs[" + string(#) + "].src"), "…"])'}
//	                           # a line per [name, value] pair of the list
//	                           # an expression gives, the name for the *
//	                           # (evidence may also be a list of such
//	                           # mappings, in order: a key written twice)
//	  severity: priority       # its value goes through the table
//	  service: [{tag: service}, /service]
//	  environment: {tag: [env, environment]}
//	  host: {expr: 'urlHost(str("target"))'}
//	  rule: $check
//	  id: {of: [/account, id], prefix: acme-, sep: ":"}
//	  timestamp: [started, started_ms]
//	                           # {path: startsAt, numbers: ms}: a JSON number
//	                           # is unix seconds, milliseconds above 1e12
//	                           # whatever its size, none below 0 or above
//	                           # 1e17 (intake's rule for its own schema;
//	                           # without it, ParseTime's: microseconds above
//	                           # 1e15, nanoseconds above 1e18)
//	  status:                  # the first that holds, in order; else firing
//	    resolved: {one_of: {state: [ok, resolved]}}
//	    acknowledged: 'str("state") == "acked"'
//	    from: state            # or: the status a state word means (Status)
//	  labels:
//	    team: /team
//	    class: {path: payload.class, blank: keep}
//	                           # a label of one key as read, not trimmed: a
//	                           # value of white space is kept, an empty one
//	                           # is none (a sender whose labels count as sent);
//	                           # blank: empty keeps an empty one too
//	    "*": details           # one label per member of an object
//	    "tag_*": $tags         # one label per tag ("true" when it has no value)
//	    "m.*": {from: meta, keys: 'cve|tactic', except: [x_*], join: ",", blank: skip}
//	                           # only the members (tags) whose name matches
//	                           # keys and is not in except (a trailing * a
//	                           # prefix); join: an array's scalars joined,
//	                           # not its JSON, a scalar read as paths read
//	                           # it, an object skipped; blank: skip a tag
//	                           # without value
//	    "t_*": {from: "targets[].labels"}
//	                           # "[]" every element of an array (as pluck
//	                           # reads it): a label per member of each object
//	                           # it leads to, the first object's value of a
//	                           # name winning
//	    "*": {expr: 'split(str("meta"), ",")'}
//	                           # a label per "key:value" text of a list
//	  entities: {user: actor.user}
//	  annotations:             # the sender's own annotations, as labels are
//	    "*": {from: annotations, blank: keep}
//	                           # blank: keep copies every member of one object
//	                           # as sent: not trimmed, an empty value kept
//	                           # (nulls skipped; labels and annotations only),
//	                           # for a sender whose label set is its identity
//	  fingerprint: fingerprint # the sender's own fingerprint, kept as sent
//	                           # (Alert.SentFingerprint), never the id
//	  links:                   # source, runbook, dashboard, panel, silence,
//	                           # alertmanager (openrecall.LinkKinds); only
//	                           # absolute http(s) URLs of at most 2 KiB
//	    source: url
//	    runbook: [runbook, /runbook]
//
// A sender that posts more than one shape at its one endpoint (a legacy
// notification, webhook versions) writes each as a version: a list in
// place of recognise, reject, items, tags, pairs, let and parts, the head
// (name to doc, open) shared:
//
//	versions:                  # at least two, each read as a mapping of its own
//	  - recognise: [has: event_definition_id]
//	    parts: {title: event.message}
//	  - recognise: [{is: {check_result: object, stream: object}}]
//	    when: [{is: {check_result: object}}]
//	    parts: {title: check_result.result_description}
//
// The sender recognises what some version recognises. Reading, the versions
// are tried in order: the first whose when holds (conditions of the
// payload, as recognise's; without when, its recognise) reads it; a
// payload none takes (one sent to the sender's endpoint, --format) is read
// by the last. A version's lets, tags and paths are its own.
//
// A candidate list is one candidate or a list of them; the first that
// applies (when) and gives a non-blank value wins, trimmed, and names the
// part's origin (as, or the path it read). A candidate is:
//
//	a.b.c            a path, read as Value.Path reads it (a dotted key or
//	                 nested objects); "/a.b" from the payload's top when the
//	                 alert is an item; "" the alert itself; "a[0].b" reads
//	                 element 0 of the array a (quote it in YAML's flow style)
//	$name            a let (its origin is its candidate's)
//	{path: p}        the same, with options
//	{expr: '…'}      an expression giving text; in title, severity, service,
//	                 environment, rule and id it needs as: the field it reads
//	{value: text}    a constant
//	{of: [p, q], prefix: x-, sep: /}
//	                 every part (each a candidate list) present and rendered,
//	                 joined; else nothing (SetID's rule; the origin is the
//	                 parts' joined by "+")
//	{join: [p, q], evidence: {key: p}}   a text (JoinText, Evidence)
//	{member: name, in: path}
//	                 the member of exactly that name of the object at path,
//	                 for a name a path cannot spell ("ka.uri.param[command]",
//	                 "proc.name" never read as nested objects); its origin
//	                 is path.name
//	{tag: key} or {tag: [k1, k2]}        the value of the first such tag
//	{pair: key} or {pair: [k1, k2]}      the value of the first such pair
//	                 that is not blank; a key the pairs lack is read from
//	                 the alert's own member of that name; its origin is
//	                 the member's name when the alert has one, else the
//	                 pairs' path and the key ("fields.name")
//
// with options when: 'condition', as: origin (origin: 'expression': the
// origin computed, as text, from what the candidate reads), map: {value: text} (a
// table the value is looked up in; unlisted is blank), then: 'expression'
// (the value, when not blank, goes through an expression giving text that
// reads it as value: 'truncate(firstLine(value), 160)'; the origin stays
// the candidate's), and each: path (the candidate is read once per element
// of that array, the element as the alert: its paths and expressions read
// the element and no let or tag, and key is the element's index as text;
// over an object, once per member in name order, key its name, and a
// candidate reading the member itself ("") names its origin path.key; the
// first element giving a non-blank value wins, or the last with pick:
// last; decode: json reads an array sent as JSON text, "[…]", as the
// array it encodes).
//
// A condition (recognise, status) is an expression that is true or false
// (a scalar), or one of:
//
//	has: path | [paths]        each holds a value (not null, not absent)
//	is: {path: kind, …}        null, object, array, string, number or bool
//	equals: {field: value, …}  a path or $let, compared folded (FoldLevel)
//	one_of: {field: [values]}  likewise, any of the values
//	any: [conditions]          all: [conditions]          not: condition
//
// Loading checks everything: an unknown key, a bad path, an unknown name in
// an expression, a condition that is not true or false, a candidate that is
// not text, a let read before it is declared; each error names the file,
// the line and the field ("acme.yaml:14: parts.title[1].expr: unknown name
// hb (column 1)"). At run time an expression that fails (an index out of
// range) gives blank or false: a payload is never rejected for it.

// builtinFS holds the built-in senders that are mappings.
//
//go:embed mappings/*.yaml
var builtinFS embed.FS

// LoadMappings reads every mapping file (*.yaml, *.yml) in dir, in name
// order, validates each and returns the senders they define, in file
// order. An error names the file, the line and the field (DESIGN §3,
// "Senders as data"); nothing is returned then.
func LoadMappings(dir string) ([]Sender, error) {
	return loadMappings(os.DirFS(dir), ".", dir)
}

// loadMappings reads the mapping files of dir in fsys; errors name the
// files under shown.
func loadMappings(fsys fs.FS, dir, shown string) ([]Sender, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("sender mappings: %w", err)
	}
	var (
		out   []Sender
		errs  []error
		names = map[string]string{}
	)
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || ext != ".yaml" && ext != ".yml" {
			continue
		}
		file := filepath.Join(shown, e.Name())
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
			continue
		}
		m, err := parseMapping(file, body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := names[m.name]; dup {
			errs = append(errs, fmt.Errorf("%s:%d: name: %q is already the name of %s", file, m.nameLine, m.name, other))
			continue
		}
		names[m.name] = file
		out = append(out, m.sender())
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// builtinMappings loads the embedded mappings once: they are part of the
// binary, immutable once loaded, and TestBuiltinMappings holds them valid.
var builtinMappings = sync.OnceValues(func() (map[string]Sender, error) {
	senders, err := loadMappings(builtinFS, "mappings", "mappings")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Sender, len(senders))
	for _, s := range senders {
		out[s.Name] = s
	}
	return out, nil
})

// mapped returns the built-in sender the embedded mapping of that name
// defines. A built-in mapping that does not load is a defect of the build
// (TestBuiltinMappings fails on it), not of any input: it panics.
func mapped(name string) Sender {
	all, err := builtinMappings()
	if err != nil {
		panic("sender: built-in mappings: " + err.Error())
	}
	s, ok := all[name]
	if !ok {
		panic("sender: no built-in mapping " + name)
	}
	return s
}

// sender builds the Sender a mapping defines: its Match and Map read
// payloads as the mapping says. The mapping is immutable, so the functions
// are safe for concurrent use.
func (m *mapping) sender() Sender {
	s := Sender{
		Name:     m.name,
		Display:  m.display,
		Security: m.security,
		Episode:  m.episode,
		Match:    m.match,
		Map:      m.read,
		Levels:   append([]string(nil), m.levels...),
		Doc:      m.doc,
		mapping:  m,
	}
	if m.scale != nil {
		s.Severity = m.severityOf
	}
	if m.open != nil {
		s.Open = m.openEnvelope
	}
	if m.versions != nil {
		s.Match, s.Map = m.matchVersions, m.readVersions
	}
	return s
}

// membersRead returns the member names a mapping's {member: name, in:
// path} candidates read of the object at path (as written in the mapping),
// in the order first read; nil for a sender that is no mapping. Glue that
// rebuilds a payload from another form (Forwarded) asks it which members
// to fill.
func (s Sender) membersRead(path string) []string {
	if s.mapping == nil {
		return nil
	}
	return slices.Clone(s.mapping.memberNames[path])
}

// isLink reports whether s is a link a mapping keeps: one
// openrecall.LinkOK accepts (an absolute http or https URL; openrecall
// never follows one).
func isLink(s string) bool { return openrecall.LinkOK(s) }
