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
	may  func(text, lower string) bool
}

// secretPatterns find secrets in free text. Each keeps what names the secret
// (the key, the scheme, the user's place) and replaces the secret itself. No
// pattern matches across a double quote, so redacting JSON text keeps it
// JSON. Each may reads the text and its ASCII lowercase; for the
// case-insensitive patterns it must be a necessary condition under ASCII
// case folding (Redact takes every pattern when the text holds one of the
// two non-ASCII letters that fold to ASCII ones).
var secretPatterns = []secretPattern{
	// PEM private key blocks.
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^"]*?-----END [A-Z ]*PRIVATE KEY-----`), Redacted,
		func(t, _ string) bool { return strings.Contains(t, "PRIVATE KEY-----") }},
	// Credentials in a URL or connection string: scheme://user:password@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^\s:/@"'<>]*:[^\s@/"'<>]+@`), "${1}" + Redacted + "@",
		func(t, _ string) bool { return strings.Contains(t, "://") && strings.IndexByte(t, '@') >= 0 }},
	// Authorization headers and bearer/basic credentials.
	// The scheme keeps its own white space, so redacting twice changes
	// nothing ("authorization: :" once grew a space on every pass).
	{regexp.MustCompile(`(?i)\b(authorization\s*[:=]\s*)((?:bearer|basic|token|apikey)\s+)?[^\s"',;]+`), "${1}${2}" + Redacted,
		func(_, l string) bool { return strings.Contains(l, "authorization") }},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*`), "${1} " + Redacted,
		func(_, l string) bool { return strings.Contains(l, "bearer") || strings.Contains(l, "basic") }},
	// key=value or key: value where the key names a secret. A quoted value
	// takes what sticks to its closing quote with it, so redacting twice
	// changes nothing ("password: 'x':" once lost its colon on a second
	// pass).
	{regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|session[_-]?id|cookie)[a-z0-9_.-]*)(\s*[:=]\s*)('[^']*'[^\s"',;&]*|\\"[^"\\]*\\"[^\s"',;&]*|[^\s"',;&]+)`), "${1}${2}" + Redacted,
		func(_, l string) bool { return strings.ContainsAny(l, ":=") && containsAnyOf(l, secretPairWords) }},
	// Well-known token shapes, wherever they stand.
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), Redacted, literal("AKIA")},                                                              // AWS access key id
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`), Redacted, func(t, _ string) bool { return containsAnyOf(t, githubPrefixes) }}, // GitHub token
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}\b`), Redacted, literal("github_pat_")},                                           // GitHub fine-grained token
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), Redacted, literal("sk-")},                                                            // OpenAI-style secret key
	{regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), Redacted, literal("xox")},                                                     // Slack token
	{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), Redacted, literal("glpat-")},                                                      // GitLab token
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), Redacted, literal("eyJ")},                       // JWT
}

// secretPairWords are the words one of which a key=value secret's key
// holds (in ASCII lowercase): "key" stands for api_key, access-key and
// private key.
var secretPairWords = []string{"passw", "pwd", "secret", "token", "key", "credential", "session", "cookie"}

// githubPrefixes start the GitHub token shapes.
var githubPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}

// literal returns a may that holds when the text contains s, case and all.
func literal(s string) func(text, lower string) bool {
	return func(t, _ string) bool { return strings.Contains(t, s) }
}

// containsAnyOf reports whether s contains one of words.
func containsAnyOf(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// foldsToASCII reports whether s holds a letter outside ASCII that
// case-insensitive matching folds to an ASCII one: the long s (U+017F, s)
// and the Kelvin sign (U+212A, k). TestFoldsToASCIIIsComplete checks that
// there are no others.
func foldsToASCII(s string) bool {
	return strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a")
}

// lowerASCII returns s with its ASCII letters lowercased and every other
// byte as it was, so that byte offsets and non-ASCII text are kept.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
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
	every := foldsToASCII(s)
	lower := lowerASCII(s)
	for _, p := range secretPatterns {
		if !every && !p.may(s, lower) {
			continue
		}
		if r := p.re.ReplaceAllString(s, p.repl); r != s {
			s, lower = r, lowerASCII(r)
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

// secretKeyWords are the words one of which a secret key's name holds (in
// ASCII lowercase): "key" stands for api_key, access-key and private key.
var secretKeyWords = []string{"passw", "pwd", "secret", "token", "key", "credential", "authorization", "cookie", "session", "dsn", "connection"}

// secretKeyName reports whether secretKey matches key, running it only when
// key holds one of secretKeyWords (or a letter that folds to ASCII).
func secretKeyName(key string) bool {
	if !foldsToASCII(key) && !containsAnyOf(lowerASCII(key), secretKeyWords) {
		return false
	}
	return secretKey.MatchString(key)
}

// redactMap returns m with every value passed through RedactField.
func redactMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = RedactField(k, v)
	}
	return out
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
