package intake

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Line and byte reading: the Reader's view of its input, pushed-back
// bytes first, with line numbers tracked as bytes are consumed.

// input is the line reading state of a Reader.
type input struct {
	in        *bufio.Reader
	pending   []byte // bytes pushed back in front of in
	line      int    // newlines consumed so far
	lineStart bool   // only white space consumed since the last newline
	buf       []byte // the line or value being read
	rec       recording
}

// recording keeps the bytes of the current top-level object, for its final
// parse and to resynchronize after a broken one.
type recording struct {
	on   bool
	b    []byte // up to max+2 bytes of it
	full bool   // it outgrew b
	size int    // bytes consumed since it began
	max  int    // the record limit
}

// startRecording begins the recording of a top-level object.
func (in *input) startRecording() {
	in.rec.b, in.rec.full, in.rec.on, in.rec.size = in.rec.b[:0], false, true, 0
}

// peekAhead returns up to n upcoming bytes without consuming them.
func (r *input) peekAhead(n int) []byte {
	if len(r.pending) >= n {
		return r.pending[:n]
	}
	if r.in.Buffered() < n {
		// Only fills the buffer: a short read's error (the end, or the
		// source's, kept by stickyReader) comes back on the next read.
		_, _ = r.in.Peek(min(n, r.in.Size()))
	}
	b, _ := r.in.Peek(min(n-len(r.pending), r.in.Buffered()))
	if len(r.pending) == 0 {
		return b
	}
	return append(append([]byte(nil), r.pending...), b...)
}

// discardLine consumes the rest of the current line.
func (r *input) discardLine() error {
	for {
		w, err := r.window()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(w, '\n'); i >= 0 {
			r.consume(i + 1)
			return nil
		}
		r.consume(len(w))
	}
}

// skipSpace consumes white space and returns the next byte, unread.
func (r *input) skipSpace() (byte, error) {
	for {
		c, err := r.peekByte()
		if err != nil {
			return 0, err
		}
		if !isSpace(c) {
			return c, nil
		}
		r.skipPeeked()
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (r *input) peekByte() (byte, error) {
	if len(r.pending) > 0 {
		return r.pending[0], nil
	}
	b, err := r.in.Peek(1)
	if len(b) == 1 {
		return b[0], nil
	}
	return 0, err
}

// skipPeeked consumes the byte just returned by peekByte or skipSpace: it
// is pending or buffered, so reading it cannot fail.
func (r *input) skipPeeked() { _, _ = r.readByte() }

func (r *input) readByte() (byte, error) {
	var c byte
	if len(r.pending) > 0 {
		c = r.pending[0]
		r.pending = r.pending[1:]
	} else {
		var err error
		if c, err = r.in.ReadByte(); err != nil {
			return 0, err
		}
	}
	r.track([]byte{c})
	return c, nil
}

// track accounts for consumed bytes: line numbers, the line-start flag and
// the recording of the current object.
func (r *input) track(b []byte) {
	// IndexByte first: it is vectorized, LastIndexByte is not, and most
	// chunks (a webhook's alerts[] item) hold no newline.
	if bytes.IndexByte(b, '\n') >= 0 {
		i := bytes.LastIndexByte(b, '\n')
		r.line += bytes.Count(b, []byte{'\n'})
		r.lineStart = len(bytes.TrimLeft(b[i+1:], " \t\r")) == 0
	} else if r.lineStart && len(bytes.TrimLeft(b, " \t\r")) > 0 {
		r.lineStart = false
	}
	if rc := &r.rec; rc.on {
		rc.size += len(b)
		if !rc.full {
			if len(rc.b)+len(b) > rc.max+2 {
				rc.full = true
			} else {
				rc.b = append(rc.b, b...)
			}
		}
	}
}

// readLine reads one line without its "\n" or "\r\n". It keeps at most max
// bytes (plus a final "\r"): a longer line is consumed to its end and its
// size reported, but not buffered. nl reports whether a newline ended it.
func (r *input) readLine(max int) (line []byte, size int, nl bool, err error) {
	r.buf = r.buf[:0]
	var last byte
	for {
		w, err := r.window()
		if errors.Is(err, io.EOF) {
			if size == 0 {
				return nil, 0, false, io.EOF
			}
			break
		}
		if err != nil {
			return nil, 0, false, err
		}
		i := bytes.IndexByte(w, '\n')
		frag := w
		if i >= 0 {
			frag = w[:i]
		}
		size += len(frag)
		if len(frag) > 0 {
			last = frag[len(frag)-1]
		}
		if room := max + 2 - len(r.buf); room > 0 {
			r.buf = append(r.buf, frag[:min(room, len(frag))]...)
		}
		if i >= 0 {
			r.consume(i + 1)
			nl = true
			break
		}
		r.consume(len(w))
	}
	if last == '\r' {
		size--
	}
	if size <= max {
		return r.buf[:size], size, nl, nil
	}
	return nil, size, nl, nil
}

// window returns the bytes available without a read, reading when there
// are none. They stay valid until the next read.
func (r *input) window() ([]byte, error) {
	if len(r.pending) > 0 {
		return r.pending, nil
	}
	if r.in.Buffered() == 0 {
		if _, err := r.in.Peek(1); err != nil {
			return nil, err
		}
	}
	return r.in.Peek(r.in.Buffered())
}

// consume advances past the first n bytes of the window.
func (r *input) consume(n int) {
	if n == 0 {
		return
	}
	if len(r.pending) > 0 {
		r.track(r.pending[:n])
		r.pending = r.pending[n:]
		return
	}
	w, _ := r.in.Peek(n)
	r.track(w)
	_, _ = r.in.Discard(n) // n bytes of the window, buffered: it cannot fail
}
