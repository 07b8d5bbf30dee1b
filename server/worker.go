package server

import (
	"context"
	"errors"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// notify wakes the dispatcher after an enqueue.
func (s *Server) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// batchOf names the cost curve batch of the day of t: one curve per UTC day
// ("serve-2006-01-02"), continued from its last stored point after a
// restart.
func batchOf(t time.Time) string { return dayBatch(t.UTC().Format(time.DateOnly)) }

// dayBatch names the cost curve batch of a UTC day ("2006-01-02").
func dayBatch(day string) string { return "serve-" + day }

// drain runs the inbox through the analyze use case (the workflow's queue
// runner, as `analyze` does) until stop is closed, one run per UTC day
// (each day's pipeline and cost curve): the inbox is the run's source, and
// the sink persists each batch of results and completes their deliveries
// in one transaction (memory.Sink). Each worker finishes the delivery it
// holds, and every finished analysis is stored before drain returns.
func (s *Server) drain(ctx context.Context, stop <-chan struct{}) {
	for {
		p, day, ok := s.pipelineUntil(ctx, stop)
		if !ok {
			return
		}
		curve, ok := s.curveOf(ctx, day, stop)
		if !ok {
			return
		}
		s.recordExpiries(ctx)
		src := &inbox{s: s, stop: stop, day: day}
		_, err := usecase.Analyze(ctx, p, usecase.AnalyzeRequest{Queue: usecase.Queue{Source: src}, Options: workflow.QueueOptions{
			Workers: s.cfg.Workers,
			Curve:   curve,
		}}, func(r openrecall.Result) error {
			s.served(r)
			return nil
		})
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("inbox run stopped", zap.Error(err))
			}
			return
		}
		select {
		case <-stop:
			return
		default:
		}
	}
}

// recordExpiries records the exception expiries due (actor system). A
// failure is logged and left for the next batch: the expiries stay due
// until recorded, and an expired exception matches nothing either way.
func (s *Server) recordExpiries(ctx context.Context) {
	if err := s.cfg.UseCases.RecordExpiries(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("record exception expiries; will retry at the next batch", zap.Error(err))
	}
}

// served reports a result its batch stored (with its delivery completed):
// metrics, a debug line, and the webhook when a person must look.
func (s *Server) served(r openrecall.Result) {
	s.obs.Analysed(r)
	s.log.Debug("analysed", zap.String("analysis_id", r.AnalysisID), zap.String("alert", r.Alert.ID),
		zap.String("outcome", r.Outcome), zap.String("decision", string(r.Decision)), zap.Bool("bypassed", r.Bypassed))
	if s.notifier != nil && escalated(r) {
		s.notifier.send(escalation(r))
	}
}

// pipelineUntil returns today's pipeline and its day, waiting while it
// cannot be built; false means stop came first.
func (s *Server) pipelineUntil(ctx context.Context, stop <-chan struct{}) (Pipeline, string, bool) {
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		p, day, err := s.currentPipelineDay()
		if err == nil {
			return p, day, true
		}
		s.log.Error("no pipeline; will retry", zap.Error(err))
		if !wait(ctx, stop, delay) {
			return nil, "", false
		}
	}
}

// curveOf continues the stored cost curve of day, waiting while it cannot
// be read; false means stop came first.
func (s *Server) curveOf(ctx context.Context, day string, stop <-chan struct{}) (*costcurve.Curve, bool) {
	batch := dayBatch(day)
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		points, err := s.cfg.Store.CostPoints(ctx, batch)
		if err == nil || errors.Is(err, openrecall.ErrNotFound) {
			return costcurve.Continue(batch, points), true
		}
		s.log.Error("read cost curve; will retry", zap.String("batch", batch), zap.Error(err))
		if !wait(ctx, stop, delay) {
			return nil, false
		}
	}
}

// retrySink is the server's sink: it persists a batch of results through
// the configured sink, retrying storage errors until ctx is done.
type retrySink struct {
	sink workflow.Sink
	log  *zap.Logger
}

// Persist persists one result; see PersistBatch.
func (rs retrySink) Persist(ctx context.Context, r openrecall.Result, point *openrecall.CostPoint) ([]openrecall.AuditEntry, error) {
	sealed, err := rs.PersistBatch(ctx, []openrecall.Result{r}, []*openrecall.CostPoint{point})
	if err != nil {
		return nil, err
	}
	return sealed[0], nil
}

// PersistBatch persists results in one go when the sink can take a batch,
// else one at a time, and retries until it succeeds or ctx is done.
func (rs retrySink) PersistBatch(ctx context.Context, results []openrecall.Result, points []*openrecall.CostPoint) ([][]openrecall.AuditEntry, error) {
	var out [][]openrecall.AuditEntry
	err := retry(ctx, rs.log, "store results", results[0].AnalysisID, len(results), func() error {
		if bs, ok := rs.sink.(workflow.BatchSink); ok {
			sealed, err := bs.PersistBatch(ctx, results, points)
			out = sealed
			return err
		}
		out = make([][]openrecall.AuditEntry, len(results))
		for i := range results {
			sealed, err := rs.sink.Persist(ctx, results[i], points[i])
			if err != nil {
				return err
			}
			out[i] = sealed
		}
		return nil
	})
	return out, err
}

// wait waits for d; false means stop or ctx came first.
func wait(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	select {
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// retry runs op until it succeeds or ctx is done, logging each failure.
func retry(ctx context.Context, log *zap.Logger, what, first string, n int, op func() error) error {
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		err := op()
		if err == nil {
			return nil
		}
		log.Error(what+"; will retry", zap.String("first", first), zap.Int("results", n), zap.Error(err))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// inbox is the source of one day's run: pending deliveries, oldest first,
// as intake records numbered by their inbox ids. It waits for new ones
// (woken by an enqueue, or each second) and ends at stop or when the UTC
// day changes. Only the run's reader goroutine calls NextNumbered.
type inbox struct {
	s     *Server
	stop  <-chan struct{}
	day   string
	items []openrecall.Delivery
	// fresh: the record returned last began a batch read from the inbox.
	fresh bool
}

// Next returns the next record; see NextNumbered.
func (in *inbox) Next(ctx context.Context) (intake.Record, error) {
	rec, _, err := in.NextNumbered(ctx)
	return rec, err
}

// NextNumbered returns the next pending delivery as a record and its inbox
// id, or io.EOF at stop, when ctx is done or on a new UTC day.
func (in *inbox) NextNumbered(ctx context.Context) (intake.Record, int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-in.stop:
			return intake.Record{}, 0, io.EOF
		default:
		}
		if in.s.now().UTC().Format(time.DateOnly) != in.day {
			return intake.Record{}, 0, io.EOF
		}
		if len(in.items) == 0 {
			items, err := in.s.cfg.Store.Claim(ctx, 4*in.s.cfg.Workers)
			if errors.Is(err, openrecall.ErrSchemaMismatch) {
				// Another openrecall migrated the database: this binary
				// claims no more work and the server stops.
				in.s.fail(err)
				return intake.Record{}, 0, io.EOF
			}
			if err != nil {
				in.s.log.Error("claim from the inbox", zap.Error(err))
			}
			in.items = items
			in.fresh = len(items) > 0
			if in.fresh {
				// A batch is a writing command's turn: the expiries due
				// are recorded before the run reads the active
				// exceptions again (DESIGN §6b).
				in.s.recordExpiries(ctx)
			}
		}
		if len(in.items) > 0 {
			d := in.items[0]
			in.items = in.items[1:]
			rec := intake.Record{Alert: d.Alert, Received: d.ReceivedAt}
			if d.Rejection != "" {
				rec = intake.Record{Err: &intake.RecordError{Position: d.Alert.Position, Reason: d.Rejection}}
			}
			return rec, int(d.ID), nil
		}
		select {
		case <-in.stop:
			return intake.Record{}, 0, io.EOF
		case <-ctx.Done():
			return intake.Record{}, 0, io.EOF
		case <-in.s.wake:
		case <-tick.C:
		}
	}
}

// FreshBatch reports whether the record NextNumbered returned last began a
// batch read from the inbox: the run reads the active exceptions again
// there (workflow.BatchSource).
func (in *inbox) FreshBatch() bool {
	f := in.fresh
	in.fresh = false
	return f
}
