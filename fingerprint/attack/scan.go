package attack

import (
	"slices"
	"strings"
)

// Scan collects the ATT&CK references of one alert, string by string. Get
// one from Table.NewScan; it belongs to one goroutine. Its results do not
// depend on the order in which strings are given.
type Scan struct {
	t *Table
	// declared are the bits of the tactics a detection declares: in a field
	// that says it holds ATT&CK (Declared), as a Sigma or Falco tag, or as
	// an ATT&CK URL. mask are the bits of the tactics merely found in text
	// (a bare id in a title or description). A declared tactic outranks a
	// found one (DESIGN §4).
	declared, mask uint16
	// inDeclared: the string being read is a declared value, so every
	// reference in it is declared.
	inDeclared bool
	// paired: the technique being read is paired with the tactic before
	// it ("TA0006:T1098", as Panther's reports write them): the pair's
	// tactic is the one meant, so the technique's own tactics are not
	// marked (it is still listed).
	paired bool
	keys   []uint32 // technique keys found, in order of discovery
}

// NewScan returns an empty Scan over the table.
func (t *Table) NewScan() *Scan { return &Scan{t: t} }

// Reset empties the scan for another alert, keeping its buffer.
func (s *Scan) Reset() { s.declared, s.mask, s.inDeclared, s.keys = 0, 0, false, s.keys[:0] }

// mark records the tactics of bits m: declared when the string being read
// is a declared value or when declared is set (a tag, a URL).
func (s *Scan) mark(m uint16, declared bool) {
	if s.paired {
		return
	}
	if declared || s.inDeclared {
		s.declared |= m
	} else {
		s.mask |= m
	}
}

// Tactic returns the attack_pattern value and the sorted technique ids of
// the references in texts (see Scan.Text); "" and nil when there are none.
func (t *Table) Tactic(texts ...string) (pattern string, techniques []string) {
	s := Scan{t: t}
	for _, x := range texts {
		s.Text(x)
	}
	return s.Pattern(), s.Techniques()
}

// Tactic is Table.Tactic on the embedded Enterprise table.
func Tactic(texts ...string) (pattern string, techniques []string) {
	return Enterprise().Tactic(texts...)
}

// Pattern returns the attack_pattern value of the first declared tactic in
// the order of DESIGN §4, else of the first tactic found in text, or ""
// when no reference was found: what a detection declares outranks what its
// text happens to mention.
func (s *Scan) Pattern() string {
	switch {
	case s.declared != 0:
		return patterns[lowest(s.declared)]
	case s.mask != 0:
		return patterns[lowest(s.mask)]
	}
	return ""
}

// Declared reports whether a tactic was declared (see Pattern).
func (s *Scan) Declared() bool { return s.declared != 0 }

// Patterns returns the attack_pattern values of every tactic found or
// declared, in the order of DESIGN §4.
func (s *Scan) Patterns() []string {
	var out []string
	all := s.mask | s.declared
	for i, p := range patterns {
		if all&(1<<i) != 0 {
			out = append(out, p)
		}
	}
	return out
}

// Techniques returns the ids of the techniques found, sorted and without
// duplicates; nil when there are none.
func (s *Scan) Techniques() []string {
	if len(s.keys) == 0 {
		return nil
	}
	keys := slices.Clone(s.keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = keyID(k)
	}
	return out
}

// TacticName is Value: a field that names tactics declares them.
func (s *Scan) TacticName(value string) { s.Value(value) }

// Value reads the value of a field that says it holds ATT&CK (its key
// names mitre, a tactic, a technique, ECS threat.*, or tags): every
// reference in it is declared. The value may be a list joined by commas,
// semicolons, pipes or line breaks; each item counts when it is, whole, a
// tactic's name in any case and spelling ("Privilege Escalation",
// "privilege-escalation", "PrivilegeEscalation", "Exfiltration"), a
// technique's name ("Valid Accounts", "Command and Scripting Interpreter:
// PowerShell"), or holds ids, tags or URLs as Text finds them; an item of
// several words is also read word by word, so "Defense Evasion Persistence"
// names both tactics.
func (s *Scan) Value(value string) {
	s.inDeclared = true
	defer func() { s.inDeclared = false }()
	for len(value) > 0 {
		i := strings.IndexAny(value, ",;|\n")
		item := value
		if i >= 0 {
			item, value = value[:i], value[i+1:]
		} else {
			value = ""
		}
		s.item(trim(item))
	}
}

// item reads one item of a declared list.
func (s *Scan) item(v string) {
	if v == "" {
		return
	}
	if num, ok := tacticNumber(v); ok {
		if m, ok := s.t.tacticBits[num]; ok {
			s.declared |= m
			return
		}
	}
	if b, ok := patternBit(v); ok && s.t.has(b) {
		s.declared |= 1 << b
		return
	}
	if key, ok := s.t.techniqueNamed(v); ok {
		s.declared |= s.t.masks[s.t.byKey[key]]
		s.keys = append(s.keys, key)
		return
	}
	before := s.declared
	s.Text(v)
	if s.declared != before || strings.IndexByte(v, ' ') < 0 {
		return
	}
	// Words: a tactic name is one to three of them ("Command and Control").
	words := strings.Fields(v)
	for i := range words {
		for n := 3; n >= 1; n-- {
			if i+n > len(words) {
				continue
			}
			if b, ok := patternBit(strings.Join(words[i:i+n], " ")); ok && s.t.has(b) {
				s.declared |= 1 << b
				break
			}
		}
	}
}

// Text finds the references anywhere in a string: technique ids (T1611,
// T1059.001; a sub-technique the table lacks counts as its parent), tactic
// ids (TA0004), Sigma tags (attack.t1059.001, attack.ta0004,
// attack.privilege_escalation, attack.privilege-escalation) and Falco tags
// (mitre_privilege_escalation). A reference is a whole token: it does not
// follow a letter, digit or one of _ . / \ - @ $ %, and no letter, digit or _
// follows it (nor one of . / \ @ followed by a letter or digit, nor - followed
// by a digit: "T1562-impair-defenses" counts). A bare id
// must be upper case (but in a Value), a technique must be in the table and a tactic must be
// one of its tactics.
func (s *Scan) Text(str string) {
	for i := 0; i < len(str); i++ {
		c := str[i]
		if c|0x20 != 't' && c|0x20 != 'a' && c|0x20 != 'm' || c == 't' && !s.inDeclared {
			continue
		}
		if c|0x20 == 'a' && hasPrefixFold(str[i:], "attack.mitre.org/") {
			if n := s.url(str[i+len("attack.mitre.org/"):]); n > 0 {
				i += len("attack.mitre.org/") + n - 1
				continue
			}
		}
		if i > 0 && joins(str[i-1]) {
			continue
		}
		var n int
		switch c | 0x20 {
		case 't':
			n = s.id(str[i:], false)
		case 'a':
			if hasPrefixFold(str[i:], "attack.") {
				n = s.sigma(str[i+len("attack."):])
				if n > 0 {
					n += len("attack.")
				}
			}
		default:
			if hasPrefixFold(str[i:], "mitre_") {
				n = s.word(str[i+len("mitre_"):], false)
				if n > 0 {
					n += len("mitre_")
				}
			}
		}
		if n > 0 {
			i += n - 1
		}
	}
}

// url reads the path of an ATT&CK URL after "attack.mitre.org/":
// techniques/T1098/, techniques/T1098/001/, tactics/TA0003/, with an
// optional versions/vN/ before them; it returns the length read or 0.
func (s *Scan) url(x string) int {
	n := 0
	if hasPrefixFold(x, "versions/v") {
		j := len("versions/v")
		for j < len(x) && (isDigit(x[j]) || x[j] == '.') {
			j++
		}
		if j < len(x) && x[j] == '/' {
			n = j + 1
		}
	}
	rest := x[n:]
	switch {
	case hasPrefixFold(rest, "techniques/"):
		n += len("techniques/")
	case hasPrefixFold(rest, "tactics/"):
		n += len("tactics/")
	default:
		return 0
	}
	if n >= len(x) || x[n]|0x20 != 't' {
		return 0
	}
	m := s.id(x[n:], true)
	if m == 0 {
		return 0
	}
	return n + m
}

// id reads a technique or tactic id at the start of x (its first letter in
// either case) and returns its length, or 0 when there is none. A
// sub-technique's number follows '.', '_' or '/' (T1098.001, t1098_001,
// T1098/001 as ATT&CK's URLs write it). declared says the id is written as
// a declaration (a tag, a URL).
func (s *Scan) id(x string, declared bool) int {
	if len(x) >= 6 && x[1]|0x20 == 'a' {
		num, ok := tacticNumber(x[:6])
		if !ok || !ends(x, 6) {
			return 0
		}
		m, ok := s.t.tacticBits[num]
		if !ok {
			return 0
		}
		s.mark(m, declared)
		if len(x) > 8 && x[6] == ':' && (x[7] == 'T' || x[7] == 't' && s.inDeclared) && x[8]|0x20 != 'a' {
			// A tactic and the technique it is meant for: "TA0006:T1098"
			// is credential access, though T1098 is also persistence.
			s.paired = true
			n := s.id(x[7:], declared)
			s.paired = false
			if n > 0 {
				return 7 + n
			}
		}
		return 6
	}
	if len(x) < 5 {
		return 0
	}
	base, ok := digits(x[1:5])
	if !ok {
		return 0
	}
	key := base * 1000
	n := 5
	if len(x) >= 9 && (x[5] == '.' || x[5] == '_' || x[5] == '/') {
		if sub, ok := digits(x[6:9]); ok && sub != 0 {
			if !ends(x, 9) {
				return 0
			}
			n = 9
			if _, ok := s.t.byKey[key+sub]; ok {
				key += sub
			}
		}
	}
	if n == 5 && !ends(x, 5) {
		return 0
	}
	i, ok := s.t.byKey[key]
	if !ok {
		return 0
	}
	s.mark(s.t.masks[i], declared)
	s.keys = append(s.keys, key)
	return n
}

// sigma reads what follows "attack." in a Sigma tag.
func (s *Scan) sigma(x string) int {
	if len(x) >= 5 && x[0]|0x20 == 't' && (isDigit(x[1]) || x[1]|0x20 == 'a') {
		return s.id(x, true)
	}
	return s.word(x, true)
}

// word reads a tactic shortname at the start of x, its words joined by '_'
// (or also '-' when hyphens is set), and returns its length or 0.
func (s *Scan) word(x string, hyphens bool) int {
	n := 0
	for n < len(x) {
		c := x[n]
		if isLetter(c) || c == '_' || hyphens && c == '-' {
			n++
			continue
		}
		break
	}
	if n == 0 || !ends(x, n) {
		return 0
	}
	b, ok := patternBit(x[:n])
	if !ok || !s.t.has(b) {
		return 0
	}
	s.declared |= 1 << b // a Sigma or Falco tag declares its tactic
	return n
}

// has says whether the table has a tactic of pattern bit b.
func (t *Table) has(b int) bool { return t.all&(1<<b) != 0 }

// ends says whether a token of length n at the start of x ends there.
func ends(x string, n int) bool {
	if n >= len(x) {
		return true
	}
	c := x[n]
	if isAlnum(c) || c == '_' {
		return false
	}
	switch c {
	case '.', '/', '\\', '@':
		return n+1 >= len(x) || !isAlnum(x[n+1])
	case '-':
		// "T1562-impair-defenses", "TA0005-defense-evasion" (tags of
		// Falco's GCP rules) name the id; "T1562-2" does not.
		return n+1 >= len(x) || !isDigit(x[n+1])
	}
	return true
}

// joins says whether a byte before a token makes it part of a longer word,
// id, file name or path.
func joins(c byte) bool {
	if isAlnum(c) {
		return true
	}
	switch c {
	case '_', '.', '/', '\\', '-', '@', '$', '%':
		return true
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

func trim(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t' || s[i] == '"' || s[i] == '\'') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '"' || s[j-1] == '\'') {
		j--
	}
	return s[i:j]
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
