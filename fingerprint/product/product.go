// Package product recognises security detection products by the names
// their vendors and users write them (DESIGN §4, "Security evidence,
// wherever and however it is written"): "Splunk Enterprise Security",
// splunk-es, "Google SecOps", chronicle, "Microsoft Sentinel", GuardDuty,
// Wazuh, Falco and the others of products.tsv, an embedded list kept as
// data with where each spelling comes from.
//
// A List matches the value of a source-like field (SourceKey says which
// keys are: source, sender, tool, product, vendor, provider, integration,
// detector, logsource, …) robustly to case, spaces, hyphens, underscores and
// dots, and never on an ordinary word: a spelling marked "whole" counts only
// as the whole value, one marked "words" when its words appear together in
// the value. A List is immutable and safe for concurrent use. The package
// imports only the standard library.
package product

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

//go:embed products.tsv
var productsTSV string

// ErrInvalid marks a list file that does not have the documented format.
var ErrInvalid = errors.New("invalid product list")

// Spelling is one way a product is written.
type Spelling struct {
	Product  string // "Splunk Enterprise Security"
	Spelling string // "splunk_es"
	// Whole says only the whole value counts; else the spelling's words
	// appearing together in the value count too.
	Whole bool
	// Where is where the spelling comes from (a vendor's documentation).
	Where string
}

// List is a set of spellings of security products.
type List struct {
	spellings []Spelling
	compact   map[string]int   // spelling without separators → index
	words     map[string][]int // first word of a "words" spelling → indexes
	tokens    [][]string       // per spelling, its words
}

// Default returns the embedded list, parsed on first use. It panics only if
// the embedded file is broken, which the package's tests rule out.
func Default() *List { return defaultList() }

var defaultList = sync.OnceValue(func() *List {
	l, err := Parse(strings.NewReader(productsTSV))
	if err != nil {
		panic("product: embedded products.tsv: " + err.Error())
	}
	return l
})

// Parse reads a list in the format of products.tsv: '#' comment lines, then
// tab-separated records "PRODUCT SPELLING MATCH WHERE", MATCH "words" or
// "whole".
func Parse(r io.Reader) (*List, error) {
	var sp []Spelling
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: %d fields, want 4 (product, spelling, match, where): %w", line, len(f), ErrInvalid)
		}
		if f[3] == "" {
			return nil, fmt.Errorf("line %d: spelling %q says not where it comes from: %w", line, f[1], ErrInvalid)
		}
		if f[2] != "words" && f[2] != "whole" {
			return nil, fmt.Errorf("line %d: match %q, want words or whole: %w", line, f[2], ErrInvalid)
		}
		sp = append(sp, Spelling{Product: f[0], Spelling: f[1], Whole: f[2] == "whole", Where: f[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(sp) == 0 {
		return nil, fmt.Errorf("no spellings: %w", ErrInvalid)
	}
	return build(sp)
}

// With returns a list with the spellings of l and the names a team adds
// (the rules file's security_sources): each counts as a whole value and as
// words appearing together in a value, as a "words" spelling does.
func (l *List) With(names []string, where string) (*List, error) {
	sp := append([]Spelling(nil), l.spellings...)
	for _, n := range names {
		sp = append(sp, Spelling{Product: strings.TrimSpace(n), Spelling: n, Where: where})
	}
	return build(sp)
}

func build(sp []Spelling) (*List, error) {
	l := &List{spellings: sp, compact: map[string]int{}, words: map[string][]int{}}
	for i, s := range sp {
		toks := tokens(lowerASCII(s.Spelling), nil)
		c := strings.Join(toks, "")
		if c == "" {
			return nil, fmt.Errorf("spelling %q of %q has no letter or digit: %w", s.Spelling, s.Product, ErrInvalid)
		}
		if _, dup := l.compact[c]; !dup {
			l.compact[c] = i
		}
		l.tokens = append(l.tokens, toks)
		if !s.Whole {
			l.words[toks[0]] = append(l.words[toks[0]], i)
		}
	}
	return l, nil
}

// Spellings returns the list's spellings in file order.
func (l *List) Spellings() []Spelling { return append([]Spelling(nil), l.spellings...) }

// Match returns the product a value names, and whether it names one.
func (l *List) Match(value string) (string, bool) {
	if len(value) == 0 || len(value) > 200 {
		return "", false
	}
	var buf [16]string
	toks := tokens(lowerASCII(value), buf[:0])
	if len(toks) == 0 {
		return "", false
	}
	var cb [200]byte
	c := cb[:0]
	for _, t := range toks {
		c = append(c, t...)
	}
	if i, ok := l.compact[string(c)]; ok {
		return l.spellings[i].Product, true
	}
	for k, t := range toks {
		for _, i := range l.words[t] {
			want := l.tokens[i]
			if k+len(want) <= len(toks) && equal(toks[k:k+len(want)], want) {
				return l.spellings[i].Product, true
			}
		}
	}
	return "", false
}

// lowerASCII lowers the ASCII letters of s only.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tokens appends to dst the runs of ASCII letters and digits of s (and of
// bytes of other scripts), which it slices.
func tokens(s string, dst []string) []string {
	start := -1
	for i := 0; i <= len(s); i++ {
		word := i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9' || s[i] >= 0x80 || s[i] >= 'A' && s[i] <= 'Z')
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			dst = append(dst, s[start:i])
			start = -1
		}
	}
	return dst
}

// sourceWords are the words of a key that say its value names the tool
// that sent the alert.
var sourceWords = map[string]bool{"source": true, "sender": true, "tool": true, "product": true, "vendor": true, "provider": true,
	"integration": true, "detector": true, "logsource": true, "generator": true, "origin": true, "module": true, "producer": true,
	"engine": true, "platform": true, "productname": true, "providername": true, "sourcename": true}

// SourceKey reports whether a key (a label, an annotation, a flattened
// path such as event.module or observer.product) says its value names the
// tool that sent the alert: one of its words (split at anything but letters
// and digits, in any case) is source, sender, tool, product, vendor,
// provider, integration, detector, logsource, generator, origin, module,
// producer, engine or platform (or productName, providerName, sourceName
// written together).
func SourceKey(key string) bool {
	if len(key) > 200 {
		return false
	}
	start := -1
	var buf [32]byte
	for i := 0; i <= len(key); i++ {
		c := byte(0)
		if i < len(key) {
			c = key[i]
		}
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			w := key[start:i]
			if len(w) <= len(buf) {
				n := copy(buf[:], w)
				for j := range n {
					buf[j] |= 0x20
				}
				if sourceWords[string(buf[:n])] {
					return true
				}
			}
			start = -1
		}
	}
	return false
}
