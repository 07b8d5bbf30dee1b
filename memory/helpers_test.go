package memory

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
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

func openTemp(t testing.TB) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "memory.db"))
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Now: newClock().Now})
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
	if os.Getenv(childEnv) != "" {
		os.Exit(retainChild())
	}
	os.Exit(m.Run())
}
