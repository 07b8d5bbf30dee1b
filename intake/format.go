package intake

import (
	"fmt"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// Format is an input format, as named on the command line (--format).
type Format string

// Input formats. FormatAuto detects the format per file and, in JSON Lines,
// per line.
const (
	FormatAuto         Format = "auto"
	FormatJSONL        Format = "jsonl"
	FormatJSON         Format = "json"
	FormatAlertmanager Format = "alertmanager"
	FormatPrometheus   Format = "prometheus"
	FormatPagerDuty    Format = "pagerduty"
	FormatText         Format = "text"
)

// Formats returns every format ParseFormat accepts, in a new slice.
func Formats() []Format {
	return []Format{FormatAuto, FormatJSONL, FormatJSON, FormatAlertmanager, FormatPrometheus, FormatPagerDuty, FormatText}
}

// SenderFormats returns the names of the built-in sender adapters, which
// --format also takes: the payload is then read as that sender's.
func SenderFormats() []string { return SenderFormatsIn(sender.Set{}) }

// SenderFormatsIn returns the names of the senders of a set that --format
// takes: every sender but those intake's own reader reads (the zero Set:
// the built-ins).
func SenderFormatsIn(senders sender.Set) []string {
	var out []string
	for _, s := range senders.Senders() {
		if !s.Builtin {
			out = append(out, s.Name)
		}
	}
	return out
}

// SenderFormat returns the format that reads the payloads of the sender of
// a name (case-insensitive) in senders, and whether there is one: the
// sender's own name for an adapter or a mapping (an override of a built-in
// included), the shape of intake's own reader for a built-in it reads,
// FormatAuto for the product's own alert object.
func SenderFormat(senders sender.Set, name string) (Format, bool) {
	sd, ok := senders.Lookup(name)
	switch {
	case !ok:
		return "", false
	case !sd.Builtin:
		return Format(sd.Name), true
	case sd.Name == "alertmanager", sd.Name == "grafana":
		return FormatAlertmanager, true
	case sd.Name == "prometheus":
		return FormatPrometheus, true
	case sd.Name == "pagerduty":
		return FormatPagerDuty, true
	}
	return FormatAuto, true
}

// Default limits.
const (
	// DefaultMaxRecordBytes bounds one record: a line, an array element, one
	// alerts[] item of a webhook, or an object that is not a webhook.
	DefaultMaxRecordBytes = 1 << 20
	// DefaultMaxDocumentBytes was the bound of a whole JSON document read at
	// once.
	//
	// Deprecated: webhooks and arrays are streamed item by item, so only
	// the record limit bounds memory.
	DefaultMaxDocumentBytes = 64 << 20
)

// ParseFormat returns s as a Format; "" means FormatAuto. Case and
// surrounding space are ignored. An unknown name is an error wrapping
// openrecall.ErrInvalid. It knows the built-in senders; ParseFormatIn
// knows a set's.
func ParseFormat(s string) (Format, error) { return ParseFormatIn(s, sender.Set{}) }

// ParseFormatIn is ParseFormat for the senders of a set: it also takes
// the name of a sender the set adds or overrides.
func ParseFormatIn(s string, senders sender.Set) (Format, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return FormatAuto, nil
	}
	formats := Formats()
	for _, f := range formats {
		if string(f) == s {
			return f, nil
		}
	}
	if sd, ok := senders.Lookup(s); ok && !sd.Builtin {
		return Format(sd.Name), nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("format %q is not one of %s or a sender (%s): %w", s, strings.Join(names, ", "), strings.Join(SenderFormatsIn(senders), ", "), openrecall.ErrInvalid)
}

// Options configures a Reader. The zero value detects the format and uses
// the default limits.
type Options struct {
	// Format forces a format; FormatAuto when empty. Validate names from
	// users with ParseFormat: an unknown Format reads like FormatJSON.
	Format Format
	// MaxRecordBytes bounds one record (line, array element, alerts[] item);
	// 0 means DefaultMaxRecordBytes. A longer record is rejected without
	// being buffered and reading continues.
	MaxRecordBytes int
	// MaxDocumentBytes is ignored.
	//
	// Deprecated: webhooks and arrays of any size are streamed item by
	// item; only MaxRecordBytes bounds memory.
	MaxDocumentBytes int
	// Source names the input in positions (a file name or "-"); may be empty.
	Source string
	// Senders are the senders that read payloads, in detection order, and
	// that Format may name; the zero Set is the built-in senders.
	Senders sender.Set
	// Explain keeps, in each alert's Record, the severity as the payload
	// gave it (Record.SentSeverity), for explanations (openrecall senders
	// test).
	Explain bool
}

// RecordError is a rejected record: where it was and why.
type RecordError struct {
	Position openrecall.Position
	// Reason is for a person, such as "invalid JSON: unexpected character
	// 'o' at byte 2" or "alerts[3]: labels must be an object".
	Reason string
}

// Error returns the position and the reason, such as
// "line 1: invalid JSON: unexpected character 'o' at byte 2".
func (e *RecordError) Error() string { return e.Position.String() + ": " + e.Reason }

// Record is one result of reading: a normalized alert, or, when Err is not
// nil, a rejected record. Exactly one of them is meaningful.
type Record struct {
	Alert openrecall.Alert
	Err   *RecordError
	// Received, when not zero, is when the record arrived (the server's
	// inbox): an alert without its own time is grouped on it (DESIGN §6a).
	Received time.Time
	// SentSeverity is the alert's severity as the payload gave it, before
	// it was normalized (Alert.Severity); set only with Options.Explain.
	SentSeverity string
}

// Position returns where the record was in its input, rejected or not.
func (r Record) Position() openrecall.Position {
	if r.Err != nil {
		return r.Err.Position
	}
	return r.Alert.Position
}
