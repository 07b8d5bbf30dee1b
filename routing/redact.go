package routing

import (
	"regexp"
	"strings"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// secretPattern is one kind of secret Redact finds: the regular expression
// that finds it, its replacement, and may, a cheap test that is true of
// every text the expression can match (the literals it cannot match
// without), so the expression runs only over text that may hold its kind.
type secretPattern struct {
	re   *regexp.Regexp
	repl string
	may  func(found literalSet) bool // nil: pairMay
}

func (p secretPattern) mayHold(s string, found literalSet) bool {
	if p.may == nil {
		return pairMay(s, found)
	}
	return p.may(found)
}

// The literals Redact's prefilter looks for, in one pass over a text
// (scanLiterals): case-sensitive ones as written, the others under ASCII
// case folding, and three characters.
const (
	litPEM           literalSet = 1 << iota // "PRIVATE KEY-----"
	litScheme                               // "://"
	litAt                                   // '@'
	litColon                                // ':'
	litEquals                               // '='
	litAuthorization                        // "authorization", any case
	litBearer                               // "bearer", any case
	litBasic                                // "basic", any case
	litAKIA
	litGitHub    // one of "ghp_", "gho_", "ghu_", "ghs_", "ghr_"
	litGitHubPAT // "github_pat_"
	litSK        // "sk-"
	litXox       // "xox"
	litGlpat     // "glpat-"
	litEyJ       // "eyJ"
	litPairWord  // a word of secretPairWords, any case
	litKeyWord   // a word of secretKeyWords, any case
	litFolding   // a non-ASCII letter that folds to an ASCII one (foldsToASCII)
)

// literalSet is a set of the prefilter's literals.
type literalSet uint32

func (f literalSet) has(l literalSet) bool { return f&l != 0 }

// secretPatterns find secrets in free text. Each keeps what names the secret
// (the key, the scheme, the user's place) and replaces the secret itself. No
// pattern matches across a double quote, so redacting JSON text keeps it
// JSON. For the case-insensitive patterns may must be a necessary
// condition under ASCII case folding (Redact takes every pattern when the
// text holds one of the two non-ASCII letters that fold to ASCII ones).
var secretPatterns = []secretPattern{
	// PEM private key blocks.
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^"]*?-----END [A-Z ]*PRIVATE KEY-----`), Redacted,
		func(f literalSet) bool { return f.has(litPEM) }},
	// Credentials in a URL or connection string: scheme://user:password@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^\s:/@"'<>]*:[^\s@/"'<>]+@`), "${1}" + Redacted + "@",
		func(f literalSet) bool { return f.has(litScheme) && f.has(litAt) }},
	// Authorization headers and bearer/basic credentials.
	// The scheme keeps its own white space, so redacting twice changes
	// nothing ("authorization: :" once grew a space on every pass).
	{regexp.MustCompile(`(?i)\b(authorization\s*[:=]\s*)((?:bearer|basic|token|apikey)\s+)?[^\s"',;]+`), "${1}${2}" + Redacted,
		func(f literalSet) bool { return f.has(litAuthorization) }},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*`), "${1} " + Redacted,
		func(f literalSet) bool { return f.has(litBearer | litBasic) }},
	// key=value or key: value where the key names a secret. A quoted value
	// takes what sticks to its closing quote with it, so redacting twice
	// changes nothing ("password: 'x':" once lost its colon on a second
	// pass).
	{regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|session[_-]?id|cookie)[a-z0-9_.-]*)(\s*[:=]\s*)('[^']*'[^\s"',;&]*|\\"[^"\\]*\\"[^\s"',;&]*|[^\s"',;&]+)`), "${1}${2}" + Redacted,
		nil},
	// Well-known token shapes, wherever they stand.
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), Redacted, func(f literalSet) bool { return f.has(litAKIA) }},                                        // AWS access key id
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`), Redacted, func(f literalSet) bool { return f.has(litGitHub) }},                            // GitHub token
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}\b`), Redacted, func(f literalSet) bool { return f.has(litGitHubPAT) }},                       // GitHub fine-grained token
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), Redacted, func(f literalSet) bool { return f.has(litSK) }},                                       // OpenAI-style secret key
	{regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), Redacted, func(f literalSet) bool { return f.has(litXox) }},                               // Slack token
	{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), Redacted, func(f literalSet) bool { return f.has(litGlpat) }},                                 // GitLab token
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), Redacted, func(f literalSet) bool { return f.has(litEyJ) }}, // JWT
}

// pairMay is the prefilter of the key=value pattern: a word of
// secretPairWords followed by key characters, white space and ':' or '='.
func pairMay(s string, f literalSet) bool {
	if !f.has(litColon|litEquals) || !f.has(litPairWord) {
		return false
	}
	for i := 0; i < len(s); i++ {
		lc := s[i]
		if 'A' <= lc && lc <= 'Z' {
			lc += 'a' - 'A'
		}
		for _, l := range literalsByFirst[lc] {
			if l.set == litPairWord && hasPrefixFoldASCII(s[i:], l.text) && assignsAfter(s[i+len(l.text):]) {
				return true
			}
		}
	}
	return false
}

// assignsAfter reports whether s starts with key characters
// ([A-Za-z0-9_.-]*), then white space, then ':' or '='.
func assignsAfter(s string) bool {
	i := 0
	for i < len(s) && (isKeyChar(s[i])) {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i < len(s) && (s[i] == ':' || s[i] == '=')
}

func isKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// secretPairWords are the words one of which a key=value secret's key
// holds (in ASCII lowercase): "key" stands for api_key, access-key and
// private key.
var secretPairWords = []string{"passw", "pwd", "secret", "token", "key", "credential", "session", "cookie"}

// secretKeyWords are the words one of which a secret key's name holds (in
// ASCII lowercase): "key" stands for api_key, access-key and private key.
var secretKeyWords = []string{"passw", "pwd", "secret", "token", "key", "credential", "authorization", "cookie", "session", "dsn", "connection"}

// scanLiteral is one literal scanLiterals looks for.
type scanLiteral struct {
	text string // lowercase when fold
	fold bool
	set  literalSet
}

// literalsByFirst indexes the literals by their first byte (lowercase for
// the folded ones), for scanLiterals.
var literalsByFirst = func() (t [256][]scanLiteral) {
	add := func(text string, fold bool, set literalSet) {
		t[text[0]] = append(t[text[0]], scanLiteral{text, fold, set})
	}
	add("PRIVATE KEY-----", false, litPEM)
	add("://", false, litScheme)
	add("authorization", true, litAuthorization)
	add("bearer", true, litBearer)
	add("basic", true, litBasic)
	add("AKIA", false, litAKIA)
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
		add(p, false, litGitHub)
	}
	add("github_pat_", false, litGitHubPAT)
	add("sk-", false, litSK)
	add("xox", false, litXox)
	add("glpat-", false, litGlpat)
	add("eyJ", false, litEyJ)
	for _, w := range secretPairWords {
		add(w, true, litPairWord)
	}
	for _, w := range secretKeyWords {
		add(w, true, litKeyWord)
	}
	return t
}()

// scanLiterals returns the set of the prefilter's literals s holds, in one
// pass.
func scanLiterals(s string) literalSet {
	var found literalSet
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !scanStarts[c] {
			continue // no literal starts here and no byte of note
		}
		switch c {
		case '@':
			found |= litAt
		case ':':
			found |= litColon
		case '=':
			found |= litEquals
		case 0xC5, 0xE2: // the first bytes of U+017F and U+212A
			if foldsToASCII(s[i:min(i+3, len(s))]) {
				found |= litFolding
			}
		}
		lc := c
		if 'A' <= c && c <= 'Z' {
			lc = c + 'a' - 'A'
		}
		for _, l := range literalsByFirst[lc] {
			if l.fold && found&l.set == 0 && hasPrefixFoldASCII(s[i:], l.text) {
				found |= l.set
			}
		}
		for _, l := range literalsByFirst[c] {
			if !l.fold && found&l.set == 0 && strings.HasPrefix(s[i:], l.text) {
				found |= l.set
			}
		}
	}
	return found
}

// scanStarts marks the bytes scanLiterals acts on: '@', ':', '=', the
// first bytes of U+017F and U+212A, and the first bytes of its literals
// (either case of a folded one's). It is never modified.
var scanStarts = func() (t [256]bool) {
	for _, c := range []byte{'@', ':', '=', 0xC5, 0xE2} {
		t[c] = true
	}
	for c := range 256 {
		lc := byte(c)
		if 'A' <= lc && lc <= 'Z' {
			lc += 'a' - 'A'
		}
		for _, l := range literalsByFirst[lc] {
			t[c] = t[c] || l.fold
		}
		t[c] = t[c] || len(literalsByFirst[c]) > 0
	}
	return t
}()

// hasPrefixFoldASCII reports whether s starts with lower (ASCII lowercase)
// under ASCII case folding.
func hasPrefixFoldASCII(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// foldsToASCII reports whether s holds a letter outside ASCII that
// case-insensitive matching folds to an ASCII one: the long s (U+017F, s)
// and the Kelvin sign (U+212A, k). TestFoldsToASCIIIsComplete checks that
// there are no others.
func foldsToASCII(s string) bool {
	return strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a")
}

// secretKey matches a label or annotation name whose value is a secret.
var secretKey = regexp.MustCompile(`(?i)(passw(or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|authorization|cookie|session[_-]?id|dsn|connection[_-]?string)`)

// Redact returns s with the secrets it recognises replaced by Redacted:
// tokens of well-known shapes (AWS, GitHub, GitLab, Slack, OpenAI keys,
// JWTs), bearer and basic credentials, Authorization headers, key=value
// pairs whose key names a secret (password, token, api_key, secret, …),
// passwords in URLs and connection strings, and PEM private keys. It is
// deterministic and idempotent. It is what keeps secrets on the machine:
// every prompt text passes through it before a model sees it.
func Redact(s string) string {
	if s == "" {
		return s
	}
	found := scanLiterals(s)
	for _, p := range secretPatterns {
		if !found.has(litFolding) && !p.mayHold(s, found) {
			continue
		}
		if r := p.re.ReplaceAllString(s, p.repl); r != s {
			s, found = r, scanLiterals(r)
		}
	}
	return s
}

// RedactField returns the value of the label or annotation key with its
// secrets redacted: the whole value when the key names a secret (such as
// "password", "api_token" or "db_dsn"), else Redact(value).
func RedactField(key, value string) string {
	if value != "" && secretKeyName(key) {
		return Redacted
	}
	return Redact(value)
}

// secretKeyName reports whether secretKey matches key, running it only when
// key holds one of secretKeyWords (or a letter that folds to ASCII).
func secretKeyName(key string) bool {
	if !scanLiterals(key).has(litKeyWord | litFolding) {
		return false
	}
	return secretKey.MatchString(key)
}

// RedactEvery is Redact without the literal prefilter: every pattern tried
// in order over the whole text. It is the reference Redact must equal
// (property P42); nothing else calls it.
func RedactEvery(s string) string {
	if s == "" {
		return s
	}
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// RedactFieldEvery is RedactField without the literal prefilters: the
// reference RedactField must equal (property P42); nothing else calls it.
func RedactFieldEvery(key, value string) string {
	if value != "" && secretKey.MatchString(key) {
		return Redacted
	}
	return RedactEvery(value)
}
