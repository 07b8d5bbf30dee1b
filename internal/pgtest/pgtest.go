// Package pgtest gives tests a PostgreSQL database to run against: each
// test gets a schema of its own, dropped when it ends.
//
// The server is OPENRECALL_PG_DSN when set; otherwise a throwaway cluster
// that scripts/pgcluster.sh starts once per test binary (initdb as a
// non-root user, a free port, fsync off), stopped when the binary exits.
// Without either the test is skipped with a message that says why, except
// under CI=true, where a PostgreSQL test that cannot run fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvDSN names the variable that points tests at a PostgreSQL server.
const EnvDSN = "OPENRECALL_PG_DSN"

var (
	once    sync.Once
	server  string
	whyNone string
)

// Server returns the URL of the PostgreSQL server tests use, starting a
// throwaway cluster when OPENRECALL_PG_DSN is not set; it skips t (fails
// it under CI=true) when there is none.
func Server(t testing.TB) string {
	t.Helper()
	once.Do(func() { server, whyNone = find() })
	if server == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL test cannot run under CI=true: %s", whyNone)
		}
		t.Skipf("SKIPPED: no PostgreSQL to test against: %s", whyNone)
	}
	return server
}

func find() (string, string) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn, ""
	}
	script, err := scriptPath()
	if err != nil {
		return "", err.Error()
	}
	out, err := exec.Command("bash", script, fmt.Sprint(os.Getpid())).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Sprintf("%s is not set and scripts/pgcluster.sh could not start a cluster: %s", EnvDSN, msg)
	}
	return strings.TrimSpace(string(out)), ""
}

// scriptPath finds scripts/pgcluster.sh from this file's place in the
// module.
func scriptPath() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate scripts/pgcluster.sh")
	}
	p := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "pgcluster.sh")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("scripts/pgcluster.sh: %w", err)
	}
	return p, nil
}

// DSN returns the URL of a new, empty schema on the test server, which is
// the search path of every connection made with it; the schema is dropped
// when t ends.
func DSN(t testing.TB) string {
	t.Helper()
	dsn, drop, err := FreshAt(Server(t), "t_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("pgtest: drop schema of %s: %v", dsn, err)
		}
	})
	return dsn
}

// WithSchema returns dsn with schema as its connections' search path.
func WithSchema(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Fresh creates a new, empty schema on the test server for code that has
// no testing.TB (a property's run) and returns its URL and a function that
// drops it. The server is found as Server finds it; without one the error
// says why.
func Fresh() (string, func() error, error) {
	base, err := Find()
	if err != nil {
		return "", nil, err
	}
	return FreshAt(base, "p_")
}

// Find returns the URL of the server as Server finds it (starting a
// throwaway cluster, stopped when this process exits, when
// OPENRECALL_PG_DSN is not set), for code that has no testing.TB; without
// one the error says why.
func Find() (string, error) {
	once.Do(func() { server, whyNone = find() })
	if server == "" {
		return "", fmt.Errorf("no PostgreSQL to test against: %s", whyNone)
	}
	return server, nil
}

// FreshAt creates a new, empty schema named prefix and random hex digits
// on the server at dsn, and returns its URL and a function that drops it.
func FreshAt(dsn, prefix string) (string, func() error, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	schema := prefix + hex.EncodeToString(b[:])
	if err := exec1(dsn, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("pgtest: create schema: %w", err)
	}
	return WithSchema(dsn, schema), func() error { return exec1(dsn, "DROP SCHEMA "+schema+" CASCADE") }, nil
}

// exec1 runs one statement on dsn through a pool of its own.
func exec1(dsn, stmt string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }() // one statement's pool
	_, err = db.ExecContext(context.Background(), stmt)
	return err
}
