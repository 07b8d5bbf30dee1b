package jsonfast

//go:generate go run ./gen -o domain_gen.go

import (
	"encoding/json"

	openrecall "github.com/openrecall/openrecall"
)

// AppendResult appends the JSON encoding of r to b: byte for byte what
// encoding/json writes for it (json.Marshal with escapeHTML, an Encoder
// with SetEscapeHTML(false) without, the Encoder's newline not included).
// Its encoders are generated from the struct tags (domain_gen.go, by go
// generate) because a result is written for every alert and the reflective
// encoder cost about a tenth of analyze's CPU; a value it cannot write as
// encoding/json would (a non-finite number, a time outside RFC 3339) is
// handed to encoding/json, with its error.
// TestAppendResultMatchesEncodingJSON fills every field of every nested
// type and compares the two.
func AppendResult(b []byte, r openrecall.Result, escapeHTML bool) ([]byte, error) {
	o := NewObject(b, escapeHTML)
	encodeResult(&o, &r)
	if out, ok := o.End(); ok {
		return out, nil
	}
	return appendMarshaled(b, r)
}

// AppendAnalysis appends the JSON encoding of a to b, as AppendResult does
// for a result (a model answer is encoded for every analysed alert).
func AppendAnalysis(b []byte, a openrecall.Analysis, escapeHTML bool) ([]byte, error) {
	o := NewObject(b, escapeHTML)
	encodeAnalysis(&o, &a)
	if out, ok := o.End(); ok {
		return out, nil
	}
	return appendMarshaled(b, a)
}

// appendMarshaled appends what json.Marshal writes for v, or returns its
// error: the way out for a value the generated encoders cannot write as
// encoding/json would (v is boxed only then).
func appendMarshaled(b []byte, v any) ([]byte, error) {
	std, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, std...), nil
}
