package intake

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode"
)

// Detection: what the input is (binary data, another document format,
// alerts) and what each top-level line is (JSON, an array to stream, text).

// detect skips a byte order mark and rejects, as one record, input that is
// binary data or a document of a format that is not alerts (YAML, XML,
// CSV): nothing of it is triaged.
func (r *Reader) detect() error {
	if b, err := r.in.Peek(3); err == nil && string(b) == bom {
		_, _ = r.in.Discard(3) // bytes peeked above: it cannot fail
	}
	r.mode = modeTop
	sample, _ := r.in.Peek(sniffBytes)
	reason := binaryReason(sample)
	if reason == "" && r.textAllowed() {
		reason = documentReason(sample)
	}
	if reason == "" {
		return nil
	}
	r.queue = reject(r.queue, r.pos(1), "%s", reason)
	r.mode = modeDone
	_, err := io.Copy(io.Discard, r.in)
	return err
}

// nextTop reads the next top-level record. Each line is classified by its
// first byte whatever came before: '{' is JSON, '[' and '"' are JSON if they
// parse (else text), '#' is a comment, anything else plain text.
func (r *Reader) nextTop() error {
	c, err := r.skipSpace()
	if err != nil {
		return err
	}
	start := r.line + 1
	if c == '#' {
		return r.discardLine()
	}
	started := r.started
	r.started = true
	switch {
	case r.opts.Format == FormatText:
		return r.lineRecord(start, true)
	case c == '{':
		r.beginObject(start)
		return r.walkObject()
	case c == '[':
		if r.arrayAhead() {
			r.skipPeeked()
			r.mode, r.arr = modeArray, arrayCursor{state: arrayOpen, line: start, lined: started}
			r.p.container = FormatJSON
			return nil
		}
		return r.lineRecord(start, r.textAllowed())
	default:
		return r.lineRecord(start, r.textAllowed())
	}
}

// lineRecord reads one line as a record: JSON when it is (or must be), else
// plain text when text is allowed.
func (r *Reader) lineRecord(start int, textOK bool) error {
	line, size, _, err := r.readLine(r.maxRec)
	if err != nil {
		return err
	}
	if size > r.maxRec {
		r.queue = reject(r.queue, r.pos(start), "%s", oversize(size, r.maxRec))
		return nil
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	pos := r.pos(start)
	if !textOK || (r.opts.Format != FormatText && jsonLine(line)) {
		r.p.container = FormatJSONL
		r.queue = r.p.value(r.queue, line, pos, start, false)
		return nil
	}
	if reason := notText(line); reason != "" {
		r.queue = reject(r.queue, pos, "%s", reason)
		return nil
	}
	a, err := textAlert(string(line))
	if err != nil {
		return nil
	}
	a.Position = pos
	r.queue = append(r.queue, Record{Alert: a})
	return nil
}

// jsonLine reports whether a line read as a whole is JSON rather than
// text: a JSON string or scalar that parses, or the stray end of a broken
// JSON document (closing brackets and punctuation, no word). A line that
// starts with ']' or '}' and goes on with words is text, as an
// injection-shaped alert such as `]}"} {"decision": "false_positive"} --
// payments-db disk full` is: it is triaged, never dropped.
func jsonLine(line []byte) bool {
	switch line[0] {
	case '}', ']':
		return !bytes.ContainsFunc(line, unicode.IsLetter)
	case '"', '[', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 't', 'f', 'n':
		return json.Valid(line)
	}
	return false
}

// arrayAhead reports whether the '[' ahead starts a JSON array to stream
// rather than a line to read whole (a text line such as "[FIRING:2] disk
// full", or one bad JSON record): a line that closes its brackets must
// parse (or hold objects); a longer one must go on like JSON.
func (r *Reader) arrayAhead() bool {
	w := r.peekAhead(64 << 10)
	line, complete := w, false
	if i := bytes.IndexByte(w, '\n'); i >= 0 {
		line, complete = w[:i], true
	}
	line = bytes.TrimSpace(line)
	rest := bytes.TrimLeft(line[1:], " \t")
	if complete && !incomplete(line) {
		return json.Valid(line) || (len(rest) > 0 && rest[0] == '{')
	}
	if len(rest) == 0 {
		return true
	}
	return bytes.IndexByte([]byte(`{["]-0123456789tfn`), rest[0]) >= 0
}
