package fingerprint

import "strings"

// Hand-written scanners of the normalizer. The has* functions are necessary
// conditions of the normalizer's expressions: when one reports false, its
// expression cannot change the string and the pass is skipped. The replace*
// functions, nextNumber, nameTail and the number pass's keyword, reason and
// time word scans replace expressions outright, finding exactly the matches
// the expressions' leftmost-first semantics find (the reference interpreter
// of tests/property keeps the expressions; P35 and P47 compare).

// Byte classes, one bit each, looked up in byteClass.
const (
	classDigit = 1 << iota // 0-9
	classHex               // 0-9 a-f
	classAlnum             // 0-9 a-z
	classWord              // 0-9 a-z A-Z _ (regexp's \\b word class)
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= '0' && c <= '9':
			t[c] = classDigit | classHex | classAlnum | classWord
		case c >= 'a' && c <= 'f':
			t[c] = classHex | classAlnum | classWord
		case c >= 'g' && c <= 'z':
			t[c] = classAlnum | classWord
		case c >= 'A' && c <= 'Z' || c == '_':
			t[c] = classWord
		}
	}
	return t
}()

func isDigit(c byte) bool { return byteClass[c]&classDigit != 0 }

func isHex(c byte) bool { return byteClass[c]&classHex != 0 }

func isAlnum(c byte) bool { return byteClass[c]&classAlnum != 0 }

// isWord is regexp's \\b word class: ASCII letters, digits and '_'.
func isWord(c byte) bool { return byteClass[c]&classWord != 0 }

// digitsAt reports whether s[i:i+n] are n digits.
func digitsAt(s string, i, n int) bool {
	if i < 0 || i+n > len(s) {
		return false
	}
	for j := i; j < i+n; j++ {
		if !isDigit(s[j]) {
			return false
		}
	}
	return true
}

// hasDateAt reports whether s holds dddd-dd-dd, which every timestamp
// match starts with.
func hasDateAt(s string) bool {
	return anyAt(s, '-', func(k int) bool {
		return digitsAt(s, k-4, 4) && digitsAt(s, k+1, 2) && k+3 < len(s) && s[k+3] == '-' && digitsAt(s, k+4, 2)
	})
}

// anyAt reports whether ok holds at some index of the byte c in s.
func anyAt(s string, c byte, ok func(k int) bool) bool {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], c)
		if k < 0 {
			return false
		}
		if ok(i + k) {
			return true
		}
		i += k + 1
	}
}

// hasClock reports whether s holds d:dd:dd, which every clock match holds.
func hasClock(s string) bool {
	return anyAt(s, ':', func(k int) bool {
		return digitsAt(s, k-1, 1) && digitsAt(s, k+1, 2) && k+3 < len(s) && s[k+3] == ':' && digitsAt(s, k+4, 2)
	})
}

// hasUUID reports whether s holds eight hex digits, a dash, four hex digits
// and a dash, which every UUID match starts with.
func hasUUID(s string) bool {
	return anyAt(s, '-', func(k int) bool {
		if k < 8 || k+6 > len(s) || s[k+5] != '-' {
			return false
		}
		for j := k - 8; j < k+5; j++ {
			if j != k && !isHex(s[j]) {
				return false
			}
		}
		return true
	})
}

// hasIPv6Run reports whether s holds a run of [0-9a-f:.] with "::" or at
// least six colons: an IPv6 address (netip's syntax, without a zone, which
// the expression cannot match) has one or the other, so without such a run
// no match of the IPv6 expression parses and the pass changes nothing.
func hasIPv6Run(s string) bool {
	// Both colons of a "::" are in a run; six colons in one run need six
	// in s.
	if strings.Contains(s, "::") {
		return true
	}
	if strings.Count(s, ":") < 6 {
		return false
	}
	colons := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			colons++
			if colons >= 6 || i > 0 && s[i-1] == ':' {
				return true
			}
		case isHex(c) || c == '.':
		default:
			colons = 0
		}
	}
	return false
}

// hasPod reports whether s holds -X-Y with X six to ten of [a-z0-9] holding
// a digit and Y four or five of [a-z0-9] followed by a non-word byte or the
// end: the part of a pod name the pod pass replaces.
func hasPod(s string) bool {
	return anyAt(s, '-', func(k int) bool {
		j, digit := k+1, false
		for j < len(s) && isAlnum(s[j]) {
			digit = digit || isDigit(s[j])
			j++
		}
		if n := j - k - 1; !digit || n < 6 || n > 10 || j >= len(s) || s[j] != '-' {
			return false
		}
		e := j + 1
		for e < len(s) && isAlnum(s[e]) {
			e++
		}
		m := e - j - 1
		return m >= 4 && m <= 5 && (e == len(s) || !isWord(s[e]))
	})
}

// replaceHexes replaces every match of \\b(?:0x)?[0-9a-f]{8,}\\b in s with
// PlaceholderHex, except matches without the 0x prefix that hold no digit (a
// word such as deadbeef) or no letter (a plain number, which the number pass
// takes). A match starts at a word boundary before a hex digit: 0x and a run
// of at least eight hex digits, or such a run alone, followed by a non-word
// byte or the end (a shorter run would end between two word bytes).
func replaceHexes(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) || i > 0 && isWord(s[i-1]) {
			continue
		}
		end, prefixed := -1, false
		if s[i] == '0' && i+1 < len(s) && s[i+1] == 'x' {
			if k := hexRun(s, i+2); k-i-2 >= 8 && (k == len(s) || !isWord(s[k])) {
				end, prefixed = k, true
			}
		} else if k := hexRun(s, i); k-i >= 8 && (k == len(s) || !isWord(s[k])) {
			end = k
		}
		if end < 0 {
			continue
		}
		if m := s[i:end]; prefixed || hasDigit(m) && strings.ContainsAny(m, "abcdef") {
			if last == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(PlaceholderHex)
			last = end
		}
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// hexRun returns the end of the run of hex digits starting at i.
func hexRun(s string, i int) int {
	for i < len(s) && isHex(s[i]) {
		i++
	}
	return i
}

// replaceIPv4s replaces every match of
// \\b\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}(?::\\d{1,5})?\\b as replaceIPv4 does.
// A match starts at a word boundary before a run of digits ending at a dot,
// so the scan goes from dot to dot: the candidate is the run of digits
// before the dot, if it starts at a word boundary at or after the end of the
// previous match (a run reaching before that end starts inside a word).
func replaceIPv4s(s string) string {
	var b strings.Builder
	last := 0
	for from := 0; from < len(s); {
		d := strings.IndexByte(s[from:], '.')
		if d < 0 {
			break
		}
		d += from
		i := d
		for i > from && isDigit(s[i-1]) {
			i--
		}
		if i < d && (i == 0 || !isWord(s[i-1])) {
			if end := matchIPv4(s, i); end >= 0 {
				if last == 0 {
					b.Grow(len(s))
				}
				b.WriteString(s[last:i])
				b.WriteString(replaceIPv4(s[i:end]))
				last, from = end, end
				continue
			}
		}
		from = d + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchIPv4 returns the end of the IPv4 match starting at i (a word
// boundary before a digit), or -1. Each octet is a whole run of digits: a
// shorter one would be followed by a digit where a dot, a colon or a word
// boundary must be.
func matchIPv4(s string, i int) int {
	j := i
	for octet := 0; octet < 4; octet++ {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if n := k - j; n < 1 || n > 3 {
			return -1
		}
		j = k
		if octet < 3 {
			if j >= len(s) || s[j] != '.' {
				return -1
			}
			j++
		}
	}
	// After the last octet: a port when it is one to five digits ending at
	// a word boundary, else the address alone when a boundary follows it.
	if j < len(s) && s[j] == ':' {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if n := k - j - 1; n >= 1 && n <= 5 && (k == len(s) || !isWord(s[k])) {
			return k
		}
	}
	if j < len(s) && isWord(s[j]) {
		return -1
	}
	return j
}

// nextNumber returns the bounds of the first match at or after i of
// \\b\\d+(?:[.,]\\d+)*(?:[a-z]+\\d+(?:[.,]\\d+)*)*[a-z]*\\b in s, as
// FindAllStringIndex finds them one after another (the next search starts
// at the previous end), or -1, -1: at a word boundary before a digit, the
// longest prefix of the following run of [0-9a-z.,] that keeps every
// separator between two digits and ends before a separator or at the end of
// the run with a non-word byte (or nothing) after it.
func nextNumber(s string, i int) (start, end int) {
	for ; i < len(s); i++ {
		if !isDigit(s[i]) || i > 0 && isWord(s[i-1]) {
			continue
		}
		end := -1
		j := i
		for j < len(s) {
			c := s[j]
			if c == '.' || c == ',' {
				if !isDigit(s[j-1]) || j+1 >= len(s) || !isDigit(s[j+1]) {
					break // a separator must sit between digits
				}
				end = j // the prefix before a separator ends at a boundary
				j++
				continue
			}
			if !isAlnum(c) {
				break
			}
			j++
		}
		// j ends the run (or stops at a separator no digit follows).
		if j == len(s) || !isWord(s[j]) {
			end = j
		}
		if end > i {
			return i, end
		}
	}
	return -1, -1
}

// isSpace is regexp's \\s class: tab, newline, form feed, carriage return
// and space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// wordStart reports whether position i of s is a word boundary before a word
// byte: the start of s or after a non-word byte.
func wordStart(s string, i int) bool { return i == 0 || !isWord(s[i-1]) }

// timeWordLen returns the length of the match of
// ^\\s*(?:ms|milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\\b
// at the start of s, or 0: the white space, then a whole word (the
// alternatives are letters followed by a boundary, so the word is the full
// run of word bytes) that is one of them.
func timeWordLen(s string) int {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && isWord(s[j]) {
		j++
	}
	switch s[i:j] {
	case "ms", "millisecond", "milliseconds", "second", "seconds", "sec", "secs", "minute", "minutes",
		"min", "mins", "hour", "hours", "hr", "hrs", "day", "days", "week", "weeks":
		return j
	}
	return 0
}

// statusKeys are the keywords of the status-key expression other than the
// http forms; each must start at a word boundary.
var statusKeys = []string{"status", "statuscode", "status code", "status_code", "code", "returned", "returns",
	"returning", "response", "responded", "error", "errors", "got", "http", "https"}

// statusKeyBefore reports whether the window w (the up to 24 bytes before a
// number) matches
// (?:\\bhttps?(?:/\\d(?:\\.\\d)?|/<num>)?|\\bstatus(?:[ _]?code)?|\\bcode|\\breturned|\\breturns|\\breturning|\\bresponse|\\bresponded|\\berror|\\berrors|\\bgot)\\s*[:=]?\\s*$.
// No keyword ends in white space, ':' or '=', so the tail \\s*[:=]?\\s* is
// the longest such suffix, and a keyword must end right before it.
func statusKeyBefore(w string) bool {
	p := len(w)
	for p > 0 && isSpace(w[p-1]) {
		p--
	}
	if p > 0 && (w[p-1] == ':' || w[p-1] == '=') {
		p--
	}
	for p > 0 && isSpace(w[p-1]) {
		p--
	}
	w = w[:p]
	if endsWithKey(w, statusKeys) {
		return true
	}
	// http forms: https?/<num>, https?/D, https?/D.D.
	n := len(w)
	switch {
	case strings.HasSuffix(w, "/<num>"):
		w = w[:n-6]
	case n >= 2 && w[n-2] == '/' && isDigit(w[n-1]):
		w = w[:n-2]
	case n >= 4 && w[n-4] == '/' && isDigit(w[n-3]) && w[n-2] == '.' && isDigit(w[n-1]):
		w = w[:n-4]
	default:
		return false
	}
	return endsWithKey(w, []string{"http", "https"})
}

// endsWithKey reports whether w ends with one of keys starting at a word
// boundary.
func endsWithKey(w string, keys []string) bool {
	for _, k := range keys {
		if strings.HasSuffix(w, k) && wordStart(w, len(w)-len(k)) {
			return true
		}
	}
	return false
}

// reasons are the phrases of the reason expression.
var reasons = []string{"ok", "created", "accepted", "no content", "moved", "found", "not modified", "bad request",
	"unauthorised", "unauthorized", "forbidden", "not found", "method not allowed", "conflict", "gone",
	"too many requests", "internal server error", "not implemented", "bad gateway", "service unavailable",
	"gateway timeout", "gateway time-out"}

// reasonAfter reports whether s (the text after a number) matches
// ^\\s+(?:ok|created|…|gateway time-?out)\\b: white space (no phrase starts
// with any, so all of it), then a phrase ending at a word boundary.
func reasonAfter(s string) bool {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	s = s[i:]
	for _, r := range reasons {
		if strings.HasPrefix(s, r) && (len(s) == len(r) || !isWord(s[len(r)])) {
			return true
		}
	}
	return false
}
