package routing

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/openrecall/openrecall"
)

// DefaultCircuitFailures is how many calls of a tier in a row must fail
// before its Circuit opens.
const DefaultCircuitFailures = 5

// Circuit watches one model tier's calls: it opens after Failures calls in
// a row failed (the model answered an error, after its provider's retries)
// and closes on the next call that succeeds. It observes and never steers:
// calls are still made while it is open (each failed call escalates its
// alert to a person, and only a call can close it). It is safe for
// concurrent use.
type Circuit struct {
	tier     openrecall.Tier
	failures int
	now      func() time.Time

	mu    sync.Mutex
	state CircuitState
}

// CircuitState is what a Circuit saw last.
type CircuitState struct {
	Tier openrecall.Tier
	// Open is set once Failures calls in a row failed, until one succeeds.
	Open bool
	// Failures counts the calls that failed since the last success.
	Failures int
	// LastError is the latest failure's error; Since is when the current
	// run of failures started (zero without one).
	LastError string
	Since     time.Time
}

// NewCircuit returns a closed circuit for tier that opens after failures
// failed calls in a row (DefaultCircuitFailures when below 1); now is its
// clock (time.Now when nil).
func NewCircuit(tier openrecall.Tier, failures int, now func() time.Time) *Circuit {
	if failures < 1 {
		failures = DefaultCircuitFailures
	}
	if now == nil {
		now = time.Now
	}
	return &Circuit{tier: tier, failures: failures, now: now, state: CircuitState{Tier: tier}}
}

// State returns what the circuit saw last.
func (c *Circuit) State() CircuitState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// record takes one call's outcome. A call its caller cancelled (the server
// shutting down) says nothing of the model and is not counted.
func (c *Circuit) record(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.state = CircuitState{Tier: c.tier}
		return
	}
	if c.state.Failures == 0 {
		c.state.Since = c.now().UTC()
	}
	c.state.Failures++
	c.state.LastError = err.Error()
	c.state.Open = c.state.Failures >= c.failures
}

// Wrap returns m with every call's outcome recorded in c. The wrapper has
// m's name and is priced as m is.
func (c *Circuit) Wrap(m Model) Model { return circuitModel{m: m, c: c} }

type circuitModel struct {
	m Model
	c *Circuit
}

func (w circuitModel) Name() string { return w.m.Name() }

// PricedAs is the wrapped model's price name.
func (w circuitModel) PricedAs() string { return pricedName(w.m) }

func (w circuitModel) Complete(ctx context.Context, req Request) (Response, error) {
	resp, err := w.m.Complete(ctx, req)
	w.c.record(ctx, err)
	return resp, err
}
