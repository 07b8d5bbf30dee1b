// Package storetest gives tests the location of a new, empty memory on the
// backend under test: a SQLite file in the test's temporary directory, or
// a fresh PostgreSQL schema when OPENRECALL_TEST_BACKEND=postgres (make
// test runs the store, workflow and serve tests a second time so).
package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openrecall/openrecall/internal/pgtest"
)

// EnvBackend names the variable that picks the backend under test.
const EnvBackend = "OPENRECALL_TEST_BACKEND"

// Postgres reports whether the tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvBackend) == "postgres" }

// Location returns where a new, empty memory for t lives on the backend
// under test; it is removed when t ends.
func Location(t testing.TB) string {
	t.Helper()
	if !Postgres() {
		return filepath.Join(t.TempDir(), "memory.db")
	}
	pgtest.Server(t) // skips or fails t as pgtest does when there is no server
	loc, release, err := Fresh("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return loc
}
