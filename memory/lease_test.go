package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/testenv"
)

// openAs opens the database of s again as another serve process: its own
// instance name and lease.
func openAs(t *testing.T, s *Store, instance string, lease time.Duration) *Store {
	t.Helper()
	o, err := Open(context.Background(), s.location(), Options{Now: newClock().Now, Instance: instance, Lease: lease})
	if err != nil {
		t.Fatalf("Open as %s: %v", instance, err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}

func enqueueN(t *testing.T, s *Store, n int) {
	t.Helper()
	var ds []openrecall.Delivery
	for i := range n {
		ds = append(ds, firing(fmt.Sprintf("alert-%d", i), "low"))
	}
	if _, err := s.Enqueue(context.Background(), ds, 0, inboxName); err != nil {
		t.Fatal(err)
	}
}

func ids(ds []openrecall.Delivery) []int64 {
	var out []int64
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// Processes claiming at once take different deliveries, and every
// delivery is claimed by exactly one of them.
func TestClaimsAreDisjoint(t *testing.T) {
	base := openTemp(t)
	enqueueN(t, base, 60)
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	for p := range 3 {
		st := openAs(t, base, fmt.Sprintf("p%d", p), time.Minute)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ds, err := st.Claim(context.Background(), 4)
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					if other, dup := seen[d.ID]; dup {
						t.Errorf("delivery %d claimed by %s and %s", d.ID, other, st.Owner())
					}
					seen[d.ID] = st.Owner()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 60 {
		t.Errorf("%d of 60 deliveries claimed", len(seen))
	}
}

// A claim lasts its lease: another process takes the delivery only once it
// passed, and then the first process's completion writes nothing and is
// counted as lost, while the new holder completes it.
func TestExpiredLeaseIsReclaimedAndFenced(t *testing.T) {
	ctx := context.Background()
	base := openTemp(t)
	enqueueN(t, base, 1)
	// A lease runs on the wall clock: a's is long enough that b's first
	// claim comes well within it on a loaded machine (50 ms did not, on
	// PostgreSQL under load), and b then claims until it passes.
	a := openAs(t, base, "a", time.Second)
	b := openAs(t, base, "b", time.Minute)
	got, err := a.Claim(ctx, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("a claims: %v, %v", got, err)
	}
	if got, err := b.Claim(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("b claimed %v (%v) while a's lease runs", ids(got), err)
	}
	var again []openrecall.Delivery
	if !testenv.Poll(t, 20*time.Millisecond, func() bool {
		again, err = b.Claim(ctx, 10)
		return err != nil || len(again) > 0
	}) {
		t.Fatal("b never claimed the delivery after a's lease passed")
	}
	if err != nil || !slices.Equal(ids(again), ids(got)) {
		t.Fatalf("b after a's lease: %v, %v; want %v", ids(again), err, ids(got))
	}
	r := openrecall.Result{AnalysisID: got[0].AnalysisID, Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal}
	if err := a.Complete(ctx, ids(got), []openrecall.Result{r}); err != nil {
		t.Fatal(err)
	}
	if a.LeasesLost() != 1 {
		t.Errorf("a lost %d leases, want 1", a.LeasesLost())
	}
	if sv, err := base.Served(ctx, got[0].AnalysisID); err != nil || sv.Done {
		t.Fatalf("after a's fenced completion: done %v, %v; want still pending", sv.Done, err)
	}
	r.Decision = openrecall.DecisionFalsePositive
	if err := b.Complete(ctx, ids(again), []openrecall.Result{r}); err != nil {
		t.Fatal(err)
	}
	sv, err := base.Served(ctx, got[0].AnalysisID)
	if err != nil || !sv.Done || sv.Result.Decision != openrecall.DecisionFalsePositive || b.LeasesLost() != 0 {
		t.Fatalf("b's completion: %+v, %v, lost %d", sv.Result, err, b.LeasesLost())
	}
}

// Renewing keeps a claim past its first lease; a restart of the same
// instance takes its former run's claims back at once.
func TestRenewAndRestartOfTheSameInstance(t *testing.T) {
	ctx := context.Background()
	base := openTemp(t)
	enqueueN(t, base, 2)
	a := openAs(t, base, "a", 80*time.Millisecond)
	other := openAs(t, base, "b", time.Minute)
	held, err := a.Claim(ctx, 10)
	if err != nil || len(held) != 2 {
		t.Fatalf("claim: %v, %v", held, err)
	}
	for range 4 {
		time.Sleep(30 * time.Millisecond)
		if err := a.RenewLeases(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := other.Claim(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("another instance claimed %v (%v) a renewed lease", ids(got), err)
	}
	restarted := openAs(t, base, "a", time.Minute)
	got, err := restarted.Claim(ctx, 10)
	if err != nil || !slices.Equal(ids(got), ids(held)) {
		t.Fatalf("restart of instance a claims %v, %v; want %v at once", ids(got), err, ids(held))
	}
	if err := a.RenewLeases(ctx); err != nil || a.LeasesLost() != 2 {
		t.Fatalf("the former run renews: %v, lost %d; want both lost", err, a.LeasesLost())
	}
}

// A result whose delivery another process reclaimed is not persisted: no
// audit entry, no cost point.
func TestPersistIsFencedOnTheLease(t *testing.T) {
	ctx := context.Background()
	base := openTemp(t)
	enqueueN(t, base, 2)
	a := openAs(t, base, "a", 50*time.Millisecond)
	got, err := a.Claim(ctx, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %v, %v", got, err)
	}
	time.Sleep(60 * time.Millisecond)
	b := openAs(t, base, "b", time.Minute)
	if again, err := b.Claim(ctx, 1); err != nil || len(again) != 1 {
		t.Fatalf("reclaim: %v, %v", again, err)
	}
	sink := Sink{Store: a, Seal: audit.Seal, SealCosts: testCostSeal}
	r, kept := sinkResult(got[0].AnalysisID, 2), sinkResult("not-from-the-inbox", 1)
	p := openrecall.CostPoint{Index: 0, Batch: "b1", AlertID: r.Alert.ID, Cost: 1, Baseline: 5, CumulativeCost: 1, CumulativeBaseline: 5}
	out, err := sink.PersistBatch(ctx, []openrecall.Result{r, kept}, []*openrecall.CostPoint{&p, nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(out[0]) != 0 || len(out[1]) != 1 || a.LeasesLost() != 1 {
		t.Fatalf("fenced persist stored %d and %d entries, lost %d; want 0, 1, 1", len(out[0]), len(out[1]), a.LeasesLost())
	}
	if pts, err := base.CostPoints(ctx, "b1"); err != nil || len(pts) != 0 {
		t.Fatalf("cost points of the fenced result: %v, %v; want none", pts, err)
	}
	if es, err := base.AuditByAnalysis(ctx, got[0].AnalysisID); err != nil || len(es) != 0 {
		t.Fatalf("audit of the reclaimed analysis: %v, %v; want none", es, err)
	}
}

// A database another binary migrated is refused: nothing is claimed.
func TestClaimRefusesAnotherSchemaVersion(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	enqueueN(t, s, 1)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Claim(ctx, 10)
	if !errors.Is(err, openrecall.ErrSchemaMismatch) || len(got) != 0 {
		t.Fatalf("claim from a newer schema: %v, %v; want ErrSchemaMismatch", got, err)
	}
	if n, _ := s.InboxDepth(ctx); n != 1 {
		t.Fatalf("depth %d after the refused claim", n)
	}
}
