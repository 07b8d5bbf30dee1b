package property

import (
	"github.com/openrecall/openrecall/internal/storetest"
)

// The storage properties run on the backend under test: SQLite by default,
// PostgreSQL when OPENRECALL_TEST_BACKEND=postgres (make test's
// conformance run, same seed), on an empty schema per store.

// storeLocation returns where a property's store lives: memory.db in dir,
// or an empty PostgreSQL schema, which drop releases once the property's
// stores are closed (a no-op for SQLite: the caller removes dir).
func storeLocation(dir string) (location string, drop func(), err error) {
	return storetest.Fresh(dir)
}
