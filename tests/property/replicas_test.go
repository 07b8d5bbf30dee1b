package property

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/workflow"
)

// replicaProperties are the rules of several serve processes sharing one
// store (DESIGN §13, "Shared state is shared").
func replicaProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P167_inbox_depth_counter_is_the_count",
			"The inbox depth receivers compare with server.inbox_limit is a counter kept in the transactions that queue and complete deliveries, never a count per request, and it equals the number of deliveries waiting after every enqueue (redeliveries and rejections included), every completion (several at once, and one completed again) and a prune.",
			"DeliveryPlanGen", gen.DeliveryPlanGen(), checkInboxDepth, pbt.Expensive(3)),
		pbt.ForAll("P168_processes_sharing_a_store_group_as_one",
			"Two runs sharing one store (two serve processes on one database), fed a storm's firings alternately, form the same groups, heads and members, with the same decisions, as one run fed them all: a group is found or opened in the store under its key's lock, never by a run's own map. (A firing more than a day of windows from the one before it is moved next to it: which groups have expired is each run's own reckoning, from the newest firing it saw.)",
			"StormRunGen", gen.StormRunGen(), func(s gen.StormRun) error {
				s = withinADay(s)
				one, err := runSharedStorm(ex, s, 1)
				if err != nil {
					return err
				}
				two, err := runSharedStorm(ex, s, 2)
				if err != nil {
					return err
				}
				a, b := groupShape(one), groupShape(two)
				for i := range a {
					if a[i] != b[i] {
						return fmt.Errorf("firing %d (%s): one run %s, two runs %s", i, one[i].Alert.ID, a[i], b[i])
					}
				}
				return nil
			}, pbt.Expensive(2), pbt.Classify(classifyStorm), pbt.Cover("a group member", 60)),
	}
}

// withinADay returns s with each gap of more than a day replaced by none.
func withinADay(s gen.StormRun) gen.StormRun {
	gaps := gen.StormGaps()
	fs := slices.Clone(s.Firings)
	for i, f := range fs {
		if g := gaps[f.Gap%len(gaps)]; g > 24*60 || g < -24*60 {
			fs[i].Gap = slices.Index(gaps, 0)
		}
	}
	s.Firings = fs
	return s
}

// groupShape describes each result of a run by what grouping decided: its
// role, the position of its group's head, its decision and bypass.
func groupShape(results []openrecall.Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		g := "alone"
		if r.Group != nil {
			g = fmt.Sprintf("%s of the group headed by firing %d", r.Group.Role, indexOf(results, r.Group.HeadAnalysisID))
		}
		out[i] = fmt.Sprintf("%s, %s, bypassed %v", g, r.Decision, r.Bypassed)
	}
	return out
}

// runSharedStorm analyses the storm with grouping on through runs
// sessions of one pipeline over one store (each a run of its own, as a
// serve process's is, continuing the store's groups), firing i by session
// i mod runs, each result stored before the next firing; it returns the
// results in firing order.
func runSharedStorm(ex workflow.Fingerprinter, s gen.StormRun, runs int) ([]openrecall.Result, error) {
	var results []openrecall.Result
	err := withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		st := ss[0]
		if err := seedStorm(ctx, ex, st, s); err != nil {
			return err
		}
		r, err := routing.New(routing.Config{Cheap: local.NewCheap(), Strong: local.NewStrong(), Vet: triage.Vet, Now: fixedClock})
		if err != nil {
			return fmt.Errorf("setup: router: %v", err)
		}
		root, err := productRoot(st, ex, fixedClock, compose.Batch("storm"), compose.GroupScope(), compose.Continue(), compose.NoExceptions())
		if err != nil {
			return err
		}
		sink, err := root.Sink(ctx)
		if err != nil {
			return fmt.Errorf("setup: sink: %v", err)
		}
		wf, err := root.Pipeline(r, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
		if err != nil {
			return fmt.Errorf("setup: workflow: %v", err)
		}
		sessions := make([]*workflow.Session, runs)
		for k := range sessions {
			if sessions[k], err = wf.NewSession(ctx); err != nil {
				return fmt.Errorf("setup: session %d: %v", k, err)
			}
		}
		rd := intake.NewReader(strings.NewReader(s.Queue()), intake.Options{Format: intake.FormatJSONL, Source: "storm.jsonl"})
		for i := 0; ; i++ {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read storm: %v", err)
			}
			res, err := sessions[i%runs].AnalyzeRecord(ctx, rec, i)
			if err != nil {
				return fmt.Errorf("firing %d by run %d: %v", i, i%runs, err)
			}
			results = append(results, res)
		}
	})
	return results, err
}

// seedStorm retains the memories a storm that vouches seeds.
func seedStorm(ctx context.Context, ex workflow.Fingerprinter, st *memory.Store, s gen.StormRun) error {
	if s.Vouch <= 0 {
		return nil
	}
	recs, err := intake.ParseBytes([]byte(s.SeedLine()), intake.Options{Format: intake.FormatJSONL})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		return fmt.Errorf("setup: seed line: %v %+v", err, recs)
	}
	a := recs[0].Alert
	for i := range 6 {
		if _, _, err := st.Retain(ctx, openrecall.Incident{Fingerprint: ex.Extract(a), Identity: ex.Identify(a), Severity: a.Severity,
			Decision: openrecall.DecisionKnownBenign, Note: "known storm", SourceAlertID: fmt.Sprintf("seed-%d", i), Analyst: "pbt"}); err != nil {
			return fmt.Errorf("setup: seed: %v", err)
		}
	}
	return nil
}

// checkInboxDepth runs a delivery plan through the inbox, completing after
// each body as many of the oldest waiting deliveries as its first step's
// severity index says (mod 3), the last of them once more, and checks the
// maintained depth against a count of the waiting rows and the model's
// queued minus completed after each step and after a prune.
func checkInboxDepth(p gen.DeliveryPlan) error {
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error { return inboxDepthPlan(ctx, ss[0], p) })
}

// inboxDepthPlan is checkInboxDepth on store st.
func inboxDepthPlan(ctx context.Context, st *memory.Store, p gen.DeliveryPlan) error {
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	waiting := 0
	check := func(where string) error {
		got, err := st.InboxDepth(ctx)
		if err != nil {
			return fmt.Errorf("%s: depth: %v", where, err)
		}
		counted, err := st.CountInboxDepth(ctx)
		if err != nil {
			return fmt.Errorf("%s: count: %v", where, err)
		}
		if got != counted || got != waiting {
			return fmt.Errorf("%s: the depth counter says %d, the inbox holds %d waiting, the model %d", where, got, counted, waiting)
		}
		return nil
	}
	for bi, body := range p.Bodies {
		ds := make([]openrecall.Delivery, len(body))
		for i, s := range body {
			ds[i] = s.Delivery()
		}
		out, err := st.Enqueue(ctx, ds, 0, name)
		if err != nil {
			return fmt.Errorf("body %d: enqueue: %v", bi, err)
		}
		for _, d := range out {
			if !d.Duplicate {
				waiting++
			}
		}
		if err := check(fmt.Sprintf("after body %d", bi)); err != nil {
			return err
		}
		if len(body) == 0 {
			continue
		}
		pending, err := st.Pending(ctx, 0, body[0].Severity%3)
		if err != nil {
			return fmt.Errorf("body %d: pending: %v", bi, err)
		}
		if len(pending) == 0 {
			continue
		}
		ids := make([]int64, 0, len(pending)+1)
		rs := make([]openrecall.Result, 0, len(pending)+1)
		for _, d := range pending {
			ids = append(ids, d.ID)
			rs = append(rs, openrecall.Result{AnalysisID: d.AnalysisID, Alert: d.Alert, Outcome: openrecall.ResultTriaged})
		}
		if err := st.Complete(ctx, ids, rs); err != nil {
			return fmt.Errorf("body %d: complete: %v", bi, err)
		}
		waiting -= len(pending)
		if err := check(fmt.Sprintf("after completing %d after body %d", len(pending), bi)); err != nil {
			return err
		}
		if err := st.Complete(ctx, ids[len(ids)-1:], rs[len(rs)-1:]); err != nil {
			return fmt.Errorf("body %d: complete again: %v", bi, err)
		}
		if err := check(fmt.Sprintf("after completing %d again", ids[len(ids)-1])); err != nil {
			return err
		}
	}
	if _, err := st.PruneInboxAll(ctx, fixedNow().Add(1<<40), 0); err != nil {
		return fmt.Errorf("prune: %v", err)
	}
	return check("after a prune")
}
