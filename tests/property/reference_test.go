package property

// The reference interpreter of the fingerprint engine: the Alert DNA and the
// identity as the rules file (its header), DESIGN §4 and the ATT&CK
// package's documentation define them, written to be plainly right rather
// than fast — regular expressions where the product has hand-written scans,
// every rule tried on every source in a sorted list, no prefilter, no cache.
// The fast extractor must agree with it exactly (P35, P47 and
// TestFastExtractorMatchesReference).
//
// It shares with the product only:
//   - the rules data: fingerprint/rules.yaml, read from disk and decoded here
//     with the YAML library (the product embeds the same file);
//   - the ATT&CK data: fingerprint/attack/enterprise.tsv, read from disk and
//     parsed here;
//   - the root package's domain types (Alert, Fingerprint, Identity and the
//     field names);
//   - the title template, which its caller passes in: Template is a
//     function of its own, specified and checked by P56 and P57.
//
// Nothing else: no normalizer, placeholder, mask, pod-hash test, field
// cap, source order, regex compiler or ATT&CK scanner of the product.
// TestReferenceSharesOnlyData keeps this file's imports to the standard
// library, the root package and the YAML parser.

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
)

// The files the reference reads, relative to this package's directory.
var (
	refRulesFile  = filepath.Join("..", "..", "fingerprint", "rules.yaml")
	refAttackFile = filepath.Join("..", "..", "fingerprint", "attack", "enterprise.tsv")
)

// refMaxFieldBytes is the documented cap: "each field is read up to its
// first 8 KiB".
const refMaxFieldBytes = 8 * 1024

// refExtractor is the reference interpreter over the default rules.
type refExtractor struct {
	norm     *refNormalizer
	fields   []refField
	identity []refIdentityRule
	// readsFields: some rule reads the fields source.
	readsFields bool
	attack      *refAttack
	template    func(string) string
}

type refField struct {
	name  string
	steps []refStep // in precedence order
}

// refStep is one rule on one source.
type refStep struct {
	source string
	table  map[string]string // lowercased, trimmed key → value
	re     *regexp.Regexp
	value  string
}

type refIdentityRule struct {
	rules  []string // lowercased
	re     *regexp.Regexp
	labels [][]string
}

// The rules file as data.
type refRulesDoc struct {
	Fields map[string]struct {
		Tables []struct {
			Name     string            `yaml:"name"`
			Sources  []string          `yaml:"sources"`
			Fallback bool              `yaml:"fallback"`
			Values   map[string]string `yaml:"values"`
		} `yaml:"tables"`
		Patterns []struct {
			Name     string   `yaml:"name"`
			Value    string   `yaml:"value"`
			Regex    string   `yaml:"regex"`
			Sources  []string `yaml:"sources"`
			Fallback bool     `yaml:"fallback"`
			Disabled bool     `yaml:"disabled"`
		} `yaml:"patterns"`
	} `yaml:"fields"`
	Identity []struct {
		Name     string   `yaml:"name"`
		Rules    []string `yaml:"rules"`
		Regex    string   `yaml:"regex"`
		Labels   []string `yaml:"labels"`
		Disabled bool     `yaml:"disabled"`
	} `yaml:"identity"`
}

// refCompile compiles a rule's regex: RE2 syntax, "matched
// case-insensitively".
func refCompile(s string) (*regexp.Regexp, error) { return regexp.Compile("(?i)" + s) }

// newRefExtractor reads the default rules and the ATT&CK table from disk;
// template is the title template of the identity.
func newRefExtractor(template func(string) string) (*refExtractor, error) {
	data, err := os.ReadFile(refRulesFile)
	if err != nil {
		return nil, err
	}
	var doc refRulesDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", refRulesFile, err)
	}
	e := &refExtractor{norm: newRefNormalizer(), template: template}
	if e.attack, err = readRefAttack(refAttackFile); err != nil {
		return nil, err
	}
	for _, field := range openrecall.FingerprintFields {
		fd := doc.Fields[field]
		// Every rule of the field with its place in the precedence: the
		// kind (ordinary before fallback), then the source, then tables
		// before patterns, then file order.
		type candidate struct {
			step     refStep
			fallback bool
			pattern  bool
			index    int
		}
		var cands []candidate
		add := func(sources []string, fallback, pattern bool, index int, st refStep) {
			for _, src := range sources {
				st.source = src
				cands = append(cands, candidate{step: st, fallback: fallback, pattern: pattern, index: index})
			}
		}
		for i, t := range fd.Tables {
			values := map[string]string{}
			for k, v := range t.Values {
				values[strings.ToLower(strings.TrimSpace(k))] = v
			}
			add(t.Sources, t.Fallback, false, i, refStep{table: values})
		}
		for i, p := range fd.Patterns {
			if p.Disabled {
				continue
			}
			re, err := refCompile(p.Regex)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %s: %w", refRulesFile, field, p.Name, err)
			}
			sources := p.Sources
			if sources == nil {
				sources = []string{"title", "text"}
			}
			add(sources, p.Fallback, true, i, refStep{re: re, value: p.Value})
		}
		// A label's rank is where its name first appears among the rules
		// of its kind, tables first, in file order (cands is in that order).
		labelRank := map[bool]map[string]int{false: {}, true: {}}
		for _, c := range cands {
			if strings.HasPrefix(c.step.source, "label:") {
				if _, ok := labelRank[c.fallback][c.step.source]; !ok {
					labelRank[c.fallback][c.step.source] = len(labelRank[c.fallback])
				}
			}
		}
		rank := func(c candidate) int {
			switch c.step.source {
			case "environment":
				return 0
			case "service":
				return 1000
			case "title":
				return 1001
			case "text":
				return 1002
			case "fields":
				return 1003
			}
			return 1 + labelRank[c.fallback][c.step.source]
		}
		sort.SliceStable(cands, func(i, j int) bool {
			a, b := cands[i], cands[j]
			if a.fallback != b.fallback {
				return !a.fallback
			}
			if ra, rb := rank(a), rank(b); ra != rb {
				return ra < rb
			}
			if a.pattern != b.pattern {
				return !a.pattern
			}
			return a.index < b.index
		})
		f := refField{name: field}
		for _, c := range cands {
			f.steps = append(f.steps, c.step)
			e.readsFields = e.readsFields || c.step.source == "fields"
		}
		e.fields = append(e.fields, f)
	}
	for _, ir := range doc.Identity {
		if ir.Disabled {
			continue
		}
		r := refIdentityRule{}
		for _, name := range ir.Rules {
			r.rules = append(r.rules, strings.ToLower(strings.TrimSpace(name)))
		}
		if ir.Regex != "" {
			if r.re, err = refCompile(ir.Regex); err != nil {
				return nil, fmt.Errorf("%s: identity %s: %w", refRulesFile, ir.Name, err)
			}
		}
		for _, l := range ir.Labels {
			r.labels = append(r.labels, strings.Split(l, "|"))
		}
		e.identity = append(e.identity, r)
	}
	return e, nil
}

// refCap keeps the longest prefix of s of at most refMaxFieldBytes bytes
// that ends at a rune boundary.
func refCap(s string) string {
	if len(s) <= refMaxFieldBytes {
		return s
	}
	cut := 0
	for i := range s {
		if i > refMaxFieldBytes {
			break
		}
		cut = i
	}
	return s[:cut]
}

// refCollapse trims s and collapses its runs of white space to one space.
func refCollapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// refPodOwner is a Deployment pod's name with its replica-set hash and pod
// suffix (Kubernetes' vowel-free alphabet).
var refPodOwner = regexp.MustCompile(`^([a-z0-9]+(?:[-_.][a-z0-9]+)*?)-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

// refCronRun is a CronJob run's name (its scheduled time in minutes, eight
// digits) with, optionally, its pod's random suffix.
var refCronRun = regexp.MustCompile(`^(.+)-[0-9]{8}(?:-[a-z0-9]{5})?$`)

// identify returns the reference identity of a (DESIGN §4): the rule — a
// sender's rule as sent, else (not for an unrecognised JSON object, which
// has no identity) the alertname, else a PagerDuty class, else the template
// of the summary or title — and the service: a sender's own service first,
// else the first present service label, else the alert's service (never
// for PagerDuty); then the labels of the first identity rule that matches
// the rule, each after a "/".
func (e *refExtractor) identify(a openrecall.Alert) openrecall.Identity {
	svc := func(s string) string { return strings.ToLower(refCollapse(s)) }
	var id openrecall.Identity
	pd := a.Format == "pagerduty"
	sent := refCollapse(a.Rule)
	switch {
	case sent != "":
		id.Rule = sent
		id.Service = svc(a.Service)
	case a.Sender == "json":
		return openrecall.Identity{}
	case refCollapse(a.Labels["alertname"]) != "":
		id.Rule = refCollapse(a.Labels["alertname"])
	case pd && refCollapse(a.Labels["class"]) != "":
		id.Rule = refCollapse(a.Labels["class"])
	case strings.TrimSpace(a.Annotations["summary"]) != "":
		id.Rule = e.template(a.Annotations["summary"])
	default:
		id.Rule = e.template(a.Title)
	}
	if id.Rule == "" {
		return openrecall.Identity{}
	}
	for _, k := range []string{"service", "app", "app.kubernetes.io/name", "container", "component", "job"} {
		if v := svc(a.Labels[k]); v != "" && id.Service == "" {
			id.Service = v
		}
	}
	if id.Service == "" && !pd {
		id.Service = svc(a.Service)
	}
	lower := strings.ToLower(id.Rule)
	for _, ir := range e.identity {
		if !slices.Contains(ir.rules, lower) && (ir.re == nil || !ir.re.MatchString(lower)) {
			continue
		}
		parts := []string{}
		if id.Service != "" {
			parts = append(parts, id.Service)
		}
		found := false
		for _, alts := range ir.labels {
			for _, l := range alts {
				v := svc(a.Labels[l])
				if v == "" {
					continue
				}
				switch m := refPodOwner.FindStringSubmatch(v); {
				case m != nil && (l == "pod" || l == "pod_name" || !strings.ContainsAny(v, ".:/")):
					v = m[1]
				case l == "pod" || l == "pod_name":
					v = e.norm.name(v)
				case !strings.ContainsAny(v, ".:/"):
					if m := refCronRun.FindStringSubmatch(v); m != nil {
						v = m[1]
					}
				}
				parts, found = append(parts, v), true
				break
			}
		}
		if found {
			id.Service = strings.Join(parts, "/")
		}
		break
	}
	return id
}

// inputs returns the title, text and fields of a as the patterns read them:
// the title; the text, summary and description, trimmed, without empty
// parts or repeats, one per line; every label then annotation value in key
// order, each on its own line (empty when no rule reads the fields). Each
// field capped, then normalized.
//
// The host a sender adapter names (its Source, when it names no sender)
// is blanked out of each capped value wherever it is a whole word (DESIGN
// §4: evidence).
func (e *refExtractor) inputs(a openrecall.Alert) (title, text, fields string) {
	mask := refHostMask(a)
	title = e.norm.normalize(mask(refCap(a.Title)))
	var parts []string
	for _, p := range []string{a.Text, a.Annotations["summary"], a.Annotations["description"]} {
		if p = strings.TrimSpace(refCap(p)); p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	for i := range parts {
		parts[i] = mask(parts[i])
	}
	text = e.norm.normalize(strings.Join(parts, "\n"))
	if !e.readsFields {
		return title, text, ""
	}
	var lines []string
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			lines = append(lines, mask(refCap(m[k]))+"\n")
		}
	}
	return title, text, e.norm.normalize(strings.Join(lines, ""))
}

// refHostPatterns holds refHostMask's pattern by host.
var refHostPatterns sync.Map

// refHostMask returns what blanks out the host of a in a value: every
// whole-word occurrence, letters compared without case, a word being a
// run of ASCII letters, digits, underscores and non-ASCII runes. The
// pattern consumes the characters around a match, so it is applied until
// nothing changes (two hosts one space apart).
func refHostMask(a openrecall.Alert) func(string) string {
	if a.Sender == "" || a.Source == a.Sender || a.Source == "" || strings.EqualFold(a.Source, a.Service) {
		return func(s string) string { return s }
	}
	re, ok := refHostPatterns.Load(a.Source)
	if !ok {
		re, _ = refHostPatterns.LoadOrStore(a.Source, regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_\x{80}-\x{10FFFF}])`+regexp.QuoteMeta(a.Source)+`($|[^A-Za-z0-9_\x{80}-\x{10FFFF}])`))
	}
	return func(s string) string {
		re := re.(*regexp.Regexp)
		for {
			t := re.ReplaceAllString(s, "$1 $2")
			if t == s {
				return s
			}
			s = t
		}
	}
}

// extract returns the reference Alert DNA of a.
func (e *refExtractor) extract(a openrecall.Alert) openrecall.Fingerprint {
	title, text, fields := e.inputs(a)
	a.Security = refDetection(a)
	var fp openrecall.Fingerprint
	for _, f := range e.fields {
		// DESIGN §4: a detection's error class, dependency, signal shape
		// and attack pattern never come from its text or field values,
		// which are evidence.
		evidence := a.Security && (f.name == openrecall.FieldErrorClass || f.name == openrecall.FieldDependencyPattern || f.name == openrecall.FieldSignalShape || f.name == openrecall.FieldAttackPattern)
		for _, st := range f.steps {
			if evidence && (st.source == "text" || st.source == "fields") {
				continue
			}
			if v, ok := e.try(a, st, title, text, fields); ok {
				fp, _ = fp.With(f.name, v)
				break
			}
		}
	}
	// DESIGN §4: an ATT&CK reference anywhere in the alert gives its
	// tactic, over any word; else a security sender's alert is at least a
	// security detection.
	if p := e.attack.pattern(a); p != "" {
		fp.AttackPattern = p
	} else if fp.AttackPattern == "" && a.Security {
		fp.AttackPattern = "security_detection"
	}
	return fp
}

// try applies one step: a pattern to the normalized title, text or fields;
// a table (to the value as written and to its name) or a pattern (to its
// name) on the environment, the service or a label. A table on title, text
// or fields looks up nothing.
func (e *refExtractor) try(a openrecall.Alert, st refStep, title, text, fields string) (string, bool) {
	var v string
	switch st.source {
	case "title", "text", "fields":
		s := map[string]string{"title": title, "text": text, "fields": fields}[st.source]
		return st.value, st.re != nil && s != "" && st.re.MatchString(s)
	case "environment":
		v = a.Environment
	case "service":
		v = a.Service
	default:
		v = refHostMask(a)(refCap(a.Labels[strings.TrimPrefix(st.source, "label:")]))
	}
	v = strings.TrimSpace(refCap(v))
	if v == "" {
		return "", false
	}
	written, name := strings.ToLower(v), e.norm.name(v)
	if st.table != nil {
		for _, k := range []string{written, name} {
			if val := st.table[k]; val != "" {
				return val, true
			}
		}
		return "", false
	}
	return st.value, st.re.MatchString(name)
}

// The reference normalizer: the chain of regular-expression passes the
// rules file's header describes.

// refNormalizer holds the compiled expressions. It is immutable after
// newRefNormalizer and safe for concurrent use.
type refNormalizer struct {
	timestamp, clock, uuid, ipv6, ipv4, pod, hex, number *regexp.Regexp
	duration, quantity, statusKey, reason, timeWord      *regexp.Regexp
	nameTail                                             *regexp.Regexp
}

func newRefNormalizer() *refNormalizer {
	const timeUnits = `ns|us|ms|s|m|h|d|w|sec|secs|second|seconds|min|mins|minute|minutes|hr|hrs|hour|hours|day|days|week|weeks`
	return &refNormalizer{
		// RFC 3339 / ISO 8601 date-times and bare dates.
		timestamp: regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b`),
		// Times of day such as 03:42:06 or 03:42:06.123.
		clock: regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`),
		uuid:  regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		// IPv6 candidates, checked with netip: optional brackets and port.
		ipv6: regexp.MustCompile(`\[?[0-9a-f]{0,4}:[0-9a-f:.]*:[0-9a-f.]*\]?(?::\d{1,5})?`),
		ipv4: regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?::\d{1,5})?\b`),
		// Deployment pods: NAME-<replicaset hash>-<suffix>.
		pod: regexp.MustCompile(`\b([a-z0-9]+(?:[-_][a-z0-9]+)*?)-([a-z0-9]{6,10})-([a-z0-9]{4,5})\b`),
		hex: regexp.MustCompile(`\b(0x)?[0-9a-f]{8,}\b`),
		// A number, possibly with unit suffixes (5m, 1h30m, 512mi, 5xx).
		number: regexp.MustCompile(`\b\d+(?:[.,]\d+)*(?:[a-z]+\d+(?:[.,]\d+)*)*[a-z]*\b`),
		// One or more groups of a number and a time unit.
		duration: regexp.MustCompile(`^(?:[0-9.,]+(?:` + timeUnits + `))+$`),
		// A number and a unit of quantity.
		quantity: regexp.MustCompile(`^[0-9.,]+(?:b|k|kb|kib|ki|mb|mib|mi|gb|gib|gi|tb|tib|ti|pb|x|rps|qps|ops|st|nd|rd|th|pct|mbps|gbps)$`),
		// Keywords after which a 3-digit number is an HTTP status code.
		statusKey: regexp.MustCompile(`(?:\bhttps?(?:/\d(?:\.\d)?|/<num>)?|\bstatus(?:[ _]?code)?|\bcode|\breturned|\breturns|\breturning|\bresponse|\bresponded|\berror|\berrors|\bgot)\s*[:=]?\s*$`),
		// Reason phrases that follow an HTTP status code.
		reason:   regexp.MustCompile(`^\s+(?:ok|created|accepted|no content|moved|found|not modified|bad request|unauthori[sz]ed|forbidden|not found|method not allowed|conflict|gone|too many requests|internal server error|not implemented|bad gateway|service unavailable|gateway time-?out)\b`),
		timeWord: regexp.MustCompile(`^\s*(?:ms|milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\b`),
		nameTail: regexp.MustCompile(`(?:-([a-z0-9]{6,10})-[a-z0-9]{4,5}|-\d+)$`),
	}
}

// replaceFunc replaces every match of re in s with what fn returns for the
// match's submatches.
func replaceFunc(re *regexp.Regexp, s string, fn func(sub []string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		sub := make([]string, len(m)/2)
		for i := range sub {
			if m[2*i] >= 0 {
				sub[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(fn(sub))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

func (n *refNormalizer) normalize(s string) string {
	s = strings.ToLower(s)
	s = n.timestamp.ReplaceAllLiteralString(s, "<ts>")
	s = n.clock.ReplaceAllLiteralString(s, "<ts>")
	s = n.uuid.ReplaceAllLiteralString(s, "<uuid>")
	s = replaceFunc(n.ipv6, s, func(sub []string) string { return refMaskIPv6(sub[0]) })
	s = replaceFunc(n.ipv4, s, func(sub []string) string { return refMaskIPv4(sub[0]) })
	s = replaceFunc(n.pod, s, func(sub []string) string {
		if !refHasDigit(sub[2]) {
			return sub[0] // a word, not a replica-set hash
		}
		return sub[1] + "-<pod>"
	})
	s = replaceFunc(n.hex, s, func(sub []string) string {
		// Without 0x, a run needs a digit and a letter: deadbeef is a word,
		// 12345678 a number (the number pass takes it).
		if sub[1] == "" && (!refHasDigit(sub[0]) || !strings.ContainsAny(sub[0], "abcdef")) {
			return sub[0]
		}
		return "<hex>"
	})
	return n.numbers(s)
}

// numbers replaces every number: a 3-digit HTTP status code after a
// keyword or before a reason phrase stays; a number followed by a time word
// is a duration with it; a duration is <dur>; a number (with a unit of
// quantity) is <num>; a word such as 5xx, s3 or t1110 stays.
func (n *refNormalizer) numbers(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range n.number.FindAllStringIndex(s, -1) {
		start, end := m[0], m[1]
		b.WriteString(s[last:start])
		last = end
		tok := s[start:end]
		endsInDigit := refHasDigit(tok[len(tok)-1:])
		switch {
		case endsInDigit && n.isStatusCode(s, start, end):
			b.WriteString(tok)
		case endsInDigit && n.timeWord.MatchString(s[end:]):
			b.WriteString("<dur>")
			last = end + len(n.timeWord.FindString(s[end:]))
		case endsInDigit:
			b.WriteString("<num>")
		case n.duration.MatchString(tok):
			b.WriteString("<dur>")
		case n.quantity.MatchString(tok):
			b.WriteString("<num>")
		default:
			b.WriteString(tok)
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// refStatusCode is a 3-digit HTTP status code.
var refStatusCode = regexp.MustCompile(`^[1-5][0-9][0-9]$`)

// isStatusCode reports whether s[start:end] is an HTTP status code in a
// context that says so: not part of a dotted, dashed or path value (10.500,
// id-500, /500), and a keyword in the 24 bytes before it or a reason phrase
// after it.
func (n *refNormalizer) isStatusCode(s string, start, end int) bool {
	if !refStatusCode.MatchString(s[start:end]) || start > 0 && strings.ContainsRune(".-/_", rune(s[start-1])) {
		return false
	}
	return n.statusKey.MatchString(s[max(0, start-24):start]) || n.reason.MatchString(s[end:])
}

// refMaskIPv6 masks an IPv6 candidate that is an address, brackets and a
// port after them included. Colons right after an address (which netip
// rejects with them) end the sentence: one stays after the mask, more are
// taken for a port, and none stays after the metadata address.
func refMaskIPv6(m string) string {
	if len(m) < 3 || !refHasDigit(m) {
		return m // "std::vector", "a::b"
	}
	addr, rest := strings.TrimPrefix(m, "["), ""
	if i := strings.Index(addr, "]"); i >= 0 {
		addr, rest = addr[:i], addr[i+1:]
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		trimmed := strings.TrimRight(addr, ":")
		if ip, err = netip.ParseAddr(trimmed); err != nil {
			return m
		}
		rest = addr[len(trimmed):] + rest
	}
	switch {
	case !ip.Is6():
		return m
	case ip == netip.MustParseAddr("fd00:ec2::254"):
		return "<metadata_ip>"
	case len(rest) > 1:
		return "<ip>" // a port
	}
	return "<ip>" + rest
}

// refMaskIPv4 masks an IPv4 address with an optional port.
func refMaskIPv4(m string) string {
	addr, _, _ := strings.Cut(m, ":")
	switch ip, err := netip.ParseAddr(addr); {
	case err != nil:
		return m
	case ip == netip.MustParseAddr("169.254.169.254"):
		return "<metadata_ip>"
	}
	return "<ip>"
}

// name prepares a label, service or environment value for the rules:
// lowercased, trimmed, and without trailing pod hashes (with a digit in the
// hash) or ordinals, unless that would leave nothing.
func (n *refNormalizer) name(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	for {
		m := n.nameTail.FindStringSubmatchIndex(v)
		if m == nil || m[0] == 0 || m[2] >= 0 && !refHasDigit(v[m[2]:m[3]]) {
			return v
		}
		v = v[:m[0]]
	}
}

func refHasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// The reference ATT&CK scanner (the attack package's documentation): every
// string of the alert searched at every position for a whole-token
// reference, with regular expressions.

// refAttackOrder is DESIGN §4's order of the attack_pattern values of the
// tactics: the first found wins.
var refAttackOrder = []string{"initial_access", "execution", "persistence", "privilege_escalation", "defense_evasion",
	"credential_access", "discovery", "lateral_movement", "collection", "command_and_control", "data_exfiltration",
	"impact", "reconnaissance", "resource_development"}

// refAttack is the ATT&CK table as the reference reads it.
type refAttack struct {
	tacticByID map[string]string   // "TA0004" → "privilege_escalation"
	tacticBy   map[string]string   // a tactic's name, shortname or value, folded (refTacticKey) → value
	techniques map[string][]string // "T1059.001" → the values of its tactics
	// named maps a technique's name as a SIEM writes it (refNameKey) to
	// the values of its tactics: a name counts when all techniques of that
	// name have the same tactics; "Parent: Sub" counts by the same rule
	// unless it is some technique's own name.
	named map[string][]string
}

// refTacticKey folds a tactic's name: lower case, words joined by '_'.
func refTacticKey(s string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(s))
}

// readRefAttack parses the table: tab-separated "tactic TAxxxx SHORTNAME
// NAME" and "technique Txxxx[.xxx] SHORTNAMES STATUS REVOKED_BY NAME" lines
// after '#' comments.
func readRefAttack(path string) (*refAttack, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t := &refAttack{tacticByID: map[string]string{}, tacticBy: map[string]string{}, techniques: map[string][]string{}}
	short := map[string]string{}
	names := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		switch f[0] {
		case "tactic":
			value := refTacticKey(f[2])
			if value == "exfiltration" {
				value = "data_exfiltration"
			}
			if !slices.Contains(refAttackOrder, value) {
				return nil, fmt.Errorf("%s: tactic %s has no attack_pattern value", path, f[2])
			}
			short[f[2]] = value
			t.tacticByID[f[1]] = value
			for _, k := range []string{f[2], f[3], value} {
				t.tacticBy[refTacticKey(k)] = value
			}
			if value == "defense_evasion" {
				// ATT&CK v19 split Defense Evasion into these two.
				t.tacticBy["stealth"], t.tacticBy["defense_impairment"] = value, value
			}
		case "technique":
			for _, s := range strings.Split(f[2], ",") {
				t.techniques[f[1]] = append(t.techniques[f[1]], short[s])
			}
			names[f[1]] = f[5]
		}
	}
	t.named = map[string][]string{}
	own, full := map[string][]string{}, map[string][]string{}
	for id, name := range names {
		own[refNameKey(name)] = append(own[refNameKey(name)], id)
		if base, _, ok := strings.Cut(id, "."); ok && names[base] != "" {
			k := refNameKey(names[base] + ": " + name)
			full[k] = append(full[k], id)
		}
	}
	same := func(ids []string) ([]string, bool) {
		set := func(id string) string {
			x := slices.Clone(t.techniques[id])
			slices.Sort(x)
			return strings.Join(slices.Compact(x), ",")
		}
		for _, id := range ids {
			if set(id) != set(ids[0]) {
				return nil, false
			}
		}
		return t.techniques[ids[0]], true
	}
	for k, ids := range own {
		if tactics, ok := same(ids); ok && k != "" {
			t.named[k] = tactics
		}
	}
	for k, ids := range full {
		if _, isOwn := own[k]; !isOwn {
			if tactics, ok := same(ids); ok && k != "" {
				t.named[k] = tactics
			}
		}
	}
	if len(t.tacticByID) == 0 || len(t.techniques) == 0 {
		return nil, fmt.Errorf("%s: no tactics or no techniques", path)
	}
	return t, nil
}

var (
	// refTokenEnd: what may follow a whole token — nothing, or neither a
	// letter, digit or _, nor . / \ @ before a letter or digit, nor - before
	// a digit.
	refTokenEnd      = regexp.MustCompile(`^(?:$|[^A-Za-z0-9_./\\@-]|[./\\@](?:$|[^A-Za-z0-9])|-(?:$|[^0-9]))`)
	refBareTactic    = regexp.MustCompile(`^TA[0-9]{4}`)
	refBareTechnique = regexp.MustCompile(`^T([0-9]{4})(?:[._/]([0-9]{3}))?`)
	// In a declared value a bare id may be written in lower case.
	refDeclTactic    = regexp.MustCompile(`^(?i:ta)[0-9]{4}`)
	refDeclTechnique = regexp.MustCompile(`^[Tt]([0-9]{4})(?:[._/]([0-9]{3}))?`)
	refURL           = regexp.MustCompile(`^(?i:attack\.mitre\.org/)(?:(?i:versions/v)[0-9.]*/)?(?i:techniques/|tactics/)`)
	refSigma         = regexp.MustCompile(`^(?i:attack\.)`)
	refSigmaTactic   = regexp.MustCompile(`^(?i:ta[0-9]{4})`)
	refSigmaTech     = regexp.MustCompile(`^[Tt]([0-9]{4})(?:[._/]([0-9]{3}))?`)
	refSigmaWord     = regexp.MustCompile(`^[A-Za-z_-]+`)
	refFalco         = regexp.MustCompile(`^(?i:mitre_)([A-Za-z_]+)`)
	refTacticIDValue = regexp.MustCompile(`^(?i:ta[0-9]{4})$`)
)

// refJoins reports whether a token after c would be part of a longer word,
// id, file name or path: c is a letter, a digit or one of _ . / \ - @ $ %.
func refJoins(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(`_./\-@$%`, c) >= 0
}

// technique returns the tactics of a technique reference: base and sub
// are the digits of T1059.001 (sub "" or "000": none); an unknown
// sub-technique counts as its parent. It returns the token's length too.
func (t *refAttack) technique(base, sub string) ([]string, int) {
	if sub != "" && sub != "000" {
		if tactics, ok := t.techniques["T"+base+"."+sub]; ok {
			return tactics, 9
		}
		return t.techniques["T"+base], 9
	}
	return t.techniques["T"+base], 5
}

// text adds the tactics that the references in s name: to declared for a
// Sigma or Falco tag or an ATT&CK URL, and for any reference when decl
// (s is a declared value), else to found.
func (t *refAttack) text(s string, decl bool, found, declared map[string]bool) {
	whole := func(rest string, n int) bool { return n > 0 && refTokenEnd.MatchString(rest[n:]) }
	add := func(to map[string]bool, values ...string) {
		for _, v := range values {
			if v != "" {
				to[v] = true
			}
		}
	}
	bare := found
	bareTactic, bareTechnique := refBareTactic, refBareTechnique
	if decl {
		bare, bareTactic, bareTechnique = declared, refDeclTactic, refDeclTechnique
	}
	for i := range len(s) {
		rest := s[i:]
		// An ATT&CK URL counts wherever it starts.
		if p := refURL.FindString(rest); p != "" {
			body := rest[len(p):]
			if m := refDeclTactic.FindString(body); m != "" {
				if whole(body, len(m)) && t.tacticByID[strings.ToUpper(m)] != "" {
					add(declared, t.tacticByID[strings.ToUpper(m)])
					continue
				}
			} else if m := refDeclTechnique.FindStringSubmatch(body); m != nil {
				if tactics, n := t.technique(m[1], m[2]); whole(body, n) && len(tactics) > 0 {
					add(declared, tactics...)
					continue
				}
			}
		}
		// Every other reference starts with T (an id), a (a Sigma tag) or
		// m (a Falco tag), in either case.
		if !strings.ContainsRune("TtAaMm", rune(s[i])) || i > 0 && refJoins(s[i-1]) {
			continue
		}
		if m := bareTactic.FindString(rest); whole(rest, len(m)) && t.tacticByID[strings.ToUpper(m)] != "" {
			add(bare, t.tacticByID[strings.ToUpper(m)])
		}
		if m := bareTechnique.FindStringSubmatch(rest); m != nil {
			if tactics, n := t.technique(m[1], m[2]); whole(rest, n) {
				add(bare, tactics...)
			}
		}
		if p := refSigma.FindString(rest); p != "" {
			body := rest[len(p):]
			if m := refSigmaTactic.FindString(body); whole(body, len(m)) {
				add(declared, t.tacticByID[strings.ToUpper(m)])
			}
			if m := refSigmaTech.FindStringSubmatch(body); m != nil {
				if tactics, n := t.technique(m[1], m[2]); whole(body, n) {
					add(declared, tactics...)
				}
			}
			if m := refSigmaWord.FindString(body); whole(body, len(m)) {
				add(declared, t.tacticOf(m))
			}
		}
		if m := refFalco.FindStringSubmatch(rest); m != nil && whole(rest, len(m[0])) {
			add(declared, t.tacticOf(m[1]))
		}
	}
}

// tacticOf returns the attack_pattern value a tactic's name, shortname or
// value names (at most 32 bytes): words joined by spaces, '-' or '_' in any
// case, or written together with no separator ("CredentialAccess").
func (t *refAttack) tacticOf(w string) string {
	if len(w) > 32 {
		return ""
	}
	if strings.ContainsAny(w, " -_") {
		return t.tacticBy[refTacticKey(w)]
	}
	for k, v := range t.tacticBy {
		if strings.ReplaceAll(k, "_", "") == refLowerASCII(w) {
			return v
		}
	}
	return ""
}

// value adds to declared the tactics a declared value names: a list joined
// by , ; | or line breaks, each item (trimmed of blanks and quotes) a
// tactic id, a tactic's name, a technique's name, or what its text names
// as declared, else, when it holds a space and its text named nothing new,
// its runs of one to three words that are tactic names.
func (t *refAttack) value(v string, found, declared map[string]bool) {
	for _, item := range regexp.MustCompile("[,;|\n]").Split(v, -1) {
		w := strings.Trim(item, " \t\"'")
		if w == "" {
			continue
		}
		if refTacticIDValue.MatchString(w) && t.tacticByID[strings.ToUpper(w)] != "" {
			declared[t.tacticByID[strings.ToUpper(w)]] = true
			continue
		}
		if p := t.tacticOf(w); p != "" {
			declared[p] = true
			continue
		}
		if tactics, ok := t.named[refNameKey(w)]; ok && len(w) >= 3 && len(w) <= 120 {
			for _, p := range tactics {
				declared[p] = true
			}
			continue
		}
		before := len(declared)
		t.text(w, true, found, declared)
		if len(declared) != before || !strings.Contains(w, " ") {
			continue
		}
		words := strings.Fields(w)
		for i := range words {
			for n := 3; n >= 1; n-- {
				if i+n <= len(words) {
					if p := t.tacticOf(strings.Join(words[i:i+n], " ")); p != "" {
						declared[p] = true
						break
					}
				}
			}
		}
	}
}

// refNameKey is a technique name as the reference keys it: ASCII letters
// lowered, each run of characters other than ASCII letters and digits and
// non-ASCII runes one space, trimmed of spaces.
func refNameKey(s string) string {
	return strings.Trim(refNameRun.ReplaceAllString(refLowerASCII(s), " "), " ")
}

var refNameRun = regexp.MustCompile(`[^a-z0-9\x{80}-\x{10FFFF}]+`)

// refLowerASCII lowers the ASCII letters of s only.
func refLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// refAttackKey: a key says it holds ATT&CK when, its ASCII letters lowered,
// it contains mitre, tactic, techni or attack, is threat or starts with
// threat., or one of its '.'-separated segments is tags or tag.
func refAttackKey(k string) bool {
	l := refLowerASCII(k)
	for _, w := range []string{"mitre", "tactic", "techni", "attack"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	if l == "threat" || strings.HasPrefix(l, "threat.") {
		return true
	}
	for _, seg := range strings.Split(l, ".") {
		if seg == "tags" || seg == "tag" {
			return true
		}
	}
	return false
}

// pattern returns the attack_pattern of the ATT&CK references anywhere in
// a (title, text, rule, every label, annotation and field value; a value
// whose key says it holds ATT&CK read as declared): the first declared in
// DESIGN §4's order, else the first found.
func (t *refAttack) pattern(a openrecall.Alert) string {
	found, declared := map[string]bool{}, map[string]bool{}
	for _, s := range []string{a.Title, a.Text, a.Rule} {
		t.text(s, false, found, declared)
	}
	for _, m := range []map[string]string{a.Labels, a.Annotations, a.Fields} {
		for k, v := range m {
			if refAttackKey(k) {
				t.value(v, found, declared)
			} else {
				t.text(v, false, found, declared)
			}
		}
	}
	for _, set := range []map[string]bool{declared, found} {
		for _, p := range refAttackOrder {
			if set[p] {
				return p
			}
		}
	}
	return ""
}

// The reference of security detections without a security sender (DESIGN
// §4): fingerprint/product/products.tsv read from disk, each spelling
// matched by regular expressions over a value's words.

// refProducts are the spellings: their words, and whether only the whole
// value counts.
type refSpelling struct {
	words []string
	whole bool
}

var refProducts = sync.OnceValue(func() []refSpelling {
	data, err := os.ReadFile(filepath.Join("..", "..", "fingerprint", "product", "products.tsv"))
	if err != nil {
		panic(err)
	}
	var out []refSpelling
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, refSpelling{words: refWords(f[1]), whole: f[2] == "whole"})
	}
	return out
})

var refWord = regexp.MustCompile(`[a-z0-9\x{80}-\x{10FFFF}]+`)

func refWords(s string) []string { return refWord.FindAllString(refLowerASCII(s), -1) }

// refProduct: a value (at most 200 bytes) names a product when its words
// written together equal a spelling's, or, for a spelling not marked
// whole, when the spelling's words appear together among its words.
func refProduct(v string) bool {
	if v == "" || len(v) > 200 {
		return false
	}
	words := refWords(v)
	if len(words) == 0 {
		return false
	}
	for _, sp := range refProducts() {
		if strings.Join(words, "") == strings.Join(sp.words, "") {
			return true
		}
		if sp.whole {
			continue
		}
		for i := 0; i+len(sp.words) <= len(words); i++ {
			if slices.Equal(words[i:i+len(sp.words)], sp.words) {
				return true
			}
		}
	}
	return false
}

// refSourceKey: one of a key's runs of ASCII letters, lowered, says the
// value names the tool that sent the alert.
func refSourceKey(k string) bool {
	if len(k) > 200 {
		return false
	}
	for _, w := range regexp.MustCompile(`[A-Za-z]+`).FindAllString(k, -1) {
		switch strings.ToLower(w) {
		case "source", "sender", "tool", "product", "vendor", "provider", "integration", "detector", "logsource", "generator",
			"origin", "module", "producer", "engine", "platform", "productname", "providername", "sourcename":
			return true
		}
	}
	return false
}

// refDetection: an alert is a security detection when its sender is one,
// when the source of the product's own object or a source-like label,
// annotation or field names a security product, or when it has a
// detection's shape (a Sigma logsource, an ECS threat tactic, technique or
// framework, a rule level with ATT&CK tags).
func refDetection(a openrecall.Alert) bool {
	if a.Security || a.Sender == openrecall.SenderOwn && refProduct(a.Source) {
		return true
	}
	var level, tags bool
	for _, m := range []map[string]string{a.Labels, a.Annotations, a.Fields} {
		for k, v := range m {
			l := refLowerASCII(k)
			switch {
			case refSourceKey(k) && refProduct(v):
				return true
			case l == "logsource" || strings.HasPrefix(l, "logsource."):
				return true
			case strings.HasPrefix(l, "threat.tactic") || strings.HasPrefix(l, "threat.technique") || strings.HasPrefix(l, "threat.framework"):
				return true
			case l == "rule.level" || l == "rule.severity" || l == "level":
				level = true
			}
			if refAttackKey(k) && strings.Contains(refLowerASCII(v), "attack.") {
				tags = true
			}
		}
	}
	return level && tags
}
