package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// recallBoth recalls fp through the cache and, with the cache off, straight
// from the database, and fails when they differ.
func recallBoth(t *testing.T, s *Store, id openrecall.Identity, fp openrecall.Fingerprint, limit int) []openrecall.Match {
	t.Helper()
	ctx := context.Background()
	cached, err := s.Recall(ctx, id, fp, limit)
	if err != nil {
		t.Fatal(err)
	}
	rc := s.rcache
	s.rcache = nil
	direct, err := s.Recall(ctx, id, fp, limit)
	s.rcache = rc
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(direct, cached); diff != "" {
		t.Fatalf("recall %s limit %d: cached result differs from the database's (-db +cache):\n%s", fp, limit, diff)
	}
	return cached
}

// TestRecallCacheSeesEveryRetain checks that a cached recall equals an
// uncached one after retains and a forget through this store and through
// another connection to the same file (as another process's: PRAGMA
// data_version), for the alert's identity and another, and that repeated
// recalls hit.
func TestRecallCacheSeesEveryRetain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, other := openAt(t, path), openAt(t, path)
	s.EnableRecallCache(8, 0)
	fp := fpOf("timeout", "api_edge", "database", "spike", "", "prod")
	near := fpOf("timeout", "api_edge", "database", "flapping", "", "prod")
	id := openrecall.Identity{Rule: "HighLatency", Service: "checkout"}
	otherID := openrecall.Identity{Rule: "HighLatency", Service: "orders"}
	if got := recallBoth(t, s, id, fp, 5); len(got) != 0 {
		t.Fatalf("empty memory recalled %d", len(got))
	}
	var first openrecall.Incident
	for i, step := range []struct {
		by *Store
		id openrecall.Identity
		fp openrecall.Fingerprint
	}{{s, id, fp}, {other, otherID, near}, {other, id, fp}, {s, otherID, near}, {other, id, fp}} {
		inc := mustRetain(t, step.by, openrecall.Incident{Identity: step.id, Fingerprint: step.fp, Decision: openrecall.DecisionDuplicate,
			Note: fmt.Sprintf("note %d", i), SourceAlertID: fmt.Sprintf("a-%d", i)})
		if i == 0 {
			first = inc
		}
		for range 2 {
			if got := recallBoth(t, s, id, fp, 5); len(got) != i+1 {
				t.Fatalf("after retain %d: %d matches, want %d", i+1, len(got), i+1)
			}
		}
		recallBoth(t, s, otherID, near, 2)
		recallBoth(t, s, openrecall.Identity{}, fp, 3)
	}
	for _, by := range []*Store{other, s} {
		if _, _, err := by.Forget(context.Background(), first.ID); err != nil {
			t.Fatal(err)
		}
		recallBoth(t, s, id, fp, 5)
	}
	h, n := s.rcache.hits.Load(), s.rcache.lookups.Load()
	if h == 0 || h >= n {
		t.Errorf("recall cache: %d hits of %d lookups; want some hits and some misses", h, n)
	}
	// More keys than the bound: still equal to the database.
	for i := range 30 {
		recallBoth(t, s, id, fp, 1+i%6)
	}
	if s.rcache.len() > 16 {
		t.Errorf("recall cache holds %d keys, bound 2×8", s.rcache.len())
	}
}

// TestRecallCacheRechecksAfterItsInterval: with a recheck interval, another
// connection's retain is recalled once the interval has passed.
func TestRecallCacheRechecksAfterItsInterval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, other := openAt(t, path), openAt(t, path)
	const recheck = 20 * time.Millisecond
	s.EnableRecallCache(8, recheck)
	fp := fpOf("timeout", "api_edge", "database", "spike", "", "prod")
	id := openrecall.Identity{Rule: "HighLatency", Service: "checkout"}
	recallBoth(t, s, id, fp, 5)
	mustRetain(t, other, openrecall.Incident{Identity: id, Fingerprint: fp, Decision: openrecall.DecisionDuplicate, Note: "n", SourceAlertID: "a"})
	time.Sleep(2 * recheck)
	if got := recallBoth(t, s, id, fp, 5); len(got) != 1 {
		t.Fatalf("after the recheck interval: %d matches, want the other connection's one", len(got))
	}
}
