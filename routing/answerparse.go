package routing

import (
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
	d := answerDecoder{jsonfast.Scanner[string]{S: text}}
	d.Space()
	if empty, ok := d.Open('{'); !ok || empty {
		return a, false // not an object, or no decision
	}
	var seen uint16
	for {
		key, ok := d.str()
		if !ok || !d.Colon() {
			return a, false
		}
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
			a.Decision = decisionOf(s)
		case "confidence":
			if a.Confidence, ok = d.Number(); !ok {
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
			if a.Live, ok = d.Bool(); !ok {
				return a, false
			}
		default:
			xs, ok := d.strs()
			if !ok {
				return a, false
			}
			*answerList(&a, key) = xs
		}
		more, ok := d.Next('}')
		if !ok {
			return a, false
		}
		if !more {
			break
		}
	}
	if !d.End() || seen&answerRequired != answerRequired {
		return openrecall.Analysis{}, false
	}
	return a, true
}

// decisionOf returns decision s without sharing the answer's memory: the
// product's constant when s is one, else a copy. A decision outlives its
// answer (an open group's head keeps it for as long as the group may
// grow), and a substring would keep the whole answer text alive with it.
func decisionOf(s string) openrecall.Decision {
	for _, d := range openrecall.Decisions {
		if string(d) == s {
			return d
		}
	}
	return openrecall.Decision(strings.Clone(s))
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

// answerDecoder reads the plain shape of an answer that decodeAnswer takes.
type answerDecoder struct {
	jsonfast.Scanner[string]
}

// str reads a string, decoded as encoding/json decodes it.
func (d *answerDecoder) str() (string, bool) {
	start, plain, ok := d.Token()
	if !ok {
		return "", false
	}
	if plain {
		return d.S[start+1 : d.I-1], true
	}
	return jsonfast.Unquote(d.S[start:d.I]), true
}

// strs reads an array of strings ([] gives an empty, non-nil list, as
// encoding/json does).
func (d *answerDecoder) strs() ([]string, bool) {
	empty, ok := d.Open('[')
	if !ok {
		return nil, false
	}
	xs := []string{}
	if empty {
		return xs, true
	}
	for {
		x, ok := d.str()
		if !ok {
			return nil, false
		}
		xs = append(xs, x)
		more, ok := d.Next(']')
		if !ok {
			return nil, false
		}
		if !more {
			return xs, true
		}
	}
}
