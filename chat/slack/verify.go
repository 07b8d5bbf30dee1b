package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Headers of a signed request.
const (
	HeaderTimestamp = "X-Slack-Request-Timestamp"
	HeaderSignature = "X-Slack-Signature"
)

// Window is how far a request's timestamp may be from now, either way:
// Slack's documented five minutes. A replay is remembered as long.
const Window = 5 * time.Minute

// Reasons a request is refused, the label of the refusal counter.
const (
	ReasonBadSignature = "bad_signature"
	ReasonStale        = "stale"
	ReasonReplay       = "replay"
	ReasonUnmapped     = "unmapped"
	ReasonReadOnly     = "read_only"
)

// Refusal is why a request was refused: one of the Reason constants and
// a few words for the log (never the secret nor the body).
type Refusal struct {
	Reason string
	Detail string
}

// Error says why, with the reason.
func (r *Refusal) Error() string { return "slack request refused (" + r.Reason + "): " + r.Detail }

// Sign returns the X-Slack-Signature of body sent at ts with secret:
// "v0=" and the hex HMAC-SHA256 of "v0:{ts}:{body}", as Slack signs.
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + strconv.FormatInt(ts, 10) + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks the signature of body against h's headers with secret
// (a constant-time comparison), then that its timestamp is within Window
// of now. It returns the request's time, or a *Refusal: ReasonBadSignature
// for a missing, malformed or wrong signature or timestamp, ReasonStale
// for a signed request too old or from too far ahead. It reads nothing of
// body but its bytes.
func Verify(secret string, h http.Header, body []byte, now time.Time) (time.Time, error) {
	tsText, sig := h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	ts, err := strconv.ParseInt(strings.TrimSpace(tsText), 10, 64)
	if err != nil || secret == "" {
		return time.Time{}, &Refusal{Reason: ReasonBadSignature, Detail: "no timestamp a signature could cover"}
	}
	got, ok := strings.CutPrefix(sig, "v0=")
	gotMAC, herr := hex.DecodeString(got)
	if !ok || herr != nil {
		return time.Time{}, &Refusal{Reason: ReasonBadSignature, Detail: "the signature is not v0= and hex"}
	}
	want, _ := hex.DecodeString(strings.TrimPrefix(Sign(secret, ts, body), "v0="))
	if !hmac.Equal(gotMAC, want) {
		return time.Time{}, &Refusal{Reason: ReasonBadSignature, Detail: "the signature does not match the signing secret"}
	}
	at := time.Unix(ts, 0).UTC()
	if d := now.Sub(at); d > Window || d < -Window {
		return time.Time{}, &Refusal{Reason: ReasonStale, Detail: "timestamp " + tsText + " is " + d.Round(time.Second).String() + " from now"}
	}
	return at, nil
}

// DefaultReplayCapacity bounds the signatures a Replays remembers.
const DefaultReplayCapacity = 1 << 16

// Replays remembers the signatures of verified requests for Window after
// their timestamp, so the same signed request is taken once. It is one
// process's memory (see DESIGN §12c): several serve processes each keep
// their own. It is safe for concurrent use.
type Replays struct {
	mu   sync.Mutex
	seen map[[32]byte]time.Time // signature digest → when it stops mattering
	cap  int
}

// NewReplays returns an empty set holding up to capacity signatures
// (DefaultReplayCapacity when capacity ≤ 0).
func NewReplays(capacity int) *Replays {
	if capacity <= 0 {
		capacity = DefaultReplayCapacity
	}
	return &Replays{seen: make(map[[32]byte]time.Time), cap: capacity}
}

// Take records signature sig of a request sent at ts and reports whether
// it is new. A signature seen before and not expired is not new; so is
// every signature while the set is full of unexpired ones (it refuses
// rather than forgets: a flood of genuine clicks, 65,536 in five minutes,
// is not what a team sends).
//
// The signature is taken as Verify reads it: hex either way, so "v0=AB…"
// and "v0=ab…" are one signature — else the same request, its hex in the
// other case, would pass as new (TestSlackRefusals pins it).
func (r *Replays) Take(sig string, ts, now time.Time) bool {
	key := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(sig))))
	r.mu.Lock()
	defer r.mu.Unlock()
	if until, ok := r.seen[key]; ok && !now.After(until) {
		return false
	}
	if len(r.seen) >= r.cap {
		for k, until := range r.seen {
			if now.After(until) {
				delete(r.seen, k)
			}
		}
		if len(r.seen) >= r.cap {
			return false
		}
	}
	r.seen[key] = ts.Add(Window)
	return true
}
