package openrecall

import (
	"errors"
	"fmt"
	"time"
)

// The kinds of notification an intent asks for: the words of notify's
// kinds (notify.KindTrigger, KindResolve, KindUpdate, and KindDigest for
// IntentDigest, digest.go), which say what each means to a receiver.
const (
	IntentTrigger = "trigger"
	IntentResolve = "resolve"
	IntentUpdate  = "update"
)

// The states of an intent in the outbox (DESIGN §12b).
const (
	// IntentPending: not delivered yet; claimed and tried, or waiting for
	// its next try (NextAt).
	IntentPending = "pending"
	// IntentSent: the receiver took it.
	IntentSent = "sent"
	// IntentDead: a dead letter: the dispatcher gave up on it (the
	// receiver refused it, or it outlived its maximum age). It is kept,
	// listed and retried by a person.
	IntentDead = "dead"
)

// MaxIntentKey is the longest key of an intent, in bytes: the longest
// deduplication key the receivers' APIs take (PagerDuty's dedup_key).
const MaxIntentKey = 255

// ErrLeaseLost marks the outcome of a delivery (sent, failed, dead)
// reported by a process that no longer holds its claim: its lease passed
// and another process took the intent over, or the intent was never
// claimed by it. Nothing was written; the holder reports the outcome.
var ErrLeaseLost = errors.New("lease lost to another process")

// Intent is one receiver's notification about one stored result: what a
// route decided the receiver hears of (DESIGN §12b). It is written with the
// result, in the same transaction, and delivered by the outbox's
// dispatcher.
type Intent struct {
	// Receiver is the configured receiver's name.
	Receiver string `json:"receiver"`
	// Kind is IntentTrigger, IntentResolve, IntentUpdate or IntentDigest.
	Kind string `json:"kind"`
	// Key names the alert episode across its notifications to the
	// receiver (notify.Notification.Key): the receiver's deduplication
	// key. An episode (receiver and key) is delivered in the order its
	// intents were written.
	Key string `json:"key"`
}

// Validate checks an intent: a receiver, a known kind, and a key of 1 to
// MaxIntentKey bytes of printable ASCII. Errors wrap ErrInvalid.
func (i Intent) Validate() error {
	switch {
	case i.Receiver == "":
		return fmt.Errorf("intent: no receiver: %w", ErrInvalid)
	case i.Kind != IntentTrigger && i.Kind != IntentResolve && i.Kind != IntentUpdate && i.Kind != IntentDigest:
		return fmt.Errorf("intent for %s: kind %q is not trigger, resolve, update or digest: %w", i.Receiver, i.Kind, ErrInvalid)
	case i.Key == "" || len(i.Key) > MaxIntentKey:
		return fmt.Errorf("intent for %s: a key of %d bytes, want 1 to %d: %w", i.Receiver, len(i.Key), MaxIntentKey, ErrInvalid)
	}
	for j := 0; j < len(i.Key); j++ {
		if c := i.Key[j]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("intent for %s: the key has byte %#x at %d, want printable ASCII: %w", i.Receiver, c, j, ErrInvalid)
		}
	}
	return nil
}

// OutboxIntent is an intent as the outbox keeps it: the result it is about,
// its delivery so far and, once claimed, what its dispatcher needs.
type OutboxIntent struct {
	// ID orders intents by creation; ids only grow.
	ID int64 `json:"id"`
	// AnalysisID names the stored result the intent is about.
	AnalysisID string `json:"analysis_id"`
	Intent
	// State is IntentPending, IntentSent or IntentDead.
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	// Since is when its tries began: CreatedAt, or when a person last
	// retried it by hand. The maximum age counts from it.
	Since time.Time `json:"since"`
	// Attempts counts its claims: the tries begun.
	Attempts int `json:"attempts"`
	// NextAt is the time before which it is not tried again.
	NextAt time.Time `json:"next_at"`
	// LastError is the start of the receiver's last answer that was not
	// a delivery ("" before any).
	LastError string    `json:"last_error,omitempty"`
	SentAt    time.Time `json:"sent_at,omitzero"`
	DeadAt    time.Time `json:"dead_at,omitzero"`
	// Delivery is what the receiver returned when it took the intent
	// (notify.Delivery.State), nil when nothing.
	Delivery map[string]string `json:"delivery,omitempty"`
	// Prior is, for a claimed intent, the Delivery of the latest intent of
	// its episode sent before it with one (notify.Notification.Prior):
	// a Slack message's channel and ts for its resolve. Nil otherwise.
	Prior map[string]string `json:"prior,omitempty"`
	// LeaseUntil is when the claim that holds it passes (zero when
	// none holds it): a send must end before.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// IntentFilter selects intents of the outbox. Empty fields select all.
type IntentFilter struct {
	// State is IntentPending, IntentSent or IntentDead.
	State      string
	Receiver   string
	AnalysisID string
	// Limit caps the answer (0: no cap).
	Limit int
}

// OutboxCounts counts the intents not delivered yet, for metrics.
type OutboxCounts struct {
	Pending, Dead int
	// OldestPending is when the oldest pending intent was written (zero
	// when none is pending).
	OldestPending time.Time
	// ByReceiver counts them per receiver (receivers with none are
	// absent).
	ByReceiver map[string]ReceiverCounts
}

// ReceiverCounts counts one receiver's intents not delivered yet.
type ReceiverCounts struct {
	Pending, Dead int
}
