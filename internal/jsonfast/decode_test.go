package jsonfast

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeString holds DecodeString to json.Unmarshal into a string, on
// any bytes, and Unquote of a string token to Unquote of its bytes.
func FuzzDecodeString(f *testing.F) {
	for _, seed := range []string{`"plain"`, `"a\nb\u003e"`, `"\ud83d\u0041\ud800"`, "\"\xed\xa0\x80\"", `null`, `5`, `"a`, `"\'"`, ` "x" `, "\"a\x01\"", `"\uD83D\uDE00"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := DecodeString(raw)
		var want string
		wantOK := json.Unmarshal(raw, &want) == nil
		if ok != wantOK || got != want {
			t.Fatalf("DecodeString(%q) = %q, %v; json.Unmarshal gives %q, %v", raw, got, ok, want, wantOK)
		}
		end, plain, ok := ScanString(raw, 0)
		if sEnd, sPlain, sOK := ScanString(string(raw), 0); sEnd != end || sPlain != plain || sOK != ok {
			t.Fatalf("ScanString(%q) of a string = %d, %v, %v; of bytes %d, %v, %v", raw, sEnd, sPlain, sOK, end, plain, ok)
		}
		if ok {
			if b, s := Unquote(raw[:end]), Unquote(string(raw[:end])); b != s {
				t.Fatalf("Unquote(%q) of a string = %q; of bytes %q", raw[:end], s, b)
			}
		}
	})
}

// TestUnquoteAllocatesOnce checks that decoding a string with escapes
// allocates only the string it returns.
func TestUnquoteAllocatesOnce(t *testing.T) {
	tok := []byte(`"a \"quoted\" word, a tab\t and an \u00e9 in caf\u00e9"`)
	text := string(tok)
	if n := testing.AllocsPerRun(100, func() { _ = Unquote(tok) }); n != 1 {
		t.Errorf("Unquote of bytes: %v allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Unquote(text) }); n != 1 {
		t.Errorf("Unquote of a string: %v allocations, want 1", n)
	}
}
