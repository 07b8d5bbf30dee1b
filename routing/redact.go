package routing

import "regexp"

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// secretPatterns find secrets in free text. Each keeps what names the secret
// (the key, the scheme, the user's place) and replaces the secret itself. No
// pattern matches across a double quote, so redacting JSON text keeps it
// JSON.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// PEM private key blocks.
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^"]*?-----END [A-Z ]*PRIVATE KEY-----`), Redacted},
	// Credentials in a URL or connection string: scheme://user:password@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^\s:/@"'<>]*:[^\s@/"'<>]+@`), "${1}" + Redacted + "@"},
	// Authorization headers and bearer/basic credentials.
	{regexp.MustCompile(`(?i)\b(authorization\s*[:=]\s*)(bearer|basic|token|apikey)?\s*[^\s"',;]+`), "${1}${2} " + Redacted},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*`), "${1} " + Redacted},
	// key=value or key: value where the key names a secret.
	{regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|session[_-]?id|cookie)[a-z0-9_.-]*)(\s*[:=]\s*)('[^']*'|\\"[^"\\]*\\"|[^\s"',;&]+)`), "${1}${2}" + Redacted},
	// Well-known token shapes, wherever they stand.
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), Redacted},                                         // AWS access key id
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`), Redacted},                               // GitHub token
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}\b`), Redacted},                             // GitHub fine-grained token
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), Redacted},                                      // OpenAI-style secret key
	{regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), Redacted},                               // Slack token
	{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), Redacted},                                   // GitLab token
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), Redacted}, // JWT
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
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// RedactField returns the value of the label or annotation key with its
// secrets redacted: the whole value when the key names a secret (such as
// "password", "api_token" or "db_dsn"), else Redact(value).
func RedactField(key, value string) string {
	if value != "" && secretKey.MatchString(key) {
		return Redacted
	}
	return Redact(value)
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
