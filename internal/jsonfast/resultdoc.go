package jsonfast

import (
	"bytes"

	openrecall "github.com/openrecall/openrecall"
)

// ResultDoc is one result's JSON document, encoded once for every reader
// of it. A result is written several times: into its waiting or history
// row (as json.Marshal writes it, without its audit entries), into its
// inbox row under serve (with them) and to analyze's standard output
// (--output jsonl: not HTML escaped, with them). These documents differ
// only in the audit member's value and in how '<', '>' and '&' are
// written, so Encode writes the document once, not escaped and with a
// null audit member, and Append builds each reader's document from it:
// the audit member's value encoded apart, and '<', '>' and '&' escaped by
// substitution. The substitution is exact: encoding/json's HTML escaping
// writes those three bytes as \u003c, \u003e and \u0026 inside strings
// and changes nothing else, and outside strings a JSON document holds none
// of them (nor does the UTF-8 of any other character).
//
// Append(b, audit, escapeHTML) is byte for byte AppendResult(b, r,
// escapeHTML) with r the result encoded and audit its entries (P181). A
// result the generated encoders cannot write as encoding/json would is
// handed to AppendResult by every Append. The zero value is ready to
// Encode; a ResultDoc is not safe for concurrent use.
type ResultDoc struct {
	// r is the result encoded, its audit entries left out: for the way
	// out, and to tell a result of another batch (Docs).
	r     openrecall.Result
	plain []byte
	// audit is where the audit member's value (null) starts in plain; -1
	// when plain cannot be used (every Append calls AppendResult).
	audit int
	// html is 0 until known, then 1 when plain holds '<', '>' or '&' and
	// 2 when it holds none.
	html    int8
	encoded bool
}

// auditNull is the audit member with a null value, as the generated
// encoder writes it. Outside a string it can only be a member named audit
// whose value is null (inside one, '"' is written \"), and the result's
// own audit member comes after every nested object, so the last one in a
// result's document is the result's.
var auditNull = []byte(`,"audit":null`)

// Encode encodes r into d, reusing d's buffer, for Append. d keeps a
// shallow copy of r: r's slices and maps must not be modified while d is
// in use.
func (d *ResultDoc) Encode(r *openrecall.Result) {
	d.r = *r
	d.r.Audit = nil
	d.html, d.audit, d.encoded = 0, -1, true
	o := NewObject(d.plain[:0], false)
	encodeResult(&o, &d.r)
	out, ok := o.End()
	d.plain = out
	if !ok {
		return
	}
	if i := bytes.LastIndex(out, auditNull); i >= 0 {
		d.audit = i + len(auditNull) - len("null")
	}
}

// Append appends the document of the result encoded with audit as its
// audit entries, HTML escaped when escapeHTML: what AppendResult(b, r,
// escapeHTML) appends for that result r.
func (d *ResultDoc) Append(b []byte, audit []openrecall.AuditEntry, escapeHTML bool) ([]byte, error) {
	if d.audit >= 0 {
		n := len(b)
		head, tail := d.plain[:d.audit], d.plain[d.audit+len("null"):]
		escape := escapeHTML && d.hasHTML()
		b = appendMaybeEscaped(b, head, escape)
		var ok bool
		if b, ok = appendAudit(b, audit, escapeHTML); ok {
			return appendMaybeEscaped(b, tail, escape), nil
		}
		b = b[:n] // an entry encoding/json writes otherwise (or refuses)
	}
	r := d.r
	r.Audit = audit
	return AppendResult(b, r, escapeHTML)
}

// hasHTML reports whether the document holds '<', '>' or '&'.
func (d *ResultDoc) hasHTML() bool {
	if d.html == 0 {
		d.html = 2
		if bytes.IndexByte(d.plain, '<') >= 0 || bytes.IndexByte(d.plain, '>') >= 0 || bytes.IndexByte(d.plain, '&') >= 0 {
			d.html = 1
		}
	}
	return d.html == 1
}

func appendMaybeEscaped(b, src []byte, escape bool) []byte {
	if escape {
		return appendEscapedHTML(b, src)
	}
	return append(b, src...)
}

// appendEscapedHTML appends src, a part of a JSON document written without
// HTML escaping, with every '<', '>' and '&' written as encoding/json's
// HTML escaping writes it. It finds each of the three bytes with
// bytes.IndexByte and looks for a byte again only past the one it found,
// so it reads src once per byte it escapes, however they are spread.
func appendEscapedHTML(b, src []byte) []byte {
	const unknown = -2
	chars := [3]byte{'<', '>', '&'}
	next := [3]int{unknown, unknown, unknown} // next index of each in src, -1 for none
	pos := 0
	for {
		at := -1
		for k, c := range chars {
			if next[k] == unknown || (next[k] >= 0 && next[k] < pos) {
				next[k] = bytes.IndexByte(src[pos:], c)
				if next[k] >= 0 {
					next[k] += pos
				}
			}
			if next[k] >= 0 && (at < 0 || next[k] < at) {
				at = next[k]
			}
		}
		if at < 0 {
			return append(b, src[pos:]...)
		}
		c := src[at]
		b = append(b, src[pos:at]...)
		b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		pos = at + 1
	}
}

// appendAudit appends a result's audit member's value: null for nil, else
// the array of its entries. ok is false when an entry cannot be written as
// encoding/json writes it.
func appendAudit(b []byte, es []openrecall.AuditEntry, escapeHTML bool) (_ []byte, ok bool) {
	if es == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		o := NewObject(b, escapeHTML)
		encodeAuditEntry(&o, &es[i])
		if b, ok = o.End(); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// Docs holds the documents of one batch of results, each encoded once, by
// analysis id, for every reader of the batch: the sink's rows (memory.Sink)
// and, when the batch is printed, analyze's standard output. Reset starts
// a batch; Append encodes a result of it the first time it is asked for.
// The zero value is an empty batch; a nil *Docs encodes every result
// anew. A Docs is not safe for concurrent use.
type Docs struct {
	at   map[string]int // analysis id → index in docs; -1 when the batch holds it twice
	docs []ResultDoc
}

// Reset forgets the last batch and starts the batch of results (none of
// them is encoded yet). An analysis id the batch holds twice has no
// document: each of its results is encoded anew.
func (s *Docs) Reset(results []openrecall.Result) {
	if s.at == nil {
		s.at = make(map[string]int, len(results))
	}
	clear(s.at)
	for i := range s.docs {
		s.docs[i].r, s.docs[i].encoded = openrecall.Result{}, false // hold no result of the last batch
	}
	s.docs = s.docs[:0]
	for i := range results {
		id := results[i].AnalysisID
		if _, twice := s.at[id]; twice {
			s.at[id] = -1
			continue
		}
		s.at[id] = len(s.docs)
		if len(s.docs) < cap(s.docs) {
			s.docs = s.docs[:len(s.docs)+1]
		} else {
			s.docs = append(s.docs, ResultDoc{})
		}
	}
}

// Append appends the document of r with audit as its audit entries, HTML
// escaped when escapeHTML: what AppendResult(b, r, escapeHTML) appends,
// r.Audit replaced by audit. r must be the batch's result of its analysis
// id, or one that differs from it only in its audit entries (its document
// is encoded from the first one asked for); a result the batch does not
// hold is encoded anew.
func (s *Docs) Append(b []byte, r *openrecall.Result, audit []openrecall.AuditEntry, escapeHTML bool) ([]byte, error) {
	if d := s.doc(r); d != nil {
		return d.Append(b, audit, escapeHTML)
	}
	rr := *r
	rr.Audit = audit
	return AppendResult(b, rr, escapeHTML)
}

// doc returns the document of r, encoded, or nil when the batch holds no
// document of r.
func (s *Docs) doc(r *openrecall.Result) *ResultDoc {
	if s == nil {
		return nil
	}
	i, ok := s.at[r.AnalysisID]
	if !ok || i < 0 {
		return nil
	}
	d := &s.docs[i]
	if !d.encoded {
		d.Encode(r)
		return d
	}
	// A result of another batch under a reused id is encoded anew.
	if d.r.Position != r.Position || d.r.Alert.ID != r.Alert.ID || d.r.Outcome != r.Outcome {
		return nil
	}
	return d
}
