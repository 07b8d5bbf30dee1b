package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// mode is what the Reader is reading now.
type mode int

const (
	modeDetect mode = iota // nothing read yet
	modeTop                // between top-level records
	modeArray              // inside a streamed top-level array
	modeObject             // inside a top-level object, between its fields
	modeItems              // inside the alerts array of a streamed webhook
	modeDone               // end of input
)

// array parser states.
const (
	arrayOpen  = iota // after '[': a value or ']'
	arrayValue        // after a value: ',' or ']'
	arrayComma        // after ',': a value
)

// object walker states.
const (
	objKey   = iota // after '{' or ',': a key (or '}' when empty)
	objAfter        // after a value: ',' or '}'
)

// webhookFields are the top-level fields of a webhook that decide how its
// alerts[] items are read; they are kept while walking the object.
var webhookFields = map[string]bool{"version": true, "status": true, "receiver": true, "groupKey": true,
	"groupLabels": true, "commonLabels": true, "orgId": true, "truncatedAlerts": true}

// objectState is the top-level object being walked.
type objectState struct {
	line    int    // the line it starts on
	size    int    // bytes consumed since its '{'
	state   int    // objKey or objAfter
	empty   bool   // no field yet
	fields  object // webhookFields seen so far
	webhook bool   // its alerts array is being (or was) streamed
	batch   bool   // alerts[] is a batch of alerts of any shape
	status  string // the webhook's status, for items without one
	source  string // alertmanager or grafana
	skip    bool   // the webhook itself was rejected: items are dropped
	items   int    // alerts[] items read
}

// Reader reads records from a stream. It buffers at most one record and
// never a whole webhook or array, whatever the length of the stream. A
// Reader is not safe for concurrent use.
type Reader struct {
	in        *bufio.Reader
	pending   []byte // bytes pushed back in front of in
	line      int    // newlines consumed so far
	lineStart bool   // only white space consumed since the last newline
	opts      Options
	maxRec    int
	mode      mode
	p         parser
	queue     []Record // records of the last value read, from next on
	next      int
	err       error // sticky I/O error
	buf       []byte

	// recording of the bytes of the current top-level object, for its
	// final parse and to resynchronize after a broken one.
	recOn   bool
	rec     []byte
	recFull bool

	obj objectState
	// item is the alerts[] item read by the fast path (fastItem).
	item amItem
	// general turns the fast path off (ParseBytesGeneral).
	general bool

	arrayIndex int
	arrayState int
	arrayLine  int
	// arrayLined: elements of the current top-level array carry its line,
	// as it came after other records (an array alone is a document whose
	// elements are positioned by index only).
	arrayLined bool
	started    bool // a top-level record has begun
}

// NewReader returns a Reader of r with opts.
func NewReader(r io.Reader, opts Options) *Reader {
	if opts.Format == "" {
		opts.Format = FormatAuto
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = DefaultMaxRecordBytes
	}
	rd := &Reader{
		in:        bufio.NewReaderSize(&stickyReader{r: r}, 64<<10),
		opts:      opts,
		maxRec:    opts.MaxRecordBytes,
		lineStart: true,
		p:         parser{container: FormatJSONL, maxRecord: opts.MaxRecordBytes, source: opts.Source, senders: sender.All()},
	}
	switch opts.Format {
	case FormatAlertmanager, FormatPrometheus, FormatPagerDuty:
		rd.p.shape = opts.Format
	default:
		if s, ok := sender.Lookup(string(opts.Format)); ok && !s.Builtin {
			rd.p.shape = Format(s.Name)
		}
	}
	return rd
}

// ParseBytes reads every record of body, a whole request body or file, in
// the same way as a Reader. The error is nil unless the options are
// unusable.
func ParseBytes(body []byte, opts Options) ([]Record, error) {
	return parseBytes(body, opts, false)
}

// ParseBytesGeneral is ParseBytes with every alerts[] item read by the
// general path, none by the fast path for the common item shape. It is the
// reference ParseBytes must equal (property P46); nothing else calls it.
func ParseBytesGeneral(body []byte, opts Options) ([]Record, error) {
	return parseBytes(body, opts, true)
}

func parseBytes(body []byte, opts Options, general bool) ([]Record, error) {
	if opts.Format != "" {
		if _, err := ParseFormat(string(opts.Format)); err != nil {
			return nil, err
		}
	}
	r := NewReader(bytes.NewReader(body), opts)
	r.general = general
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
		case modeTop:
			err = r.nextTop()
		case modeArray, modeItems:
			err = r.nextElement()
		case modeObject:
			err = r.walkObject()
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

// stickyReader returns its source's first error on every later Read.
// bufio hands a read error to one caller only, and a look-ahead that only
// peeks (detect, peekAhead) has no error to return: the next read then
// meets the error again, after the bytes that came before it.
type stickyReader struct {
	r   io.Reader
	err error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	s.err = err
	return n, err
}

// pos is a line position.
func (r *Reader) pos(line int) openrecall.Position {
	return openrecall.Position{Source: r.opts.Source, Line: line}
}

// textAllowed reports whether a line that is not JSON may be a plain-text
// alert.
func (r *Reader) textAllowed() bool {
	return r.opts.Format == FormatAuto || r.opts.Format == FormatText
}

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
			r.mode, r.arrayIndex, r.arrayState, r.arrayLine = modeArray, 0, arrayOpen, start
			r.arrayLined = started
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

// peekAhead returns up to n upcoming bytes without consuming them.
func (r *Reader) peekAhead(n int) []byte {
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
func (r *Reader) discardLine() error {
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
func (r *Reader) skipSpace() (byte, error) {
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

// skipPeeked consumes the byte just returned by peekByte or skipSpace: it
// is pending or buffered, so reading it cannot fail.
func (r *Reader) skipPeeked() { _, _ = r.readByte() }

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
	r.track([]byte{c})
	return c, nil
}

// track accounts for consumed bytes: line numbers, the line-start flag and
// the recording of the current object.
func (r *Reader) track(b []byte) {
	// IndexByte first: it is vectorized, LastIndexByte is not, and most
	// chunks (a webhook's alerts[] item) hold no newline.
	if bytes.IndexByte(b, '\n') >= 0 {
		i := bytes.LastIndexByte(b, '\n')
		r.line += bytes.Count(b, []byte{'\n'})
		r.lineStart = len(bytes.TrimLeft(b[i+1:], " \t\r")) == 0
	} else if r.lineStart && len(bytes.TrimLeft(b, " \t\r")) > 0 {
		r.lineStart = false
	}
	if r.recOn {
		r.obj.size += len(b)
		if !r.recFull {
			if len(r.rec)+len(b) > r.maxRec+2 {
				r.recFull = true
			} else {
				r.rec = append(r.rec, b...)
			}
		}
	}
}

// readLine reads one line without its "\n" or "\r\n". It keeps at most max
// bytes (plus a final "\r"): a longer line is consumed to its end and its
// size reported, but not buffered. nl reports whether a newline ended it.
func (r *Reader) readLine(max int) (line []byte, size int, nl bool, err error) {
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

// beginObject starts walking a top-level object: its bytes are recorded up
// to the record limit.
func (r *Reader) beginObject(start int) {
	r.obj = objectState{line: start, state: objKey, empty: true, source: "alertmanager"}
	r.rec, r.recFull, r.recOn = r.rec[:0], false, true
	r.skipPeeked() // '{'
	r.mode = modeObject
}

// walkObject reads the fields of the current top-level object until it
// ends, fails, or opens a webhook's alerts array, which is then streamed
// item by item.
func (r *Reader) walkObject() error {
	o := &r.obj
	for {
		c, err := r.skipSpace()
		if errors.Is(err, io.EOF) {
			return r.objectFailed("")
		}
		if err != nil {
			return err
		}
		if o.state == objAfter {
			switch c {
			case ',':
				r.skipPeeked()
				o.state = objKey
				continue
			case '}':
				r.skipPeeked()
				return r.objectEnd()
			}
			return r.objectFailed("")
		}
		if c == '}' && o.empty {
			r.skipPeeked()
			return r.objectEnd()
		}
		if c != '"' {
			return r.objectFailed("")
		}
		raw, _, _, err := r.scanValue(r.maxRec, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		key, ok := objectKey(raw)
		if !ok {
			return r.objectFailed("")
		}
		if c, err = r.skipSpace(); err != nil || c != ':' {
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			return r.objectFailed("")
		}
		r.skipPeeked()
		if c, err = r.skipSpace(); err != nil {
			if errors.Is(err, io.EOF) {
				return r.objectFailed("")
			}
			return err
		}
		o.empty = false
		o.state = objAfter
		if key == "alerts" && c == '[' && !o.webhook && (r.p.shape == "" || r.p.shape == FormatAlertmanager) {
			r.skipPeeked()
			r.beginWebhook()
			return nil
		}
		// A nested value may not outgrow the record being recorded: a
		// broken line must not swallow the lines after it.
		limit := r.maxRec + 1 - o.size
		if o.webhook {
			limit = r.maxRec
		}
		raw, size, cut, err := r.scanValue(r.maxRec, max(limit, 1))
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if cut {
			return r.objectFailed(fmt.Sprintf("record is more than %d bytes, over the limit of %d bytes", r.maxRec, r.maxRec))
		}
		if (!o.webhook && webhookFields[key] || key == "truncatedAlerts" || key == "groupKey" || key == "receiver") && size <= r.maxRec {
			if o.fields == nil {
				o.fields = object{}
			}
			o.fields[key] = append(json.RawMessage(nil), raw...)
		}
	}
}

// objectKey decodes raw, the key of a member of a top-level object, as
// json.Unmarshal decodes it into a string; ok is false when it is not a
// JSON string.
func objectKey(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		plain := true
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			if key, ok := commonName(raw[1 : len(raw)-1]); ok {
				return key, true
			}
			return string(raw[1 : len(raw)-1]), true
		}
	}
	var key string
	if json.Unmarshal(raw, &key) != nil {
		return "", false
	}
	return key, true
}

// beginWebhook starts streaming the alerts array of the current object,
// read as a webhook (or a batch) by the fields seen before it.
func (r *Reader) beginWebhook() {
	o := &r.obj
	o.webhook = true
	r.recOn = false
	r.mode, r.arrayIndex, r.arrayState, r.arrayLine = modeItems, 0, arrayOpen, r.line+1
	pos := r.pos(o.line)
	version, err := o.fields.str("version")
	if err == nil {
		o.status, err = o.fields.str("status")
	}
	if err != nil {
		o.skip = true
		r.queue = reject(r.queue, pos, "%v", err)
		return
	}
	if version == "1" || o.fields.has("orgId") {
		o.source = "grafana"
	}
	o.batch = r.p.shape != FormatAlertmanager && version == "" && o.status == "" &&
		!o.fields.has("receiver") && !o.fields.has("groupKey") && !o.fields.has("groupLabels") && !o.fields.has("commonLabels")
}

// webhookItem queues the record of one alerts[] item of the current
// webhook.
func (r *Reader) webhookItem(raw []byte, i int) {
	o := &r.obj
	o.items++
	if o.skip {
		return
	}
	ipos := openrecall.Position{Source: r.opts.Source, Line: o.line, Index: i, HasIndex: true}
	it := &r.item
	fast := !r.general && fastItem(raw, it)
	isAM := it.alertmanager()
	if !fast {
		isAM = o.batch && alertmanagerItem(raw)
	}
	if o.batch && !isAM {
		n := len(r.queue)
		r.queue = r.p.value(r.queue, raw, ipos, o.line, true)
		for _, rec := range r.queue[n:] {
			if rec.Err != nil {
				rec.Err.Reason = fmt.Sprintf("alerts[%d]: %s", i, rec.Err.Reason)
			}
		}
		return
	}
	var a openrecall.Alert
	var err error
	if fast {
		a, err = it.alert(o.status, o.source)
	} else {
		a, err = webhookAlert(raw, o.status, o.source)
	}
	if err != nil {
		r.queue = reject(r.queue, ipos, "alerts[%d]: %v", i, err)
		return
	}
	a.Position = ipos
	r.queue = append(r.queue, Record{Alert: a})
}

// alertmanagerItem reports whether raw is an alerts[] item of an
// Alertmanager webhook (labels or annotations and its own status or
// fingerprint, no title or text), so that it is read as one even when the webhook's own fields
// come after its alerts array (Go's encoding/json sorts map keys).
func alertmanagerItem(raw []byte) bool {
	var o object
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return false
	}
	return (o.has("labels") || o.has("annotations")) && !o.has("title") && !o.has("text") && (o.has("status") || o.has("fingerprint"))
}

// objectEnd finishes the current object after its '}'.
func (r *Reader) objectEnd() error {
	o := &r.obj
	r.mode = modeTop
	single := r.line+1 == o.line
	size := o.size
	// Anything after the object on its line belongs to the same record.
	trailing, err := r.restOfLine()
	if err != nil {
		return err
	}
	r.recOn = r.recOn && !o.webhook
	pos := r.pos(o.line)
	if o.webhook {
		if o.items == 0 && !o.skip {
			r.queue = reject(r.queue, pos, "webhook has no alerts")
		}
		if !o.skip && !o.batch {
			r.queue = truncated(r.queue, o.fields, o.source, pos)
		}
		if trailing {
			r.queue = reject(r.queue, r.pos(r.line), "invalid JSON: unexpected characters after the end of the document that starts on line %d", o.line)
			return r.discardLine()
		}
		return nil
	}
	if trailing && !r.recFull {
		if err := r.discardLine(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	r.recOn = false
	if r.recFull || size > r.maxRec {
		r.queue = reject(r.queue, pos, "%s", oversize(size, r.maxRec))
		if trailing && r.recFull {
			return r.discardLine()
		}
		return nil
	}
	r.p.container = FormatJSON
	if single {
		r.p.container = FormatJSONL
	}
	r.queue = r.p.value(r.queue, r.rec, pos, o.line, false)
	return nil
}

// restOfLine reports whether anything but white space follows on the
// current line, consuming the white space.
func (r *Reader) restOfLine() (bool, error) {
	for {
		c, err := r.peekByte()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		switch c {
		case '\n':
			r.skipPeeked()
			return false, nil
		case ' ', '\t', '\r':
			r.skipPeeked()
		default:
			return true, nil
		}
	}
}

// objectFailed rejects the current object, which is not valid JSON (or,
// with a reason, too big), and resynchronizes: at a later line of it that
// starts with '{' or '[', or else at the next line that does not look like
// the inside of a JSON document.
func (r *Reader) objectFailed(reason string) error {
	o := &r.obj
	r.mode = modeTop
	pos := r.pos(o.line)
	if o.webhook {
		r.recOn = false
		if reason == "" {
			reason = fmt.Sprintf("invalid JSON after the alerts array of the document that starts on line %d", o.line)
		}
		r.queue = reject(r.queue, pos, "%s", reason)
		return r.skipBroken()
	}
	if reason == "" && !r.lineStart && !r.recFull {
		// The rest of the line is part of the broken record: its message
		// then points at the first bad character.
		if err := r.discardLine(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	r.recOn = false
	if r.recFull {
		if reason == "" {
			reason = fmt.Sprintf("record is more than %d bytes, over the limit of %d bytes", r.maxRec, r.maxRec)
		}
		r.queue = reject(r.queue, pos, "%s", reason)
		return r.skipBroken()
	}
	raw, pushed := r.resync(r.rec)
	if reason == "" || pushed {
		r.p.container = FormatJSONL
		r.queue = r.p.value(r.queue, raw, pos, o.line, false)
	} else {
		r.queue = reject(r.queue, pos, "%s", reason)
	}
	if pushed {
		return nil
	}
	return r.skipBroken()
}

// skipBroken skips the rest of a broken document: the rest of the current
// line, then every line that starts with white space or with a character
// that only continues a JSON document ('}', ']', ',', ':', or '"' opening
// a key).
func (r *Reader) skipBroken() error {
	if !r.lineStart {
		if err := r.discardLine(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	for {
		c, err := r.peekByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if c == '"' && !keyLine(r.peekAhead(4<<10)) {
			return nil // a JSON string alert, not a key of the broken document
		}
		switch c {
		case ' ', '\t', '\r', '\n', '}', ']', '"', ',', ':':
			if err := r.discardLine(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		default:
			return nil
		}
	}
}

// keyLine reports whether line starts with a JSON string followed by ':',
// the key of an object member.
func keyLine(line []byte) bool {
	escaped := false
	for i := 1; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\n':
			return false
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			rest := bytes.TrimLeft(line[i+1:], " \t")
			return len(rest) > 0 && rest[0] == ':'
		}
	}
	return false
}

// resync cuts a broken object short at the first later line that starts,
// in its first column, with '{' or '[', and pushes the rest back to be read
// again. So a broken first line of a JSON Lines queue, or a broken
// pretty-printed document, costs one rejected record rather than every
// record after it. It returns the part that stays rejected.
func (r *Reader) resync(raw []byte) ([]byte, bool) {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\n' {
			continue
		}
		if c := raw[i+1]; c == '{' || c == '[' {
			rest := raw[i+1:]
			r.pending = append(append(make([]byte, 0, len(rest)+len(r.pending)), rest...), r.pending...)
			r.line -= bytes.Count(rest, []byte{'\n'})
			r.lineStart = true
			return raw[:i], true
		}
	}
	return raw, false
}

// nextElement reads one element of a streamed array (a top-level array or
// a webhook's alerts), or its end.
func (r *Reader) nextElement() error {
	items := r.mode == modeItems
	pos := openrecall.Position{Source: r.opts.Source, Index: r.arrayIndex, HasIndex: true}
	if items {
		pos.Line = r.obj.line
	} else if r.arrayLined {
		pos.Line = r.arrayLine
	}
	c, err := r.skipSpace()
	if errors.Is(err, io.EOF) {
		if items {
			r.queue = reject(r.queue, r.pos(r.obj.line), "invalid JSON: unexpected end of input: the alerts array that starts on line %d is not closed with ']'", r.arrayLine)
		} else {
			r.queue = reject(r.queue, pos, "invalid JSON: unexpected end of input: the array that starts on line %d is not closed with ']'", r.arrayLine)
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
	case c == ',' && r.arrayState == arrayValue:
		r.skipPeeked()
		r.arrayState = arrayComma
		return nil
	case c == ',':
		r.skipPeeked()
		r.queue = reject(r.queue, pos, "%sinvalid JSON: unexpected ',' with no element before it", r.itemPrefix(items))
		r.arrayIndex++
		return nil
	}
	missingComma := r.arrayState == arrayValue
	start := r.line + 1
	prefix := r.itemPrefix(items)
	raw, size, cut, err := r.scanValue(r.maxRec, -1)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	r.arrayState = arrayValue
	i := r.arrayIndex
	r.arrayIndex++
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
	return fmt.Sprintf("alerts[%d]: ", r.arrayIndex)
}

// afterArray rejects anything after a top-level array on its last line.
func (r *Reader) afterArray() error {
	trailing, err := r.restOfLine()
	if err != nil || !trailing {
		return err
	}
	r.queue = reject(r.queue, r.pos(r.line+1), "invalid JSON: unexpected characters after the end of the array that starts on line %d", r.arrayLine)
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
func (r *Reader) scanValue(max, limit int) (raw []byte, size int, cut bool, err error) {
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
		r.keep(w, i, max, size)
		if end {
			return nil
		}
	}
}

// keep consumes the first i bytes of the window w, keeping in r.buf what
// fits of them under max+1 bytes, and counts them in size.
func (r *Reader) keep(w []byte, i, max int, size *int) {
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
func (r *Reader) scanComposite(max, limit int) (size int, cut bool, err error) {
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
func (r *Reader) scanString(max int) (size int, err error) {
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
