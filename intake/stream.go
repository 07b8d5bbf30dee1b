package intake

import (
	"errors"
	"fmt"
	"io"

	"github.com/openrecall/openrecall"
)

// Composite streaming: the elements of a streamed array, each value
// scanned to its end by bracket depth and string quoting over whole
// buffered chunks.

// arrayCursor is the streaming state of a Reader: where it is in the array
// being streamed, a top-level array or a webhook's alerts.
type arrayCursor struct {
	index int // the next element's index
	state int // arrayOpen, arrayValue or arrayComma
	line  int // the line the array starts on
	// lined: elements of a top-level array carry its line, as it came
	// after other records (an array alone is a document whose elements are
	// positioned by index only).
	lined bool
}

// nextElement reads one element of a streamed array (a top-level array or
// a webhook's alerts), or its end.
func (r *Reader) nextElement() error {
	items := r.mode == modeItems
	pos := openrecall.Position{Source: r.opts.Source, Index: r.arr.index, HasIndex: true}
	if items {
		pos.Line = r.obj.line
	} else if r.arr.lined {
		pos.Line = r.arr.line
	}
	c, err := r.skipSpace()
	if errors.Is(err, io.EOF) {
		if items {
			r.queue = reject(r.queue, r.pos(r.obj.line), "invalid JSON: unexpected end of input: the alerts array that starts on line %d is not closed with ']'", r.arr.line)
		} else {
			r.queue = reject(r.queue, pos, "invalid JSON: unexpected end of input: the array that starts on line %d is not closed with ']'", r.arr.line)
		}
		return io.EOF
	}
	if err != nil {
		return err
	}
	switch {
	case c == ']':
		r.skipPeeked()
		if items {
			r.mode = modeObject
			return nil
		}
		r.mode = modeTop
		return r.afterArray()
	case c == ',' && r.arr.state == arrayValue:
		r.skipPeeked()
		r.arr.state = arrayComma
		return nil
	case c == ',':
		r.skipPeeked()
		r.queue = reject(r.queue, pos, "%sinvalid JSON: unexpected ',' with no element before it", r.itemPrefix(items))
		r.arr.index++
		return nil
	}
	missingComma := r.arr.state == arrayValue
	start := r.line + 1
	prefix := r.itemPrefix(items)
	raw, size, cut, err := r.scanValue(r.maxRec, -1)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	r.arr.state = arrayValue
	i := r.arr.index
	r.arr.index++
	switch {
	case cut:
		r.queue = reject(r.queue, pos, "%srecord is more than %d bytes and not closed on its last line", prefix, r.maxRec)
	case size > r.maxRec:
		r.queue = reject(r.queue, pos, "%s%s", prefix, oversize(size, r.maxRec))
	case missingComma:
		r.queue = reject(r.queue, pos, "%sinvalid JSON: missing ',' before this element", prefix)
	case items:
		r.webhookItem(raw, i)
	default:
		r.queue = r.p.value(r.queue, raw, pos, start, true)
	}
	return nil
}

// itemPrefix names an alerts[] item in a reason.
func (r *Reader) itemPrefix(items bool) string {
	if !items {
		return ""
	}
	return fmt.Sprintf("alerts[%d]: ", r.arr.index)
}

// afterArray rejects anything after a top-level array on its last line.
func (r *Reader) afterArray() error {
	trailing, err := r.restOfLine()
	if err != nil || !trailing {
		return err
	}
	r.queue = reject(r.queue, r.pos(r.line+1), "invalid JSON: unexpected characters after the end of the array that starts on line %d", r.arr.line)
	return r.discardLine()
}

// scanValue consumes one JSON value, finding its end by bracket depth and
// string quoting only; the caller validates it. It keeps at most max+1
// bytes and returns the full size. A value that does not start like JSON
// extends to the end of its line, and a string never spans lines, so
// scanning resynchronizes after garbage. An object or array is cut short
// (cut is true) after more than limit bytes when limit > 0, or, when limit
// is negative, at the first newline after more than max bytes; a limit of
// 0 never cuts.
func (r *input) scanValue(max, limit int) (raw []byte, size int, cut bool, err error) {
	r.buf = r.buf[:0]
	c, err := r.peekByte()
	if err != nil {
		return nil, 0, false, err
	}
	var step func(c byte) (take, end bool)
	switch {
	case c == '{' || c == '[':
		size, cut, err = r.scanComposite(max, limit)
		return r.buf, size, cut, err
	case c == '"':
		size, err = r.scanString(max)
		return r.buf, size, false, err
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
		step = func(c byte) (bool, bool) {
			if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '"' {
				return false, true
			}
			return true, false
		}
	default:
		// Garbage: to the end of its line or the next delimiter, but at
		// least one byte, so that reading always advances.
		first := true
		step = func(c byte) (bool, bool) {
			if c == '\n' || (!first && (c == ',' || c == '}' || c == ']')) {
				return false, true
			}
			first = false
			return true, false
		}
	}
	err = r.scan(max, &size, step)
	return r.buf, size, cut, err
}

// scan consumes bytes while step takes them, until step ends the value or
// the input ends, keeping at most max+1 of them in r.buf and counting all
// in size. It works on whole buffered chunks, not byte by byte.
func (r *input) scan(max int, size *int, step func(c byte) (take, end bool)) error {
	for {
		w, err := r.window()
		if err != nil {
			return err
		}
		i, end := 0, false
		for i < len(w) {
			take, stop := step(w[i])
			if take {
				i++
			}
			if stop {
				end = true
				break
			}
		}
		r.keep(w, i, max, size)
		if end {
			return nil
		}
	}
}

// keep consumes the first i bytes of the window w, keeping in r.buf what
// fits of them under max+1 bytes, and counts them in size.
func (r *input) keep(w []byte, i, max int, size *int) {
	*size += i
	if room := max + 1 - len(r.buf); room > 0 {
		r.buf = append(r.buf, w[:min(room, i)]...)
	}
	r.consume(i)
}

// scanComposite is scan of an object or array, as scanValue describes it:
// to its closing bracket by depth and string quoting (a string also ends
// at a newline), cut short by limit. It is the hot loop of reading a
// webhook, so it runs over whole windows without a call per byte.
func (r *input) scanComposite(max, limit int) (size int, cut bool, err error) {
	var b brackets
	n := 0
	for {
		w, err := r.window()
		if err != nil {
			return size, cut, err
		}
		i, end := 0, false
		for i < len(w) {
			c := w[i]
			n++
			if (limit > 0 && n > limit) || (limit < 0 && n > max && c == '\n') {
				cut, end = true, true
				break
			}
			i++
			if b.step(c) {
				end = true
				break
			}
		}
		r.keep(w, i, max, &size)
		if end {
			return size, cut, nil
		}
	}
}

// scanString is scan of a string, as scanValue describes it: to its
// closing quote, or up to a newline, which it leaves unread.
func (r *input) scanString(max int) (size int, err error) {
	opened, escaped := false, false
	for {
		w, err := r.window()
		if err != nil {
			return size, err
		}
		i, end := 0, false
		for i < len(w) {
			c := w[i]
			switch {
			case !opened:
				opened = true
			case c == '\n':
				end = true
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				end = true
				i++
			}
			if end {
				break
			}
			i++
		}
		r.keep(w, i, max, &size)
		if end {
			return size, nil
		}
	}
}

// incomplete reports whether line is the start of a JSON object or array
// that does not end on this line.
func incomplete(line []byte) bool {
	var b brackets
	for _, c := range line {
		if b.step(c) {
			return false
		}
	}
	return b.depth > 0
}

// brackets follows the nesting of JSON text by bracket depth and string
// quoting only (a newline ends a string, so that a broken line does not
// swallow the lines after it).
type brackets struct {
	depth             int
	inString, escaped bool
}

// step takes the next byte and reports whether it closed the outermost
// bracket.
func (b *brackets) step(c byte) (closed bool) {
	switch {
	case b.inString && b.escaped:
		b.escaped = false
	case b.inString && c == '\\':
		b.escaped = true
	case b.inString && (c == '"' || c == '\n'):
		b.inString = false
	case b.inString:
	case c == '"':
		b.inString = true
	case c == '{' || c == '[':
		b.depth++
	case c == '}' || c == ']':
		b.depth--
		return b.depth <= 0
	}
	return false
}
