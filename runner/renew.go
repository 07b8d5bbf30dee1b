package runner

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// renew extends the leases of the deliveries this process holds every
// third of the lease until drained is closed (the workers finished), and
// reports the claims it found reclaimed by another process. A failure is logged and
// tried again at the next tick: the lease outlasts two missed renewals.
func (r *Runner) renew(ctx context.Context, drained <-chan struct{}) {
	lease := r.cfg.Lease
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
		if err := r.cfg.Store.RenewLeases(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("renew inbox leases; will retry", zap.Error(err))
		}
		if lost := r.cfg.Store.LeasesLost(); lost > reported {
			r.log.Warn("claimed deliveries were reclaimed by another server after this one's lease passed; it wrote nothing for them",
				zap.Int64("lost", lost-reported))
			r.obs.LeasesLost(int(lost - reported))
			reported = lost
		}
	}
}
