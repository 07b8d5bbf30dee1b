package cockpit

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/openrecall/openrecall/usecase"
)

// chainBadge keeps the last verification of the whole audit trail, which
// the analysis pages show instead of running one on every view.
type chainBadge struct {
	mu      sync.Mutex
	last    chainState
	running bool
}

// chainState is one verification of the whole trail: At is zero until
// the first has finished; Failed says it could not run (the server log
// says why).
type chainState struct {
	Verified usecase.Verified
	At       time.Time
	Failed   bool
}

// RefreshChain verifies the whole audit trail now and keeps the result
// for the analysis pages' badge. The pages call it in the background when
// the last result is older than Config.ChainEvery; serve may call it at
// start.
func (c *Cockpit) RefreshChain(ctx context.Context) error {
	v, err := c.cfg.UseCases.VerifyAudit(ctx, "")
	c.chain.mu.Lock()
	defer c.chain.mu.Unlock()
	c.chain.last = chainState{Verified: v, At: c.now(), Failed: err != nil}
	return err
}

// Close cancels the work pages started in the background and waits for it
// to end, so that the store can be closed after it: a verification of the
// trail still reading when serve closed its store failed with "database is
// closed". Call it once no request is served any more.
func (c *Cockpit) Close() {
	c.bgStop()
	c.bg.Wait()
}

// chainStatus returns the last verification of the whole trail and, when
// there is none or it is older than Config.ChainEvery and none runs,
// starts one in the background, which outlives the request (Close ends
// it).
func (c *Cockpit) chainStatus(r *http.Request) chainState {
	c.chain.mu.Lock()
	defer c.chain.mu.Unlock()
	last := c.chain.last
	if !c.chain.running && (last.At.IsZero() || c.now().Sub(last.At) >= c.cfg.ChainEvery) {
		c.chain.running = true
		c.bg.Go(func() {
			err := c.RefreshChain(c.bgCtx)
			c.chain.mu.Lock()
			c.chain.running = false
			c.chain.mu.Unlock()
			if err != nil && c.bgCtx.Err() == nil {
				c.cfg.ErrorLog(r, err)
			}
		})
	}
	return last
}
