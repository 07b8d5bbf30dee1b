package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/openrecall/openrecall/internal/jsonfast"
)

// terminalSafe returns s with every character that could steer a terminal
// written as a visible escape: C0 controls other than tab and newline
// (ESC starts the sequences that rewrite the title bar or clear the
// screen), DEL, C1 controls, the bidirectional overrides, embeddings,
// isolates and marks (U+202E makes text read backwards), the line and
// paragraph separators, and bytes that are not UTF-8. A character becomes
// \uXXXX (a byte \xNN), so JSON stays valid and decodes to the same value.
// It is the one sanitizer of everything the commands print.
func terminalSafe(s string) string {
	i := unsafeIndex(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case steers(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeIndex returns the index of the first character terminalSafe
// rewrites, or -1.
func unsafeIndex(s string) int {
	for i, r := range s {
		if steers(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) {
			return i
		}
	}
	return -1
}

// steers reports whether r is a character terminalSafe escapes.
func steers(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// safeWriter writes everything through terminalSafe. A character split
// across two writes is held back until its end arrives (or Flush). It is
// not safe for concurrent use, as the writers it wraps.
type safeWriter struct {
	w       io.Writer
	pending []byte
}

// Write writes terminalSafe(p), holding back an incomplete last character.
func (s *safeWriter) Write(p []byte) (int, error) {
	buf := p
	if len(s.pending) > 0 {
		buf = append(s.pending, p...)
		s.pending = nil
	}
	// Hold back the start of a character whose end is still to come.
	for k := 1; k <= utf8.UTFMax-1 && k <= len(buf); k++ {
		if tail := buf[len(buf)-k:]; utf8.RuneStart(tail[0]) {
			if !utf8.FullRune(tail) {
				s.pending = append([]byte(nil), tail...)
				buf = buf[:len(buf)-k]
			}
			break
		}
	}
	var err error
	if jsonfast.PrintableASCII(buf) {
		_, err = s.w.Write(buf)
	} else {
		_, err = io.WriteString(s.w, terminalSafe(string(buf)))
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what Write held back, escaped as the bytes it is.
func (s *safeWriter) Flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(s.w, terminalSafe(string(s.pending)))
	s.pending = nil
	return err
}
