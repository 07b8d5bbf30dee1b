package runner

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

// Pruning intervals.
const (
	// DefaultPruneEvery is the longest time between pruning passes.
	DefaultPruneEvery = time.Hour
	// MinPruneEvery is the shortest time between pruning passes.
	MinPruneEvery = time.Minute
)

// PruneInterval returns the time between pruning passes for a retention:
// a quarter of it, within MinPruneEvery and DefaultPruneEvery, so a row
// outlives the retention by a quarter of it at most (by an hour at most
// for a retention of four hours or more).
func PruneInterval(retention time.Duration) time.Duration {
	return min(max(retention/4, MinPruneEvery), DefaultPruneEvery)
}

// prune runs a pruning pass at start and then every PruneEvery until halt
// is closed, when a retention is set.
func (r *Runner) prune(ctx context.Context, halt <-chan struct{}) {
	if r.cfg.Retention <= 0 {
		return
	}
	t := time.NewTicker(r.cfg.PruneEvery)
	defer t.Stop()
	for {
		r.prunePass(ctx, halt)
		select {
		case <-halt:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prunePass prunes every finished row older than the retention, one bounded
// transaction at a time, stopping early when halt is closed, and logs one
// line. A storage error ends the pass; the next pass tries again.
func (r *Runner) prunePass(ctx context.Context, halt <-chan struct{}) int {
	start := time.Now()
	before := r.now().Add(-r.cfg.Retention)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-halt:
			cancel()
		case <-pctx.Done():
		}
	}()
	total, err := r.cfg.Pruner.PruneInboxAll(pctx, before, 0)
	if total > 0 {
		r.obs.Pruned(total)
	}
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		err = nil // stopped between two transactions: the next start goes on
	}
	fields := []zap.Field{zap.Int("rows", total), zap.Time("before", before),
		zap.Duration("retention", r.cfg.Retention), zap.Duration("took", time.Since(start))}
	if err != nil {
		r.log.Warn("inbox pruning stopped", append(fields, zap.Error(err))...)
		return total
	}
	r.log.Info("inbox pruned", fields...)
	if r.cfg.ArchiveDir != "" {
		r.archivePass(pctx, before)
	}
	return total
}

// archivePass archives the trail older than before into a new file of the
// archive directory, then forgets the rows only the archived analyses
// needed, and logs what it did. A trail that does not verify is neither
// archived nor forgotten (logged as an error: someone changed it); any
// other failure is logged and the next pass tries again.
func (r *Runner) archivePass(ctx context.Context, before time.Time) {
	start := time.Now()
	path := filepath.Join(r.cfg.ArchiveDir, "openrecall-trail-"+before.UTC().Format("20060102T150405.000000000Z")+".jsonl")
	res, err := r.cfg.UseCases.ArchiveTo(ctx, before, path, func(err error) {
		r.log.Warn("could not remove the unused archive file", zap.String("path", path), zap.Error(err))
	})
	switch {
	case err != nil:
		r.log.Warn("audit archive failed; nothing forgotten, the next pass tries again", zap.Time("before", before), zap.Error(err))
		return
	case len(res.Report.Problems) > 0:
		r.log.Error("the audit trail does not verify: nothing archived nor forgotten (run openrecall audit verify)",
			zap.Int("problems", len(res.Report.Problems)), zap.String("first", res.Report.Problems[0].String()))
		return
	case !res.Record.IsZero():
		r.obs.Archived(res.Entries, res.CostPoints)
		r.log.Info("audit trail archived", zap.String("file", path), zap.Int64("entries", res.Entries),
			zap.Int64("cost_points", res.CostPoints), zap.String("sha256", res.Record.FileSHA256), zap.Time("before", before))
	}
	f, err := r.cfg.Forgetter.ForgetArchived(ctx, before, 0)
	if f.Total() > 0 {
		r.obs.Forgotten(f)
	}
	fields := []zap.Field{zap.Int("deliveries", f.Deliveries), zap.Int("waiting", f.Waiting), zap.Int("expired", f.Expired),
		zap.Int("groups", f.Groups), zap.Int("expired_groups", f.ExpiredGroups), zap.Int("alert_states", f.AlertStates), zap.Int("history", f.History),
		zap.Time("before", before), zap.Duration("took", time.Since(start))}
	if err != nil {
		r.log.Warn("forgetting archived rows stopped", append(fields, zap.Error(err))...)
		return
	}
	if f.Expired+f.ExpiredGroups > 0 {
		r.log.Warn("items nobody decided within the retention expired (their audit entries are in the archive)", fields...)
		return
	}
	r.log.Info("archived rows forgotten", fields...)
}
