package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/workflow"
)

// notify wakes the dispatcher after an enqueue.
func (s *Server) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// done is an analysed delivery on its way to storage.
type done struct {
	d   openrecall.Delivery
	res openrecall.Result
}

// maxPersistBatch caps the results persisted in one go.
const maxPersistBatch = 64

// drain hands pending deliveries, oldest first, to the workers until stop is
// closed; each worker finishes the delivery it holds, and the persister
// stores every finished analysis before drain returns.
func (s *Server) drain(ctx context.Context, stop <-chan struct{}) {
	jobs := make(chan openrecall.Delivery)
	finished := make(chan done, maxPersistBatch)
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				if res, ok := s.analyse(ctx, d, stop); ok {
					finished <- done{d, res}
				}
			}
		}()
	}
	persisted := make(chan struct{})
	go func() {
		defer close(persisted)
		s.persist(ctx, finished)
	}()
	defer func() {
		close(jobs)
		wg.Wait()
		close(finished)
		<-persisted
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var after int64
	for {
		items, err := s.cfg.Store.Pending(ctx, after, 4*s.cfg.Workers)
		if err != nil {
			s.log.Error("read inbox", zap.Error(err))
		}
		for _, d := range items {
			select {
			case jobs <- d:
				after = d.ID
			case <-stop:
				return
			}
		}
		if len(items) > 0 {
			continue
		}
		select {
		case <-stop:
			return
		case <-s.wake:
		case <-tick.C:
		}
	}
}

// analyse runs one delivery through today's pipeline, waiting while the
// pipeline cannot be built; false means stop came first and the delivery
// stays pending for the next start.
func (s *Server) analyse(ctx context.Context, d openrecall.Delivery, stop <-chan struct{}) (openrecall.Result, bool) {
	rec := intake.Record{Alert: d.Alert}
	if d.Rejection != "" {
		rec = intake.Record{Err: &intake.RecordError{Position: d.Alert.Position, Reason: d.Rejection}}
	}
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		p, err := s.currentPipeline()
		if err == nil {
			return p.AnalyzeRecord(ctx, rec, int(d.ID)), true
		}
		s.log.Error("no pipeline; will retry", zap.String("analysis_id", d.AnalysisID), zap.Error(err))
		select {
		case <-stop:
			return openrecall.Result{}, false
		case <-ctx.Done():
			return openrecall.Result{}, false
		case <-time.After(delay):
		}
	}
}

// persist stores finished analyses until in is closed: it takes every one
// already waiting, up to a batch, and stores them together, retrying storage
// errors until ctx is done (then they stay pending for the next start).
func (s *Server) persist(ctx context.Context, in <-chan done) {
	batch := make([]done, 0, maxPersistBatch)
	for first := range in {
		batch = append(batch[:0], first)
	gather:
		for len(batch) < maxPersistBatch {
			select {
			case next, ok := <-in:
				if !ok {
					break gather
				}
				batch = append(batch, next)
			default:
				break gather
			}
		}
		for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
			err := s.complete(ctx, batch)
			if err == nil {
				break
			}
			s.log.Error("store results; will retry", zap.String("first", batch[0].d.AnalysisID), zap.Int("results", len(batch)), zap.Error(err))
			select {
			case <-ctx.Done():
				// Past the shutdown deadline: what is left stays pending
				// in the inbox; let the workers finish sending.
				for range in {
				}
				return
			case <-time.After(delay):
			}
		}
		for _, f := range batch {
			s.obs.Analysed(f.res)
			s.log.Debug("analysed", zap.String("analysis_id", f.res.AnalysisID), zap.String("alert", f.d.Alert.ID),
				zap.String("outcome", f.res.Outcome), zap.String("decision", string(f.res.Decision)), zap.Bool("bypassed", f.res.Bypassed))
			if s.notifier != nil && escalated(f.res) {
				s.notifier.send(escalation(f.res))
			}
		}
	}
}

// complete persists the audit entries and cost points of a batch, except
// for analyses an earlier run persisted before it was killed (their stored
// entries are kept and nothing is appended twice), then completes the
// deliveries in one transaction. On error nothing of the batch is completed
// and the cost curve is as before.
func (s *Server) complete(ctx context.Context, batch []done) error {
	var fresh []openrecall.Result
	var points []*openrecall.CostPoint
	var at []int // index in batch of each fresh result
	saved := s.curve
	for i := range batch {
		stored, err := s.cfg.Store.AuditByAnalysis(ctx, batch[i].d.AnalysisID)
		if err != nil {
			return err
		}
		if len(stored) > 0 {
			batch[i].res.Audit = stored
			continue
		}
		var point *openrecall.CostPoint
		if batch[i].res.Outcome == openrecall.ResultTriaged {
			p, err := s.curve.add(ctx, s.cfg.Store, s.now(), batch[i].res)
			if err != nil {
				s.curve = saved
				return err
			}
			point = &p
		}
		fresh = append(fresh, batch[i].res)
		points = append(points, point)
		at = append(at, i)
	}
	if len(fresh) > 0 {
		sealed, err := s.persistResults(ctx, fresh, points)
		if err != nil {
			s.curve = saved
			return err
		}
		for j, i := range at {
			batch[i].res.Audit = sealed[j]
		}
	}
	ids := make([]int64, len(batch))
	results := make([]openrecall.Result, len(batch))
	for i, f := range batch {
		ids[i], results[i] = f.d.ID, f.res
	}
	return s.cfg.Store.Complete(ctx, ids, results)
}

// persistResults hands results to the sink, in one go when it can take a
// batch, and returns each result's audit entries as stored.
func (s *Server) persistResults(ctx context.Context, rs []openrecall.Result, points []*openrecall.CostPoint) ([][]openrecall.AuditEntry, error) {
	if bs, ok := s.cfg.Sink.(workflow.BatchSink); ok {
		return bs.PersistBatch(ctx, rs, points)
	}
	out := make([][]openrecall.AuditEntry, len(rs))
	for i := range rs {
		sealed, err := s.cfg.Sink.Persist(ctx, rs[i], points[i])
		if err != nil {
			return nil, err
		}
		out[i] = sealed
	}
	return out, nil
}

// curve continues the server's cost curve: one batch per UTC day
// ("serve-2006-01-02"), resumed from its last stored point after a restart.
type curve struct {
	batch    string
	next     int
	cost     openrecall.NanoUSD
	baseline openrecall.NanoUSD
}

// batchOf names the cost curve batch of the day of t.
func batchOf(t time.Time) string { return "serve-" + t.UTC().Format(time.DateOnly) }

func (c *curve) add(ctx context.Context, st Store, now time.Time, r openrecall.Result) (openrecall.CostPoint, error) {
	if b := batchOf(now); c.batch != b {
		points, err := st.CostPoints(ctx, b)
		if err != nil && !errors.Is(err, openrecall.ErrNotFound) {
			return openrecall.CostPoint{}, err
		}
		*c = curve{batch: b}
		if n := len(points); n > 0 {
			last := points[n-1]
			c.next, c.cost, c.baseline = last.Index+1, last.CumulativeCost, last.CumulativeBaseline
		}
	}
	c.cost += r.Cost
	c.baseline += r.Baseline
	p := openrecall.CostPoint{
		Index: c.next, Batch: c.batch, AlertID: r.Alert.ID, Tier: workflow.PointTier(r), Bypassed: r.Bypassed,
		Cost: r.Cost, Baseline: r.Baseline, CumulativeCost: c.cost, CumulativeBaseline: c.baseline,
	}
	c.next++
	return p, nil
}
