package property

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// pruneProperties are the rules of serve's retention (issue #25, item 4).
func pruneProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P101_pruning_keeps_verdicts_and_recall",
			"Pruning the inbox after server.retention empties the delivery and result documents of exactly the finished rows that finished before the cut, in bounded batches, and changes nothing else: the keyed `audit verify` verdict on what remains, every recall, what waits for a person, the pending deliveries and every kept row are as before, and a pruned row keeps its ids, cursor and alert id and reads as pruned.",
			"PruneCaseGen", pruneCaseGen(0), checkPrune, pbt.Expensive(3)),
	}
}

// pruneCase is an inbox history: bodies accepted an hour apart, the
// deliveries of each finished in its hour or left pending, decisions
// retained about some finished firings, then a pruning pass with a
// retention (in hours; 0 keeps everything) in batches of Batch rows.
type pruneCase struct {
	Plan      gen.DeliveryPlan
	Finish    []bool
	Retain    []bool
	Retention int
	Batch     int
}

// pruneCaseGen generates pruneCases whose retention is at least
// minRetention hours.
func pruneCaseGen(minRetention int) gopter.Gen {
	return gg.Struct(reflect.TypeOf(pruneCase{}), map[string]gopter.Gen{
		"Plan":      gen.DeliveryPlanGen(),
		"Finish":    gg.SliceOfN(5, gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(true)}, {Weight: 1, Gen: gg.Const(false)}})),
		"Retain":    gg.SliceOfN(3, gg.Bool()),
		"Retention": gg.IntRange(minRetention, 6),
		"Batch":     gg.IntRange(1, 3),
	})
}

var p101Key = func() audit.Key {
	k, _ := audit.NewKey(make([]byte, audit.KeySize))
	return k
}()

// pruneClock is a clock the case moves by the hour.
type pruneClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *pruneClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *pruneClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// pruneSnapshot is everything pruning must leave alone, and the rows.
type pruneSnapshot struct {
	verdict usecase.Verified
	recalls map[string][]openrecall.Match
	waiting []openrecall.Waiting
	pending []openrecall.Delivery
	rows    []openrecall.Served
}

func checkPrune(c pruneCase) error {
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "prune")
	if err != nil {
		return err
	}
	defer h.close()
	st := h.st
	w, err := seedInbox(ctx, c, h)
	if err != nil {
		return err
	}
	end, snap := w.end, w.snap
	before, err := snap()
	if err != nil {
		return err
	}
	if !before.verdict.Intact {
		return fmt.Errorf("setup: the trail does not verify before pruning: %+v", before.verdict.Problems)
	}
	cut := end // retention 0 keeps everything: no pass runs
	if c.Retention > 0 {
		cut = end.Add(-time.Duration(c.Retention) * time.Hour)
		if _, err := st.PruneInboxAll(ctx, cut, c.Batch); err != nil {
			return fmt.Errorf("prune before %s: %v", cut, err)
		}
	}
	after, err := snap()
	if err != nil {
		return fmt.Errorf("after pruning: %v", err)
	}
	if !reflect.DeepEqual(before.verdict, after.verdict) {
		return fmt.Errorf("pruning changed the audit verdict: %+v, was %+v", after.verdict, before.verdict)
	}
	if !reflect.DeepEqual(before.recalls, after.recalls) {
		return fmt.Errorf("pruning changed a recall: %+v, was %+v", after.recalls, before.recalls)
	}
	if !reflect.DeepEqual(before.waiting, after.waiting) {
		return fmt.Errorf("pruning changed what waits: %+v, was %+v", after.waiting, before.waiting)
	}
	if !reflect.DeepEqual(before.pending, after.pending) {
		return fmt.Errorf("pruning changed the pending deliveries: %d %+v, were %d %+v", len(after.pending), after.pending, len(before.pending), before.pending)
	}
	for i, was := range before.rows {
		now := after.rows[i]
		wantPruned := c.Retention > 0 && was.Done && was.DoneAt.Before(cut)
		switch {
		case now.Pruned != wantPruned:
			return fmt.Errorf("%s (done %v at %s, cut %s): pruned=%v, want %v", was.AnalysisID, was.Done, was.DoneAt, cut, now.Pruned, wantPruned)
		case !wantPruned && !reflect.DeepEqual(was, now):
			return fmt.Errorf("%s was kept but changed: %+v, was %+v", was.AnalysisID, now, was)
		case wantPruned && (now.ID != was.ID || now.AnalysisID != was.AnalysisID || now.Cursor != was.Cursor || !now.DoneAt.Equal(was.DoneAt) ||
			now.Alert.ID != was.Alert.ID || now.Endpoint != was.Endpoint || now.Result != nil || now.PrunedAt.IsZero()):
			return fmt.Errorf("%s pruned as %+v, was %+v", was.AnalysisID, now, was)
		}
	}
	return nil
}

// inboxWorld is a pruneCase's inbox history, seeded in a keyed desk.
type inboxWorld struct {
	end  time.Time // the clock after the history: the cut is end - Retention
	snap func() (pruneSnapshot, error)
}

// seedInbox plays c's history into h from its base hour: each body
// accepted an hour after the one before, its deliveries finished (their
// results and cost points persisted, the rows completed) or left pending
// by c.Finish, then decisions retained about some firings at the end.
func seedInbox(ctx context.Context, c pruneCase, h *hourlyDesk) (*inboxWorld, error) {
	d, clock, base := h.keyedDesk, h.clock, h.base
	st, ex, app, sink := d.st, d.ex, d.app, d.sink
	w := &inboxWorld{}
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	flag := func(fs []bool, i int) bool { return len(fs) > 0 && fs[i%len(fs)] }
	var ids []string
	var firings []string
	alerts := map[string]openrecall.Alert{}
	queued := 0
	var cum, cumBase openrecall.NanoUSD
	for bi, body := range c.Plan.Bodies {
		clock.set(base.Add(time.Duration(bi) * time.Hour))
		ds := make([]openrecall.Delivery, len(body))
		for i, s := range body {
			ds[i] = s.Delivery()
			ds[i].Alert.Title = fmt.Sprintf("disk full on db-%d", s.Alert)
			ds[i].Alert.Labels = map[string]string{"alertname": "DiskFull", "service": "db"}
		}
		out, err := st.Enqueue(ctx, ds, 0, name)
		if err != nil {
			return nil, fmt.Errorf("body %d: enqueue: %v", bi, err)
		}
		var done []int64
		var results []openrecall.Result
		for _, d := range out {
			if d.Duplicate {
				continue
			}
			ids = append(ids, d.AnalysisID)
			queued++
			if !flag(c.Finish, queued) {
				continue
			}
			r := openrecall.Result{AnalysisID: d.AnalysisID, Batch: "serve-p101", Alert: d.Alert,
				Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK}}}
			var point *openrecall.CostPoint
			switch {
			case d.Rejection != "":
				r.Outcome = openrecall.ResultRejected
			case d.State == openrecall.AlertFiring:
				r.Outcome, r.Decision = openrecall.ResultTriaged, openrecall.DecisionEscalated
				r.Identity, r.Fingerprint = ex.Identify(d.Alert), ex.Extract(d.Alert)
				cum, cumBase = cum+10, cumBase+100
				point = &openrecall.CostPoint{Index: len(firings), Batch: "serve-p101", AlertID: d.Alert.ID, Tier: openrecall.TierStrong,
					Cost: 10, Baseline: 100, CumulativeCost: cum, CumulativeBaseline: cumBase}
				firings = append(firings, d.AnalysisID)
				alerts[d.Alert.ID] = d.Alert
			default:
				r.Outcome = openrecall.ResultResolved
			}
			r.Audit = audit.Entries(r, clock.now())
			if _, err := sink.Persist(ctx, r, point); err != nil {
				return nil, fmt.Errorf("persist %s: %v", d.AnalysisID, err)
			}
			done, results = append(done, d.ID), append(results, r)
		}
		if err := st.Complete(ctx, done, results); err != nil {
			return nil, fmt.Errorf("body %d: complete: %v", bi, err)
		}
	}
	w.end = base.Add(time.Duration(len(c.Plan.Bodies)) * time.Hour)
	clock.set(w.end)
	for i, id := range firings {
		if !flag(c.Retain, i) {
			continue
		}
		if _, err := app.Retain(ctx, usecase.RetainRequest{Subject: usecase.Subject{AnalysisID: id},
			Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Note: "cleared by rotation", Analyst: "alice"}}); err != nil {
			return nil, fmt.Errorf("retain about %s: %v", id, err)
		}
	}
	w.snap = func() (pruneSnapshot, error) {
		var s pruneSnapshot
		var err error
		if s.verdict, err = app.VerifyAudit(ctx, ""); err != nil {
			return s, fmt.Errorf("audit verify: %v", err)
		}
		s.recalls = map[string][]openrecall.Match{}
		for id, a := range alerts {
			if s.recalls[id], err = st.Recall(ctx, ex.Identify(a), ex.Extract(a), 20); err != nil {
				return s, fmt.Errorf("recall %s: %v", id, err)
			}
		}
		if s.waiting, err = st.Awaiting(ctx, openrecall.WaitingFilter{}); err != nil {
			return s, fmt.Errorf("awaiting: %v", err)
		}
		if s.pending, err = st.Pending(ctx, 0, queued+1); err != nil {
			return s, fmt.Errorf("pending: %v", err)
		}
		for _, id := range ids {
			sv, err := st.Served(ctx, id)
			if errors.Is(err, openrecall.ErrNotFound) {
				sv = openrecall.Served{Delivery: openrecall.Delivery{AnalysisID: id}} // forgotten (ID 0): P103
			} else if err != nil {
				return s, fmt.Errorf("served %s: %v", id, err)
			}
			s.rows = append(s.rows, sv)
		}
		return s, nil
	}
	return w, nil
}
