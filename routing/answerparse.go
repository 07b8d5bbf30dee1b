package routing

import (
	"strconv"
	"strings"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// decodeAnswer decodes an answer in the plain shape a model writes: one
// JSON object whose members are the schema's fields, each once, named
// exactly, decision and confidence among them, no nulls, nothing after
// the object (strings are decoded as encoding/json decodes them). Anything
// else (ok false) goes to encoding/json (ParseAnalysisTwoPass), which the
// result must equal: property P44.
func decodeAnswer(text string) (a openrecall.Analysis, ok bool) {
	d := answerDecoder{s: text}
	d.space()
	if !d.byte('{') {
		return a, false
	}
	var seen uint16
	d.space()
	if d.byte('}') {
		return a, false // no decision
	}
	for {
		d.space()
		key, ok := d.str()
		if !ok {
			return a, false
		}
		d.space()
		if !d.byte(':') {
			return a, false
		}
		d.space()
		bit, known := answerFields[key]
		if !known || seen&bit != 0 {
			return a, false
		}
		seen |= bit
		switch key {
		case "decision":
			s, ok := d.str()
			if !ok {
				return a, false
			}
			a.Decision = openrecall.Decision(s)
		case "confidence":
			if a.Confidence, ok = d.number(); !ok {
				return a, false
			}
		case "summary":
			if a.Summary, ok = d.str(); !ok {
				return a, false
			}
		case "model":
			if a.Model, ok = d.str(); !ok {
				return a, false
			}
		case "live":
			if a.Live, ok = d.boolean(); !ok {
				return a, false
			}
		default:
			xs, ok := d.strs()
			if !ok {
				return a, false
			}
			*answerList(&a, key) = xs
		}
		d.space()
		if d.byte('}') {
			break
		}
		if !d.byte(',') {
			return a, false
		}
	}
	d.space()
	if d.i != len(d.s) || seen&answerRequired != answerRequired {
		return openrecall.Analysis{}, false
	}
	return a, true
}

// answerFields are the schema's members, each with its bit.
var answerFields = map[string]uint16{
	"decision": 1, "confidence": 2, "summary": 4, "hypotheses": 8, "verification_commands": 16,
	"next_steps": 32, "skip_paths": 64, "cited_memory_ids": 128, "model": 256, "live": 512,
}

const answerRequired = 1 | 2

// answerList returns a's list member named key.
func answerList(a *openrecall.Analysis, key string) *[]string {
	switch key {
	case "hypotheses":
		return &a.Hypotheses
	case "verification_commands":
		return &a.Verify
	case "next_steps":
		return &a.NextSteps
	case "skip_paths":
		return &a.SkipPaths
	}
	return &a.CitedMemory
}

type answerDecoder struct {
	s string
	i int
}

func (d *answerDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *answerDecoder) byte(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// str reads a string, decoded as encoding/json decodes it.
func (d *answerDecoder) str() (string, bool) {
	end, plain, ok := jsonfast.ScanString(d.s, d.i)
	if !ok {
		return "", false
	}
	tok := d.s[d.i:end]
	d.i = end
	if plain {
		return tok[1 : len(tok)-1], true
	}
	return jsonfast.Unquote(tok), true
}

// strs reads an array of strings ([] gives an empty, non-nil list, as
// encoding/json does).
func (d *answerDecoder) strs() ([]string, bool) {
	if !d.byte('[') {
		return nil, false
	}
	xs := []string{}
	d.space()
	if d.byte(']') {
		return xs, true
	}
	for {
		d.space()
		x, ok := d.str()
		if !ok {
			return nil, false
		}
		xs = append(xs, x)
		d.space()
		if d.byte(']') {
			return xs, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// number reads a JSON number that float64 holds.
func (d *answerDecoder) number() (float64, bool) {
	start := d.i
	d.byte('-')
	switch {
	case d.byte('0'):
	case d.i < len(d.s) && '1' <= d.s[d.i] && d.s[d.i] <= '9':
		d.digits()
	default:
		return 0, false
	}
	if d.byte('.') {
		if d.digits() == 0 {
			return 0, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if !d.byte('+') {
			d.byte('-')
		}
		if d.digits() == 0 {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	return f, err == nil
}

func (d *answerDecoder) digits() int {
	n := 0
	for d.i < len(d.s) && '0' <= d.s[d.i] && d.s[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

func (d *answerDecoder) boolean() (bool, bool) {
	switch {
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return true, true
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return false, true
	}
	return false, false
}
