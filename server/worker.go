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

// drain hands pending deliveries, oldest first, to the workers until stop is
// closed; each worker finishes the delivery it holds.
func (s *Server) drain(ctx context.Context, stop <-chan struct{}) {
	jobs := make(chan openrecall.Delivery)
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				s.process(ctx, d, stop)
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
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

// process analyses one delivery and completes it, retrying storage errors
// until stop; a delivery left unfinished stays pending for the next start.
func (s *Server) process(ctx context.Context, d openrecall.Delivery, stop <-chan struct{}) {
	rec := intake.Record{Alert: d.Alert}
	if d.Rejection != "" {
		rec = intake.Record{Err: &intake.RecordError{Position: d.Alert.Position, Reason: d.Rejection}}
	}
	var res openrecall.Result
	analysed := false
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		err := func() error {
			if !analysed {
				p, err := s.currentPipeline()
				if err != nil {
					return err
				}
				res, analysed = p.AnalyzeRecord(ctx, rec, int(d.ID)), true
			}
			return s.complete(ctx, d, &res)
		}()
		if err == nil {
			break
		}
		s.log.Error("analyse or store; will retry", zap.String("analysis_id", d.AnalysisID), zap.Error(err))
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
	s.obs.Analysed(res)
	s.log.Debug("analysed", zap.String("analysis_id", res.AnalysisID), zap.String("alert", d.Alert.ID),
		zap.String("outcome", res.Outcome), zap.String("decision", string(res.Decision)), zap.Bool("bypassed", res.Bypassed))
	if s.notifier != nil && escalated(res) {
		s.notifier.send(escalation(res))
	}
}

// complete persists the audit entries and cost point of res, unless an
// earlier run persisted them before it was killed (then the stored entries
// are kept and nothing is appended twice), and completes the delivery.
func (s *Server) complete(ctx context.Context, d openrecall.Delivery, res *openrecall.Result) error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	stored, err := s.cfg.Store.AuditByAnalysis(ctx, d.AnalysisID)
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		res.Audit = stored
	} else {
		var point *openrecall.CostPoint
		saved := s.curve
		if res.Outcome == openrecall.ResultTriaged {
			p, err := s.curve.add(ctx, s.cfg.Store, s.now(), *res)
			if err != nil {
				return err
			}
			point = &p
		}
		sealed, err := s.cfg.Sink.Persist(ctx, *res, point)
		if err != nil {
			s.curve = saved
			return err
		}
		res.Audit = sealed
	}
	return s.cfg.Store.Complete(ctx, d.ID, *res)
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
