package fingerprint

import "strings"

// maskHost returns s with every whole-word occurrence of host (ASCII
// letters compared without case) blanked out; s itself when host is empty
// or absent. A word is whole when neither neighbour is an ASCII letter, a
// digit, an underscore or a byte of a non-ASCII character: the host db-2 is masked in "disk full on db-2." but
// not in "db-20", and the host db is not masked in "mongodb".
func maskHost(s, host string) string {
	if host == "" || len(host) > len(s) {
		return s
	}
	var b strings.Builder
	from := 0
	for i := 0; i+len(host) <= len(s); {
		j := indexFold(s[i:], host)
		if j < 0 {
			break
		}
		at, end := i+j, i+j+len(host)
		if (at == 0 || !wordByte(s[at-1])) && (end == len(s) || !wordByte(s[end])) {
			b.WriteString(s[from:at])
			b.WriteByte(' ')
			from = end
			i = end
			continue
		}
		i = at + 1
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

// maskHosts masks host in each line of lines, in place.
func maskHosts(lines []string, host string) []string {
	if host == "" {
		return lines
	}
	for i, l := range lines {
		lines[i] = maskHost(l, host)
	}
	return lines
}

// indexFold is strings.Index comparing ASCII letters without case (sub is
// not empty).
func indexFold(s, sub string) int {
	lo, up := sub[0], sub[0]
	if 'A' <= lo && lo <= 'Z' {
		lo += 'a' - 'A'
	}
	if 'a' <= up && up <= 'z' {
		up -= 'a' - 'A'
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if (s[i] == lo || s[i] == up) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
