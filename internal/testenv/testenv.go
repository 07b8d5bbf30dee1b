package testenv

import (
	"os"
	"testing"
)

// CI reports whether the tests run in continuous integration (the CI
// environment variable is "true", as CI services set it).
func CI() bool { return os.Getenv("CI") == "true" }

// Missing ends tb because a data file it needs is absent (err says which):
// in CI it fails tb, elsewhere it skips it. It must be called from the
// goroutine running tb.
func Missing(tb testing.TB, err error) {
	tb.Helper()
	if CI() {
		tb.Fatalf("test data missing (CI=true: a missing data file fails the test): %v", err)
		return
	}
	tb.Skipf("skipping: test data missing: %v", err)
}
