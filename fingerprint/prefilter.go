package fingerprint

import (
	"regexp"
	"regexp/syntax"
	"slices"
)

// The prefilter decides, in one pass over a string, which patterns can
// possibly match it. Each pattern's required literals are derived from its
// syntax tree as clauses: every string the pattern matches holds, for one of
// its clauses, a literal of each of the clause's sets ('port.?scan|nmap' is
// (port and scan) or nmap). Every set goes into one Aho–Corasick automaton,
// and a pattern's regex runs only on strings where one of its clauses holds.
// Patterns without a required literal always run. A pattern that is nothing
// but literals (such as 'latency' or 'flyway|liquibase') needs no regex at
// all: a literal found is a match.

// literalSet is what the prefilter knows of one compiled pattern.
type literalSet struct {
	// clauses are the pattern's required literals: one clause holds in
	// every string the pattern matches, that is, the string holds a
	// literal of each of the clause's sets. nil means the pattern has none
	// and always runs.
	clauses [][][]string
	// exact says the pattern matches exactly the strings holding one of
	// the literals of its single clause's single set.
	exact bool
}

// patternLiterals derives the literal set of a compiled regular expression
// from the syntax tree the regexp package compiled (re-parsed from its
// string, as regexp.Compile does).
func patternLiterals(re *regexp.Regexp) literalSet {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return literalSet{}
	}
	if lits, ok := exactLiterals(tree); ok {
		return literalSet{clauses: [][][]string{{dedupe(lits)}}, exact: true}
	}
	clauses := literalClauses(tree)
	if clauses == nil {
		return literalSet{}
	}
	// Clauses of one set each hold when a literal of any of them occurs:
	// they are one clause of the union of their sets.
	var single []string
	var out [][][]string
	for _, c := range clauses {
		if len(c) == 1 {
			single = append(single, c[0]...)
		} else {
			out = append(out, c)
		}
	}
	if single != nil {
		out = append([][][]string{{dedupe(single)}}, out...)
	}
	return literalSet{clauses: out}
}

// alternativesOf returns the top-level alternatives of a compiled pattern,
// each compiled on its own, or re alone when it is not an alternation. A
// string holds a match of an alternation exactly when it holds a match of
// one of its branches, so the branches can be tried one by one: the
// prefilter then skips each branch whose literals are absent, a branch of
// literals alone needs no regex, and a branch anchored at the start (as in
// '^blackbox|^probe') runs anchored, where the whole alternation would be
// tried at every position of the string.
func alternativesOf(re *regexp.Regexp) []*regexp.Regexp {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return []*regexp.Regexp{re}
	}
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	if tree.Op != syntax.OpAlternate {
		return []*regexp.Regexp{re}
	}
	out := make([]*regexp.Regexp, 0, len(tree.Sub))
	for _, b := range tree.Sub {
		alt, err := regexp.Compile(b.String())
		if err != nil {
			return []*regexp.Regexp{re}
		}
		out = append(out, alt)
	}
	return out
}

// literalClauses returns clauses of literal sets such that every string re
// matches holds one clause (a literal of each of its sets), or nil when re
// can match without any fixed text. An alternation holds one of its
// branches' clauses; a concatenation holds a literal of each part that has
// required literals (or, when it expands to few literals, one of those).
func literalClauses(re *syntax.Regexp) [][][]string {
	switch re.Op {
	case syntax.OpLiteral:
		if l, ok := literal(re); ok {
			return [][][]string{{{l}}}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return literalClauses(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return literalClauses(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out [][][]string
		for _, b := range re.Sub {
			c := literalClauses(b)
			if c == nil {
				return nil
			}
			out = append(out, c...)
		}
		return out
	case syntax.OpConcat:
		if lits, ok := exactLiterals(re); ok {
			return [][][]string{{dedupe(lits)}}
		}
		var clause [][]string
		for _, sub := range re.Sub {
			if lits, ok := requiredLiterals(sub); ok {
				clause = append(clause, dedupe(lits))
			}
		}
		if clause != nil {
			return [][][]string{clause}
		}
	}
	return nil
}

func dedupe(lits []string) []string {
	slices.Sort(lits)
	return slices.Compact(lits)
}

// literal returns the string of a case-sensitive literal node.
func literal(re *syntax.Regexp) (string, bool) {
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
		return "", false
	}
	return string(re.Rune), true
}

// exactLiterals reports whether re matches a string exactly when the string
// contains one of the returned literals: re is a literal, an alternation of
// such, or a capture of one (unanchored, as patterns are).
func exactLiterals(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpAlternate:
		return literalsOf(re, exactLiterals)
	case syntax.OpCapture:
		return exactLiterals(re.Sub[0])
	case syntax.OpConcat:
		// The parser factors common prefixes out of alternations:
		// 'connection refused|connection reset' is 'connection
		// re(?:fused|set)'. A concatenation of literals and such
		// alternations is exact when it expands to few literals.
		out := []string{""}
		for _, sub := range re.Sub {
			lits, ok := exactLiterals(sub)
			if !ok || len(out)*len(lits) > 64 {
				return nil, false
			}
			var next []string
			for _, prefix := range out {
				for _, l := range lits {
					next = append(next, prefix+l)
				}
			}
			out = next
		}
		return out, len(re.Sub) > 0
	}
	return nil, false
}

// literalsOf returns a literal node's string, or the union of what sub gives
// for each branch of an alternation (false when any branch has none).
func literalsOf(re *syntax.Regexp, sub func(*syntax.Regexp) ([]string, bool)) ([]string, bool) {
	if re.Op == syntax.OpLiteral {
		s, ok := literal(re)
		if !ok {
			return nil, false
		}
		return []string{s}, true
	}
	var out []string
	for _, b := range re.Sub {
		lits, ok := sub(b)
		if !ok {
			return nil, false
		}
		out = append(out, lits...)
	}
	return out, true
}

// requiredLiterals returns literals at least one of which occurs in every
// string re matches, or false when there is no such set (re can match
// without any fixed text, as 'a?' or '\d+' can).
func requiredLiterals(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpAlternate:
		return literalsOf(re, requiredLiterals)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return requiredLiterals(re.Sub[0])
	case syntax.OpConcat:
		// Every part must match, so any part's set will do: take the
		// exact expansion of the whole when small, else the part whose
		// shortest literal is longest (the most selective).
		if lits, ok := exactLiterals(re); ok {
			return lits, true
		}
		var best []string
		bestLen := 0
		for _, sub := range re.Sub {
			lits, ok := requiredLiterals(sub)
			if !ok {
				continue
			}
			if n := shortest(lits); n > bestLen {
				best, bestLen = lits, n
			}
		}
		return best, best != nil
	}
	return nil, false
}

func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// matcher is an Aho–Corasick automaton over the byte strings of every
// pattern's literals, with a dense transition table over byte classes (the
// bytes that occur in some literal, and one class for all others). Each
// state carries the bitset of patterns one of whose literals ends there.
// Hand-written rather than a library's: the dense table with per-state
// pattern bitsets turns a scan into one table lookup and, at a state that
// ends literals, one OR of a few words per byte, with no allocation and no
// match list to walk; general-purpose libraries report matches (positions,
// leftmost-longest) that the prefilter does not need.
//
// The table holds, for each state and class, the next state with its top
// bit set when that state ends literals: a scan follows one load per byte
// and looks at no second array until a literal ends. Its entries are 16
// bits wide while the states fit (the default rules' automata do), else 32:
// the table is read at random, once per byte, and outside a benchmark's
// loop other work has evicted it, so its size is what a scan costs. A state's bitset is kept
// as its non-zero words only (most states that end literals end those of
// one or two patterns), so a state that ends literals ORs in a word or two
// rather than every word of the bitset.
type matcher struct {
	class   [256]uint8
	classes int
	// next16 or else next32 holds, at state*classes+class, the following
	// state, its top bit set when that state ends literals.
	next16 []uint16
	next32 []uint32
	// outs[outAt[state]:outAt[state+1]] are the non-zero words of the
	// bitset of patterns found on reaching state.
	outAt []int32
	outs  []outWord
	words int
}

// outWord is one non-zero word of a state's pattern bitset.
type outWord struct {
	word int
	bits uint64
}

// newMatcher builds the automaton for sets[i], the literals of pattern i.
func newMatcher(sets [][]string) *matcher {
	m := &matcher{words: (len(sets) + 63) / 64}
	if m.words == 0 {
		m.words = 1
	}
	// Byte classes: 0 for bytes in no literal.
	for _, lits := range sets {
		for _, l := range lits {
			for i := 0; i < len(l); i++ {
				if m.class[l[i]] == 0 {
					m.classes++
					m.class[l[i]] = uint8(m.classes)
				}
			}
		}
	}
	m.classes++
	// The trie, states numbered from 0 (the root); -1 is no edge yet.
	var (
		next   []int32
		out    []uint64
		hasOut []bool
	)
	addState := func() int32 {
		for range m.classes {
			next = append(next, -1)
		}
		out = append(out, make([]uint64, m.words)...)
		hasOut = append(hasOut, false)
		return int32(len(hasOut) - 1)
	}
	addState()
	for p, lits := range sets {
		for _, l := range lits {
			s := int32(0)
			for i := 0; i < len(l); i++ {
				c := int(m.class[l[i]])
				if next[int(s)*m.classes+c] < 0 {
					t := addState()
					next[int(s)*m.classes+c] = t
				}
				s = next[int(s)*m.classes+c]
			}
			out[int(s)*m.words+p/64] |= 1 << (p % 64)
			hasOut[s] = true
		}
	}
	// Breadth-first: failure links folded into the transitions, and each
	// state's outputs extended by its failure state's.
	fail := make([]int32, len(hasOut))
	var queue []int32
	for c := range m.classes {
		t := next[c]
		if t < 0 {
			next[c] = 0
			continue
		}
		fail[t] = 0
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		for w := range m.words {
			out[int(s)*m.words+w] |= out[int(f)*m.words+w]
		}
		hasOut[s] = hasOut[s] || hasOut[f]
		for c := range m.classes {
			i := int(s)*m.classes + c
			t := next[i]
			if t < 0 {
				next[i] = next[int(f)*m.classes+c]
				continue
			}
			fail[t] = next[int(f)*m.classes+c]
			queue = append(queue, t)
		}
	}
	if len(hasOut) < 1<<15 {
		m.next16 = transitions[uint16](next, hasOut)
	} else if uint64(len(hasOut)) < 1<<31 {
		m.next32 = transitions[uint32](next, hasOut)
	} else {
		panic("fingerprint: prefilter automaton too large")
	}
	m.outAt = make([]int32, len(hasOut)+1)
	for st := range hasOut {
		m.outAt[st] = int32(len(m.outs))
		for w, bits := range out[st*m.words : (st+1)*m.words] {
			if bits != 0 {
				m.outs = append(m.outs, outWord{w, bits})
			}
		}
	}
	m.outAt[len(hasOut)] = int32(len(m.outs))
	return m
}

// transitions returns next as entries of type T, each with its top bit set
// when the state it leads to ends literals.
func transitions[T uint16 | uint32](next []int32, hasOut []bool) []T {
	top := ^(^T(0) >> 1)
	out := make([]T, len(next))
	for i, t := range next {
		out[i] = T(t)
		if hasOut[t] {
			out[i] |= top
		}
	}
	return out
}

// scan ORs into mask the bitset of every pattern one of whose literals
// occurs in s.
func (m *matcher) scan(s string, mask []uint64) {
	if m.next16 != nil {
		scanWith(m, m.next16, s, mask)
		return
	}
	scanWith(m, m.next32, s, mask)
}

func scanWith[T uint16 | uint32](m *matcher, next []T, s string, mask []uint64) {
	top := ^(^T(0) >> 1)
	st := uint32(0)
	classes := uint32(m.classes)
	for i := 0; i < len(s); i++ {
		t := next[st*classes+uint32(m.class[s[i]])]
		st = uint32(t &^ top)
		if t&top != 0 {
			for _, o := range m.outs[m.outAt[st]:m.outAt[st+1]] {
				mask[o.word] |= o.bits
			}
		}
	}
}
