package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/intake"
)

// Source yields intake records one at a time; io.EOF ends it. ctx is the
// run's: a source that waits for records (serve's inbox) stops waiting
// when it is done. Records wraps an intake.Reader as a Source.
type Source interface {
	Next(ctx context.Context) (intake.Record, error)
}

// Records is the Source of the records an intake.Reader reads.
func Records(r *intake.Reader) Source { return reader{r} }

type reader struct{ r *intake.Reader }

func (rd reader) Next(context.Context) (intake.Record, error) { return rd.r.Next() }

// NumberedSource is a Source whose records carry their own sequence numbers
// (the server's inbox ids): AnalyzeQueue names each analysis after the
// number NextNumbered returns instead of the record's position in the queue.
type NumberedSource interface {
	Source
	NextNumbered(ctx context.Context) (rec intake.Record, seq int, err error)
}

// BatchSource is a Source that reads its records in batches (serve's
// inbox): FreshBatch reports, after Next, whether that record starts a new
// batch, and the run reads the active exceptions again there (DESIGN §6b).
type BatchSource interface {
	Source
	FreshBatch() bool
}

// QueueOptions tunes AnalyzeQueue.
type QueueOptions struct {
	// Workers is the number of records analysed concurrently; values below
	// 1 mean 1.
	Workers int
	// Progress, when not nil, is called after each emitted result with the
	// number emitted so far.
	Progress func(done int)
	// BatchDone, when not nil, is called after the results of each batch
	// (persisted together) have been emitted: a writer that buffers its
	// output flushes it there, so output lags persistence by one batch at
	// most and costs one write per batch.
	BatchDone func() error
	// Curve continues a stored cost curve (costcurve.Continue); nil starts
	// a new one named after the workflow's batch.
	Curve *costcurve.Curve
}

// Summary totals a run.
type Summary struct {
	Batch    string          `json:"batch"`
	Mode     openrecall.Mode `json:"mode"`
	Records  int             `json:"records"`
	Triaged  int             `json:"triaged"`
	Rejected int             `json:"rejected"`
	Resolved int             `json:"resolved"`
	// Dropped counts the alerts senders said they left out of their
	// deliveries (Alertmanager's truncatedAlerts): never received, so
	// never triaged; a person must know.
	Dropped  int `json:"sender_dropped,omitempty"`
	Bypassed int `json:"bypassed"`
	// Grouped counts group members (no model call, the head's decision;
	// DESIGN §6a), apart from bypasses and cheap answers; Groups counts the
	// groups opened (their heads); GroupedSaved is the members' savings.
	Grouped      int                `json:"grouped"`
	Groups       int                `json:"groups"`
	GroupedSaved openrecall.NanoUSD `json:"grouped_saved_nano_usd"`
	// Excepted counts alerts closed by an exception a person approved (no
	// model call; DESIGN §6b), apart from bypasses and group members;
	// ExceptedSaved is their savings; Proposals counts results that carry
	// a proposed exception.
	Excepted      int                         `json:"excepted"`
	ExceptedSaved openrecall.NanoUSD          `json:"excepted_saved_nano_usd"`
	Proposals     int                         `json:"proposals"`
	Decisions     map[openrecall.Decision]int `json:"decisions"`
	ModelCalls    map[string]int              `json:"model_calls"`
	LiveCalls     int                         `json:"live_calls"`
	// Unanalysed counts triaged alerts escalated without analysis (no model
	// answered: budget spent or model unavailable); UnanalysedBaseline is
	// their baseline, which is their cost: they never save.
	Unanalysed         int                `json:"escalated_without_analysis"`
	UnanalysedBaseline openrecall.NanoUSD `json:"escalated_without_analysis_baseline_nano_usd"`
	Cost               openrecall.NanoUSD `json:"cost_nano_usd"`
	Baseline           openrecall.NanoUSD `json:"baseline_nano_usd"`
}

// Savings returns baseline minus cost: what the spared strong calls
// (bypasses and passing cheap answers) would have cost, less the cheap
// calls made instead.
func (s Summary) Savings() openrecall.NanoUSD { return s.Baseline - s.Cost }

// AnalysedBaseline returns the baseline of the alerts that were analysed
// (bypassed or answered by a model): the whole baseline less that of the
// alerts escalated without analysis.
func (s Summary) AnalysedBaseline() openrecall.NanoUSD { return s.Baseline - s.UnanalysedBaseline }

// SavingsPercent returns the savings as a percentage of the baseline of
// the analysed alerts, 0 when it is 0 (costcurve.SavingsPercent, as the
// cost curve's summary computes it).
func (s Summary) SavingsPercent() float64 {
	return costcurve.SavingsPercent(s.Savings(), s.AnalysedBaseline())
}

func (s *Summary) add(r openrecall.Result) {
	s.Records++
	switch r.Outcome {
	case openrecall.ResultRejected:
		s.Rejected++
	case openrecall.ResultResolved:
		s.Resolved++
		s.Dropped += r.Alert.Dropped
	case openrecall.ResultTriaged:
		s.Triaged++
		s.Decisions[r.Decision]++
		if r.Bypassed {
			s.Bypassed++
		}
		if r.Excepted() {
			s.Excepted++
			s.ExceptedSaved += r.Baseline - r.Cost
		}
		if r.Proposal != nil {
			s.Proposals++
		}
		if r.Grouped() {
			s.Grouped++
			s.GroupedSaved += r.Baseline - r.Cost
		} else if r.Group != nil {
			s.Groups++
		}
		if r.EscalatedWithoutAnalysis {
			s.Unanalysed++
			s.UnanalysedBaseline += r.Baseline
		}
	}
	for _, st := range r.Steps {
		if st.Step == openrecall.StepAnalysis && !st.Skipped {
			s.ModelCalls[string(st.Tier)]++
			if st.Live {
				s.LiveCalls++
			}
		}
	}
	s.Cost += r.Cost
	s.Baseline += r.Baseline
}

type job struct {
	pos int // position in the queue: the turn of ordered routing
	seq int // number the analysis is named after
	// exceptions is the active set the record is matched against: the
	// run's, or the one read at the start of the source's latest batch.
	exceptions *exceptionSet
	rec        intake.Record
	out        chan openrecall.Result
}

// AnalyzeQueue reads src to the end, analyses every record on opts.Workers
// workers and calls emit with each result in input order. Audit entries and
// cost points go to the Sink (when configured) in that same order, before
// emit sees the result. It stops at the first error from src (other than
// io.EOF), from the Sink or from emit, or when ctx is done, and returns the
// summary of what was emitted so far with that error.
func (w *Workflow) AnalyzeQueue(ctx context.Context, src Source, opts QueueOptions, emit func(openrecall.Result) error) (Summary, error) {
	workers := max(opts.Workers, 1)
	sum := Summary{Batch: w.cfg.Batch, Mode: w.cfg.Mode, Decisions: map[openrecall.Decision]int{}, ModelCalls: map[string]int{}}
	ctx, cancel := context.WithCancel(ctx)

	var rs runState
	if w.cfg.OrderedRouting {
		rs.turn = newTurnstile()
	}
	var err error
	if rs.groups, err = w.newGrouper(ctx); err != nil {
		cancel()
		return sum, err
	}
	if rs.exceptions, err = w.loadExceptions(ctx); err != nil {
		cancel()
		return sum, err
	}

	jobs := make(chan job)
	// pending carries each job's result channel in input order; its
	// capacity bounds the records in flight.
	pending := make(chan chan openrecall.Result, max(workers*4, maxPersistBatch))
	var readErr error

	go func() {
		defer close(pending)
		defer close(jobs)
		numbered, _ := src.(NumberedSource)
		exceptions := rs.exceptions
		for pos := 0; ; pos++ {
			var rec intake.Record
			var err error
			seq := pos
			if numbered != nil {
				rec, seq, err = numbered.NextNumbered(ctx)
			} else {
				rec, err = src.Next(ctx)
			}
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				readErr = fmt.Errorf("read queue: %w", err)
				return
			}
			if fb, ok := src.(BatchSource); ok && fb.FreshBatch() && w.cfg.Exceptions != nil {
				// A long-running source (serve's inbox) reads the active
				// exceptions again at the start of each batch.
				if set, err := w.loadExceptions(ctx); err != nil {
					w.log.Warn("exceptions unavailable; keeping the set read before", zap.Error(err))
				} else {
					exceptions = set
				}
			}
			j := job{pos: pos, seq: seq, rec: rec, exceptions: exceptions, out: make(chan openrecall.Result, 1)}
			select {
			case pending <- j.out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				jrs := rs
				jrs.exceptions = j.exceptions
				j.out <- w.process(ctx, j.rec, j.pos, j.seq, jrs)
			}
		}()
	}
	// On every return, stop the reader first, then wait for the workers:
	// waiting first would block forever on a reader stuck on a full
	// pending queue.
	defer func() {
		cancel()
		wg.Wait()
	}()

	curve := opts.Curve
	if curve == nil {
		curve = costcurve.New(w.cfg.Batch)
	}
	var lookahead chan openrecall.Result // taken from pending, not yet finished
	batch := make([]openrecall.Result, 0, maxPersistBatch)
	points := make([]*openrecall.CostPoint, 0, maxPersistBatch)
	for {
		// Wait for the next result in input order, then take the later ones
		// that finish within maxLinger, up to the batch limit.
		out := lookahead
		lookahead = nil
		if out == nil {
			var ok bool
			if out, ok = <-pending; !ok {
				break
			}
		}
		var r openrecall.Result
		select {
		case r = <-out:
		case <-ctx.Done():
			return sum, ctx.Err()
		}
		batch, points = append(batch[:0], r), points[:0]
		// Later results join the batch while it is young: each commit
		// costs about as much as the rows it writes, so a batch lingers up
		// to maxLinger for results about to finish (nothing is printed
		// before its batch is committed, so this only delays output).
		var linger <-chan time.Time
		var timer *time.Timer
		if w.batchSink() != nil {
			timer = time.NewTimer(maxLinger)
			linger = timer.C
		}
	gather:
		for len(batch) < maxPersistBatch && linger != nil {
			select {
			case next, ok := <-pending:
				if !ok {
					break gather
				}
				select {
				case r := <-next:
					batch = append(batch, r)
				case <-linger:
					lookahead = next
					break gather
				case <-ctx.Done():
					return sum, ctx.Err()
				}
			case <-linger:
				break gather
			case <-ctx.Done():
				return sum, ctx.Err()
			}
		}
		if timer != nil {
			timer.Stop()
		}
		for i := range batch {
			var point *openrecall.CostPoint
			if batch[i].Outcome == openrecall.ResultTriaged {
				p := curve.Add(batch[i].Alert.ID, pointTier(batch[i]), batch[i].Bypassed, batch[i].Cost, batch[i].Baseline)
				point = &p
			}
			points = append(points, point)
		}
		if err := w.persist(ctx, batch, points); err != nil {
			return sum, err
		}
		for _, r := range batch {
			sum.add(r)
			if err := emit(r); err != nil {
				return sum, err
			}
			if opts.Progress != nil {
				opts.Progress(sum.Records)
			}
		}
		if opts.BatchDone != nil {
			if err := opts.BatchDone(); err != nil {
				return sum, err
			}
		}
	}
	if readErr != nil {
		return sum, readErr
	}
	return sum, ctx.Err()
}

// maxPersistBatch caps the results persisted in one transaction, and is the
// least number of records read ahead.
const maxPersistBatch = 64

// maxLinger is how long a batch waits for more finished results before it
// is persisted and printed.
const maxLinger = 10 * time.Millisecond

// BatchSink is a Sink that can persist several results, in input order, in
// one go (one transaction per kind of record instead of one per result).
// PersistBatch returns, per result, its audit entries as stored. points[i]
// is the cost point of results[i], nil when it has none.
type BatchSink interface {
	Sink
	PersistBatch(ctx context.Context, results []openrecall.Result, points []*openrecall.CostPoint) ([][]openrecall.AuditEntry, error)
}

func (w *Workflow) batchSink() BatchSink {
	bs, _ := w.cfg.Sink.(BatchSink)
	return bs
}

// persist hands a batch of results to the sink, in input order, and puts the
// stored audit entries back into them. Nothing is emitted before it returns.
func (w *Workflow) persist(ctx context.Context, batch []openrecall.Result, points []*openrecall.CostPoint) error {
	if w.cfg.Sink == nil || len(batch) == 0 {
		return nil
	}
	if bs := w.batchSink(); bs != nil {
		sealed, err := bs.PersistBatch(ctx, batch, points)
		if err != nil {
			return fmt.Errorf("persist %s to %s: %w", batch[0].AnalysisID, batch[len(batch)-1].AnalysisID, err)
		}
		if len(sealed) != len(batch) {
			return fmt.Errorf("persist: the sink returned audit trails for %d results, not %d", len(sealed), len(batch))
		}
		for i := range batch {
			batch[i].Audit = sealed[i]
		}
		return nil
	}
	for i := range batch {
		sealed, err := w.cfg.Sink.Persist(ctx, batch[i], points[i])
		if err != nil {
			return fmt.Errorf("persist %s: %w", batch[i].AnalysisID, err)
		}
		batch[i].Audit = sealed
	}
	return nil
}

// pointTier names the tiers an alert's analysis used, for the cost curve.
func pointTier(r openrecall.Result) openrecall.Tier {
	if r.Bypassed {
		return costcurve.TierBypass
	}
	if r.EscalatedWithoutAnalysis {
		return costcurve.TierUnanalysed
	}
	if r.Grouped() {
		return costcurve.TierGrouped
	}
	if r.Excepted() {
		return costcurve.TierException
	}
	cheap, strong := false, false
	for _, s := range r.Steps {
		if s.Step != openrecall.StepAnalysis || s.Skipped {
			continue
		}
		switch s.Tier {
		case openrecall.TierCheap:
			cheap = true
		case openrecall.TierStrong:
			strong = true
		}
	}
	switch {
	case cheap && strong:
		return openrecall.Tier(costcurve.TierCheapStrong)
	case cheap:
		return openrecall.TierCheap
	case strong:
		return openrecall.TierStrong
	}
	return costcurve.TierNone
}

// turnstile lets records pass one at a time in sequence order.
type turnstile struct {
	mu   sync.Mutex
	cond *sync.Cond
	next int
}

func newTurnstile() *turnstile {
	t := &turnstile{}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// wait blocks until it is seq's turn.
func (t *turnstile) wait(seq int) {
	t.mu.Lock()
	for t.next != seq {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// done passes the turn to the next sequence number.
func (t *turnstile) done() {
	t.mu.Lock()
	t.next++
	t.mu.Unlock()
	t.cond.Broadcast()
}
