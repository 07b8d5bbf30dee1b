//go:build !cgo

package memory

// The memory database is SQLite through github.com/mattn/go-sqlite3, which
// is C: openrecall cannot be built without cgo. The declaration below stops
// a CGO_ENABLED=0 build with a message that says so, where the driver's
// stubs would give "undefined: sqlite3.Error" or a binary that cannot open
// its database.
var _ = openrecall_needs_cgo_and_a_C_compiler__build_with_CGO_ENABLED_1_and_gcc_or_clang_installed

// Stand-ins for sqlite_cgo.go, so that the line above is the only error.
func classify(error) error          { return nil }
func cannotOpenWritable(error) bool { return false }
