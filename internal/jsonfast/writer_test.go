package jsonfast

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendStringMatchesEncodingJSON compares the string encoder with
// encoding/json, both HTML modes, on strings that put every byte value at
// every offset of an 8-byte word, and on random strings.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var cases []string
	for c := range 256 {
		for off := range 9 {
			cases = append(cases, strings.Repeat("a", off)+string([]byte{byte(c)})+strings.Repeat("b", 16-off))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "Z", " ", "\"", "\\", "<", ">", "&", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "😀"}
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		for _, html := range []bool{true, false} {
			var buf strings.Builder
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if got, want := string(AppendString(nil, s, html)), strings.TrimSuffix(buf.String(), "\n"); got != want {
				t.Fatalf("AppendString(%q, html %v) = %s, encoding/json %s", s, html, got, want)
			}
		}
	}
}
