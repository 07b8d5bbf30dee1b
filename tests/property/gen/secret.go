package gen

import (
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// SecretPieces are the pieces SecretText is made of: every secret shape the
// redactor knows, in upper, lower and mixed case, their near misses (one
// character short, the separator missing, the word without its value), the
// literals its prefilter looks for standing alone, separators, and the two
// non-ASCII letters that case-insensitive matching folds to ASCII ones.
func SecretPieces() []string {
	return []string{
		" ", " ", "\n", "\t", ":", "=", ": ", " = ", "@", "://", "/", "'", `\"`, `"`, ",", ";", "&", "-", "_", ".",
		"password", "PASSWORD", "PassWd", "pwd", "db_password", "secret", "Client-Secret", "token", "access_token",
		"api_key", "API-KEY", "apikey", "access_key", "private-key", "credential", "credentials", "session_id",
		"SESSION-ID", "cookie", "key", "hunter2", "s3cr3t", "tok_9f8e7d6c5b4a", "'Tr0ub4dor&3'", "abc123",
		"Authorization", "authorization: ", "AUTHORIZATION=", "Bearer ", "bearer", "Basic ", "basic auth",
		"eyZZ1234567890abcdef", "dXNlcjpwYXNz0",
		"postgres://app:s3cr3tpass@db-7:5432/orders", "redis://:p4ss@cache:6379", "https://", "user:pw", "mailto:a@b",
		"AKIA", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPL",
		"ghp_", "gho_", "ghs_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2", "ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2", "ghx_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
		"github_pat_", "github_pat_" + strings.Repeat("a1_", 11),
		"sk-", "sk-proj-Zx9Zx9Zx9Zx9Zx9Zx9Zx9Zx9", "sk-short",
		"xox", "xoxb-1234567890-abcdefghij", "xoxz-1234567890",
		"glpat-", "glpat-abcdefghij0123456789",
		"eyJ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "eyJabc.def",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7",
		"PRIVATE KEY-----",
		"ſ", "K", "paſſword", "toKen", "ſecret", "coo\u212aie",
		"paſſword=hunter2", "api_\u212aey: abc123", "ſession-id=9f8e", "baſic dXNlcjpwYXNz0", "İ", "é", "\u200b",
		"KubePodCrashLooping", "disk 91% full", "see https://runbooks.example.com/disk", "token bucket drained",
		"db_dsn", "DSN", "Connection-String",
	}
}

// SecretText is a text built from SecretPieces by index.
type SecretText struct {
	Pieces []int
}

// String returns the text.
func (t SecretText) String() string { return joinPieces(SecretPieces(), t.Pieces) }

// SecretTextGen generates texts of up to 16 pieces of SecretPieces, shrinking
// toward fewer and earlier pieces.
func SecretTextGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(SecretText{}), map[string]gopter.Gen{
		"Pieces": SliceUpTo(16, Index(len(SecretPieces()), 0.05), reflect.TypeOf(0)),
	})
}
