package runner

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

// drain runs the inbox through the analyze use case (the workflow's queue
// runner, as `analyze` does) until halt is closed: one run for the life of
// the runner, whose cost curve is each UTC day's (costcurve.Daily) and
// whose model budget is keyed by day inside the pipeline's router. The
// inbox is the run's source, and the sink persists each batch of results
// and completes their deliveries in one transaction (memory.Sink). Each
// worker finishes the delivery it holds, and every finished analysis is
// stored before drain returns.
func (r *Runner) drain(ctx context.Context, halt <-chan struct{}) {
	r.recordExpiries(ctx)
	src := &inbox{r: r, stop: halt}
	_, err := usecase.Analyze(ctx, r.pipeline, usecase.AnalyzeRequest{Queue: usecase.Queue{Source: src}, Options: workflow.QueueOptions{
		Workers: r.cfg.Workers,
		Curve:   costcurve.Daily(CostPrefix, r.now),
	}}, func(res openrecall.Result) error {
		r.served(res)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		r.log.Error("inbox run stopped", zap.Error(err))
	}
}

// recordExpiries records the exception expiries due (actor system). A
// failure is logged and left for the next batch: the expiries stay due
// until recorded, and an expired exception matches nothing either way.
func (r *Runner) recordExpiries(ctx context.Context) {
	if err := r.cfg.UseCases.RecordExpiries(ctx); err != nil && ctx.Err() == nil {
		r.log.Error("record exception expiries; will retry at the next batch", zap.Error(err))
	}
}

// served reports a result its batch stored (with its delivery completed
// and its notification intents written): metrics, a debug line, and a
// wake-up of the dispatcher, which sends the intents now rather than at
// its next look.
func (r *Runner) served(res openrecall.Result) {
	r.obs.Analysed(res)
	r.log.Debug("analysed", zap.String("analysis_id", res.AnalysisID), zap.String("alert", res.Alert.ID),
		zap.String("outcome", res.Outcome), zap.String("decision", string(res.Decision)), zap.Bool("bypassed", res.Bypassed))
	if r.dispatcher != nil {
		r.dispatcher.Wake()
	}
}

// inbox is the source of the runner's run: pending deliveries, oldest
// first, as intake records numbered by their inbox ids. It waits for new
// ones (woken by an enqueue, or each second) and ends at stop or at a
// fatal error. Only the run's reader goroutine calls NextNumbered.
type inbox struct {
	r     *Runner
	stop  <-chan struct{}
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
// id, or io.EOF at stop or when ctx is done.
func (in *inbox) NextNumbered(ctx context.Context) (intake.Record, int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-in.stop:
			return intake.Record{}, 0, io.EOF
		default:
		}
		if len(in.items) == 0 && !in.claim(ctx) {
			return intake.Record{}, 0, io.EOF
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
		case <-in.r.wake:
		case <-tick.C:
		}
	}
}

// claim leases the next batch of pending deliveries into items; false
// means an error stopped the runner.
func (in *inbox) claim(ctx context.Context) bool {
	items, err := in.r.cfg.Store.Claim(ctx, 4*in.r.cfg.Workers)
	if errors.Is(err, openrecall.ErrSchemaMismatch) {
		// Another openrecall migrated the database: this binary claims
		// no more work and the runner stops.
		in.r.fail(err)
		return false
	}
	if err != nil {
		in.r.log.Error("claim from the inbox", zap.Error(err))
	}
	in.items = items
	in.fresh = len(items) > 0
	if in.fresh {
		// A batch is a writing command's turn: the expiries due are
		// recorded before the run reads the active exceptions again
		// (DESIGN §6b).
		in.r.recordExpiries(ctx)
	}
	return true
}

// FreshBatch reports whether the record NextNumbered returned last began a
// batch read from the inbox: the run reads the active exceptions again
// there (workflow.BatchSource).
func (in *inbox) FreshBatch() bool {
	f := in.fresh
	in.fresh = false
	return f
}
