package routing

import (
	"fmt"
	"time"

	openrecall "github.com/openrecall/openrecall"
)

// String describes the attempt for a route step's reason, such as
// "attempt 2: HTTP 429: rate limited; retried after 1.5s".
func (a Attempt) String() string {
	s := fmt.Sprintf("attempt %d: ", a.Number)
	if a.Status == 0 {
		s += "no response"
	} else {
		s += fmt.Sprintf("HTTP %d", a.Status)
	}
	if a.Error != "" {
		s += ": " + a.Error
	}
	if a.Wait > 0 {
		s += fmt.Sprintf("; retried after %s", a.Wait.Round(time.Millisecond))
	}
	return s
}

// attemptSteps records every attempt but the last of a live call as its own
// step (outcome retried, cost 0: a failed request returns no usage), notes
// the last attempt in step's reason and marks step live, and returns the
// start time of the last attempt, so that step's latency is that attempt's.
// Without attempts it changes nothing.
func (rt *route) attemptSteps(step *openrecall.RouteStep, start time.Time, attempts []Attempt) time.Time {
	if len(attempts) == 0 {
		return start
	}
	for _, a := range attempts[:len(attempts)-1] {
		s := *step
		s.Live, s.Outcome = true, openrecall.OutcomeRetried
		s.Reason = step.Reason + "; " + a.String()
		rt.add(s, rt.r.cfg.Now()).Latency = a.Latency
		start = start.Add(a.Latency + a.Wait)
	}
	step.Live = true
	step.Reason += "; " + attempts[len(attempts)-1].String()
	return start
}
