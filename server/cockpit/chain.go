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

// chainStatus returns the last verification of the whole trail and, when
// there is none or it is older than Config.ChainEvery and none runs,
// starts one in the background.
func (c *Cockpit) chainStatus(r *http.Request) chainState {
	c.chain.mu.Lock()
	defer c.chain.mu.Unlock()
	last := c.chain.last
	if !c.chain.running && (last.At.IsZero() || c.now().Sub(last.At) >= c.cfg.ChainEvery) {
		c.chain.running = true
		ctx := context.WithoutCancel(r.Context())
		go func() {
			err := c.RefreshChain(ctx)
			c.chain.mu.Lock()
			c.chain.running = false
			c.chain.mu.Unlock()
			if err != nil {
				c.cfg.ErrorLog(r, err)
			}
		}()
	}
	return last
}
