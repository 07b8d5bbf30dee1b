package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultRoutingKeyWithin is how far into a PagerDuty Events v2 event a
// receiver looks for its routing_key before it has read anything else: 64
// KiB, far more than the envelope PagerDuty's clients write before the
// payload (routing_key comes first), far less than a body may be.
const DefaultRoutingKeyWithin = 64 << 10

// ErrNoRoutingKey is an event without a string routing_key among its
// top-level members within the bytes RoutingKey may read.
var ErrNoRoutingKey = errors.New("no routing_key")

// RoutingKey reads a PagerDuty Events v2 event from r token by token until
// its top-level routing_key, and returns the key and the bytes of r it read.
// It reads at most within bytes of r, whatever the event holds: a caller
// that checks the key before reading the rest (the event is the bytes read
// followed by what r still holds) never holds more than within bytes of an
// event it refuses. The first routing_key counts; a member named otherwise
// (another case included) is skipped without being kept. An event that is
// not a JSON object, or has no routing_key within the bound, is an error
// wrapping ErrNoRoutingKey.
func RoutingKey(r io.Reader, within int64) (string, []byte, error) {
	var read bytes.Buffer
	dec := json.NewDecoder(io.TeeReader(io.LimitReader(r, within), &read))
	fail := func(why string) (string, []byte, error) {
		return "", read.Bytes(), fmt.Errorf("%w in the first %d bytes of the event: %s", ErrNoRoutingKey, within, why)
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(tokenErr(err))
	}
	if tok != json.Delim('{') {
		return fail("the event is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(tokenErr(err))
		}
		if tok == "routing_key" {
			v, err := dec.Token()
			if err != nil {
				return fail(tokenErr(err))
			}
			key, ok := v.(string)
			if !ok {
				return fail("routing_key is not a string")
			}
			return key, read.Bytes(), nil
		}
		if err := skipValue(dec); err != nil {
			return fail(tokenErr(err))
		}
	}
	return fail("the event has none")
}

// skipValue reads one JSON value from dec, token by token, keeping none of
// it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// tokenErr words a decoder error: the end of the bytes allowed is "not
// found there", anything else invalid JSON.
func tokenErr(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "not found before the end"
	}
	return "invalid JSON: " + err.Error()
}
