package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/openrecall/openrecall"
)

// mode is what the Reader is reading now.
type mode int

const (
	modeDetect mode = iota // nothing read yet
	modeLines              // JSON Lines or plain text, line by line
	modeDocs               // a sequence of JSON documents, arrays streamed
	modeArray              // inside a streamed top-level array
	modeDone               // end of input
)

// array parser states.
const (
	arrayOpen  = iota // after '[': a value or ']'
	arrayValue        // after a value: ',' or ']'
	arrayComma        // after ',': a value
)

// Reader reads records from a stream. It buffers at most one record (or one
// bounded document) and the records of one webhook, whatever the length of
// the stream. A Reader is not safe for concurrent use.
type Reader struct {
	in      *bufio.Reader
	pending []byte // bytes pushed back in front of in
	line    int    // newlines consumed so far
	opts    Options
	maxRec  int
	maxDoc  int
	mode    mode
	text    bool // modeLines: plain text rather than JSON Lines
	p       parser
	queue   []Record // records of the last value read, from next on
	next    int
	err     error // sticky I/O error
	buf     []byte

	arrayIndex int
	arrayState int
	arrayLine  int
	forceDocs  bool
}

// NewReader returns a Reader of r with opts.
func NewReader(r io.Reader, opts Options) *Reader {
	if opts.Format == "" {
		opts.Format = FormatAuto
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if opts.MaxDocumentBytes <= 0 {
		opts.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	if opts.MaxDocumentBytes < opts.MaxRecordBytes {
		opts.MaxDocumentBytes = opts.MaxRecordBytes
	}
	rd := &Reader{
		in:     bufio.NewReaderSize(r, 64<<10),
		opts:   opts,
		maxRec: opts.MaxRecordBytes,
		maxDoc: opts.MaxDocumentBytes,
		p:      parser{container: FormatJSONL, maxRecord: opts.MaxRecordBytes, source: opts.Source},
	}
	switch opts.Format {
	case FormatAlertmanager, FormatPrometheus, FormatPagerDuty:
		rd.p.shape = opts.Format
	}
	return rd
}

// ParseBytes reads every record of body, a whole request body or file. A
// body that is one JSON object on one line is read as one document, so a
// compact webhook is bounded by MaxDocumentBytes rather than
// MaxRecordBytes. The error is nil unless the options are unusable.
func ParseBytes(body []byte, opts Options) ([]Record, error) {
	if opts.Format != "" {
		if _, err := ParseFormat(string(opts.Format)); err != nil {
			return nil, err
		}
	}
	r := NewReader(bytes.NewReader(body), opts)
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte(bom)))
	if len(trimmed) > 0 && trimmed[0] == '{' && !bytes.ContainsRune(trimmed, '\n') && len(trimmed) <= r.maxDoc &&
		r.opts.Format != FormatJSONL && r.opts.Format != FormatText {
		r.forceDocs = true
	}
	var out []Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// bom is the UTF-8 byte order mark, skipped at the start of the input.
const bom = "\xEF\xBB\xBF"

// Next returns the next record: an alert, or a rejected record with Err
// set. It returns io.EOF at the end of the input, and another error only
// when reading the underlying reader fails; bad input is never an error.
func (r *Reader) Next() (Record, error) {
	for {
		if r.next < len(r.queue) {
			rec := r.queue[r.next]
			r.queue[r.next] = Record{}
			r.next++
			return rec, nil
		}
		r.queue, r.next = r.queue[:0], 0
		if r.err != nil {
			return Record{}, r.err
		}
		var err error
		switch r.mode {
		case modeDetect:
			err = r.detect()
		case modeLines:
			err = r.nextLine()
		case modeDocs:
			err = r.nextDoc()
		case modeArray:
			err = r.nextElement()
		default:
			err = io.EOF
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.mode = modeDone
				if r.next < len(r.queue) {
					continue
				}
				return Record{}, io.EOF
			}
			r.err = fmt.Errorf("read alerts: %w", err)
			if r.next < len(r.queue) {
				continue
			}
			return Record{}, r.err
		}
	}
}

// pos is a line position.
func (r *Reader) pos(line int) openrecall.Position {
	return openrecall.Position{Source: r.opts.Source, Line: line}
}

// detect skips a byte order mark and leading space, then chooses how to
// read the stream.
func (r *Reader) detect() error {
	if b, err := r.in.Peek(3); err == nil && string(b) == bom {
		_, _ = r.in.Discard(3) // bytes peeked above: it cannot fail
	}
	switch r.opts.Format {
	case FormatText:
		r.mode, r.text = modeLines, true
		return nil
	case FormatJSONL:
		r.mode = modeLines
		return nil
	}
	c, err := r.skipSpace()
	if err != nil {
		return err
	}
	if r.forceDocs || c == '[' {
		r.mode, r.p.container = modeDocs, FormatJSON
		return nil
	}
	if c != '{' {
		r.mode = modeLines
		r.text = c != '"' && r.opts.Format == FormatAuto
		return nil
	}
	// An object: JSON Lines if its first line is a whole value, else a
	// sequence of (pretty-printed) documents.
	start := r.line + 1
	line, size, nl, err := r.readLine(r.maxRec)
	if err != nil {
		return err
	}
	r.mode = modeLines
	if size <= r.maxRec && incomplete(line) {
		r.mode, r.p.container = modeDocs, FormatJSON
		r.pending = append(append([]byte(nil), line...), '\n')
		if nl {
			r.line--
		}
		return nil
	}
	r.lineRecord(line, size, start)
	return nil
}

// skipSpace consumes white space and returns the next byte, unread.
func (r *Reader) skipSpace() (byte, error) {
	for {
		c, err := r.peekByte()
		if err != nil {
			return 0, err
		}
		if !isSpace(c) {
			return c, nil
		}
		_, _ = r.readByte() // a byte peeked above: it cannot fail
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (r *Reader) peekByte() (byte, error) {
	if len(r.pending) > 0 {
		return r.pending[0], nil
	}
	b, err := r.in.Peek(1)
	if len(b) == 1 {
		return b[0], nil
	}
	return 0, err
}

func (r *Reader) readByte() (byte, error) {
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
	if c == '\n' {
		r.line++
	}
	return c, nil
}

// readLine reads one line without its "\n" or "\r\n". It keeps at most max
// bytes (plus a final "\r"): a longer line is consumed to its end and its
// size reported, but not buffered. nl reports whether a newline ended it.
func (r *Reader) readLine(max int) (line []byte, size int, nl bool, err error) {
	r.buf = r.buf[:0]
	var last [2]byte // the last two bytes read, for a final "\r"
	for {
		frag, err := r.in.ReadSlice('\n')
		size += len(frag)
		if len(r.buf)+len(frag) <= max+2 {
			r.buf = append(r.buf, frag...)
		}
		switch len(frag) {
		case 0:
		case 1:
			last[0], last[1] = last[1], frag[0]
		default:
			last[0], last[1] = frag[len(frag)-2], frag[len(frag)-1]
		}
		switch {
		case err == nil:
			r.line++
			size--
			if last[0] == '\r' {
				size--
			}
			if size <= max {
				return r.buf[:size], size, true, nil
			}
			return nil, size, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if size == 0 {
				return nil, 0, false, io.EOF
			}
			if last[1] == '\r' {
				size--
			}
			if size <= max {
				return r.buf[:size], size, false, nil
			}
			return nil, size, false, nil
		default:
			return nil, 0, false, err
		}
	}
}

// nextLine reads one line of JSON Lines or plain text.
func (r *Reader) nextLine() error {
	start := r.line + 1
	line, size, _, err := r.readLine(r.maxRec)
	if err != nil {
		return err
	}
	r.lineRecord(line, size, start)
	return nil
}

// lineRecord queues the records of one line.
func (r *Reader) lineRecord(line []byte, size, n int) {
	if n == 1 {
		line = bytes.TrimPrefix(line, []byte(bom))
	}
	if size > r.maxRec {
		r.queue = reject(r.queue, r.pos(n), "%s", oversize(size, r.maxRec))
		return
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if r.text {
		a, err := textAlert(string(line))
		if err != nil {
			return
		}
		a.Position = r.pos(n)
		r.queue = append(r.queue, Record{Alert: a})
		return
	}
	r.queue = r.p.value(r.queue, line, r.pos(n), n, false)
}

// nextDoc reads one JSON document of a sequence; an array is streamed
// element by element.
func (r *Reader) nextDoc() error {
	c, err := r.skipSpace()
	if err != nil {
		return err
	}
	start := r.line + 1
	if c == '[' {
		_, _ = r.readByte() // a byte peeked above: it cannot fail
		r.mode, r.arrayIndex, r.arrayState, r.arrayLine = modeArray, 0, arrayOpen, start
		return nil
	}
	raw, size, err := r.scanValue(r.maxDoc)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	pos := r.pos(start)
	switch {
	case size > r.maxDoc:
		r.queue = reject(r.queue, pos, "document is %d bytes, over the limit of %d bytes", size, r.maxDoc)
	case size > r.maxRec && !isWebhook(raw):
		r.queue = reject(r.queue, pos, "%s", oversize(size, r.maxRec))
	default:
		if !json.Valid(raw) {
			raw = r.resync(raw)
		}
		r.queue = r.p.value(r.queue, raw, pos, start, false)
	}
	return nil
}

// resync cuts an invalid document short at the first later line that
// starts, in its first column, with '{' or '[', and pushes the rest
// back to be read again. So a broken first line of a JSON Lines queue, or a
// broken pretty-printed document, costs one rejected record rather than
// every record after it. It returns the part that stays rejected.
func (r *Reader) resync(raw []byte) []byte {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\n' {
			continue
		}
		if c := raw[i+1]; c == '{' || c == '[' {
			rest := raw[i+1:]
			r.pending = append(append(make([]byte, 0, len(rest)+len(r.pending)), rest...), r.pending...)
			r.line -= bytes.Count(rest, []byte{'\n'})
			return raw[:i]
		}
	}
	return raw
}

// nextElement reads one element of a streamed array, or its end.
func (r *Reader) nextElement() error {
	pos := openrecall.Position{Source: r.opts.Source, Index: r.arrayIndex, HasIndex: true}
	c, err := r.skipSpace()
	if errors.Is(err, io.EOF) {
		r.queue = reject(r.queue, pos, "invalid JSON: unexpected end of input: the array that starts on line %d is not closed with ']'", r.arrayLine)
		return io.EOF
	}
	if err != nil {
		return err
	}
	switch {
	case c == ']':
		_, _ = r.readByte() // a byte peeked above: it cannot fail
		r.mode = modeDocs
		return nil
	case c == ',' && r.arrayState == arrayValue:
		_, _ = r.readByte() // a byte peeked above: it cannot fail
		r.arrayState = arrayComma
		return nil
	case c == ',':
		_, _ = r.readByte() // a byte peeked above: it cannot fail
		r.queue = reject(r.queue, pos, "invalid JSON: unexpected ',' with no element before it")
		r.arrayIndex++
		return nil
	}
	missingComma := r.arrayState == arrayValue
	start := r.line + 1
	raw, size, err := r.scanValue(r.maxRec)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	r.arrayState = arrayValue
	r.arrayIndex++
	switch {
	case size > r.maxRec:
		r.queue = reject(r.queue, pos, "%s", oversize(size, r.maxRec))
	case missingComma:
		r.queue = reject(r.queue, pos, "invalid JSON: missing ',' before this element")
	default:
		r.queue = r.p.value(r.queue, raw, pos, start, true)
	}
	return nil
}

// scanValue consumes one JSON value, finding its end by bracket depth and
// string quoting only; the caller validates it. It keeps at most max+1
// bytes and returns the full size. A value that does not start like JSON
// extends to the end of its line, and a string never spans lines, so
// scanning resynchronizes after garbage.
func (r *Reader) scanValue(max int) (raw []byte, size int, err error) {
	r.buf = r.buf[:0]
	c, err := r.peekByte()
	if err != nil {
		return nil, 0, err
	}
	var step func(c byte) (take, end bool)
	switch {
	case c == '{' || c == '[':
		depth, inString, escaped := 0, false, false
		step = func(c byte) (bool, bool) {
			switch {
			case inString && escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case inString && (c == '"' || c == '\n'):
				inString = false
			case inString:
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				return true, depth == 0
			}
			return true, false
		}
	case c == '"':
		opened, escaped := false, false
		step = func(c byte) (bool, bool) {
			switch {
			case !opened:
				opened = true
			case c == '\n':
				return false, true
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				return true, true
			}
			return true, false
		}
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
		step = func(c byte) (bool, bool) {
			if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '"' {
				return false, true
			}
			return true, false
		}
	default:
		step = func(c byte) (bool, bool) {
			if c == '\n' {
				return false, true
			}
			return true, false
		}
	}
	err = r.scan(max, &size, step)
	return r.buf, size, err
}

// scan consumes bytes while step takes them, until step ends the value or
// the input ends, keeping at most max+1 of them in r.buf and counting all
// in size. It works on whole buffered chunks, not byte by byte.
func (r *Reader) scan(max int, size *int, step func(c byte) (take, end bool)) error {
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
		*size += i
		if room := max + 1 - len(r.buf); room > 0 {
			r.buf = append(r.buf, w[:min(room, i)]...)
		}
		r.consume(i)
		if end {
			return nil
		}
	}
}

// window returns the bytes available without a read, reading when there
// are none. They stay valid until the next read.
func (r *Reader) window() ([]byte, error) {
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
func (r *Reader) consume(n int) {
	if len(r.pending) > 0 {
		r.line += bytes.Count(r.pending[:n], []byte{'\n'})
		r.pending = r.pending[n:]
		return
	}
	w, _ := r.in.Peek(n)
	r.line += bytes.Count(w, []byte{'\n'})
	_, _ = r.in.Discard(n) // bytes peeked above: it cannot fail
}

// incomplete reports whether line is the start of a JSON object or array
// that does not end on this line.
func incomplete(line []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range line {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth <= 0 {
				return false
			}
		}
	}
	return depth > 0
}

// isWebhook reports whether raw is a JSON object with an alerts field: a
// webhook document, whose items rather than itself are records.
func isWebhook(raw []byte) bool {
	var o object
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &o) == nil && o.has("alerts")
}
