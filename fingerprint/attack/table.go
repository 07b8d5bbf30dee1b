package attack

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

//go:embed enterprise.tsv
var enterpriseTSV string

// ErrInvalid marks a table file that does not have the documented format.
var ErrInvalid = errors.New("invalid ATT&CK table")

// The attack_pattern values of the ATT&CK tactics, in the order of DESIGN §4.
// When an alert names several tactics, the first of this order wins.
const (
	InitialAccess       = "initial_access"
	Execution           = "execution"
	Persistence         = "persistence"
	PrivilegeEscalation = "privilege_escalation"
	DefenseEvasion      = "defense_evasion"
	CredentialAccess    = "credential_access"
	Discovery           = "discovery"
	LateralMovement     = "lateral_movement"
	Collection          = "collection"
	CommandAndControl   = "command_and_control"
	DataExfiltration    = "data_exfiltration"
	Impact              = "impact"
	Reconnaissance      = "reconnaissance"
	ResourceDevelopment = "resource_development"
)

// patterns is the DESIGN §4 order; a tactic's bit in a mask is its index.
var patterns = [...]string{
	InitialAccess, Execution, Persistence, PrivilegeEscalation, DefenseEvasion,
	CredentialAccess, Discovery, LateralMovement, Collection, CommandAndControl,
	DataExfiltration, Impact, Reconnaissance, ResourceDevelopment,
}

// Patterns returns the attack_pattern values of the tactics in the order of
// DESIGN §4 (a new slice each call).
func Patterns() []string { return slices.Clone(patterns[:]) }

// PatternOf returns the attack_pattern value of an ATT&CK tactic shortname
// ("privilege-escalation" → "privilege_escalation", "exfiltration" →
// "data_exfiltration"), or "" for a name that is no Enterprise tactic.
// ATT&CK v19's "stealth" and "defense-impairment", the two tactics that
// replaced Defense Evasion, map to defense_evasion.
func PatternOf(shortname string) string {
	if b, ok := patternBit(shortname); ok {
		return patterns[b]
	}
	return ""
}

// patternBit maps a tactic's name, shortname or attack_pattern value, in
// any case and spelling — words joined by spaces, '-' or '_'
// ("Credential Access", "credential-access", "credential_access"), or
// written together ("CredentialAccess", as Microsoft Sentinel writes
// tactics) — to its pattern's bit.
func patternBit(name string) (int, bool) {
	var buf [32]byte
	if len(name) > len(buf) {
		return 0, false
	}
	n := copy(buf[:], name)
	joined := false
	for i := range n {
		switch c := buf[i]; {
		case c == '-' || c == ' ' || c == '_':
			buf[i] = '_'
			joined = true
		case 'A' <= c && c <= 'Z':
			buf[i] = c + 'a' - 'A'
		}
	}
	if joined {
		b, ok := tacticWords[string(buf[:n])]
		return b, ok
	}
	b, ok := tacticCompact[string(buf[:n])]
	return b, ok
}

// tacticWords maps a tactic's name with its words joined by '_', in lower
// case, to its pattern's bit; tacticCompact the same name written with no
// separator.
var tacticWords, tacticCompact = func() (words, compact map[string]int) {
	words = map[string]int{
		"exfiltration": 10,
		// ATT&CK v19 split Defense Evasion into these two tactics.
		"stealth": 4, "defense_impairment": 4,
	}
	for i, p := range patterns {
		words[p] = i
	}
	compact = map[string]int{}
	for w, b := range words {
		compact[strings.ReplaceAll(w, "_", "")] = b
	}
	return words, compact
}()

// TacticInfo is one ATT&CK tactic of the table.
type TacticInfo struct {
	ID        string // "TA0004"
	Shortname string // "privilege-escalation"
	Name      string // "Privilege Escalation"
	Pattern   string // "privilege_escalation"
}

// Technique is one ATT&CK technique or sub-technique of the table.
type Technique struct {
	ID        string   // "T1059" or "T1059.001"
	Name      string   // "Command and Scripting Interpreter"
	Tactics   []string // tactic shortnames, in the order ATT&CK lists them
	Status    string   // "active", "deprecated" or "revoked"
	RevokedBy string   // for a revoked technique, the id that replaces it
}

// Table is an ATT&CK technique → tactic table. It is immutable once built
// and safe for concurrent use.
type Table struct {
	domain, version string
	tactics         []TacticInfo
	techniques      []Technique
	byKey           map[uint32]int    // technique key → index
	masks           []uint16          // per technique, its tactics' bits
	tacticBits      map[uint16]uint16 // TA number → bit mask
	all             uint16            // bits of all the table's tactics
	// byName maps a technique's name (nameKey) to its key: a
	// sub-technique as "Parent: Sub" and, when no other technique of
	// other tactics has the same name, alone.
	byName map[string]uint32
}

// Enterprise returns the embedded ATT&CK Enterprise table, parsed on first
// use. It panics only if the embedded file is broken, which the package's
// tests rule out.
func Enterprise() *Table { return enterprise() }

var enterprise = sync.OnceValue(func() *Table {
	t, err := Parse(strings.NewReader(enterpriseTSV))
	if err != nil {
		panic("attack: embedded enterprise.tsv: " + err.Error())
	}
	return t
})

// Parse reads a table in the format of enterprise.tsv: '#' comment lines,
// then tab-separated records "version DOMAIN VERSION", "tactic TAxxxx
// SHORTNAME NAME" and "technique Txxxx[.xxx] SHORTNAMES STATUS REVOKED_BY
// NAME" (SHORTNAMES comma-separated, each a tactic of the file).
func Parse(r io.Reader) (*Table, error) {
	t := &Table{
		byKey:      map[uint32]int{},
		tacticBits: map[uint16]uint16{},
	}
	short := map[string]uint16{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, "\t")
		bad := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s: %w", line, fmt.Sprintf(format, args...), ErrInvalid)
		}
		switch f[0] {
		case "version":
			if len(f) != 3 {
				return nil, bad("version needs 2 fields, has %d", len(f)-1)
			}
			t.domain, t.version = f[1], f[2]
		case "tactic":
			if len(f) != 4 {
				return nil, bad("tactic needs 3 fields, has %d", len(f)-1)
			}
			num, ok := tacticNumber(f[1])
			if !ok {
				return nil, bad("tactic id %q", f[1])
			}
			b, ok := patternBit(f[2])
			if !ok {
				return nil, bad("tactic %q has no attack_pattern value", f[2])
			}
			if _, dup := short[f[2]]; dup {
				return nil, bad("tactic %q twice", f[2])
			}
			m := uint16(1) << b
			short[f[2]] = m
			t.tacticBits[num] = m
			t.all |= m
			t.tactics = append(t.tactics, TacticInfo{ID: f[1], Shortname: f[2], Name: f[3], Pattern: patterns[b]})
		case "technique":
			if len(f) != 6 {
				return nil, bad("technique needs 5 fields, has %d", len(f)-1)
			}
			key, ok := techniqueKey(f[1])
			if !ok {
				return nil, bad("technique id %q", f[1])
			}
			if _, dup := t.byKey[key]; dup {
				return nil, bad("technique %s twice", f[1])
			}
			switch f[3] {
			case "active", "deprecated", "revoked":
			default:
				return nil, bad("technique %s: status %q", f[1], f[3])
			}
			if f[4] != "" {
				if _, ok := techniqueKey(f[4]); !ok {
					return nil, bad("technique %s: revoked by %q", f[1], f[4])
				}
			}
			var mask uint16
			tactics := strings.Split(f[2], ",")
			for _, s := range tactics {
				m, ok := short[s]
				if !ok {
					return nil, bad("technique %s: unknown tactic %q", f[1], s)
				}
				mask |= m
			}
			t.byKey[key] = len(t.techniques)
			t.masks = append(t.masks, mask)
			t.techniques = append(t.techniques, Technique{ID: f[1], Name: f[5], Tactics: tactics, Status: f[3], RevokedBy: f[4]})
		default:
			return nil, bad("unknown record %q", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.tactics) == 0 || len(t.techniques) == 0 {
		return nil, fmt.Errorf("no tactics or no techniques: %w", ErrInvalid)
	}
	t.names()
	return t, nil
}

// names builds byName. A technique's own name counts when every technique
// of that name has the same tactics (a sub-technique's "Local Account",
// under Account Discovery and Create Account, does not); among them the
// active one stands. A sub-technique's "Parent: Sub" counts by the same
// rule unless it is some technique's own name.
func (t *Table) names() {
	t.byName = map[string]uint32{}
	own := map[string][]int{}
	full := map[string][]int{}
	var order []string
	for i, tq := range t.techniques {
		k := nameKey(tq.Name)
		if _, seen := own[k]; !seen {
			order = append(order, k)
		}
		own[k] = append(own[k], i)
	}
	var fullOrder []string
	for i, tq := range t.techniques {
		base, _, ok := strings.Cut(tq.ID, ".")
		if !ok {
			continue
		}
		key, _ := techniqueKey(base)
		p, ok := t.byKey[key]
		if !ok {
			continue
		}
		k := nameKey(t.techniques[p].Name + ": " + tq.Name)
		if _, seen := full[k]; !seen {
			fullOrder = append(fullOrder, k)
		}
		full[k] = append(full[k], i)
	}
	pick := func(k string, idx []int) {
		best := idx[0]
		for _, i := range idx {
			if t.masks[i] != t.masks[best] {
				return // techniques of other tactics share the name
			}
			if t.techniques[i].Status == "active" && t.techniques[best].Status != "active" {
				best = i
			}
		}
		key, _ := techniqueKey(t.techniques[best].ID)
		t.byName[k] = key
	}
	for _, k := range order {
		if k != "" {
			pick(k, own[k])
		}
	}
	for _, k := range fullOrder {
		if _, isOwn := own[k]; !isOwn && k != "" {
			pick(k, full[k])
		}
	}
}

// nameKey is a technique name as byName keys it: lower case, each run of
// characters other than letters and digits one space, trimmed.
func nameKey(name string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
			fallthrough
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c >= 0x80:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteByte(c)
		default:
			space = true
		}
	}
	return b.String()
}

// techniqueNamed returns the key of the technique a whole value names
// ("Valid Accounts", "Command and Scripting Interpreter: PowerShell").
func (t *Table) techniqueNamed(v string) (uint32, bool) {
	if len(v) < 3 || len(v) > 120 {
		return 0, false
	}
	key, ok := t.byName[nameKey(v)]
	return key, ok
}

// TechniqueByName returns the technique a name gives ("Valid Accounts";
// a sub-technique also as "Parent: Sub"), and whether one does: a name
// that techniques of different tactics share gives none.
func (t *Table) TechniqueByName(name string) (Technique, bool) {
	key, ok := t.techniqueNamed(name)
	if !ok {
		return Technique{}, false
	}
	tt := t.techniques[t.byKey[key]]
	tt.Tactics = slices.Clone(tt.Tactics)
	return tt, true
}

// Version returns the table's ATT&CK domain and version
// ("enterprise-attack", "18.1").
func (t *Table) Version() (domain, version string) { return t.domain, t.version }

// Tactics returns the table's tactics in the matrix order of the file.
func (t *Table) Tactics() []TacticInfo { return slices.Clone(t.tactics) }

// Techniques returns the table's techniques in id order.
func (t *Table) Techniques() []Technique {
	out := slices.Clone(t.techniques)
	for i := range out {
		out[i].Tactics = slices.Clone(out[i].Tactics)
	}
	return out
}

// Technique returns the technique with the given id ("T1059.001"; the
// letter in either case), and whether the table has it.
func (t *Table) Technique(id string) (Technique, bool) {
	key, ok := techniqueKey(id)
	if !ok {
		return Technique{}, false
	}
	i, ok := t.byKey[key]
	if !ok {
		return Technique{}, false
	}
	tt := t.techniques[i]
	tt.Tactics = slices.Clone(tt.Tactics)
	return tt, true
}

// TacticByID returns the tactic with the given id ("TA0004").
func (t *Table) TacticByID(id string) (TacticInfo, bool) {
	num, ok := tacticNumber(id)
	if !ok {
		return TacticInfo{}, false
	}
	m, ok := t.tacticBits[num]
	if !ok {
		return TacticInfo{}, false
	}
	for _, tc := range t.tactics {
		if tc.Pattern == patterns[lowest(m)] {
			return tc, true
		}
	}
	return TacticInfo{}, false
}

// techniqueKey turns "T1059" into 1059000 and "T1059.001" into 1059001.
func techniqueKey(id string) (uint32, bool) {
	if len(id) != 5 && len(id) != 9 || id[0] != 'T' && id[0] != 't' {
		return 0, false
	}
	base, ok := digits(id[1:5])
	if !ok {
		return 0, false
	}
	key := base * 1000
	if len(id) == 9 {
		if id[5] != '.' {
			return 0, false
		}
		sub, ok := digits(id[6:9])
		if !ok || sub == 0 {
			return 0, false
		}
		key += sub
	}
	return key, true
}

// tacticNumber turns "TA0004" into 4.
func tacticNumber(id string) (uint16, bool) {
	if len(id) != 6 || id[0] != 'T' && id[0] != 't' || id[1] != 'A' && id[1] != 'a' {
		return 0, false
	}
	n, ok := digits(id[2:])
	return uint16(n), ok
}

func digits(s string) (uint32, bool) {
	var n uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint32(c-'0')
	}
	return n, len(s) > 0
}

// keyID formats a technique key back as its id.
func keyID(key uint32) string {
	if sub := key % 1000; sub != 0 {
		return fmt.Sprintf("T%04d.%03d", key/1000, sub)
	}
	return fmt.Sprintf("T%04d", key/1000)
}

// lowest returns the index of the lowest set bit of a non-zero mask.
func lowest(m uint16) int {
	for i := range patterns {
		if m&(1<<i) != 0 {
			return i
		}
	}
	return -1
}
