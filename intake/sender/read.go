package sender

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// maxEnvelopes bounds how many envelopes Read opens, one inside another.
const maxEnvelopes = 3

// Detect returns the first adapter of senders (built-in senders skipped)
// whose Match accepts v, and whether there is one.
func Detect(senders []Sender, v Value) (Sender, bool) {
	for _, s := range senders {
		if !s.Builtin && s.Match != nil && s.Match(v) {
			return s, true
		}
	}
	return Sender{}, false
}

// ErrNoSender says that no adapter recognises a payload.
var ErrNoSender = errors.New("no sender recognises the payload")

// Read recognises v among senders and reads its events, opening envelopes
// on the way: the sender returned is the one whose Map read the events.
// It returns ErrNoSender when no adapter recognises v (or what an envelope
// carries: then the envelope itself is read).
func Read(senders []Sender, v Value) (Sender, []Event, error) {
	s, ok := Detect(senders, v)
	if !ok {
		return Sender{}, nil, ErrNoSender
	}
	return readAs(senders, s, v, v, 0)
}

// ReadAs reads v as the payload of s, whether or not s.Match accepts it
// (the sender was named: POST /api/v1/alerts/{sender}, --format).
func ReadAs(senders []Sender, s Sender, v Value) (Sender, []Event, error) {
	if s.Map == nil {
		return s, nil, fmt.Errorf("%s is read by intake itself", s.Name)
	}
	return readAs(senders, s, v, v, 0)
}

// readAs reads v, the payload top carries (top itself, or inside its
// envelopes), as s's; each event's PayloadID hashes top, all that was sent.
func readAs(senders []Sender, s Sender, top, v Value, depth int) (Sender, []Event, error) {
	if s.Open != nil && depth < maxEnvelopes {
		if inner, ok := s.Open(v); ok {
			if is, found := Detect(senders, inner); found {
				return readAs(senders, is, top, inner, depth+1)
			}
		}
	}
	events, err := s.Map(v)
	for i := range events {
		events[i].PayloadID = PayloadID(s.Name, top, i)
	}
	return s, events, err
}

// PayloadID is "h-" and the first 16 hex digits of SHA-256 over a sender's
// name, an event's index in its payload and the payload v as canonical
// JSON (members sorted, numbers as sent): the id of an event whose sender
// gave none. It reads everything the payload carries — not only what a
// mapping takes from it — so two payloads that differ anywhere get
// different ids, and a redelivery of one (its members in any order) the
// same.
func PayloadID(name string, v Value, index int) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(name))))
	h.Write([]byte{':'})
	h.Write([]byte(name))
	h.Write([]byte(strconv.Itoa(index)))
	h.Write([]byte{':'})
	if err := json.NewEncoder(h).Encode(v.v); err != nil {
		// A Value holds what encoding/json decoded, which it encodes;
		// anything else is hashed as Go prints it.
		fmt.Fprintf(h, "%#v", v.v)
	}
	sum := h.Sum(nil)
	return "h-" + hex.EncodeToString(sum[:8])
}
