package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// setClock is a clock a test sets.
type setClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *setClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *setClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// closedKind makes the results of a digest test: how each was decided.
type closedKind int

const (
	kBypassed       closedKind = iota // memory closed it: closed
	kCheap                            // the cheap model's benign verdict, no approval needed: closed
	kGrouped                          // a group member took its head's benign decision: closed
	kExcepted                         // an exception closed it: closed
	kStrongApproval                   // the strong model said benign, triage wants a person: waits
	kEscalated                        // left to a person
	kReal                             // judged real
	kUnanalysed                       // escalated without analysis
	kRecovery                         // a sender's recovery: not triaged
)

// closedResult is a result of kind k about rule@service with Alert DNA
// error class ec.
func closedResult(k closedKind, rule, service, ec string) openrecall.Result {
	r := openrecall.Result{Outcome: openrecall.ResultTriaged, Batch: "serve", Identity: openrecall.Identity{Rule: rule, Service: service},
		Fingerprint: openrecall.Fingerprint{ErrorClass: ec}, Decision: openrecall.DecisionKnownBenign}
	switch k {
	case kBypassed:
		r.Bypassed = true
		r.Triage.RequiresHumanApproval = false
	case kCheap:
		r.Decision = openrecall.DecisionDuplicate
		r.Steps = []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierCheap}}
	case kGrouped:
		r.Group = &openrecall.GroupRef{ID: "g1", Role: openrecall.GroupRoleMember, HeadAnalysisID: "head"}
	case kExcepted:
		r.Decision = openrecall.DecisionFalsePositive
		r.Exception = &openrecall.ExceptionRef{ID: "exc-1", Analyst: "alice"}
	case kStrongApproval:
		r.Triage.RequiresHumanApproval = true
		r.Steps = []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong}}
	case kEscalated:
		r.Decision = openrecall.DecisionEscalated
		r.Triage.RequiresHumanApproval = true
	case kReal:
		r.Decision = openrecall.DecisionReal
		r.Triage.RequiresHumanApproval = true
	case kUnanalysed:
		r.Decision = openrecall.DecisionEscalated
		r.EscalatedWithoutAnalysis = true
	case kRecovery:
		r.Outcome = openrecall.ResultResolved
		r.Decision = ""
	}
	return r
}

// completeAt stores rs as the results of new inbox deliveries, completed
// at at by the store's clock (through the Sink, as serve does), and
// returns their analysis ids in order.
func completeAt(t *testing.T, st *Store, clk *setClock, at time.Time, rs ...openrecall.Result) []string {
	t.Helper()
	ctx := context.Background()
	clk.set(at)
	var ds []openrecall.Delivery
	for range rs {
		ds = append(ds, firing(fmt.Sprintf("alert-%d-%d", at.UnixNano(), len(ds)), openrecall.SeverityHigh))
	}
	if _, err := st.Enqueue(ctx, ds, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	claimed, err := st.Claim(ctx, len(rs))
	if err != nil || len(claimed) != len(rs) {
		t.Fatalf("claim: %d of %d, %v", len(claimed), len(rs), err)
	}
	ids := make([]string, len(rs))
	for i := range rs {
		rs[i].AnalysisID, rs[i].Alert = claimed[i].AnalysisID, claimed[i].Alert
		rs[i].Audit = audit.Entries(rs[i], at)
		ids[i] = claimed[i].AnalysisID
	}
	sink := Sink{Store: st, Seal: audit.Seal, SealCosts: testCostSeal}
	if _, err := sink.PersistBatch(ctx, rs, make([]*openrecall.CostPoint, len(rs))); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestClosedBetweenCountsTheWindowsClosedAnalyses: a window's digest counts
// exactly the analyses completed in [from, to) that openrecall closed
// without a person (bypassed, cheap, grouped, excepted; not what waits for
// a person's approval, is escalated, real, unanalysed or not triaged), by
// identity and by Alert DNA, the most first, with the latest analyses of
// each identity to link to.
func TestClosedBetweenCountsTheWindowsClosedAnalyses(t *testing.T) {
	ctx := context.Background()
	clk := &setClock{t: time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)}
	st := openWith(t, sharedLocation(t), Options{Now: clk.Now})
	from := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(30 * time.Minute)

	// Before the window, and at its end (the next window's): not counted.
	completeAt(t, st, clk, from.Add(-time.Nanosecond), closedResult(kBypassed, "Crash", "api", "crashloopbackoff"))
	completeAt(t, st, clk, to, closedResult(kBypassed, "Crash", "api", "crashloopbackoff"))
	// In it: at its start, and through it.
	first := completeAt(t, st, clk, from, closedResult(kBypassed, "Crash", "api", "crashloopbackoff"),
		closedResult(kEscalated, "Crash", "api", "crashloopbackoff"))
	completeAt(t, st, clk, from.Add(time.Minute), closedResult(kCheap, "Disk", "db", "disk_pressure"),
		closedResult(kStrongApproval, "Disk", "db", "disk_pressure"), closedResult(kReal, "Disk", "db", "disk_pressure"))
	mid := completeAt(t, st, clk, from.Add(10*time.Minute), closedResult(kGrouped, "Crash", "api", "crashloopbackoff"),
		closedResult(kExcepted, "Crash", "web", "crashloopbackoff"), closedResult(kUnanalysed, "Crash", "api", ""),
		closedResult(kRecovery, "Crash", "api", "crashloopbackoff"))
	last := completeAt(t, st, clk, to.Add(-time.Nanosecond), closedResult(kBypassed, "Crash", "api", "crashloopbackoff"),
		closedResult(kBypassed, "", "", ""))

	got, err := st.ClosedBetween(ctx, from, to, 2)
	if err != nil {
		t.Fatal(err)
	}
	crash := openrecall.Fingerprint{ErrorClass: "crashloopbackoff"}
	disk := openrecall.Fingerprint{ErrorClass: "disk_pressure"}
	want := openrecall.ClosedWindow{From: from, To: to, Closed: 6,
		Identities: []openrecall.ClosedIdentity{
			{Identity: openrecall.Identity{Rule: "Crash", Service: "api"}, Count: 3,
				ByDecision:  map[openrecall.Decision]int{openrecall.DecisionKnownBenign: 3},
				AnalysisIDs: []string{last[0], mid[0]}},
			{Identity: openrecall.Identity{}, Count: 1, ByDecision: map[openrecall.Decision]int{openrecall.DecisionKnownBenign: 1},
				AnalysisIDs: []string{last[1]}},
			{Identity: openrecall.Identity{Rule: "Crash", Service: "web"}, Count: 1,
				ByDecision: map[openrecall.Decision]int{openrecall.DecisionFalsePositive: 1}, AnalysisIDs: []string{mid[1]}},
			{Identity: openrecall.Identity{Rule: "Disk", Service: "db"}, Count: 1,
				ByDecision: map[openrecall.Decision]int{openrecall.DecisionDuplicate: 1}},
		},
		Families: []openrecall.ClosedFamily{
			{Fingerprint: crash, ID: crash.ID(), Count: 4},
			{Fingerprint: openrecall.Fingerprint{}, ID: openrecall.Fingerprint{}.ID(), Count: 1},
			{Fingerprint: disk, ID: disk.ID(), Count: 1},
		},
	}
	// Families of one count are ordered by id: follow the ids.
	if want.Families[1].ID > want.Families[2].ID {
		want.Families[1], want.Families[2] = want.Families[2], want.Families[1]
	}
	// Disk's analysis: the one cheap result of its minute.
	all, err := st.ServedSince(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range all {
		if sv.Result != nil && sv.Result.Identity.Rule == "Disk" && sv.Result.ClosedWithoutPerson() {
			want.Identities[3].AnalysisIDs = []string{sv.AnalysisID}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClosedBetween (-want +got):\n%s", diff)
	}
	_ = first

	// The sum of the counts is the closed count, and an empty window is
	// empty.
	sum := 0
	for _, ci := range got.Identities {
		sum += ci.Count
	}
	if sum != got.Closed {
		t.Errorf("identities count %d, closed %d", sum, got.Closed)
	}
	empty, err := st.ClosedBetween(ctx, to.Add(time.Hour), to.Add(2*time.Hour), 2)
	if err != nil || empty.Closed != 0 || len(empty.Identities) != 0 || len(empty.Families) != 0 {
		t.Errorf("an empty window: %+v, %v", empty, err)
	}
}

// TestClosedBetweenReadsTheRangeOffTheIndex: the window is a range of
// inbox_prunable, not a scan of the inbox.
func TestClosedBetweenReadsTheRangeOffTheIndex(t *testing.T) {
	sqliteOnly(t)
	st := openTemp(t)
	plan := queryPlan(t, st, strings.ReplaceAll(strings.ReplaceAll(st.sql.closedBetween, "$1", "0"), "$2", "1"))
	if !strings.Contains(plan, "inbox_prunable (done_at>? AND done_at<?)") {
		t.Errorf("plan %q does not search inbox_prunable by done_at", plan)
	}
}

// TestAddDigestOncePerWindowAndReceiver: two processes writing one
// window's digest write it once per receiver; a receiver added later gets
// its own; an id that is not a digest's writes nothing.
func TestAddDigestOncePerWindowAndReceiver(t *testing.T) {
	ctx := context.Background()
	loc := sharedLocation(t)
	a := openWith(t, loc, Options{Now: newClock().Now, Instance: "a"})
	b := openWith(t, loc, Options{Now: newClock().Now, Instance: "b"})
	from := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := openrecall.DigestID(from, from.Add(30*time.Minute))
	key := "openrecall-" + id
	var wg sync.WaitGroup
	wrote := make([]int, 2)
	for i, st := range []*Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := st.AddDigest(ctx, id, key, []string{"chat", "hook"})
			if err != nil {
				t.Error(err)
			}
			wrote[i] = n
		}()
	}
	wg.Wait()
	if wrote[0]+wrote[1] != 2 {
		t.Errorf("the two processes wrote %v intents, want 2 in all", wrote)
	}
	if n, err := a.AddDigest(ctx, id, key, []string{"chat", "mail"}); err != nil || n != 1 {
		t.Errorf("a third receiver: wrote %d, %v; want 1", n, err)
	}
	got, err := a.Intents(ctx, openrecall.IntentFilter{AnalysisID: id})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, in := range got {
		rows = append(rows, in.Receiver+"/"+in.Kind+"/"+in.Key+"/"+in.State)
	}
	want := []string{"mail/digest/" + key + "/pending", "hook/digest/" + key + "/pending", "chat/digest/" + key + "/pending"}
	if len(rows) == 3 && rows[1] != want[1] { // the two processes' order is theirs
		want[1], want[2] = want[2], want[1]
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("the digest's intents (-want +got):\n%s", diff)
	}
	has, err := b.HasDigest(ctx, id, []string{"chat", "teams"})
	if err != nil || !has["chat"] || has["teams"] {
		t.Errorf("HasDigest = %v, %v; want chat only", has, err)
	}
	if _, err := a.AddDigest(ctx, "serve-000001", key, []string{"chat"}); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("an analysis id as a digest's: %v, want ErrInvalid", err)
	}
	// A digest is claimed as any intent, its own episode.
	ins, err := a.ClaimIntents(ctx, 10)
	if err != nil || len(ins) != 3 {
		t.Fatalf("claim the digests: %+v, %v", ins, err)
	}
}
