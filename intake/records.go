package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// Records of top-level objects: a webhook's fields walked one by one and
// its alerts array streamed item by item, or the object read whole; a
// broken object rejected and reading resynchronized after it.

// beginObject starts walking a top-level object: its bytes are recorded up
// to the record limit.
func (r *Reader) beginObject(start int) {
	r.obj = objectState{line: start, state: objKey, empty: true, source: "alertmanager"}
	r.startRecording()
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
		if key == "alerts" && c == '[' && !o.webhook && r.p.forced == nil && (r.p.shape == "" || r.p.shape == FormatAlertmanager) {
			r.skipPeeked()
			r.beginWebhook()
			return nil
		}
		// A nested value may not outgrow the record being recorded: a
		// broken line must not swallow the lines after it.
		limit := r.maxRec + 1 - r.rec.size
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
		// A webhook's truncatedAlerts (and the group it names), its
		// externalURL and the members that make it a webhook may come after
		// its alerts (objectEnd); a count of 0, the common case, needs no
		// record.
		kept := webhookFields[key] && (!o.webhook || key != "truncatedAlerts" || string(bytes.TrimSpace(raw)) != "0")
		if kept && size <= r.maxRec {
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
	r.rec.on = false
	r.mode, r.arr = modeItems, arrayCursor{state: arrayOpen, line: r.line + 1}
	pos := r.pos(o.line)
	var err error
	if o.status, err = o.fields.str("status"); err != nil {
		o.skip = true
		r.queue = reject(r.queue, pos, "%v", err)
		return
	}
	o.source, o.batch = webhookKind(o.fields, r.p.shape)
	// An Alertmanager webhook's externalURL comes after its alerts, and so
	// may the members that tell a webhook from a batch (keys sorted): the
	// records wait for the end of the object, unless both came first.
	o.hold = o.source == "alertmanager" && (o.batch || !o.fields.has("externalURL"))
}

// webhookItem queues the record of one alerts[] item of the current
// webhook.
func (r *Reader) webhookItem(raw []byte, i int) {
	o := &r.obj
	o.items++
	if o.skip {
		return
	}
	if o.hold {
		if o.held += len(raw); o.held > r.maxRec {
			o.hold = false // too many to hold: the rest flow without the link
		}
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
	if !o.batch && o.source == "alertmanager" && o.fields.has("externalURL") {
		// The webhook's externalURL came before its alerts.
		withAlertmanagerLink(r.queue[len(r.queue)-1:], o.fields.lenient("externalURL"))
	}
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
	size := r.rec.size
	// Anything after the object on its line belongs to the same record.
	trailing, err := r.restOfLine()
	if err != nil {
		return err
	}
	r.rec.on = r.rec.on && !o.webhook
	pos := r.pos(o.line)
	if o.hold {
		// The records held for the webhook's externalURL (beginWebhook),
		// when every member says it is Alertmanager's webhook, as the
		// whole object read at once (parser.webhook) says it.
		if source, batch := webhookKind(o.fields, r.p.shape); source == "alertmanager" && !batch {
			withAlertmanagerLink(r.queue[r.next:], o.fields.lenient("externalURL"))
		}
		o.hold = false
	}
	if o.webhook {
		if o.items == 0 && !o.skip {
			r.queue = reject(r.queue, pos, "webhook has no alerts")
		}
		// An object whose alerts came first was read as a batch; a receiver
		// or group key after its alerts says it was a webhook after all, and
		// its truncatedAlerts counts.
		if !o.skip && (!o.batch || o.fields.has("receiver") || o.fields.has("groupKey")) {
			r.queue = truncated(r.queue, o.fields, o.source, pos)
		}
		if trailing {
			r.queue = reject(r.queue, r.pos(r.line), "invalid JSON: unexpected characters after the end of the document that starts on line %d", o.line)
			return r.discardLine()
		}
		return nil
	}
	if trailing && !r.rec.full {
		if err := r.discardLine(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	r.rec.on = false
	if r.rec.full || size > r.maxRec {
		r.queue = reject(r.queue, pos, "%s", oversize(size, r.maxRec))
		if trailing && r.rec.full {
			return r.discardLine()
		}
		return nil
	}
	r.p.container = FormatJSON
	if single {
		r.p.container = FormatJSONL
	}
	r.queue = r.p.value(r.queue, r.rec.b, pos, o.line, false)
	return nil
}

// restOfLine reports whether anything but white space follows on the
// current line, consuming the white space.
func (r *input) restOfLine() (bool, error) {
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
		r.rec.on = false
		if reason == "" {
			reason = fmt.Sprintf("invalid JSON after the alerts array of the document that starts on line %d", o.line)
		}
		r.queue = reject(r.queue, pos, "%s", reason)
		return r.skipBroken()
	}
	if reason == "" && !r.lineStart && !r.rec.full {
		// The rest of the line is part of the broken record: its message
		// then points at the first bad character.
		if err := r.discardLine(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	r.rec.on = false
	if r.rec.full {
		if reason == "" {
			reason = fmt.Sprintf("record is more than %d bytes, over the limit of %d bytes", r.maxRec, r.maxRec)
		}
		r.queue = reject(r.queue, pos, "%s", reason)
		return r.skipBroken()
	}
	raw, pushed := r.resync(r.rec.b)
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
func (r *input) skipBroken() error {
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
func (r *input) resync(raw []byte) ([]byte, bool) {
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
