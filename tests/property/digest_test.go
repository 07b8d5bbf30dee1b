package property

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// digestProperties are the laws of the digest (DESIGN §12b): what
// openrecall closed without a person, per receiver and window.
func digestProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P149_digest_counts_equal_closed_analyses_of_its_window",
			"The digest a receiver is sent for a window counts exactly the analyses stored in that window — by completion time, in [start, end), windows aligned to the Unix epoch — that openrecall closed without a person (bypassed by memory, a cheap model's benign verdict, a group member's benign outcome, an exception's; not a model's benign verdict a person must approve, an escalation, a real incident, an unanalysed alert, a recovery): its total, its counts by identity and by Alert DNA, each link an analysis of its identity in the window; for any results persisted through serve's sink over three half-hour windows and two serve processes each running a dispatcher with a receiver digested every 30m and one every 60m, each window that ended reaches each receiver exactly once, and a window with nothing closed sends nothing.",
			"DigestRunGen", digestRunGen(), checkDigest, pbt.Expensive(4),
			pbt.Pin("one of each kind at each window's edges", digestRun{Results: []digestResult{
				{Kind: 0, Minute: 0}, {Kind: 1, Minute: 29, Identity: 1}, {Kind: 4, Minute: 29}, {Kind: 2, Minute: 30, DNA: 1},
				{Kind: 3, Minute: 59, Identity: 2, DNA: 2}, {Kind: 5, Minute: 60}, {Kind: 6, Minute: 61}, {Kind: 7, Minute: 89}, {Kind: 8, Minute: 89},
			}}),
			pbt.Pin("nothing closed: nothing sent", digestRun{Results: []digestResult{{Kind: 4, Minute: 3}, {Kind: 5, Minute: 40}, {Kind: 8, Minute: 70}}}),
			pbt.Classify(func(r digestRun) []string {
				var labels []string
				windows := map[int]bool{}
				for _, x := range r.Results {
					if x.Kind < digestClosedKinds {
						windows[x.Minute/30] = true
					}
				}
				if len(windows) < 3 {
					labels = append(labels, "a window closed nothing")
				}
				if len(windows) > 0 {
					labels = append(labels, "something closed")
				}
				return labels
			}),
			pbt.Cover("a window closed nothing", 10), pbt.Cover("something closed", 60),
		),
	}
}

// The kinds of a digest run's results: the first digestClosedKinds are
// closed without a person.
const (
	dBypassed       = iota // memory closed it
	dCheap                 // the cheap model's benign verdict, no approval asked
	dGrouped               // a group member took its head's benign decision
	dExcepted              // an approved exception closed it
	dStrongApproval        // the strong model said benign; triage asks a person to approve
	dEscalated             // left to a person
	dReal                  // judged real
	dUnanalysed            // escalated without analysis
	dRecovery              // a sender's recovery, not triaged
	digestKinds
	digestClosedKinds = dExcepted + 1
)

// digestResult is one stored result: its kind, its identity and Alert DNA
// (of three each), and the minute of the run it completed at.
type digestResult struct {
	Kind, Identity, DNA, Minute int
}

// digestRun is the results of a run, in any order.
type digestRun struct {
	Results []digestResult
}

func digestRunGen() gopter.Gen {
	result := gg.Struct(reflect.TypeOf(digestResult{}), map[string]gopter.Gen{
		"Kind":     gg.IntRange(0, digestKinds-1),
		"Identity": gg.IntRange(0, 2),
		"DNA":      gg.IntRange(0, 2),
		// Whole minutes, the windows' edges among them.
		"Minute": gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.IntRange(0, 89)}, {Weight: 1, Gen: gg.OneConstOf(0, 29, 30, 59, 60, 89)}}),
	})
	return gg.Struct(reflect.TypeOf(digestRun{}), map[string]gopter.Gen{"Results": gg.SliceOfN(10, result)})
}

var (
	digestIdentities = []openrecall.Identity{{Rule: "KubePodCrashLooping", Service: "checkout"}, {Rule: "DiskFull", Service: "postgres"}, {}}
	digestDNAs       = []openrecall.Fingerprint{{ErrorClass: "crashloopbackoff"}, {ErrorClass: "disk_pressure", ServiceRole: "db_primary"}, {}}
)

// digestResultOf is the stored result of x: what the kind says, written
// as the workflow writes it.
func digestResultOf(x digestResult) openrecall.Result {
	r := openrecall.Result{Outcome: openrecall.ResultTriaged, Batch: "serve", Identity: digestIdentities[x.Identity],
		Fingerprint: digestDNAs[x.DNA], Decision: openrecall.DecisionKnownBenign}
	switch x.Kind {
	case dBypassed:
		r.Bypassed = true
	case dCheap:
		r.Decision = openrecall.DecisionDuplicate
		r.Steps = []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierCheap, Outcome: openrecall.OutcomeOK}}
	case dGrouped:
		r.Group = &openrecall.GroupRef{ID: "g1", Role: openrecall.GroupRoleMember, HeadAnalysisID: "head"}
	case dExcepted:
		r.Decision = openrecall.DecisionFalsePositive
		r.Exception = &openrecall.ExceptionRef{ID: "exc-1", Analyst: "alice"}
	case dStrongApproval:
		r.Triage.RequiresHumanApproval = true
		r.Steps = []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Outcome: openrecall.OutcomeOK}}
	case dEscalated:
		r.Decision, r.Triage.RequiresHumanApproval = openrecall.DecisionEscalated, true
	case dReal:
		r.Decision, r.Triage.RequiresHumanApproval = openrecall.DecisionReal, true
	case dUnanalysed:
		r.Decision, r.EscalatedWithoutAnalysis = openrecall.DecisionEscalated, true
	case dRecovery:
		r.Outcome, r.Decision = openrecall.ResultResolved, ""
	}
	return r
}

// digestRecorder is a webhook-typed receiver that records the digests it
// is sent. Safe for concurrent use.
type digestRecorder struct {
	name string
	mu   sync.Mutex
	got  []notify.Notification
}

func (r *digestRecorder) Name() string { return r.name }
func (r *digestRecorder) Type() string { return "webhook" }
func (r *digestRecorder) Send(_ context.Context, n notify.Notification) (notify.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, n)
	return notify.Delivery{}, nil
}

func (r *digestRecorder) sent() []notify.Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// digestWant is the model's digest of one window: the closed analyses, by
// identity and by DNA.
type digestWant struct {
	closed     int
	identities map[openrecall.Identity]int
	families   map[string]int
	analyses   map[string]openrecall.Identity // the window's closed analyses
}

func checkDigest(r digestRun) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-digest-")
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	loc, drop, err := storeLocation(dir)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer drop()
	_, base := openrecall.DigestWindow(fixedNow(), time.Hour)
	clock := &outboxClock{t: base}
	var procs [2]*memory.Store
	for i, name := range []string{"a", "b"} {
		st, err := memory.Open(ctx, loc, memory.Options{Now: clock.Now, Instance: name})
		if err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		defer func() { _ = st.Close() }()
		procs[i] = st
	}
	root, err := productRoot(procs[0], nil, clock.Now)
	if err != nil {
		return err
	}
	sink, err := root.Sink(ctx)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}

	// Persist in completion order, as serve's sink does: a delivery
	// claimed, its result stored with its completion.
	order := slices.Clone(r.Results)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Minute < order[j].Minute })
	every := map[string]time.Duration{"r0": 30 * time.Minute, "r1": time.Hour}
	want := map[string]*digestWant{} // by receiver and window start: "r0 30"
	wantOf := func(recv string, minute int) *digestWant {
		span := int(every[recv] / time.Minute)
		k := fmt.Sprintf("%s %d", recv, minute/span*span)
		if want[k] == nil {
			want[k] = &digestWant{identities: map[openrecall.Identity]int{}, families: map[string]int{}, analyses: map[string]openrecall.Identity{}}
		}
		return want[k]
	}
	for i, x := range order {
		if x.Kind == dGrouped && digestIdentities[x.Identity].IsZero() {
			x.Identity = 0 // an alert without identity never groups
		}
		clock.t = base.Add(time.Duration(x.Minute) * time.Minute)
		ds, err := procs[0].Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alerts", Alert: openrecall.Alert{ID: fmt.Sprintf("alert-%d", i),
			Title: "crash", Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring}}}, 0,
			func(id int64) string { return fmt.Sprintf("serve-%06d", id) })
		if err != nil {
			return err
		}
		if got, err := procs[0].Claim(ctx, 1); err != nil || len(got) != 1 {
			return fmt.Errorf("claim: %+v, %v", got, err)
		}
		res := digestResultOf(x)
		res.AnalysisID, res.Alert = ds[0].AnalysisID, ds[0].Alert
		if _, err := sink.PersistBatch(ctx, []openrecall.Result{res}, []*openrecall.CostPoint{nil}); err != nil {
			return err
		}
		if x.Kind >= digestClosedKinds {
			continue
		}
		for recv := range every {
			if recv == "r1" && x.Minute >= 60 {
				continue // its window [60, 120) has not ended
			}
			w := wantOf(recv, x.Minute)
			w.closed++
			w.identities[res.Identity]++
			w.families[res.Fingerprint.ID()]++
			w.analyses[res.AnalysisID] = res.Identity
		}
	}

	// 90 minutes in and the settle time after: r0's three windows and
	// r1's first have ended. Both processes run a dispatcher with both
	// receivers, each writing the digests it finds due.
	clock.t = base.Add(91 * time.Minute)
	recvs := []*digestRecorder{{name: "r0"}, {name: "r1"}}
	var stops []func()
	for _, st := range procs {
		d, err := runner.NewDispatcher(runner.DispatchConfig{Outbox: st, Reader: st, Digests: st, DigestEvery: every,
			Receivers: []notify.Receiver{recvs[0], recvs[1]}, Now: clock.Now, Poll: 5 * time.Millisecond, DigestPoll: 5 * time.Millisecond})
		if err != nil {
			return err
		}
		halt, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			d.Run(ctx, halt)
		}()
		stops = append(stops, func() { close(halt); <-done })
	}
	// Every window due is written within a few looks and sent at once;
	// wait until as many were sent as the model wants, and a little more.
	deadline := time.Now().Add(10 * time.Second)
	for len(recvs[0].sent())+len(recvs[1].sent()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	for _, stop := range stops {
		stop()
	}

	seen := map[string]bool{}
	for _, rc := range recvs {
		for _, n := range rc.sent() {
			d := n.Digest
			if n.Kind != notify.KindDigest || d == nil {
				return fmt.Errorf("%s was sent a %s without a digest", rc.name, n.Kind)
			}
			k := fmt.Sprintf("%s %d", rc.name, int(d.From.Sub(base)/time.Minute))
			if seen[k] {
				return fmt.Errorf("%s was sent the digest of [%s, %s) twice", rc.name, d.From, d.To)
			}
			seen[k] = true
			w := want[k]
			if w == nil {
				return fmt.Errorf("%s was sent a digest of [%s, %s), which closed nothing (or has not ended): %d closed", rc.name, d.From, d.To, d.Closed)
			}
			if d.To.Sub(d.From) != every[rc.name] {
				return fmt.Errorf("%s's digest spans [%s, %s), want %s", rc.name, d.From, d.To, every[rc.name])
			}
			if d.Closed != w.closed {
				return fmt.Errorf("%s's digest of [%s, %s) counts %d closed, the window stored %d", rc.name, d.From, d.To, d.Closed, w.closed)
			}
			ids := map[openrecall.Identity]int{}
			for _, di := range d.Identities {
				id := openrecall.Identity{Rule: di.Rule, Service: di.Service}
				ids[id] += di.Count
				if len(di.Analyses) != min(di.Count, notify.DigestLinks) {
					return fmt.Errorf("%s's digest links %d analyses of %s, want %d", rc.name, len(di.Analyses), id, min(di.Count, notify.DigestLinks))
				}
				for _, l := range di.Analyses {
					if got, ok := w.analyses[l.AnalysisID]; !ok || got != id {
						return fmt.Errorf("%s's digest links %s under %s: not a closed analysis of that identity in the window", rc.name, l.AnalysisID, id)
					}
				}
			}
			if !reflect.DeepEqual(ids, w.identities) {
				return fmt.Errorf("%s's digest of [%s, %s) counts by identity %v, the window stored %v", rc.name, d.From, d.To, ids, w.identities)
			}
			fams := map[string]int{}
			for _, f := range d.Families {
				fams[f.ID] += f.Count
			}
			if !reflect.DeepEqual(fams, w.families) {
				return fmt.Errorf("%s's digest of [%s, %s) counts by DNA %v, the window stored %v", rc.name, d.From, d.To, fams, w.families)
			}
		}
	}
	for k := range want {
		if !seen[k] {
			return fmt.Errorf("the digest %s (receiver, minute) was never sent", k)
		}
	}
	return nil
}

// TestDigestKindIsNotifysKind: the outbox's digest kind is notify's word.
func TestDigestKindIsNotifysKind(t *testing.T) {
	if openrecall.IntentDigest != notify.KindDigest {
		t.Errorf("the outbox's kind %q is notify's %q", openrecall.IntentDigest, notify.KindDigest)
	}
}
