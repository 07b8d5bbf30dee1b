package server

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// Pruner empties the delivery and result documents of finished inbox rows
// older than a time. memory.Store satisfies it.
type Pruner interface {
	// PruneInboxAll prunes every row that finished before before, in
	// transactions of its default size (batch 0), stopping between two
	// when ctx is done, and returns how many it pruned.
	PruneInboxAll(ctx context.Context, before time.Time, batch int) (int, error)
}

// Forgetter deletes the rows that served only analyses an archive of the
// audit trail took. memory.Store satisfies it.
type Forgetter interface {
	// ForgetArchived deletes them up to cut, no later than the latest
	// archive's cut, in transactions of its default size (batch 0).
	ForgetArchived(ctx context.Context, cut time.Time, batch int) (openrecall.Forgotten, error)
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
		return total
	}
	s.log.Info("inbox pruned", fields...)
	if s.cfg.ArchiveDir != "" {
		s.archivePass(pctx, before)
	}
	return total
}

// archivePass archives the trail older than before into a new file of the
// archive directory, then forgets the rows only the archived analyses
// needed, and logs what it did. A trail that does not verify is neither
// archived nor forgotten (logged as an error: someone changed it); any
// other failure is logged and the next pass tries again.
func (s *Server) archivePass(ctx context.Context, before time.Time) {
	start := time.Now()
	path := filepath.Join(s.cfg.ArchiveDir, "openrecall-trail-"+before.UTC().Format("20060102T150405.000000000Z")+".jsonl")
	res, err := s.cfg.UseCases.ArchiveTo(ctx, before, path, func(err error) {
		s.log.Warn("could not remove the unused archive file", zap.String("path", path), zap.Error(err))
	})
	switch {
	case err != nil:
		s.log.Warn("audit archive failed; nothing forgotten, the next pass tries again", zap.Time("before", before), zap.Error(err))
		return
	case len(res.Report.Problems) > 0:
		s.log.Error("the audit trail does not verify: nothing archived nor forgotten (run openrecall audit verify)",
			zap.Int("problems", len(res.Report.Problems)), zap.String("first", res.Report.Problems[0].String()))
		return
	case !res.Record.IsZero():
		s.obs.Archived(res.Entries, res.CostPoints)
		s.log.Info("audit trail archived", zap.String("file", path), zap.Int64("entries", res.Entries),
			zap.Int64("cost_points", res.CostPoints), zap.String("sha256", res.Record.FileSHA256), zap.Time("before", before))
	}
	f, err := s.cfg.Forgetter.ForgetArchived(ctx, before, 0)
	if f.Total() > 0 {
		s.obs.Forgotten(f)
	}
	fields := []zap.Field{zap.Int("deliveries", f.Deliveries), zap.Int("waiting", f.Waiting), zap.Int("expired", f.Expired),
		zap.Int("groups", f.Groups), zap.Int("expired_groups", f.ExpiredGroups), zap.Int("alert_states", f.AlertStates),
		zap.Time("before", before), zap.Duration("took", time.Since(start))}
	if err != nil {
		s.log.Warn("forgetting archived rows stopped", append(fields, zap.Error(err))...)
		return
	}
	if f.Expired+f.ExpiredGroups > 0 {
		s.log.Warn("items nobody decided within the retention expired (their audit entries are in the archive)", fields...)
		return
	}
	s.log.Info("archived rows forgotten", fields...)
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
