package openrecall

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestFingerprintIDIsHashOfString holds ID (hashed from a stack buffer, no
// string built) to its plain definition: the first 12 hex digits of the
// SHA-256 of String, for the zero fingerprint, a usual one and one longer
// than the stack buffer.
func TestFingerprintIDIsHashOfString(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, fp := range []Fingerprint{
		{},
		{ErrorClass: "timeout", ServiceRole: "database", SignalShape: "latency", Environment: "prod"},
		{ErrorClass: long, ServiceRole: "api", DependencyPattern: long, SignalShape: "s", AttackPattern: "brute_force", Environment: "e"},
	} {
		sum := sha256.Sum256([]byte(fp.String()))
		want := hex.EncodeToString(sum[:6])
		if got := fp.ID(); got != want {
			t.Errorf("%q: ID() = %s, want %s (the hash of String)", fp.String(), got, want)
		}
	}
}
