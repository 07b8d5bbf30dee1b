package memory

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/testenv"
)

// completeOne completes delivery d of s with a triaged result and fails the
// test unless it is then done.
func completeOne(t *testing.T, s *Store, d openrecall.Delivery) {
	t.Helper()
	ctx := context.Background()
	r := openrecall.Result{AnalysisID: d.AnalysisID, Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal}
	if err := s.Complete(ctx, []int64{d.ID}, []openrecall.Result{r}); err != nil {
		t.Fatal(err)
	}
	if sv, err := s.Served(ctx, d.AnalysisID); err != nil || !sv.Done {
		t.Fatalf("delivery %d after its completion: done %v, %v; want done", d.ID, sv.Done, err)
	}
}

// TestRenewalKeepsAClaimItDidNotSee pins the race of issue 33: a Claim
// that commits while a renewal runs is not among the rows the renewal's
// UPDATE returned (PostgreSQL's statement snapshot; on SQLite a commit
// after it), and the renewal, comparing what it renewed with every claim
// held by then, forfeited it — counted as "reclaimed by another server"
// with no other server, its result fenced out, and the row, still this
// Store's, never claimed again (10d9fbb): pending until a restart. Here
// the Claim runs at the point between the renewal's commit and its
// comparison.
func TestRenewalKeepsAClaimItDidNotSee(t *testing.T) {
	ctx := context.Background()
	a := openWith(t, sharedLocation(t), Options{Now: newClock().Now, Instance: "a", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high"), firing("y", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	first, err := a.Claim(ctx, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("a claims: %+v, %v", first, err)
	}
	var during []openrecall.Delivery
	a.leases.afterRenew = func() {
		a.leases.afterRenew = nil
		if during, err = a.Claim(ctx, 1); err != nil || len(during) != 1 {
			t.Errorf("a claims during its renewal: %+v, %v", during, err)
		}
	}
	if err := a.RenewLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if len(during) != 1 {
		t.Fatal("the renewal never reached its hook")
	}
	if n := a.LeasesLost(); n != 0 {
		t.Errorf("a counts %d leases lost with no other owner, want 0", n)
	}
	// The claim made during the renewal is still held: renewed by the
	// next renewal, and its completion stores its result.
	if err := a.RenewLeases(ctx); err != nil || a.LeasesLost() != 0 {
		t.Fatalf("the next renewal: %v, lost %d; want nothing lost", err, a.LeasesLost())
	}
	completeOne(t, a, during[0])
	completeOne(t, a, first[0])
	if n, err := a.InboxDepth(ctx); err != nil || n != 0 {
		t.Fatalf("inbox depth %d (%v) once both completed, want 0", n, err)
	}
}

// TestRenewalReleasesAnOwnedRowNoOneWorksOn pins the other half: a row
// this Store owns and does not hold (here made by hand, as a Claim whose
// commit the Store never heard of would leave it) is released by the next
// renewal and claimed again — by this Store too, since no analysis of it is
// in flight here — instead of staying pending until a restart; also when
// the Store holds nothing else.
func TestRenewalReleasesAnOwnedRowNoOneWorksOn(t *testing.T) {
	ctx := context.Background()
	a := openWith(t, sharedLocation(t), Options{Now: newClock().Now, Instance: "a", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	held, err := a.Claim(ctx, 1)
	if err != nil || len(held) != 1 {
		t.Fatalf("a claims: %+v, %v", held, err)
	}
	for round, holding := range []bool{true, false} {
		// A new delivery, made a's by hand, unknown to a.
		if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing(fmt.Sprintf("y%d", round), "high")}, 0, inboxName); err != nil {
			t.Fatal(err)
		}
		if _, err := a.db.ExecContext(ctx, `UPDATE inbox SET lease_instance = $1, lease_owner = $2, lease_until = $3, attempt = attempt + 1
			WHERE done_seq IS NULL AND lease_owner = ''`, a.leases.instance, a.Owner(), time.Now().Add(time.Hour).UnixNano()); err != nil {
			t.Fatal(err)
		}
		if got, err := a.Claim(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("round %d: a claimed %v (%v) a row it owns", round, ids(got), err)
		}
		if err := a.RenewLeases(ctx); err != nil || a.LeasesLost() != 0 {
			t.Fatalf("round %d: renewal: %v, lost %d", round, err, a.LeasesLost())
		}
		again, err := a.Claim(ctx, 10)
		if err != nil || len(again) != 1 || again[0].ID == held[0].ID {
			t.Fatalf("round %d (holding another: %v): a claims after the renewal %v, %v; want the released row", round, holding, ids(again), err)
		}
		completeOne(t, a, again[0])
		if holding {
			completeOne(t, a, held[0])
		}
	}
	if n, err := a.InboxDepth(ctx); err != nil || n != 0 {
		t.Fatalf("inbox depth %d (%v), want 0", n, err)
	}
}

// TestRenewalRetriesADeadlock pins that a renewal meeting a deadlock
// (40P01) tries again instead of failing: on PostgreSQL another
// transaction locks the newer of the two rows the renewal renews, waits
// until the renewal holds the older one and waits for the newer, then
// locks the older — the renewal's backend, whose deadlock_timeout runs out
// first (the other's is set to an hour), is chosen as the victim. serve
// logged the error and renewed nothing for a third of the lease. SQLite
// has no row locks: its writers take turns, and cannot deadlock.
func TestRenewalRetriesADeadlock(t *testing.T) {
	if testBackend() != "postgres" {
		t.Skip("a deadlock between row locks needs PostgreSQL (OPENRECALL_TEST_BACKEND=postgres)")
	}
	ctx := context.Background()
	location := sharedLocation(t)
	a := openWith(t, location, Options{Now: newClock().Now, Instance: "a", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high"), firing("y", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	held, err := a.Claim(ctx, 10)
	if err != nil || len(held) != 2 {
		t.Fatalf("a claims: %+v, %v", held, err)
	}
	older, newer := held[0].ID, held[1].ID
	other, err := sql.Open("pgx", location)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET LOCAL deadlock_timeout = '1h'"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM inbox WHERE id = $1 FOR UPDATE", newer); err != nil {
		t.Fatal(err)
	}
	renewed := make(chan error, 1)
	go func() { renewed <- a.RenewLeases(ctx) }()
	// The renewal holds the older row and waits for the newer one.
	if !testenv.Poll(t, 10*time.Millisecond, func() bool {
		var n int
		if err := other.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE inbox SET lease_until%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}) {
		t.Fatal("the renewal never waited for the locked row")
	}
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM inbox WHERE id = $1 FOR UPDATE", older); err != nil {
		t.Fatalf("the other transaction was chosen as the deadlock's victim: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-renewed; err != nil {
		t.Fatalf("the renewal after a deadlock: %v; want it retried", err)
	}
	if n := a.LeasesLost(); n != 0 {
		t.Errorf("a counts %d leases lost, want 0", n)
	}
}

// TestClaimSkipsADeliveryItStillHolds pins the rest of 10d9fbb's
// guarantee: a delivery a Store holds (its analysis in flight), which
// another Store took once the lease passed and then let pass in turn, is
// not claimed again by the first until its first analysis completes —
// the fence would read the new attempt and let both analyses persist.
func TestClaimSkipsADeliveryItStillHolds(t *testing.T) {
	ctx := context.Background()
	location := sharedLocation(t)
	a := openWith(t, location, Options{Now: newClock().Now, Instance: "a", Lease: time.Minute})
	b := openWith(t, location, Options{Now: newClock().Now, Instance: "b", Lease: time.Minute})
	if _, err := a.Enqueue(ctx, []openrecall.Delivery{firing("x", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	first, err := a.Claim(ctx, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("a claims: %+v, %v", first, err)
	}
	pass := func() { // the holder's lease passes (a pause longer than it)
		t.Helper()
		if _, err := a.db.ExecContext(ctx, `UPDATE inbox SET lease_until = 1`); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	if got, err := b.Claim(ctx, 1); err != nil || len(got) != 1 {
		t.Fatalf("b takes the passed lease over: %+v, %v", got, err)
	}
	pass()
	if got, err := a.Claim(ctx, 1); err != nil || len(got) != 0 {
		t.Fatalf("a was handed %v (%v), a delivery whose first analysis it still holds", ids(got), err)
	}
	// Once a's first analysis completes (fenced: b took it), a may claim
	// it again.
	r := openrecall.Result{AnalysisID: first[0].AnalysisID, Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal}
	if err := a.Complete(ctx, ids(first), []openrecall.Result{r}); err != nil || a.LeasesLost() != 1 {
		t.Fatalf("a's fenced completion: %v, lost %d", err, a.LeasesLost())
	}
	if got, err := a.Claim(ctx, 1); err != nil || len(got) != 1 {
		t.Fatalf("a after its completion: %v, %v; want the delivery b let pass", ids(got), err)
	}
}
