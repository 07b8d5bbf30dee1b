package openrecall

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// IntentDigest is the kind of an outbox intent that carries a receiver's
// digest of one window (DESIGN §12b): what openrecall closed without a
// person, so a person can spot-check it. Its AnalysisID is the window's
// DigestID, not an analysis.
const IntentDigest = "digest"

// ClosedWithoutPerson reports whether r is an alert openrecall closed with
// no person involved, what a digest counts: a triaged result whose final
// decision is benign (false_positive, duplicate, known_benign) and that
// waits for no person. Bypassed by memory, closed by an exception or
// through its group, or a model's benign verdict (cheap or strong) that
// needs no one's approval all count. Escalated and real results, a model's
// benign verdict that triage says a person must approve
// (TriageResult.RequiresHumanApproval: it waits in the cockpit, the
// product's rule of usecase.WaitingFor), recoveries, notices and
// rejections do not.
func (r Result) ClosedWithoutPerson() bool {
	return r.Outcome == ResultTriaged && r.Decision.Benign() && !r.EscalatedWithoutAnalysis &&
		(r.Bypassed || !r.Triage.RequiresHumanApproval)
}

// ClosedWindow is what openrecall closed without a person among the
// analyses completed in one window of time (Result.ClosedWithoutPerson):
// the stored results whose completion time is in [From, To).
type ClosedWindow struct {
	From, To time.Time
	// Closed counts them; it is the sum of Identities' counts, and of
	// Families'.
	Closed int
	// Identities counts them by identity (rule and service; the zero
	// identity for alerts without one), the most first, then by identity.
	Identities []ClosedIdentity
	// Families counts them by Alert DNA (the family of the alert), the
	// most first, then by fingerprint id.
	Families []ClosedFamily
	// Withheld counts the window's completed rows that were not read: a
	// row that does not match its seal (ErrIntegrity). They are not in
	// Closed.
	Withheld int
}

// ClosedIdentity is one identity's share of a ClosedWindow.
type ClosedIdentity struct {
	Identity Identity
	Count    int
	// ByDecision counts them by final decision.
	ByDecision map[Decision]int
	// AnalysisIDs are some of them, the latest completed first: links a
	// person follows to spot-check.
	AnalysisIDs []string
}

// ClosedFamily is one Alert DNA's share of a ClosedWindow.
type ClosedFamily struct {
	Fingerprint Fingerprint
	// ID is Fingerprint.ID().
	ID    string
	Count int
}

// DigestWindow returns the window of a digest every every that ended at or
// before at: [start, end) with end the latest multiple of every since the
// Unix epoch not after at. Windows are aligned to the epoch, so every
// process computes the same ones whatever its start (a 30m digest covers
// hh:00–hh:30 and hh:30–hh+1:00 UTC).
func DigestWindow(at time.Time, every time.Duration) (start, end time.Time) {
	if every <= 0 {
		return at, at
	}
	n := at.UnixNano()
	e := n - n%int64(every)
	if n < 0 && n%int64(every) != 0 {
		e -= int64(every)
	}
	end = time.Unix(0, e).UTC()
	return end.Add(-every), end
}

// DigestID names the digest of the window [from, to): the AnalysisID of
// its outbox intents, "digest-<from>-<to>" in Unix seconds. One window's
// digest to one receiver is written once, whatever the number of
// processes that write it (the outbox is unique per id, receiver and
// kind).
func DigestID(from, to time.Time) string {
	return "digest-" + strconv.FormatInt(from.Unix(), 10) + "-" + strconv.FormatInt(to.Unix(), 10)
}

// ParseDigestID returns the window DigestID named. An id that is not a
// digest's wraps ErrInvalid.
func ParseDigestID(id string) (from, to time.Time, err error) {
	rest, ok := strings.CutPrefix(id, "digest-")
	a, b, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 {
		return from, to, fmt.Errorf("digest id %q: want digest-<from>-<to>: %w", id, ErrInvalid)
	}
	f, err1 := strconv.ParseInt(a, 10, 64)
	t, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || t <= f {
		return from, to, fmt.Errorf("digest id %q: want digest-<from>-<to>, Unix seconds, from before to: %w", id, ErrInvalid)
	}
	return time.Unix(f, 0).UTC(), time.Unix(t, 0).UTC(), nil
}
