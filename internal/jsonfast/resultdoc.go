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
	// r is the result encoded (its audit entries are not read), for the
	// way out; nil before Encode.
	r     *openrecall.Result
	plain []byte
	// audit is where the audit member's value (null) starts in plain; -1
	// when plain cannot be used (every Append calls AppendResult).
	audit int
	// html is 0 until known, then 1 when plain holds '<', '>' or '&' and
	// 2 when it holds none.
	html int8
}

// auditNull is the audit member with a null value, as the generated
// encoder writes it. Outside a string it can only be a member named audit
// whose value is null (inside one, '"' is written \"), and the result's
// own audit member comes after every nested object, so the last one in a
// result's document is the result's.
var auditNull = []byte(`,"audit":null`)

// Encode encodes r into d, reusing d's buffer, for Append. d keeps r: r
// must not be modified while d is in use (its audit entries aside).
func (d *ResultDoc) Encode(r *openrecall.Result) {
	d.r, d.html, d.audit = r, 0, -1
	rr := *r
	rr.Audit = nil
	o := NewObject(d.plain[:0], false)
	encodeResult(&o, &rr)
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
	r := *d.r
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
	results []openrecall.Result
	// at maps an analysis id to its index in results (-1 when the batch
	// holds it twice), once a document is asked for.
	at      map[string]int
	indexed bool
	docs    []ResultDoc // docs[i] is results[i]'s, once encoded
	// size is the longest document encoded so far: a document's first
	// buffer is made a quarter larger, not grown to it by doubling.
	size int
}

// Reset forgets the last batch and starts the batch of results, which
// must not be modified while it is the batch (their audit entries aside).
// An analysis id the batch holds twice has no document: each of its
// results is encoded anew.
func (s *Docs) Reset(results []openrecall.Result) {
	for i := range s.docs {
		s.docs[i].r = nil // not encoded; and no result of the last batch is held
	}
	s.results, s.indexed = results, false
}

// Append appends the document of r with audit as its audit entries, HTML
// escaped when escapeHTML: what AppendResult(b, r, escapeHTML) appends,
// r.Audit replaced by audit. The document is the batch's result's of r's
// analysis id: r must be that result, or differ from it only in its audit
// entries. A result the batch does not hold is encoded anew.
func (s *Docs) Append(b []byte, r *openrecall.Result, audit []openrecall.AuditEntry, escapeHTML bool) ([]byte, error) {
	if d := s.doc(r); d != nil {
		return d.Append(b, audit, escapeHTML)
	}
	rr := *r
	rr.Audit = audit
	return AppendResult(b, rr, escapeHTML)
}

// doc returns the document of r's analysis id, encoded, or nil when the
// batch holds no document of r.
func (s *Docs) doc(r *openrecall.Result) *ResultDoc {
	if s == nil || len(s.results) == 0 {
		return nil
	}
	if !s.indexed {
		s.index()
	}
	i, ok := s.at[r.AnalysisID]
	if !ok || i < 0 {
		return nil
	}
	src := &s.results[i]
	// A result of another batch under a reused id is encoded anew.
	if src.Position != r.Position || src.Alert.ID != r.Alert.ID || src.Outcome != r.Outcome {
		return nil
	}
	d := &s.docs[i]
	if d.r == nil {
		if cap(d.plain) < s.size {
			d.plain = make([]byte, 0, s.size+s.size/4)
		}
		d.Encode(src)
		s.size = max(s.size, len(d.plain))
	}
	return d
}

// index maps the batch's analysis ids to their results.
func (s *Docs) index() {
	if s.at == nil {
		s.at = make(map[string]int, len(s.results))
	}
	clear(s.at)
	for i := range s.results {
		id := s.results[i].AnalysisID
		if _, twice := s.at[id]; twice {
			s.at[id] = -1
			continue
		}
		s.at[id] = i
	}
	if n := len(s.results); cap(s.docs) < n {
		s.docs = append(s.docs[:cap(s.docs)], make([]ResultDoc, n-cap(s.docs))...)
	}
	s.docs = s.docs[:len(s.results)]
	s.indexed = true
}
