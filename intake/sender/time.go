package sender

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are the ISO 8601 and RFC forms senders write, tried in order
// after the fast RFC 3339 parse: a zone as Z, ±hh:mm, ±hhmm or ±hh, a space
// or T between date and time, fractional seconds of any length, no zone at
// all (read as UTC), the date alone, and RFC 1123 and its relatives.
var timeLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999 Z0700",
	"2006-01-02 15:04:05.999999999 Z07:00",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04:05.999999999",
	"2006.01.02 15:04:05",
	"2006-01-02",
	time.RFC1123Z,
	time.RFC1123,
	time.RFC850,
	time.ANSIC,
	time.UnixDate,
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Jan 2, 2006 15:04:05 MST",
	"January 2, 2006 3:04 PM MST",
	"January 2, 2006 3:04 PM",
}

// errTime says a text is no time ParseTime reads.
var errTime = errors.New("not an ISO 8601 time or unix seconds")

// ParseTime reads a time the way senders write one: ISO 8601 in the forms
// they use (RFC 3339; "+0000" and "+00" zones; fractional seconds of any
// length; a space for the T; no zone, read as UTC), RFC 1123, or unix
// seconds (milliseconds above 1e12, microseconds above 1e15, nanoseconds
// above 1e18) as a number or a string. Blank text and Go's zero time are the
// zero time; anything else is an error. The result is in UTC.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if c := s[0]; c >= '0' && c <= '9' && !strings.ContainsAny(s, "-:/ ") || c == '-' && !strings.ContainsAny(s[1:], "-:/ ") {
		return unix(s)
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() <= 1 {
				return time.Time{}, nil
			}
			return t.UTC(), nil
		}
	}
	// A comma before the fraction ("2024-01-02T10:00:00,5Z") is ISO 8601 too.
	if i := strings.IndexByte(s, ','); i > 0 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
		return ParseTime(s[:i] + "." + s[i+1:])
	}
	return time.Time{}, errTime
}

// unix reads s as unix seconds, or milli-, micro- or nanoseconds by its
// size.
func unix(s string) (time.Time, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e20 {
		return time.Time{}, errTime
	}
	switch {
	case f > 1e18:
		return time.Unix(0, int64(f)).UTC(), nil
	case f > 1e15:
		return time.UnixMicro(int64(f)).UTC(), nil
	case f > 1e12:
		return time.UnixMilli(int64(f)).UTC(), nil
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}
