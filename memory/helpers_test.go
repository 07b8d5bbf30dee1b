package memory

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
)

// fakeClock is a clock that advances one second per reading.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// openTemp opens a new, empty store on the backend under test: a SQLite
// file in a temporary directory, or a fresh PostgreSQL schema when
// OPENRECALL_TEST_BACKEND=postgres (the conformance run of make test).
func openTemp(t testing.TB) *Store {
	t.Helper()
	if testBackend() == "postgres" {
		return openAt(t, pgtest.DSN(t))
	}
	return openAt(t, filepath.Join(t.TempDir(), "memory.db"))
}

// testBackend is the backend the store tests run on: "sqlite" unless
// OPENRECALL_TEST_BACKEND says "postgres".
func testBackend() string {
	if os.Getenv("OPENRECALL_TEST_BACKEND") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

// sqliteOnly skips a test of SQLite's file handling in the PostgreSQL
// conformance run, saying so.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if testBackend() == "postgres" {
		t.Skip("a test of the SQLite file itself; the PostgreSQL run covers the store's behaviour")
	}
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	return openWith(t, path, Options{Now: newClock().Now})
}

// openWith opens the store at path with opts, closed when t ends.
func openWith(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// fpOf builds a fingerprint from its six values in canonical order.
func fpOf(ec, role, dep, shape, attack, env string) openrecall.Fingerprint {
	return openrecall.Fingerprint{ErrorClass: ec, ServiceRole: role, DependencyPattern: dep,
		SignalShape: shape, AttackPattern: attack, Environment: env}
}

func mustRetain(t testing.TB, s *Store, inc openrecall.Incident) openrecall.Incident {
	t.Helper()
	got, _, err := s.Retain(context.Background(), inc)
	if err != nil {
		t.Fatalf("Retain(%+v): %v", inc, err)
	}
	return got
}

func countIncidents(t testing.TB, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM incidents`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMain(m *testing.M) {
	// Every statement the tests run is checked for its placeholders
	// (placeholders_test.go); one that breaks the rule fails the run.
	wrapConnector = guardPlaceholders
	var code int
	if os.Getenv(childEnv) != "" {
		code = retainChild()
	} else {
		code = m.Run()
	}
	if reportPlaceholders() && code == 0 {
		code = 1
	}
	os.Exit(code)
}
