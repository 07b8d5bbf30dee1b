package fingerprint

import (
	"net/netip"
	"regexp"
	"strings"
)

// Placeholders that Normalize writes in place of high-cardinality noise.
const (
	PlaceholderTimestamp  = "<ts>"
	PlaceholderUUID       = "<uuid>"
	PlaceholderIP         = "<ip>"
	PlaceholderMetadataIP = "<metadata_ip>"
	PlaceholderPod        = "<pod>"
	PlaceholderHex        = "<hex>"
	PlaceholderDuration   = "<dur>"
	PlaceholderNumber     = "<num>"
)

// normalizer holds the compiled expressions of Normalize. It is immutable
// after newNormalizer and safe for concurrent use.
type normalizer struct {
	timestamp *regexp.Regexp
	clock     *regexp.Regexp
	uuid      *regexp.Regexp
	ipv6      *regexp.Regexp
	pod       *regexp.Regexp
}

func newNormalizer() *normalizer {
	return &normalizer{
		// RFC 3339 / ISO 8601 date-times and bare dates.
		timestamp: regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b`),
		// Times of day such as 03:42:06 or 03:42:06.123.
		clock: regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`),
		uuid:  regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		// IPv6 candidates, checked with netip: optional brackets and port.
		ipv6: regexp.MustCompile(`\[?[0-9a-f]{0,4}:[0-9a-f:.]*:[0-9a-f.]*\]?(?::\d{1,5})?`),
		// Deployment pods: NAME-<replicaset hash>-<suffix>.
		pod: regexp.MustCompile(`\b([a-z0-9]+(?:[-_][a-z0-9]+)*?)-([a-z0-9]{6,10})-([a-z0-9]{4,5})\b`),
	}
}

func (n *normalizer) normalize(s string) string {
	return n.part(s).norm
}

// normPart is one line of a text normalized alone.
type normPart struct {
	raw, norm string
	// head: a 3-digit number starts within 24 bytes of the part's start, so
	// its status keyword window would reach into the text before it; tail:
	// a number is followed by nothing but white space, so a time word or
	// reason phrase after it could be on the next line. Without either,
	// the part normalizes inside a text joined with "\n" exactly as alone:
	// no expression matches across a newline, a newline is a word boundary
	// as the start and end of a string are, and only the number pass reads
	// around its matches.
	head, tail bool
}

// part normalizes s as normalize does and says where the result could
// depend on text around it.
func (n *normalizer) part(s string) normPart {
	p := normPart{raw: s}
	s = strings.ToLower(s)
	// Each pass runs only when a cheap scan finds a place it could change;
	// the scans are necessary conditions of the expressions, so skipping a
	// pass never changes the result.
	if hasDateAt(s) {
		s = n.timestamp.ReplaceAllLiteralString(s, PlaceholderTimestamp)
	}
	if hasClock(s) {
		s = n.clock.ReplaceAllLiteralString(s, PlaceholderTimestamp)
	}
	if hasUUID(s) {
		s = n.uuid.ReplaceAllLiteralString(s, PlaceholderUUID)
	}
	if hasIPv6Run(s) {
		s = n.ipv6.ReplaceAllStringFunc(s, replaceIPv6)
	}
	s = replaceIPv4s(s)
	if hasPod(s) {
		s = n.pod.ReplaceAllStringFunc(s, func(m string) string {
			sub := n.pod.FindStringSubmatch(m)
			if !hasDigit(sub[2]) {
				return m
			}
			return sub[1] + "-" + PlaceholderPod
		})
	}
	s = replaceHexes(s)
	p.norm, p.head, p.tail = numbers(s)
	return p
}

// numbers replaces every number, keeping HTTP status codes after a keyword or
// before a reason phrase, and words such as 5xx, s3 or t1110 (digits inside a
// word are not numbers).
//
// head reports a 3-digit number starting within the 24 bytes the status
// keyword window reads, tail a number without a unit followed by nothing but
// white space (see normPart).
func numbers(s string) (out string, head, tail bool) {
	start, end := nextNumber(s, 0)
	if start < 0 {
		return s, false, false
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for ; start >= 0; start, end = nextNumber(s, end) {
		b.WriteString(s[last:start])
		last = end
		tok := s[start:end]
		digits := strings.TrimRight(tok, "abcdefghijklmnopqrstuvwxyz")
		unit := tok[len(digits):]
		if unit == "" {
			head = head || len(tok) == 3 && start < 24
			tail = tail || strings.TrimLeft(s[end:], " \t\n\f\r") == ""
		}
		switch {
		case unit == "" && isStatusCode(s, start, end):
			b.WriteString(tok)
		case unit == "":
			if w := timeWordLen(s[end:]); w > 0 {
				// "5 minutes" is a duration like "5m".
				b.WriteString(PlaceholderDuration)
				last = end + w
				continue
			}
			b.WriteString(PlaceholderNumber)
		case isDuration(tok):
			b.WriteString(PlaceholderDuration)
		case isPlainNumber(digits) && isQuantityUnit(unit):
			b.WriteString(PlaceholderNumber)
		default:
			// 5xx, 2fa: a word, not a number.
			b.WriteString(tok)
		}
	}
	b.WriteString(s[last:])
	return b.String(), head, tail
}

// isStatusCode reports whether s[start:end] is a 3-digit HTTP status code in
// a context that says so: a keyword in the 24 bytes before it, or a reason
// phrase after it.
func isStatusCode(s string, start, end int) bool {
	tok := s[start:end]
	if len(tok) != 3 || tok[0] < '1' || tok[0] > '5' || !isDigit(tok[1]) || !isDigit(tok[2]) {
		return false // not three digits: 1.5 is no status code
	}
	if start > 0 && strings.IndexByte(".-/_", s[start-1]) >= 0 {
		// Part of a dotted, dashed or path value: 10.500, id-500, /500.
		return false
	}
	return statusKeyBefore(s[max(0, start-24):start]) || reasonAfter(s[end:])
}

// isDuration reports whether tok is a duration: one or more groups of a
// number and a time unit (5m, 250ms, 1h30m, 10min).
func isDuration(tok string) bool {
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
		if !isTimeUnit(tok[j:k]) {
			return false
		}
		i = k
	}
	return len(tok) > 0
}

func isTimeUnit(u string) bool {
	switch u {
	case "ns", "us", "ms", "s", "m", "h", "d", "w", "sec", "secs", "second", "seconds",
		"min", "mins", "minute", "minutes", "hr", "hrs", "hour", "hours", "day", "days", "week", "weeks":
		return true
	}
	return false
}

func isQuantityUnit(u string) bool {
	switch u {
	case "b", "k", "kb", "kib", "ki", "mb", "mib", "mi", "gb", "gib", "gi", "tb", "tib", "ti", "pb",
		"x", "rps", "qps", "ops", "st", "nd", "rd", "th", "pct", "mbps", "gbps":
		return true
	}
	return false
}

func isPlainNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' && s[i] != ',' {
			return false
		}
	}
	return s != ""
}

func replaceIPv6(m string) string {
	if len(m) < 3 || !hasDigit(m) {
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
	if ip == metadataIPv6 {
		return PlaceholderMetadataIP
	}
	if port != "" && !strings.HasPrefix(port, ":") {
		return m
	}
	if strings.HasPrefix(port, ":") && len(port) > 1 {
		return PlaceholderIP
	}
	return PlaceholderIP + port
}

// The cloud metadata service's addresses (PlaceholderMetadataIP).
var (
	metadataIPv4 = netip.MustParseAddr("169.254.169.254")
	metadataIPv6 = netip.MustParseAddr("fd00:ec2::254")
)

func replaceIPv4(m string) string {
	addr, _, _ := strings.Cut(m, ":")
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return m
	}
	if ip == metadataIPv4 {
		return PlaceholderMetadataIP
	}
	return PlaceholderIP
}

// name prepares a label, service or environment value for the rules:
// lowercased, trimmed, and without a trailing pod hash or ordinal.
func (n *normalizer) name(v string) string {
	return nameOf(strings.ToLower(strings.TrimSpace(v)))
}

// nameOf is name of a value already lowercased and trimmed: it removes the
// tails that (?:-([a-z0-9]{6,10})-[a-z0-9]{4,5}|-\d+)$ matches while the
// match does not start the value and its hash (when it has one) holds a
// digit.
func nameOf(v string) string {
	for {
		start, hash, hashed := nameTail(v)
		if start <= 0 || hashed && !hasDigit(hash) {
			return v
		}
		v = v[:start]
	}
}

// nameTail returns where the leftmost match of
// (?:-([a-z0-9]{6,10})-[a-z0-9]{4,5}|-\d+)$ in v starts (-1: none) and the
// hash it captured, if the first alternative matched. Neither alternative
// holds a dash after its first, so the first can only start at the
// second-to-last dash and the second at the last one, which lies to the
// right: the first wins when both match.
func nameTail(v string) (start int, hash string, hashed bool) {
	last := strings.LastIndexByte(v, '-')
	if last < 0 {
		return -1, "", false
	}
	tail := v[last+1:]
	if n := len(tail); n >= 4 && n <= 5 && allAlnum(tail) {
		if prev := strings.LastIndexByte(v[:last], '-'); prev >= 0 {
			if h := v[prev+1 : last]; len(h) >= 6 && len(h) <= 10 && allAlnum(h) {
				return prev, h, true
			}
		}
	}
	if tail != "" && allDigits(tail) {
		return last, "", false
	}
	return -1, "", false
}

func allAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}
