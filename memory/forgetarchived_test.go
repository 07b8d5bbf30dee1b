package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// TestForgetArchived forgets alert groups and alert state untouched since
// the latest archive's cut, never before an archive and never past its
// cut; a redelivery keeps its alert's state, a forgotten alert is triaged
// as new, and a later firing of a forgotten group opens it again.
func TestForgetArchived(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := openWith(t, sharedLocation(t), Options{Now: clock.Now})
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("old", "low"), firing("still", "low")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	grouped := func(id, role string) openrecall.Result {
		r := sinkResult(id, 1)
		r.Alert.Status = openrecall.StatusFiring
		r.Identity = openrecall.Identity{Rule: "DiskFull", Service: "db"}
		r.Group = &openrecall.GroupRef{ID: "g1", Role: role, HeadAnalysisID: "head-1", HeadAlertID: r.Alert.ID,
			At: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)} // a sender's time years back: forgetting goes by the store's clock
		return r
	}
	sink := Sink{Store: s, Seal: audit.Seal, SealCosts: testCostSeal}
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{grouped("head-1", openrecall.GroupRoleHead)}, []*openrecall.CostPoint{nil}); err != nil {
		t.Fatal(err)
	}
	cut := clock.Now()
	// "still" is delivered again after the cut: its state is touched.
	if out, err := s.Enqueue(ctx, []openrecall.Delivery{firing("still", "low")}, 0, inboxName); err != nil || !out[0].Duplicate {
		t.Fatalf("redelivery: %+v, %v", out, err)
	}
	if f, err := s.ForgetArchived(ctx, cut.Add(time.Hour), 0); err != nil || f.Total() != 0 {
		t.Fatalf("forgetting before any archive: %+v, %v; want nothing", f, err)
	}
	if _, _, err := s.RecordArchive(ctx, openrecall.TrailArchive{Before: cut, At: cut, KeyID: "k", MAC: "m"}, openrecall.TrailArchive{}); err != nil {
		t.Fatal(err)
	}
	// A later cut is taken back to the archive's.
	f, err := s.ForgetArchived(ctx, cut.Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := openrecall.Forgotten{Groups: 1, Members: 1, ExpiredGroups: 1, AlertStates: 1}
	if f != want {
		t.Fatalf("forgot %+v, want %+v", f, want)
	}
	if _, err := s.Group(ctx, "g1"); !errors.Is(err, openrecall.ErrNotFound) {
		t.Fatalf("group g1 after forgetting: %v, want not found", err)
	}
	out, err := s.Enqueue(ctx, []openrecall.Delivery{firing("old", "low"), firing("still", "low")}, 0, inboxName)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Duplicate || !out[1].Duplicate {
		t.Fatalf("after forgetting: old duplicate %v (want a new triage), still duplicate %v (want a redelivery)", out[0].Duplicate, out[1].Duplicate)
	}
	// A member of the forgotten group opens it again.
	if _, err := sink.PersistBatch(ctx, []openrecall.Result{grouped("member-2", openrecall.GroupRoleMember)}, []*openrecall.CostPoint{nil}); err != nil {
		t.Fatalf("a member of a forgotten group: %v", err)
	}
	g, err := s.Group(ctx, "g1")
	if err != nil || g.Size != 1 {
		t.Fatalf("group g1 reopened by its member: %+v, %v; want size 1", g, err)
	}
	if again, err := s.ForgetArchived(ctx, cut.Add(time.Hour), 0); err != nil || again.Total() != 0 {
		t.Fatalf("forgetting again at the same cut: %+v, %v; want nothing (the group was touched after it)", again, err)
	}
}
