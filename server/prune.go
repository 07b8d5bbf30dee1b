package server

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// Pruner empties the delivery and result documents of finished inbox rows
// older than a time. memory.Store satisfies it.
type Pruner interface {
	// PruneInboxAll prunes every row that finished before before, in
	// transactions of its default size (batch 0), stopping between two
	// when ctx is done, and returns how many it pruned.
	PruneInboxAll(ctx context.Context, before time.Time, batch int) (int, error)
}

// prune runs a pruning pass at start and then every PruneEvery until stop
// is closed, when a retention is set.
func (s *Server) prune(ctx context.Context, stop <-chan struct{}) {
	if s.cfg.Retention <= 0 {
		return
	}
	t := time.NewTicker(s.cfg.PruneEvery)
	defer t.Stop()
	for {
		s.prunePass(ctx, stop)
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prunePass prunes every finished row older than the retention, one bounded
// transaction at a time, stopping early when stop is closed, and logs one
// line. A storage error ends the pass; the next pass tries again.
func (s *Server) prunePass(ctx context.Context, stop <-chan struct{}) int {
	start := time.Now()
	before := s.now().Add(-s.cfg.Retention)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-pctx.Done():
		}
	}()
	total, err := s.cfg.Pruner.PruneInboxAll(pctx, before, 0)
	if total > 0 {
		s.obs.Pruned(total)
	}
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		err = nil // stopped between two transactions: the next start goes on
	}
	fields := []zap.Field{zap.Int("rows", total), zap.Time("before", before),
		zap.Duration("retention", s.cfg.Retention), zap.Duration("took", time.Since(start))}
	if err != nil {
		s.log.Warn("inbox pruning stopped", append(fields, zap.Error(err))...)
	} else {
		s.log.Info("inbox pruned", fields...)
	}
	return total
}

// renew extends the leases of the deliveries this server holds every third
// of the lease until drained is closed (the workers finished), and reports
// the claims it found reclaimed by another server. A failure is logged and
// tried again at the next tick: the lease outlasts two missed renewals.
func (s *Server) renew(ctx context.Context, drained <-chan struct{}) {
	lease := s.cfg.Lease
	if lease <= 0 {
		lease = time.Minute
	}
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	var reported int64
	for {
		select {
		case <-drained:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.cfg.Store.RenewLeases(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("renew inbox leases; will retry", zap.Error(err))
		}
		if lost := s.cfg.Store.LeasesLost(); lost > reported {
			s.log.Warn("claimed deliveries were reclaimed by another server after this one's lease passed; it wrote nothing for them",
				zap.Int64("lost", lost-reported))
			s.obs.LeasesLost(int(lost - reported))
			reported = lost
		}
	}
}
