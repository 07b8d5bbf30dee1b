package jsonfast

import (
	"bytes"
	"testing"
)

// TestPrintableASCIIEveryByteEveryOffset checks the word-at-a-time
// PrintableASCII against the byte rule for every byte value at every
// offset of two words.
func TestPrintableASCIIEveryByteEveryOffset(t *testing.T) {
	for c := range 256 {
		for off := range 17 {
			b := append(bytes.Repeat([]byte("x"), off), byte(c))
			b = append(b, bytes.Repeat([]byte("y"), 20-off)...)
			want := c < 0x7f && (c >= 0x20 || c == '\n' || c == '\t')
			if got := PrintableASCII(b); got != want {
				t.Fatalf("PrintableASCII with byte %#x at %d = %v, want %v", c, off, got, want)
			}
			// After a newline (a word judged byte by byte) too.
			nl := append([]byte("ab\ncd"), b...)
			if got := PrintableASCII(nl); got != want {
				t.Fatalf("PrintableASCII after a newline with byte %#x at %d = %v, want %v", c, off, got, want)
			}
		}
	}
}
