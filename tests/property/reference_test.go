package property

// The naive reference of the fingerprint engine: the Alert DNA as the rules
// file defines it, with nothing clever. It reads the same rules (through
// Rules.Spec, so a rule change needs no second copy here), normalizes text
// with the original chain of regular-expression passes, and for every field
// simply tries every rule in order: ordinary rules before fallback ones, by
// source (environment, labels in order of first appearance, service, title,
// text, fields), tables before patterns, file order within each. The fast extractor
// (prefilter, one-pass normalizer, cache) must agree with it exactly (P35 and
// TestFastExtractorMatchesReference).

import (
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/fingerprint/attack"
)

// refExtractor is the reference interpreter over one set of rules.
type refExtractor struct {
	norm     *refNormalizer
	fields   []refField
	identity []refIdentityRule
}

type refIdentityRule struct {
	rules  []string
	re     *regexp.Regexp
	labels [][]string
}

type refField struct {
	name  string
	rules []refRule
}

type refRule struct {
	sources  []string
	fallback bool
	table    map[string]string
	re       *regexp.Regexp
	value    string
}

func newRefExtractor(rules *fingerprint.Rules) (*refExtractor, error) {
	e := &refExtractor{norm: newRefNormalizer()}
	for _, field := range openrecall.FingerprintFields {
		spec := rules.Spec(field)
		f := refField{name: field}
		for _, t := range spec.Tables {
			f.rules = append(f.rules, refRule{sources: t.Sources, fallback: t.Fallback, table: t.Values})
		}
		for _, p := range spec.Patterns {
			if p.Disabled {
				continue
			}
			re, err := fingerprint.CompilePattern(p.Regex)
			if err != nil {
				return nil, err
			}
			sources := p.Sources
			if sources == nil {
				sources = []string{fingerprint.SourceTitle, fingerprint.SourceText}
			}
			f.rules = append(f.rules, refRule{sources: sources, fallback: p.Fallback, re: re, value: p.Value})
		}
		e.fields = append(e.fields, f)
	}
	for _, is := range rules.IdentitySpecs() {
		if is.Disabled {
			continue
		}
		ir := refIdentityRule{rules: is.Rules, labels: is.Labels}
		if is.Regex != "" {
			re, err := fingerprint.CompilePattern(is.Regex)
			if err != nil {
				return nil, err
			}
			ir.re = re
		}
		e.identity = append(e.identity, ir)
	}
	return e, nil
}

// refPodOwner is a Deployment pod's name with its replica-set hash and pod
// suffix (Kubernetes' vowel-free alphabet); other names lose a trailing
// hash or ordinal as label values do.
var refPodOwner = regexp.MustCompile(`^([a-z0-9]+(?:[-_.][a-z0-9]+)*?)-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

// refCronRun is a CronJob run's name (its scheduled time in minutes, eight
// digits) with, optionally, its pod's random suffix.
var refCronRun = regexp.MustCompile(`^(.+)-[0-9]{8}(?:-[a-z0-9]{5})?$`)

// identify returns the reference identity of a (DESIGN §4): the rule that
// fired — alertname, else a PagerDuty class, else the template of the
// summary or title — and the first present service label, else the
// alert's service (never for PagerDuty); then the labels of the first
// identity rule that matches the rule, each after a "/".
func (e *refExtractor) identify(a openrecall.Alert) openrecall.Identity {
	collapse := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	svc := func(s string) string { return strings.ToLower(collapse(s)) }
	var id openrecall.Identity
	pd := a.Format == "pagerduty"
	switch {
	case collapse(a.Labels["alertname"]) != "":
		id.Rule = collapse(a.Labels["alertname"])
	case pd && collapse(a.Labels["class"]) != "":
		id.Rule = collapse(a.Labels["class"])
	case strings.TrimSpace(a.Annotations["summary"]) != "":
		id.Rule = fingerprint.Template(a.Annotations["summary"])
	default:
		id.Rule = fingerprint.Template(a.Title)
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
		var parts []string
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
				if l == "pod" || l == "pod_name" {
					if m := refPodOwner.FindStringSubmatch(v); m != nil {
						v = m[1]
					} else {
						v = e.norm.name(v)
					}
				} else if !strings.ContainsAny(v, ".:/") {
					if m := refPodOwner.FindStringSubmatch(v); m != nil {
						v = m[1]
					} else if m := refCronRun.FindStringSubmatch(v); m != nil {
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

// inputs returns the title, text and fields of a as the reference's
// patterns read them.
func (e *refExtractor) inputs(a openrecall.Alert) (title, text, fields string) {
	title = e.norm.normalize(refCap(a.Title))
	var parts []string
	for _, p := range []string{a.Text, a.Annotations["summary"], a.Annotations["description"]} {
		if p = strings.TrimSpace(refCap(p)); p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	text = e.norm.normalize(strings.Join(parts, "\n"))
	var all strings.Builder
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			all.WriteString(refCap(m[k]) + "\n")
		}
	}
	fields = e.norm.normalize(all.String())
	return title, text, fields
}

// extract returns the reference Alert DNA of a.
func (e *refExtractor) extract(a openrecall.Alert) openrecall.Fingerprint {
	title, text, fields := e.inputs(a)
	value := func(src string) (string, bool) {
		var v string
		switch {
		case src == fingerprint.SourceEnvironment:
			v = a.Environment
		case src == fingerprint.SourceService:
			v = a.Service
		case strings.HasPrefix(src, fingerprint.SourceLabelPrefix):
			v = a.Labels[strings.TrimPrefix(src, fingerprint.SourceLabelPrefix)]
		}
		v = refCap(v)
		return v, strings.TrimSpace(v) != ""
	}
	var fp openrecall.Fingerprint
	for _, f := range e.fields {
	field:
		for _, fallback := range []bool{false, true} {
			for _, src := range refSourceOrder(f.rules, fallback) {
				// DESIGN §4: a detection's error class, dependency and signal
				// shape never come from its text, which is evidence.
				if a.Security && (f.name == openrecall.FieldErrorClass || f.name == openrecall.FieldDependencyPattern || f.name == openrecall.FieldSignalShape) &&
					(src == fingerprint.SourceText || src == fingerprint.SourceFields) {
					continue
				}
				for _, r := range f.rules {
					if r.fallback != fallback || !slices.Contains(r.sources, src) {
						continue
					}
					if v, ok := e.try(r, src, title, text, fields, value); ok {
						fp, _ = fp.With(f.name, v)
						break field
					}
				}
			}
		}
	}
	// DESIGN §4: an ATT&CK reference anywhere in the alert gives its
	// tactic, over any word; else a security sender's alert is at least a
	// security detection.
	if p := refTactic(a); p != "" {
		fp.AttackPattern = p
	} else if fp.AttackPattern == "" && a.Security {
		fp.AttackPattern = fingerprint.SecurityDetection
	}
	return fp
}

// refTactic reads the ATT&CK references of every string of the alert, in
// sorted label order: the pattern must not depend on it.
func refTactic(a openrecall.Alert) string {
	s := attack.Enterprise().NewScan()
	for _, t := range []string{a.Title, a.Text, a.Rule} {
		s.Text(t)
	}
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if strings.Contains(strings.ToLower(k), "tactic") {
				s.TacticName(m[k])
			} else {
				s.Text(m[k])
			}
		}
	}
	return s.Pattern()
}

// try applies one rule to one source.
func (e *refExtractor) try(r refRule, src, title, text, fields string, value func(string) (string, bool)) (string, bool) {
	switch src {
	case fingerprint.SourceTitle, fingerprint.SourceText, fingerprint.SourceFields:
		s := map[string]string{fingerprint.SourceTitle: title, fingerprint.SourceText: text, fingerprint.SourceFields: fields}[src]
		return r.value, r.re != nil && s != "" && r.re.MatchString(s)
	}
	v, ok := value(src)
	if !ok {
		return "", false
	}
	raw, name := strings.ToLower(strings.TrimSpace(v)), e.norm.name(v)
	if r.table != nil {
		for _, k := range []string{raw, name} {
			if val := r.table[k]; val != "" {
				return val, true
			}
		}
		return "", false
	}
	return r.value, r.re != nil && r.re.MatchString(name)
}

// refCap keeps the first fingerprint.MaxFieldBytes bytes of a field, cut at
// a rune boundary: the rules read no more of any field.
func refCap(s string) string {
	if len(s) <= fingerprint.MaxFieldBytes {
		return s
	}
	i := fingerprint.MaxFieldBytes
	for !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// refSourceOrder lists the sources of the rules of one kind in precedence
// order: environment, labels in order of first appearance, service, title,
// text, fields.
func refSourceOrder(rules []refRule, fallback bool) []string {
	var labels, out []string
	has := map[string]bool{}
	for _, r := range rules {
		if r.fallback != fallback {
			continue
		}
		for _, s := range r.sources {
			if strings.HasPrefix(s, fingerprint.SourceLabelPrefix) && !has[s] {
				labels = append(labels, s)
			}
			has[s] = true
		}
	}
	if has[fingerprint.SourceEnvironment] {
		out = append(out, fingerprint.SourceEnvironment)
	}
	out = append(out, labels...)
	for _, s := range []string{fingerprint.SourceService, fingerprint.SourceTitle, fingerprint.SourceText, fingerprint.SourceFields} {
		if has[s] {
			out = append(out, s)
		}
	}
	return out
}

// The reference normalizer: the original chain of regular-expression passes.

// refNormalizer holds the compiled expressions of Normalize. It is immutable
// after newNormalizer and safe for concurrent use.
type refNormalizer struct {
	timestamp *regexp.Regexp
	clock     *regexp.Regexp
	uuid      *regexp.Regexp
	ipv6      *regexp.Regexp
	ipv4      *regexp.Regexp
	pod       *regexp.Regexp
	hex       *regexp.Regexp
	number    *regexp.Regexp
	statusKey *regexp.Regexp
	reason    *regexp.Regexp
	timeWord  *regexp.Regexp
	nameTail  *regexp.Regexp
}

func newRefNormalizer() *refNormalizer {
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
		hex: regexp.MustCompile(`\b(?:0x)?[0-9a-f]{8,}\b`),
		// A number, possibly with unit suffixes (5m, 1h30m, 512mi, 5xx).
		number: regexp.MustCompile(`\b\d+(?:[.,]\d+)*(?:[a-z]+\d+(?:[.,]\d+)*)*[a-z]*\b`),
		// Keywords after which a 3-digit number is an HTTP status code.
		statusKey: regexp.MustCompile(`(?:\bhttps?(?:/\d(?:\.\d)?|/<num>)?|\bstatus(?:[ _]?code)?|\bcode|\breturned|\breturns|\breturning|\bresponse|\bresponded|\berror|\berrors|\bgot)\s*[:=]?\s*$`),
		// Reason phrases that follow an HTTP status code.
		reason:   regexp.MustCompile(`^\s+(?:ok|created|accepted|no content|moved|found|not modified|bad request|unauthori[sz]ed|forbidden|not found|method not allowed|conflict|gone|too many requests|internal server error|not implemented|bad gateway|service unavailable|gateway time-?out)\b`),
		timeWord: regexp.MustCompile(`^\s*(?:ms|milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\b`),
		nameTail: regexp.MustCompile(`(?:-([a-z0-9]{6,10})-[a-z0-9]{4,5}|-\d+)$`),
	}
}

func (n *refNormalizer) normalize(s string) string {
	s = strings.ToLower(s)
	s = n.timestamp.ReplaceAllLiteralString(s, fingerprint.PlaceholderTimestamp)
	s = n.clock.ReplaceAllLiteralString(s, fingerprint.PlaceholderTimestamp)
	s = n.uuid.ReplaceAllLiteralString(s, fingerprint.PlaceholderUUID)
	s = n.ipv6.ReplaceAllStringFunc(s, refReplaceIPv6)
	s = n.ipv4.ReplaceAllStringFunc(s, refReplaceIPv4)
	s = n.pod.ReplaceAllStringFunc(s, func(m string) string {
		sub := n.pod.FindStringSubmatch(m)
		if !refHasDigit(sub[2]) {
			return m
		}
		return sub[1] + "-" + fingerprint.PlaceholderPod
	})
	s = n.hex.ReplaceAllStringFunc(s, func(m string) string {
		h := strings.TrimPrefix(m, "0x")
		if !strings.HasPrefix(m, "0x") && (!refHasDigit(h) || !strings.ContainsAny(h, "abcdef")) {
			// A word (deadbeef) or a plain number (the number pass takes it).
			return m
		}
		return fingerprint.PlaceholderHex
	})
	return n.numbers(s)
}

// numbers replaces every number, keeping HTTP status codes after a keyword or
// before a reason phrase, and words such as 5xx, s3 or t1110 (digits inside a
// word are not numbers).
func (n *refNormalizer) numbers(s string) string {
	idx := n.number.FindAllStringIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range idx {
		start, end := m[0], m[1]
		b.WriteString(s[last:start])
		last = end
		tok := s[start:end]
		digits := strings.TrimRight(tok, "abcdefghijklmnopqrstuvwxyz")
		unit := tok[len(digits):]
		switch {
		case unit == "" && n.isStatusCode(s, start, end):
			b.WriteString(tok)
		case unit == "":
			if w := n.timeWord.FindString(s[end:]); w != "" {
				// "5 minutes" is a duration like "5m".
				b.WriteString(fingerprint.PlaceholderDuration)
				last = end + len(w)
				continue
			}
			b.WriteString(fingerprint.PlaceholderNumber)
		case refIsDuration(tok):
			b.WriteString(fingerprint.PlaceholderDuration)
		case refIsPlainNumber(digits) && refIsQuantityUnit(unit):
			b.WriteString(fingerprint.PlaceholderNumber)
		default:
			// 5xx, 2fa: a word, not a number.
			b.WriteString(tok)
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// isStatusCode reports whether s[start:end] is a 3-digit HTTP status code in
// a context that says so.
func (n *refNormalizer) isStatusCode(s string, start, end int) bool {
	tok := s[start:end]
	if len(tok) != 3 || tok[0] < '1' || tok[0] > '5' {
		return false
	}
	if start > 0 && strings.IndexByte(".-/_", s[start-1]) >= 0 {
		// Part of a dotted, dashed or path value: 10.500, id-500, /500.
		return false
	}
	if n.statusKey.MatchString(s[max(0, start-24):start]) {
		return true
	}
	return n.reason.MatchString(s[end:])
}

// refIsDuration reports whether tok is a duration: one or more groups of a
// number and a time unit (5m, 250ms, 1h30m, 10min).
func refIsDuration(tok string) bool {
	i := 0
	for i < len(tok) {
		j := i
		for j < len(tok) && (tok[j] >= '0' && tok[j] <= '9' || tok[j] == '.' || tok[j] == ',') {
			j++
		}
		if j == i {
			return false
		}
		k := j
		for k < len(tok) && tok[k] >= 'a' && tok[k] <= 'z' {
			k++
		}
		if !refIsTimeUnit(tok[j:k]) {
			return false
		}
		i = k
	}
	return len(tok) > 0
}

func refIsTimeUnit(u string) bool {
	switch u {
	case "ns", "us", "ms", "s", "m", "h", "d", "w", "sec", "secs", "second", "seconds",
		"min", "mins", "minute", "minutes", "hr", "hrs", "hour", "hours", "day", "days", "week", "weeks":
		return true
	}
	return false
}

func refIsQuantityUnit(u string) bool {
	switch u {
	case "b", "k", "kb", "kib", "ki", "mb", "mib", "mi", "gb", "gib", "gi", "tb", "tib", "ti", "pb",
		"x", "rps", "qps", "ops", "st", "nd", "rd", "th", "pct", "mbps", "gbps":
		return true
	}
	return false
}

func refIsPlainNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' && s[i] != ',' {
			return false
		}
	}
	return s != ""
}

func refReplaceIPv6(m string) string {
	if len(m) < 3 || !refHasDigit(m) {
		// "std::vector", "a::b": not an address worth a placeholder.
		return m
	}
	addr := strings.TrimPrefix(m, "[")
	port := ""
	if i := strings.LastIndex(addr, "]"); i >= 0 {
		addr, port = addr[:i], addr[i+1:]
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		// A trailing colon belongs to the sentence ("fe80::1: refused").
		trimmed := strings.TrimRight(addr, ":")
		ip, err = netip.ParseAddr(trimmed)
		if err != nil || !ip.Is6() {
			return m
		}
		port = addr[len(trimmed):] + port
	}
	if !ip.Is6() {
		return m
	}
	if ip == netip.MustParseAddr("fd00:ec2::254") {
		return fingerprint.PlaceholderMetadataIP
	}
	if port != "" && !strings.HasPrefix(port, ":") {
		return m
	}
	if strings.HasPrefix(port, ":") && len(port) > 1 {
		return fingerprint.PlaceholderIP
	}
	return fingerprint.PlaceholderIP + port
}

func refReplaceIPv4(m string) string {
	addr, _, _ := strings.Cut(m, ":")
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return m
	}
	if ip == netip.MustParseAddr("169.254.169.254") {
		return fingerprint.PlaceholderMetadataIP
	}
	return fingerprint.PlaceholderIP
}

// name prepares a label, service or environment value for the rules:
// lowercased, trimmed, and without a trailing pod hash or ordinal.
func (n *refNormalizer) name(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	for {
		sub := n.nameTail.FindStringSubmatchIndex(v)
		if sub == nil || sub[0] == 0 {
			return v
		}
		if sub[2] >= 0 && !refHasDigit(v[sub[2]:sub[3]]) {
			return v
		}
		v = v[:sub[0]]
	}
}

func refHasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}
