package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// The kinds of notification a receiver is sent about one alert episode.
const (
	// KindTrigger is a result a route sends on: the alert is opened,
	// posted or paged.
	KindTrigger = "trigger"
	// KindResolve is the sender's recovery of an episode notified before:
	// the incident is resolved, the alert closed, the message updated.
	KindResolve = "resolve"
	// KindUpdate is a person's decision (in the cockpit, the CLI, the API
	// or chat) about an episode notified before: a note, an
	// acknowledgement or an updated message, as the receiver's API has.
	KindUpdate = "update"
	// KindDigest is a receiver's digest of one window: what openrecall
	// closed without a person (Notification.Digest, digest.go). Only a
	// chat, mail or webhook receiver takes one.
	KindDigest = "digest"
)

// Notification is what a receiver is asked to deliver: one notification
// about one alert episode.
type Notification struct {
	// Kind is KindTrigger, KindResolve, KindUpdate or KindDigest.
	Kind string
	// Key names the alert episode across its notifications, the same for
	// its trigger, its resolve and its updates: the receiver's
	// idempotency or deduplication key (PagerDuty's dedup_key, Opsgenie's
	// alias), so a retry after a crash never pages twice. It is at most
	// 255 bytes of printable ASCII.
	Key string
	// ID is this notification's own id, unique and stable across retries
	// (an idempotency key for a receiver whose API takes one per request).
	ID string
	// Result is the stored result the notification is about: the firing's
	// for a trigger, the recovery's for a resolve, the decided analysis's
	// for an update.
	Result openrecall.Result
	// Decision is the person's decision an update carries; nil otherwise.
	Decision *Decided
	// ReviewURL links to the analysis in the cockpit ("" when openrecall
	// has no external URL configured).
	ReviewURL string
	// Prior is what the receiver returned (Delivery.State) when it
	// delivered this episode's trigger: a Slack message's channel and ts,
	// to update that message. Nil when there is none.
	Prior map[string]string
	// At is when the notification was made (its result was stored).
	At time.Time
	// Digest is what a KindDigest notification carries, with Result
	// empty; nil for every other kind.
	Digest *Digest
}

// Decided is a person's decision about an analysis, as an update carries
// it.
type Decided struct {
	Decision openrecall.Decision
	Analyst  string
	Note     string
}

// Delivery is what a receiver keeps of a delivered notification for the
// later ones of its episode (Notification.Prior).
type Delivery struct {
	State map[string]string
}

// Receiver delivers notifications to one destination, as its documented
// API takes them. Send is safe for concurrent use. Its error is a
// *SendError when the receiver's answer says whether to retry.
type Receiver interface {
	// Name is the configured receiver's name, which routes name.
	Name() string
	// Type is the kind of destination: pagerduty, opsgenie, slack, teams,
	// alertmanager, webhook, email.
	Type() string
	Send(ctx context.Context, n Notification) (Delivery, error)
}

// SendError is a failed delivery and what to do about it: retry later
// (after RetryAfter when the receiver said, as a 429 or a 503 with
// Retry-After does), or never (Permanent: the receiver refused the
// notification itself, as a 400 with its error body does; retrying
// changes nothing). A failure that is not a *SendError (a timeout, a
// refused connection) is retried.
type SendError struct {
	// Status is the HTTP status (or SMTP reply code), 0 when there was no
	// answer.
	Status     int
	Permanent  bool
	RetryAfter time.Duration
	// Body is the start of the receiver's answer, for the person reading
	// a dead letter.
	Body string
	Err  error
}

// Error says what the receiver answered and whether it is retried.
func (e *SendError) Error() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "status %d", e.Status)
	}
	if e.Err != nil {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	if e.Body != "" {
		fmt.Fprintf(&b, " (%s)", e.Body)
	}
	if e.Permanent {
		b.WriteString("; not retried")
	}
	return b.String()
}

// Unwrap returns the underlying failure.
func (e *SendError) Unwrap() error { return e.Err }

// Secret is a credential of a receiver's configuration (a routing key, a
// token, a webhook secret): written inline, or read from a file or an
// environment variable when the configuration says file:PATH or env:NAME.
// It never prints: String and the zap/JSON renderings are "xxxxx".
type Secret struct {
	value string
}

// ParseSecret reads a secret's configuration: "env:NAME" reads the
// environment variable NAME, "file:PATH" the file at PATH (trailing
// newlines dropped), anything else is the secret itself. An empty
// variable or file is an error naming it (never the secret).
func ParseSecret(spec string) (Secret, error) {
	switch {
	case strings.HasPrefix(spec, "env:"):
		name := strings.TrimPrefix(spec, "env:")
		v := os.Getenv(name)
		if v == "" {
			return Secret{}, fmt.Errorf("secret: environment variable %s is empty or unset", name)
		}
		return Secret{value: v}, nil
	case strings.HasPrefix(spec, "file:"):
		path := strings.TrimPrefix(spec, "file:")
		b, err := os.ReadFile(path)
		if err != nil {
			return Secret{}, fmt.Errorf("secret: %w", err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return Secret{}, fmt.Errorf("secret: file %s is empty", path)
		}
		return Secret{value: v}, nil
	case spec == "":
		return Secret{}, errors.New("secret: empty")
	}
	return Secret{value: spec}, nil
}

// Reveal returns the secret itself, for the request that carries it.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether no secret is set.
func (s Secret) IsZero() bool { return s.value == "" }

// String hides the secret.
func (s Secret) String() string { return "xxxxx" }

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return "notify.Secret{xxxxx}" }

// MarshalText hides the secret from encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte("xxxxx"), nil }
