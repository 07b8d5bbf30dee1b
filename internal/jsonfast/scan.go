package jsonfast

import "strconv"

// Scanner reads JSON text token by token from S, at I, for the one-pass
// decoders of intake's alerts[] items and the quality gate's answers. Each
// method consumes what it reads and reports whether it was there; on a
// false return the position is meaningless, and a decoder gives up (to
// encoding/json), so the Scanner only has to accept nothing that
// encoding/json refuses. It checks strings as ScanString does and numbers
// by the JSON grammar. A Scanner is not safe for concurrent use.
type Scanner[T text] struct {
	S T
	I int
}

// Space consumes white space.
func (d *Scanner[T]) Space() {
	for d.I < len(d.S) {
		switch d.S[d.I] {
		case ' ', '\t', '\n', '\r':
			d.I++
		default:
			return
		}
	}
}

// Eat consumes c if it comes next.
func (d *Scanner[T]) Eat(c byte) bool {
	if d.I < len(d.S) && d.S[d.I] == c {
		d.I++
		return true
	}
	return false
}

// End consumes white space and reports whether nothing is left.
func (d *Scanner[T]) End() bool {
	d.Space()
	return d.I == len(d.S)
}

// Literal consumes word if it comes next.
func (d *Scanner[T]) Literal(word string) bool {
	if len(d.S)-d.I < len(word) {
		return false
	}
	for k := range len(word) {
		if d.S[d.I+k] != word[k] {
			return false
		}
	}
	d.I += len(word)
	return true
}

// Token consumes a string token as ScanString reads it and returns where it
// starts: the token is S[start:I], and when plain its value is
// S[start+1:I-1].
func (d *Scanner[T]) Token() (start int, plain, ok bool) {
	start = d.I
	d.I, plain, ok = ScanString(d.S, d.I)
	return start, plain, ok
}

// Bool consumes true or false.
func (d *Scanner[T]) Bool() (v, ok bool) {
	switch {
	case d.Literal("true"):
		return true, true
	case d.Literal("false"):
		return false, true
	}
	return false, false
}

// SkipScalar consumes a string, true, false or null; anything else is not
// consumed and gives false.
func (d *Scanner[T]) SkipScalar() bool {
	if d.I < len(d.S) && d.S[d.I] == '"' {
		_, _, ok := d.Token()
		return ok
	}
	return d.Literal("null") || d.Literal("true") || d.Literal("false")
}

// SkipValue consumes one JSON value: a string, literal or number, or an
// object or array with everything in it.
func (d *Scanner[T]) SkipValue() bool {
	if d.I >= len(d.S) {
		return false
	}
	switch c := d.S[d.I]; {
	case c == '{' || c == '[':
		empty, ok := d.Open(c)
		if !ok || empty {
			return ok
		}
		for {
			if c == '{' {
				if _, _, ok := d.Token(); !ok || !d.Colon() {
					return false
				}
			}
			if !d.SkipValue() {
				return false
			}
			more, ok := d.Next(c + 2)
			if !ok || !more {
				return ok
			}
		}
	case c == '-' || '0' <= c && c <= '9':
		_, ok := d.Number()
		return ok
	}
	return d.SkipScalar()
}

// Number consumes a JSON number that a float64 holds.
func (d *Scanner[T]) Number() (float64, bool) {
	start := d.I
	d.Eat('-')
	switch {
	case d.Eat('0'):
	case d.I < len(d.S) && '1' <= d.S[d.I] && d.S[d.I] <= '9':
		d.digits()
	default:
		return 0, false
	}
	if d.Eat('.') && d.digits() == 0 {
		return 0, false
	}
	if d.I < len(d.S) && (d.S[d.I] == 'e' || d.S[d.I] == 'E') {
		d.I++
		if !d.Eat('+') {
			d.Eat('-')
		}
		if d.digits() == 0 {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(d.S[start:d.I]), 64)
	return f, err == nil
}

func (d *Scanner[T]) digits() int {
	n := 0
	for d.I < len(d.S) && '0' <= d.S[d.I] && d.S[d.I] <= '9' {
		d.I++
		n++
	}
	return n
}

// Open consumes open ('{' or '['), white space, and the matching close if
// it comes next (empty). The members or elements of a non-empty object or
// array are then read one by one, each followed by Next.
func (d *Scanner[T]) Open(open byte) (empty, ok bool) {
	if d.I >= len(d.S) || d.S[d.I] != open {
		return false, false
	}
	d.I++
	d.Space()
	if d.I < len(d.S) && d.S[d.I] == open+2 { // '{'+2 is '}', '['+2 is ']'
		d.I++
		return true, true
	}
	return false, true
}

// Colon consumes the ':' after a member's name and the white space around
// it.
func (d *Scanner[T]) Colon() bool {
	d.Space()
	ok := d.I < len(d.S) && d.S[d.I] == ':'
	d.I++ // past the end when not ok: the position is then meaningless
	d.Space()
	return ok
}

// Next consumes what follows a member or element, with the white space
// around it: ',' (more), or close, which ends the object or array.
func (d *Scanner[T]) Next(close byte) (more, ok bool) {
	d.Space()
	var c byte // 0, which no close is, at the end of the text
	if d.I < len(d.S) {
		c = d.S[d.I]
	}
	d.I++ // past the end when not ok: the position is then meaningless
	d.Space()
	return c == ',', c == ',' || c == close
}
