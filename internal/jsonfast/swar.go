package jsonfast

import "encoding/binary"

// Word-at-a-time tests: eight bytes read as one little-endian word, judged
// with a few integer operations. Each may say false of a word whose bytes
// all pass (the caller then judges them one by one), never true of one with
// a byte that does not.

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// load8 returns the 8 bytes of s from i as a little-endian word.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hasZeroByte is non-zero when a byte of w is 0.
func hasZeroByte(w uint64) uint64 { return (w - ones) & ^w & high }

// plainWord reports whether the 8 bytes of w are ASCII a JSON string holds
// as they are: none below 0x20 or from 0x80, no '"' or '\\', and no '<',
// '>' or '&' when escapeHTML.
func plainWord(w uint64, escapeHTML bool) bool {
	bad := w&high | (w-0x20*ones)&^w&high | hasZeroByte(w^'"'*ones) | hasZeroByte(w^'\\'*ones)
	if escapeHTML {
		bad |= hasZeroByte(w^'<'*ones) | hasZeroByte(w^'>'*ones) | hasZeroByte(w^'&'*ones)
	}
	return bad == 0
}

// printableWord reports whether the 8 bytes of w are printable ASCII: none
// below 0x20 (a newline or a tab included), no DEL, none from 0x80.
func printableWord(w uint64) bool {
	return w&high|(w-0x20*ones)&^w&high|(w^0x7f*ones-ones)&^(w^0x7f*ones)&high == 0
}

// PrintableASCII reports whether b is printable ASCII, tabs and newlines
// only: text a terminal shows as it is, which the command's terminal
// sanitizer writes unchanged.
func PrintableASCII(b []byte) bool {
	plain := func(c byte) bool { return c < 0x7f && (c >= 0x20 || c == '\n' || c == '\t') }
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if printableWord(binary.LittleEndian.Uint64(b[i:])) {
			continue
		}
		for _, c := range b[i : i+8] {
			if !plain(c) {
				return false
			}
		}
	}
	for _, c := range b[i:] {
		if !plain(c) {
			return false
		}
	}
	return true
}
