package memory

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/internal/testenv"
)

// sharedLocation returns where a test opens two stores as two serve
// processes would: a SQLite file, or a PostgreSQL schema when the store
// tests run on PostgreSQL.
func sharedLocation(t *testing.T) string {
	t.Helper()
	if testBackend() == "postgres" {
		return pgtest.DSN(t)
	}
	return filepath.Join(t.TempDir(), "memory.db")
}

// TestLostLeaseWritesNothing pins the fence of a process whose lease passed
// while it analysed (a pause longer than the lease): another process
// reclaimed the delivery, so the first writes neither audit entries nor a
// result for it, whether it learnt of the loss from a renewal before it
// persists, or from its own fenced persist, and the result and audit
// entries stored are the second process's, once. A claim found lost used
// to be forgotten, and then persisted and completed unfenced: two sets of
// audit entries for one analysis, or a result whose entries were never
// stored.
func TestLostLeaseWritesNothing(t *testing.T) {
	tests := []struct {
		name string
		// renew: the first process renews after the reclaim (and learns
		// of the loss) before it persists; persist: it persists at all.
		renew, persist bool
	}{
		{name: "renewal learns of the loss, then persist", renew: true, persist: true},
		{name: "fenced persist", persist: true},
		{name: "renewal learns of the loss, then complete", renew: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			location := sharedLocation(t)
			a := openWith(t, location, Options{Now: newClock().Now, Instance: "a", Lease: 50 * time.Millisecond})
			b := openWith(t, location, Options{Now: newClock().Now, Instance: "b", Lease: time.Minute})
			if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high")}, 0, inboxName); err != nil {
				t.Fatal(err)
			}
			got, err := a.Claim(ctx, 10)
			if err != nil || len(got) != 1 {
				t.Fatalf("a claims: %+v, %v", got, err)
			}
			d := got[0]
			// a's lease passes; b reclaims the delivery.
			if !testenv.Poll(t, 10*time.Millisecond, func() bool {
				got, err = b.Claim(ctx, 10)
				if err != nil {
					t.Fatal(err)
				}
				return len(got) == 1
			}) {
				t.Fatal("b never reclaimed the delivery after a's lease passed")
			}
			if tt.renew {
				if err := a.RenewLeases(ctx); err != nil {
					t.Fatal(err)
				}
			}
			ra := sinkResult(d.AnalysisID, 2)
			ra.Decision = openrecall.DecisionEscalated
			if tt.persist {
				// The sink stores the result and completes its delivery
				// in one transaction, under a's claim.
				sink := Sink{Store: a, Seal: audit.Seal, SealCosts: testCostSeal}
				if _, err := sink.PersistBatch(ctx, []openrecall.Result{ra}, []*openrecall.CostPoint{nil}); err != nil {
					t.Fatal(err)
				}
			} else if err := a.Complete(ctx, []int64{d.ID}, []openrecall.Result{ra}); err != nil {
				t.Fatal(err)
			}
			if n := a.LeasesLost(); n != 1 {
				t.Errorf("a counts %d leases lost, want 1", n)
			}
			if entries, err := a.AuditByAnalysis(ctx, d.AnalysisID); err != nil || len(entries) != 0 {
				t.Fatalf("a stored %d audit entries (%v) for a delivery b holds", len(entries), err)
			}
			if sv, err := a.Served(ctx, d.AnalysisID); err != nil || sv.Done {
				t.Fatalf("a completed a delivery b holds: %+v, %v", sv, err)
			}

			rb := sinkResult(d.AnalysisID, 3)
			rb.Decision = openrecall.DecisionReal
			sink := Sink{Store: b, Seal: audit.Seal, SealCosts: testCostSeal}
			if _, err := sink.PersistBatch(ctx, []openrecall.Result{rb}, []*openrecall.CostPoint{nil}); err != nil {
				t.Fatal(err)
			}
			entries, err := b.AuditByAnalysis(ctx, d.AnalysisID)
			if err != nil || len(entries) != 3 {
				t.Errorf("%d audit entries stored (%v), want b's 3", len(entries), err)
			}
			sv, err := b.Served(ctx, d.AnalysisID)
			if err != nil || !sv.Done || sv.Result == nil || sv.Result.Decision != openrecall.DecisionReal {
				t.Errorf("served %+v, %v; want b's result", sv.Result, err)
			}
			if n := b.LeasesLost(); n != 0 {
				t.Errorf("b counts %d leases lost, want 0", n)
			}
		})
	}
}

// TestFencedHeadOpensItsGroup pins that a group head fenced out of a
// persist (its delivery reclaimed by another process) still opens its
// group, so the results this process grouped under it are stored: they
// used to fail for ever ("group member: not found"), and the process,
// retrying that batch while renewing its claims, stopped draining.
func TestFencedHeadOpensItsGroup(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	a := openWith(t, location, Options{Now: newClock().Now, Instance: "a", Lease: 50 * time.Millisecond})
	b := openWith(t, location, Options{Now: newClock().Now, Instance: "b", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("h", "high"), firing("m", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	ds, err := a.Claim(ctx, 10)
	if err != nil || len(ds) != 2 {
		t.Fatalf("a claims: %+v, %v", ds, err)
	}
	// b reclaims the head's delivery only (the oldest).
	if !testenv.Poll(t, 10*time.Millisecond, func() bool {
		got, err := b.Claim(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return len(got) == 1
	}) {
		t.Fatal("b never reclaimed the head's delivery after a's lease passed")
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := openrecall.Identity{Rule: "DiskFull", Service: "db"}
	head := sinkResult(ds[0].AnalysisID, 2)
	head.Identity, head.Alert.Status = id, openrecall.StatusFiring
	gid := openrecall.GroupID(head.AnalysisID)
	head.Group = &openrecall.GroupRef{ID: gid, Role: openrecall.GroupRoleHead, HeadAnalysisID: head.AnalysisID, HeadAlertID: head.Alert.ID, At: at}
	member := sinkResult(ds[1].AnalysisID, 3)
	member.Identity, member.Alert.Status = id, openrecall.StatusFiring
	member.Group = &openrecall.GroupRef{ID: gid, Role: openrecall.GroupRoleMember, HeadAnalysisID: head.AnalysisID, HeadAlertID: head.Alert.ID, At: at.Add(time.Minute)}
	sink := Sink{Store: a, Seal: audit.Seal, SealCosts: testCostSeal}
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{head, member}, []*openrecall.CostPoint{nil, nil}); err != nil {
		t.Fatalf("persist of a batch whose head was fenced out: %v", err)
	}
	if got, err := a.AuditByAnalysis(ctx, head.AnalysisID); err != nil || len(got) != 0 {
		t.Errorf("the fenced head has %d audit entries (%v), want none", len(got), err)
	}
	if got, err := a.AuditByAnalysis(ctx, member.AnalysisID); err != nil || len(got) != 3 {
		t.Errorf("the member has %d audit entries (%v), want 3", len(got), err)
	}
	m, err := a.GroupOf(ctx, member.AnalysisID)
	if err != nil || m.GroupID != gid {
		t.Errorf("the member's group: %+v, %v; want %s", m, err, gid)
	}
	if _, err := a.GroupOf(ctx, head.AnalysisID); err == nil {
		t.Errorf("the fenced head was recorded in a group")
	}
}

// TestOwnPassedLeaseIsNotReclaimed pins the fence's premise: a Store whose
// lease passed while it analysed (a pause longer than the lease) does not
// claim that delivery again itself — its analysis is still in flight, and
// a second claim by the same Store passed the fence of both analyses, so
// the delivery was persisted twice (seven analyses with doubled audit
// entries in the multi-process test, once in a CI run). Another Store
// takes it over.
func TestOwnPassedLeaseIsNotReclaimed(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	a := openWith(t, location, Options{Now: newClock().Now, Instance: "a", Lease: 50 * time.Millisecond})
	b := openWith(t, location, Options{Now: newClock().Now, Instance: "b", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Claim(ctx, 10); err != nil || len(got) != 1 {
		t.Fatalf("a claims: %+v, %v", got, err)
	}
	time.Sleep(100 * time.Millisecond) // a's lease passes
	if got, err := a.Claim(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("a claimed its own passed lease again: %+v, %v; want nothing", got, err)
	}
	if got, err := b.Claim(ctx, 10); err != nil || len(got) != 1 {
		t.Fatalf("b takes the passed lease over: %+v, %v; want the delivery", got, err)
	}
}
