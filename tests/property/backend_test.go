package property

import (
	"os"
	"path/filepath"

	"github.com/openrecall/openrecall/internal/pgtest"
)

// The storage properties run on the backend under test: SQLite by default,
// PostgreSQL when OPENRECALL_TEST_BACKEND=postgres (make test's
// conformance run, same seed), on a fresh schema per store.

// pgBackend reports whether the storage properties run on PostgreSQL.
func pgBackend() bool { return os.Getenv("OPENRECALL_TEST_BACKEND") == "postgres" }

// storeLocation returns where a property's store lives: memory.db in dir,
// or a fresh PostgreSQL schema, which drop removes (a no-op for SQLite:
// the caller removes dir).
func storeLocation(dir string) (location string, drop func(), err error) {
	if !pgBackend() {
		return filepath.Join(dir, "memory.db"), func() {}, nil
	}
	dsn, dropSchema, err := pgtest.Fresh()
	if err != nil {
		return "", nil, err
	}
	return dsn, func() { _ = dropSchema() }, nil // a schema left behind costs nothing but space
}
