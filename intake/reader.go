package intake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/openrecall/openrecall"
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
	"groupLabels": true, "commonLabels": true, "orgId": true, "truncatedAlerts": true, "externalURL": true}

// objectState is the top-level object being walked.
type objectState struct {
	line    int    // the line it starts on
	state   int    // objKey or objAfter
	empty   bool   // no field yet
	fields  object // webhookFields seen so far
	webhook bool   // its alerts array is being (or was) streamed
	batch   bool   // alerts[] is a batch of alerts of any shape
	status  string // the webhook's status, for items without one
	source  string // alertmanager or grafana
	skip    bool   // the webhook itself was rejected: items are dropped
	items   int    // alerts[] items read
	// hold keeps the records of an Alertmanager webhook's items from Next
	// until the webhook ends, for the link of its externalURL, which
	// Alertmanager writes after the alerts (withAlertmanagerLink); held
	// counts their bytes, and past the record limit the hold ends, so
	// memory stays bounded by it.
	hold bool
	held int
}

// Reader reads records from a stream. It buffers at most one record and
// never a whole webhook or array, whatever the length of the stream (an
// Alertmanager webhook's records wait for its externalURL, after its
// alerts, only while they take at most Options.MaxRecordBytes of input). A
// Reader is not safe for concurrent use.
//
// Its state is split by job: input is line reading (lines.go), arr the
// streaming of an array (stream.go), obj and item the records of a
// top-level object (records.go), mode, started and p the detection of what
// comes next and of each value's shape (detect.go, shape.go).
type Reader struct {
	input    // the bytes, line numbers, the recording of an object
	settings // the options, fixed by NewReader
	outbox   // records ready to return, and the sticky error

	mode    mode
	started bool   // a top-level record has begun
	p       parser // the shape of each value read

	arr  arrayCursor // the array being streamed
	obj  objectState // the top-level object being walked
	item amItem      // the alerts[] item read by the fast path (fastItem)
}

// settings are a Reader's options, fixed when it is made.
type settings struct {
	opts   Options
	maxRec int
	// general turns the fast path off (ParseBytesGeneral).
	general bool
}

// outbox holds the records of the last value read, returned by Next from
// next on, and the I/O error that ends reading.
type outbox struct {
	queue []Record
	next  int
	err   error // sticky I/O error
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
		input: input{
			in:        bufio.NewReaderSize(&stickyReader{r: r}, 64<<10),
			lineStart: true,
			rec:       recording{max: opts.MaxRecordBytes},
		},
		settings: settings{opts: opts, maxRec: opts.MaxRecordBytes},
		p: parser{container: FormatJSONL, maxRecord: opts.MaxRecordBytes, source: opts.Source,
			senders: opts.Senders.Senders(), explain: opts.Explain},
	}
	// A sender the set reads by its own Map (an adapter, a mapping, a
	// mapping that overrides a built-in) before intake's own shapes.
	if s, ok := opts.Senders.Lookup(string(opts.Format)); ok && !s.Builtin {
		rd.p.shape, rd.p.forced = Format(s.Name), &s
		return rd
	}
	switch opts.Format {
	case FormatAlertmanager, FormatPrometheus, FormatPagerDuty:
		rd.p.shape = opts.Format
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
		if _, err := ParseFormatIn(string(opts.Format), opts.Senders); err != nil {
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
		holding := r.holding()
		if r.next < len(r.queue) && !holding {
			rec := r.queue[r.next]
			r.queue[r.next] = Record{}
			r.next++
			if r.p.explain && rec.Err == nil && rec.SentSeverity == "" {
				rec.SentSeverity = sentLabel(rec.Alert)
			}
			return rec, nil
		}
		if !holding {
			r.queue, r.next = r.queue[:0], 0
		}
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

// holding reports whether the records queued are held back until the
// webhook being read ends (objectState.hold).
func (r *Reader) holding() bool {
	return r.obj.hold && r.err == nil && (r.mode == modeItems || r.mode == modeObject)
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
