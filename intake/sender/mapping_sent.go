package sender

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file holds what a mapping needs to read a payload exactly as
// intake's own readers of its schema did (a Prometheus postable alert, a
// PagerDuty Events v2 event): a number read as intake reads a time, a
// label kept as sent, and the helpers their reject conditions use.

// maxUnixNumber is the largest number intake reads as a time.
const maxUnixNumber = 1e17

// unixNumber reads s, a number, as intake reads a time sent as a JSON
// number: unix seconds, or milliseconds when above 1e12, whatever its
// size; a number below 0 or above 1e17 (or no number) is no time.
func unixNumber(s string) (time.Time, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > maxUnixNumber {
		return time.Time{}, false
	}
	if f > 1e12 {
		return time.UnixMilli(int64(f)).UTC(), true
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}

// unixTimeOf reads a timestamp candidate with numbers: ms: a path holding
// a JSON number is read by unixNumber (the zero time when it is no time);
// ok is false for anything else, which the candidate reads as usual.
func (s *scope) unixTimeOf(src *source) (time.Time, bool) {
	if src.kind != srcPath || src.each != nil {
		return time.Time{}, false
	}
	x := s.at(src.path)
	switch x.v.(type) {
	case json.Number, float64:
		t, _ := unixNumber(x.String())
		return t, true
	}
	return time.Time{}, false
}

// readSourceSent reads a candidate's numbers and blank options:
// numbers: ms (a timestamp's JSON number read by unixNumber) and
// blank: keep (a label's value as read, not trimmed).
func (l *loader) readSourceSent(s *source, f map[string]*yaml.Node, field string) {
	if n := f["numbers"]; n != nil {
		if v, _ := l.scalar(n, fieldKey(field, "numbers")); v != "ms" {
			l.fail(n, fieldKey(field, "numbers"), "%q: want ms (a number is unix seconds, milliseconds above 1e12)", v)
		}
		s.unixMs = true
	}
	if n := f["blank"]; n != nil {
		switch v, _ := l.scalar(n, fieldKey(field, "blank")); v {
		case "keep":
		case "empty":
			s.keepEmpty = true
		default:
			l.fail(n, fieldKey(field, "blank"), "%q: want keep (the value as read, not trimmed) or empty (keep, an empty value kept too)", v)
		}
		s.keep = true
	}
}

// checkSourceSent fails a numbers option outside parts.timestamp and a
// blank option outside a label or annotation of one key.
func (l *loader) checkSourceSent(n *yaml.Node, field string, list []source, numbers, blank bool) {
	for i := range list {
		if list[i].unixMs && !numbers {
			l.fail(n, field, "numbers: ms is for a timestamp's candidates")
		}
		if list[i].keep && !blank {
			l.fail(n, field, "blank: keep is for the candidates of a label or annotation of one key")
		}
	}
}

// keptLabel sets a label of one key whose candidates keep their value
// (blank: keep): the first that applies and reads a value that is not
// empty, exactly as read (not trimmed: a value of white space is kept);
// a candidate with blank: empty that applies sets it even empty.
func (s *scope) keptLabel(r *labelRule, sent func(key, value string)) {
	for i := range r.from {
		src := &r.from[i]
		if src.when != nil && !s.truth(src.when) {
			continue
		}
		if v, _ := s.value(src); v != "" || src.keepEmpty {
			sent(r.key, v)
			return
		}
	}
}

// isUnixText is the expressions' isUnix(s): s is a number unixNumber
// reads as a time.
func isUnixText(s string) bool {
	_, ok := unixNumber(s)
	return ok
}
