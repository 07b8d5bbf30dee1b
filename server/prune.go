package server

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Pruner empties the delivery and result documents of finished inbox rows
// older than a time, in bounded transactions. memory.Store satisfies it.
type Pruner interface {
	// PruneInbox prunes up to batch rows that finished before before, in
	// one transaction, and returns how many; fewer than batch means none
	// is left.
	PruneInbox(ctx context.Context, before time.Time, batch int) (int, error)
}

// pruneBatch is how many rows one pruning transaction takes: serve's
// writers (receivers, workers) wait for one batch at most.
const pruneBatch = 1000

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

// prunePass prunes every finished row older than the retention, one batch
// per transaction, stopping early when stop is closed, and logs one line.
// A storage error ends the pass; the next pass tries again.
func (s *Server) prunePass(ctx context.Context, stop <-chan struct{}) int {
	start := time.Now()
	before := s.now().Add(-s.cfg.Retention)
	total, batches := 0, 0
	var err error
	for {
		var n int
		n, err = s.cfg.Pruner.PruneInbox(ctx, before, pruneBatch)
		total += n
		batches++
		if n > 0 {
			s.obs.Pruned(n)
		}
		if err != nil || n < pruneBatch {
			break
		}
		select {
		case <-stop:
		default:
			continue
		}
		break
	}
	fields := []zap.Field{zap.Int("rows", total), zap.Int("batches", batches), zap.Time("before", before),
		zap.Duration("retention", s.cfg.Retention), zap.Duration("took", time.Since(start))}
	if err != nil {
		s.log.Warn("inbox pruning stopped", append(fields, zap.Error(err))...)
	} else {
		s.log.Info("inbox pruned", fields...)
	}
	return total
}
