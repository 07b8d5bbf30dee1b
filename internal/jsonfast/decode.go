package jsonfast

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// text is what the decoder reads: a document as bytes or as a string.
type text interface{ string | []byte }

// DecodeString decodes raw, a JSON value, into a string exactly as
// json.Unmarshal does (null gives ""); ok is false when json.Unmarshal
// fails. A string token is decoded in one pass without reflection.
func DecodeString(raw []byte) (string, bool) {
	if end, plain, ok := ScanString(raw, 0); ok && end == len(raw) {
		if plain {
			return string(raw[1 : end-1]), true
		}
		return Unquote(raw), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// ScanString reads the JSON string token that starts at s[i] and returns
// the index just past its closing quote; plain is true when it holds only
// printable ASCII and no escape, so that its bytes between the quotes are
// its value; ok is false when s[i:] does not start with a string token. It
// checks what encoding/json's scanner checks: no control character, and
// escapes of one of "\/bfnrt or u and four hex digits. Bytes of 0x80 and
// above are taken as they are (Unquote turns invalid UTF-8 into U+FFFD).
func ScanString[T text](s T, i int) (end int, plain, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false, false
	}
	plain = true
	for i++; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, plain, true
		case c < 0x20:
			return i, false, false
		case c == '\\':
			plain = false
			if i+1 >= len(s) {
				return i, false, false
			}
			i++
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) {
					return i, false, false
				}
				for k := i + 1; k < i+5; k++ {
					if !isHex(s[k]) {
						return i, false, false
					}
				}
				i += 4
			default:
				return i, false, false
			}
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return i, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Unquote decodes tok, a JSON string token that ScanString accepted,
// exactly as encoding/json decodes it into a string (its unquoteBytes):
// escapes resolved, a surrogate pair joined, a lone surrogate and every
// byte of invalid UTF-8 turned into U+FFFD.
func Unquote[T text](tok T) string {
	s := tok[1 : len(tok)-1]
	var b strings.Builder
	b.Grow(len(s) + utf8.UTFMax)
	for r := 0; r < len(s); {
		// A run of printable ASCII is copied whole.
		run := r
		for run < len(s) && s[run] != '\\' && s[run] < utf8.RuneSelf {
			run++
		}
		write(&b, s[r:run])
		if r = run; r == len(s) {
			break
		}
		if s[r] >= utf8.RuneSelf {
			rr, size := decodeRune(s[r:])
			b.WriteRune(rr)
			r += size
			continue
		}
		r++ // the backslash
		switch s[r] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			rr := hex4(s[r+1 : r+5])
			r += 5
			if utf16.IsSurrogate(rr) {
				if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); dec != unicode.ReplacementChar {
						b.WriteRune(dec)
						r += 6
						continue
					}
				}
				rr = unicode.ReplacementChar
			}
			b.WriteRune(rr)
			continue
		default: // '"', '\\', '/'
			b.WriteByte(s[r])
		}
		r++
	}
	return b.String()
}

// write writes s to b.
func write[T text](b *strings.Builder, s T) {
	switch s := any(s).(type) {
	case string:
		b.WriteString(s)
	case []byte:
		b.Write(s)
	}
}

// decodeRune is utf8.DecodeRune of bytes or a string.
func decodeRune[T text](s T) (rune, int) {
	switch s := any(s).(type) {
	case []byte:
		return utf8.DecodeRune(s)
	case string:
		return utf8.DecodeRuneInString(s)
	}
	return utf8.RuneError, 1 // not reached: text is string or []byte
}

// hex4 is the value of four hex digits.
func hex4[T text](h T) rune {
	var r rune
	for k := range 4 {
		c := h[k]
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
