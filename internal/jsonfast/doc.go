// Package jsonfast holds the JSON encoders and the string decoder of the
// types read and written for every alert, in one style: a result, a
// model's analysis and (through the writer) the case file are appended
// byte for byte as encoding/json writes them, and a JSON string is
// decoded exactly as encoding/json decodes it, without reflection. The
// Scanner is the one tokenizer of the two one-pass decoders (intake's
// alerts[] items, the quality gate's answers). The encoders of the domain
// types are generated from their struct tags (domain_gen.go, written by
// go generate ./internal/jsonfast from ./gen), so a wire name is written
// once, in its tag. The word-at-a-time byte scans these use are here too,
// with the one the terminal sanitizer uses.
//
// Tests hold every encoder to encoding/json on values with every field
// set, and the decoder to json.Unmarshal on any bytes. The functions are
// safe for concurrent use; an Object is not.
package jsonfast
