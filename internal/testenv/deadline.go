package testenv

import "time"

// Deadliner is what a wait needs of a test: *testing.T has it.
type Deadliner interface {
	Deadline() (deadline time.Time, ok bool)
}

// maxGrace is the most a wait leaves between giving up and the test
// binary's deadline.
const maxGrace = 30 * time.Second

// Deadline returns when a test's wait for something to happen should give
// up: shortly before the test binary's own deadline (go test -timeout),
// leaving a tenth of the time remaining (at most 30s) to report the failure
// with its context, rather than the goroutine dump a timeout ends in. ok is
// false when the binary has no deadline (-timeout 0): then a wait lasts
// until what it waits for happens. A liveness wait uses this instead of a
// fixed duration, which a slow or loaded machine can exceed while the
// product is right.
func Deadline(t Deadliner) (time.Time, bool) {
	d, ok := t.Deadline()
	if !ok {
		return time.Time{}, false
	}
	return d.Add(-min(maxGrace, time.Until(d)/10)), true
}

// Expiry returns a channel that receives at Deadline(t), for a select that
// waits for something else; nil (never ready) when t has no deadline.
func Expiry(t Deadliner) <-chan time.Time {
	d, ok := Deadline(t)
	if !ok {
		return nil
	}
	return time.After(time.Until(d))
}

// Remaining returns the time from now to Deadline(t), for a component that
// takes its own timeout (a server's shutdown grace); a day when t has no
// deadline.
func Remaining(t Deadliner) time.Duration {
	d, ok := Deadline(t)
	if !ok {
		return 24 * time.Hour
	}
	return time.Until(d)
}

// Poll calls done every interval until it returns true, and reports whether
// it did before Deadline(t).
func Poll(t Deadliner, interval time.Duration, done func() bool) bool {
	d, ok := Deadline(t)
	for {
		if done() {
			return true
		}
		if ok && time.Now().After(d) {
			return false
		}
		time.Sleep(interval)
	}
}
