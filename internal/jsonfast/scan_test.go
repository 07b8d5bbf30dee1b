package jsonfast

import (
	"encoding/json"
	"testing"
)

// TestScannerNumber holds Number to the JSON grammar and to what
// encoding/json decodes into a float64.
func TestScannerNumber(t *testing.T) {
	for _, in := range []string{"0", "-0", "1", "0.5", "-12.25e3", "1E+2", "3e-1", "01", "1.", ".5", "-", "1e", "+1", "1e+", "0x1", "1e400"} {
		d := Scanner[string]{S: in}
		got, ok := d.Number()
		ok = ok && d.I == len(in)
		var want float64
		wantOK := json.Unmarshal([]byte(in), &want) == nil
		if ok != wantOK || (ok && got != want) {
			t.Errorf("Number(%q) = %v, %v; encoding/json: %v, %v", in, got, ok, want, wantOK)
		}
	}
}

// TestScannerMembers reads an object's members and an array's elements as
// the decoders do.
func TestScannerMembers(t *testing.T) {
	d := Scanner[[]byte]{S: []byte(` { "a" : true , "b":[ null ,"x"] } `)}
	d.Space()
	var names []string
	if empty, ok := d.Open('{'); !ok || empty {
		t.Fatalf("Open = %v, %v", empty, ok)
	}
	for {
		start, _, ok := d.Token()
		if ok {
			names = append(names, string(d.S[start+1:d.I-1]))
		}
		if !ok || !d.Colon() {
			t.Fatalf("member name at %d", d.I)
		}
		if names[len(names)-1] == "a" {
			if v, ok := d.Bool(); !ok || !v {
				t.Fatalf("Bool = %v, %v", v, ok)
			}
		} else {
			if empty, ok := d.Open('['); !ok || empty {
				t.Fatalf("Open('[') = %v, %v", empty, ok)
			}
			n := 0
			for more := true; more; n++ {
				if !d.SkipScalar() {
					t.Fatalf("SkipScalar at %d", d.I)
				}
				if more, ok = d.Next(']'); !ok {
					t.Fatalf("Next(']') at %d", d.I)
				}
			}
			if n != 2 {
				t.Errorf("%d elements, want 2", n)
			}
		}
		more, ok := d.Next('}')
		if !ok {
			t.Fatalf("Next at %d", d.I)
		}
		if !more {
			break
		}
	}
	if !d.End() || len(names) != 2 {
		t.Errorf("names %v, end %v", names, d.End())
	}
	if e := (Scanner[string]{S: "[ ]"}); true {
		if empty, ok := e.Open('['); !ok || !empty {
			t.Errorf("Open of [ ] = %v, %v", empty, ok)
		}
	}
}
