package cockpit

import (
	"net/netip"
	"sync"
	"time"
)

// Backoff is how a throttle answers failed logins: Free failures are
// allowed; each one past them blocks every login for Base, doubled per
// further failure, at most Max. One failure is forgotten per Decay
// without failures.
type Backoff struct {
	Free  int
	Base  time.Duration
	Max   time.Duration
	Decay time.Duration
}

// Default back-offs: an address may fail 5 times, then waits 1 s, 2 s,
// 4 s … up to 15 minutes, and is forgiven one failure a minute; every
// address together may fail 50 times, then waits from 1 s up to a minute,
// forgiven one failure a second (a guesser spread over many addresses).
var (
	DefaultPerAddress = Backoff{Free: 5, Base: time.Second, Max: 15 * time.Minute, Decay: time.Minute}
	DefaultOverall    = Backoff{Free: 50, Base: time.Second, Max: time.Minute, Decay: time.Second}
)

// maxAddresses bounds the addresses a Throttle remembers; past it, those
// forgiven and unblocked are forgotten first.
const maxAddresses = 4096

// Throttle limits login attempts per client address and overall, with a
// back-off that grows with each failure. While an address (or every
// address) is blocked no login is tried at all, whatever the token: the
// right one is refused too until the back-off has passed. It is safe for
// concurrent use.
type Throttle struct {
	per, all Backoff
	now      func() time.Time

	mu      sync.Mutex
	addrs   map[string]*strikes
	overall strikes
}

// strikes are the failures of one address (or of all) not yet forgiven,
// and the end of the current block.
type strikes struct {
	count int
	since time.Time // when count was last decayed
	until time.Time
}

// NewThrottle returns a throttle over the clock now (time.Now when nil).
func NewThrottle(per, all Backoff, now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	return &Throttle{per: per, all: all, now: now, addrs: map[string]*strikes{}}
}

// Key is the throttle's key of a client address: the address itself, or
// its /64 for IPv6 (one host commonly holds a whole /64).
func Key(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// Allow reports whether a login from addr may be tried now, and if not,
// how long until it may.
func (t *Throttle) Allow(addr string) (time.Duration, bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	wait := t.overall.until.Sub(now)
	if s, ok := t.addrs[Key(addr)]; ok {
		wait = max(wait, s.until.Sub(now))
	}
	if wait > 0 {
		return wait, false
	}
	return 0, true
}

// Fail records a failed login from addr.
func (t *Throttle) Fail(addr string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	k := Key(addr)
	s, ok := t.addrs[k]
	if !ok {
		if len(t.addrs) >= maxAddresses {
			t.forget(now)
		}
		s = &strikes{since: now}
		t.addrs[k] = s
	}
	s.fail(now, t.per)
	t.overall.fail(now, t.all)
}

// Succeed records a login from addr: its failures are forgiven (those
// counted overall are not).
func (t *Throttle) Succeed(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.addrs, Key(addr))
}

// forget drops the addresses whose failures were all forgiven and whose
// block passed; when none was, it drops every address not blocked.
func (t *Throttle) forget(now time.Time) {
	n := len(t.addrs)
	for k, s := range t.addrs {
		s.decay(now, t.per)
		if s.count == 0 && !now.Before(s.until) {
			delete(t.addrs, k)
		}
	}
	if len(t.addrs) < n {
		return
	}
	for k, s := range t.addrs {
		if !now.Before(s.until) {
			delete(t.addrs, k)
		}
	}
}

// decay forgives one failure per b.Decay of unblocked time since the last
// decay: time spent blocked forgives nothing, so a guesser who tries once
// at the end of each block sees the blocks grow to b.Max.
func (s *strikes) decay(now time.Time, b Backoff) {
	if s.since.Before(s.until) {
		s.since = s.until
	}
	if now.Before(s.since) || b.Decay <= 0 {
		return
	}
	n := int(now.Sub(s.since) / b.Decay)
	if n <= 0 {
		return
	}
	s.count = max(s.count-n, 0)
	s.since = s.since.Add(time.Duration(n) * b.Decay)
	if s.count == 0 {
		s.since = now
	}
}

// fail counts a failure at now and, past the free ones, blocks until now
// plus the back-off (never shortening a block in force).
func (s *strikes) fail(now time.Time, b Backoff) {
	s.decay(now, b)
	s.count++
	over := s.count - b.Free
	if over <= 0 {
		return
	}
	d := b.Base
	for i := 1; i < over && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if until := now.Add(d); until.After(s.until) {
		s.until = until
	}
}
