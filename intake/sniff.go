package intake

import (
	"bytes"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// sniffBytes is how much of the start of the input is examined to tell
// binary data and non-alert documents from alerts.
const sniffBytes = 8 << 10

// notAlerts ends every reason that rejects a whole input.
const notAlerts = "not alerts: openrecall reads JSON (Alertmanager or Grafana webhooks, Prometheus alerts, PagerDuty events, JSON Lines) or plain text, one alert per line"

// binaryReason explains why sample, the start of an input, is binary data,
// or returns "": a NUL byte, or more than a tenth of its bytes in control
// characters or invalid UTF-8.
func binaryReason(sample []byte) string {
	if i := bytes.IndexByte(sample, 0); i >= 0 {
		return fmt.Sprintf("binary data (a NUL byte at byte %d), %s", i+1, notAlerts)
	}
	bad := 0
	for i := 0; i < len(sample); {
		c := sample[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' || c == 0x7f {
				bad++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && n <= 1 {
			if !utf8.FullRune(sample[i:]) {
				break // cut by the end of the sample
			}
			bad++
		}
		i += max(n, 1)
	}
	if len(sample) > 0 && bad*10 > len(sample) {
		return fmt.Sprintf("binary data (%d of the first %d bytes are not text), %s", bad, len(sample), notAlerts)
	}
	return ""
}

var (
	yamlBlockKey = regexp.MustCompile(`^-?\s*[A-Za-z_][A-Za-z0-9_.-]*:\s*$`)
	yamlListKey  = regexp.MustCompile(`^- [A-Za-z_][A-Za-z0-9_.-]*:( |$)`)
	xmlStart     = regexp.MustCompile(`^<(\?xml|!DOCTYPE|!--|[A-Za-z][A-Za-z0-9_.:-]*[\s/>])`)
	csvHeader    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,39}$`)
)

// documentReason explains why sample, the start of an input, is a YAML,
// XML or CSV document rather than alerts, or returns "". It looks only at
// the first lines that are not blank or comments, and only when the first
// of them is not JSON.
func documentReason(sample []byte) string {
	var lines [][]byte
	for _, l := range bytes.Split(sample, []byte{'\n'}) {
		t := bytes.TrimRight(l, " \t\r")
		if len(bytes.TrimSpace(t)) == 0 || bytes.HasPrefix(bytes.TrimSpace(t), []byte{'#'}) {
			continue
		}
		lines = append(lines, t)
		if len(lines) == 20 {
			break
		}
	}
	if len(lines) == 0 {
		return ""
	}
	first := bytes.TrimSpace(lines[0])
	switch first[0] {
	case '{', '[', '"':
		return ""
	}
	if xmlStart.Match(first) {
		return "an XML document, " + notAlerts
	}
	if bytes.Equal(first, []byte("---")) || bytes.HasPrefix(first, []byte("--- ")) || bytes.HasPrefix(first, []byte("%YAML")) {
		return "a YAML document, " + notAlerts
	}
	for i := 0; i+1 < len(lines); i++ {
		next := lines[i+1]
		indented := next[0] == ' ' || next[0] == '\t' || bytes.HasPrefix(next, []byte("- "))
		if indented && (yamlBlockKey.Match(lines[i]) || (i == 0 && yamlListKey.Match(lines[i]))) {
			return "a YAML document, " + notAlerts
		}
	}
	for _, sep := range []byte{',', '\t', ';'} {
		if len(lines) >= 2 && csvLike(lines[0], lines[1], sep) {
			return "a CSV document, " + notAlerts
		}
	}
	return ""
}

// csvLike reports whether header and row are a CSV header line and a row:
// at least three fields each, as many in the row, the header's all names.
func csvLike(header, row []byte, sep byte) bool {
	fields := bytes.Split(header, []byte{sep})
	if len(fields) < 3 || len(csvFields(row, sep)) != len(fields) {
		return false
	}
	for _, f := range fields {
		f = bytes.Trim(bytes.TrimSpace(f), `"`)
		if !csvHeader.Match(f) {
			return false
		}
	}
	return true
}

// csvFields splits a CSV row at sep outside double quotes.
func csvFields(row []byte, sep byte) [][]byte {
	var out [][]byte
	quoted, start := false, 0
	for i, c := range row {
		switch {
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			out = append(out, row[start:i])
			start = i + 1
		}
	}
	return append(out, row[start:])
}

// notText explains why a line is not plain text, or returns "": invalid
// UTF-8, or a control character other than tab.
func notText(line []byte) string {
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				return fmt.Sprintf("not text: control character 0x%02x at byte %d", c, i+1)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("not text: invalid UTF-8 (byte 0x%02x at byte %d)", c, i+1)
		}
		if r >= 0x80 && r < 0xa0 {
			return fmt.Sprintf("not text: control character U+%04X at byte %d", r, i+1)
		}
		i += n
	}
	return ""
}
