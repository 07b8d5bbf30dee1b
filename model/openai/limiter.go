package openai

import "context"

// Limiter caps the calls in flight. A nil *Limiter caps nothing. It is safe
// for concurrent use.
type Limiter struct{ slots chan struct{} }

// NewLimiter returns a limiter of n slots; n < 1 returns nil (no cap).
func NewLimiter(n int) *Limiter {
	if n < 1 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

func (l *Limiter) acquire(ctx context.Context) error {
	if l == nil {
		return ctx.Err()
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Limiter) release() {
	if l != nil {
		<-l.slots
	}
}
