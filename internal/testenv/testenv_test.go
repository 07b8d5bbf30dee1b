package testenv

import (
	"testing"
	"time"
)

func TestCI(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  bool
	}{{"true", true}, {"", false}, {"false", false}, {"1", false}} {
		t.Setenv("CI", tt.value)
		if got := CI(); got != tt.want {
			t.Errorf("CI=%q: CI() = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// recorder is a testing.TB that records how Missing ended it.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }

func TestMissing(t *testing.T) {
	for _, tt := range []struct {
		ci         string
		fail, skip bool
	}{{"true", true, false}, {"", false, true}} {
		t.Setenv("CI", tt.ci)
		r := &recorder{TB: t}
		Missing(r, nil)
		if r.failed != tt.fail || r.skipped != tt.skip {
			t.Errorf("CI=%q: failed %v skipped %v, want %v %v", tt.ci, r.failed, r.skipped, tt.fail, tt.skip)
		}
	}
}

// deadline is a Deadliner with a fixed answer.
type deadline struct {
	at time.Time
	ok bool
}

func (d deadline) Deadline() (time.Time, bool) { return d.at, d.ok }

func TestDeadline(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		in       time.Duration
		min, max time.Duration // the wait's end, from now
	}{
		{10 * time.Minute, 9*time.Minute + 29*time.Second, 9*time.Minute + 31*time.Second}, // 30s of grace at most
		{60 * time.Second, 53 * time.Second, 55 * time.Second},                             // a tenth of what remains
	} {
		got, ok := Deadline(deadline{now.Add(tt.in), true})
		if !ok || got.Sub(now) < tt.min || got.Sub(now) > tt.max {
			t.Errorf("deadline in %s: wait until %s from now (ok %v), want %s to %s", tt.in, got.Sub(now), ok, tt.min, tt.max)
		}
	}
	if _, ok := Deadline(deadline{}); ok {
		t.Error("no deadline: Deadline says there is one")
	}
	if Expiry(deadline{}) != nil {
		t.Error("no deadline: Expiry gives a channel that can fire")
	}
}

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(deadline{}, time.Millisecond, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Poll without a deadline stopped after %d calls, want 3 and true", n)
	}
	n = 0
	if Poll(deadline{time.Now().Add(-time.Second), true}, time.Millisecond, func() bool { n++; return false }) || n != 1 {
		t.Errorf("Poll past its deadline: %d calls, want 1 and false", n)
	}
}

func TestTools(t *testing.T) {
	for _, tt := range []struct {
		ci         string
		names      []string
		fail, skip bool
	}{
		{"true", []string{"go", "no-such-program-openrecall"}, true, false},
		{"", []string{"no-such-program-openrecall"}, false, true},
		{"true", []string{"go"}, false, false},
	} {
		t.Setenv("CI", tt.ci)
		r := &recorder{TB: t}
		Tools(r, "install it", tt.names...)
		if r.failed != tt.fail || r.skipped != tt.skip {
			t.Errorf("CI=%q, %v: failed %v skipped %v, want %v %v", tt.ci, tt.names, r.failed, r.skipped, tt.fail, tt.skip)
		}
	}
}
