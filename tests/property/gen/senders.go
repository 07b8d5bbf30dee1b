package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall/intake/sender"
)

// SenderFixture is one payload of a sender's fixtures
// (intake/testdata/senders/<sender>/*.json, golden.json and identity.json
// excepted), as the sender posts it.
type SenderFixture struct {
	Dir, Name string
	Body      []byte
	Tree      JSONNode
	// Places are the tree's places, in pre-order.
	Places []JSONPlace
}

// Sender returns the fixture folder's sender.
func (f SenderFixture) Sender() sender.Sender {
	s, _ := sender.Lookup(f.Dir)
	return s
}

var (
	fixturesOnce sync.Once
	fixtures     map[string][]SenderFixture
	fixtureDirs  []string
	adapterDirs  []string
	fixturesErr  error
	levelSenders []sender.Sender
)

// senderFixtureRoot is intake/testdata/senders, found from this file's own
// place so that any package's tests can read it.
func senderFixtureRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "intake", "testdata", "senders")
}

func loadFixtures() {
	root := senderFixtureRoot()
	entries, err := os.ReadDir(root)
	if err != nil {
		fixturesErr = err
		return
	}
	fixtures = map[string][]SenderFixture{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		names, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.json"))
		sort.Strings(names)
		for _, n := range names {
			base := filepath.Base(n)
			if base == "golden.json" || base == "identity.json" {
				continue
			}
			body, err := os.ReadFile(n)
			if err != nil {
				fixturesErr = err
				return
			}
			tree, err := ParseJSONTree(body)
			if err != nil {
				fixturesErr = fmt.Errorf("%s/%s: %v", e.Name(), base, err)
				return
			}
			fixtures[e.Name()] = append(fixtures[e.Name()], SenderFixture{Dir: e.Name(), Name: base, Body: body, Tree: tree, Places: tree.Places()})
		}
		if len(fixtures[e.Name()]) > 0 {
			fixtureDirs = append(fixtureDirs, e.Name())
			if s, ok := sender.Lookup(e.Name()); ok && !s.Builtin {
				adapterDirs = append(adapterDirs, e.Name())
			}
		}
	}
	for _, s := range sender.All() {
		if len(s.Levels) > 0 {
			levelSenders = append(levelSenders, s)
		}
	}
}

// SenderFixtures returns every sender's fixtures, by folder, in folder and
// file name order. It panics when the fixtures cannot be read.
func SenderFixtures() (dirs []string, byDir map[string][]SenderFixture) {
	fixturesOnce.Do(loadFixtures)
	if fixturesErr != nil {
		panic(fmt.Sprintf("sender fixtures: %v", fixturesErr))
	}
	return fixtureDirs, fixtures
}

// AllSenderFixtures returns every fixture of every sender, in order.
func AllSenderFixtures() []SenderFixture {
	dirs, by := SenderFixtures()
	var out []SenderFixture
	for _, d := range dirs {
		out = append(out, by[d]...)
	}
	return out
}

// AdapterFixtureDirs returns the fixture folders of the senders read by an
// adapter, in the order FixtureRef's Sender indexes them.
func AdapterFixtureDirs() []string { return AdapterSenders.dirs() }

// FixturesOf returns the fixtures of one folder.
func FixturesOf(dir string) []SenderFixture {
	_, by := SenderFixtures()
	return by[dir]
}

// FixturePool names which senders' fixtures a reference draws from.
type FixturePool int

const (
	// EverySender draws from every fixture folder, built-in senders too.
	EverySender FixturePool = iota
	// AdapterSenders draws from the senders read by an adapter (Match and
	// Map), not by intake's own reader.
	AdapterSenders
)

func (p FixturePool) dirs() []string {
	dirs, _ := SenderFixtures()
	if p == EverySender {
		return dirs
	}
	return adapterDirs
}

// FixtureRef picks one fixture: a sender first (so every sender is drawn
// as often, whatever its number of fixtures), then one of its fixtures.
type FixtureRef struct {
	Pool    FixturePool
	Sender  int
	Fixture int
}

// Get returns the fixture the reference names.
func (r FixtureRef) Get() SenderFixture {
	dirs := r.Pool.dirs()
	_, by := SenderFixtures()
	fs := by[dirs[r.Sender%len(dirs)]]
	return fs[r.Fixture%len(fs)]
}

func fixtureRefGen(pool FixturePool) gopter.Gen {
	return gg.Struct(reflect.TypeOf(FixtureRef{}), map[string]gopter.Gen{
		"Pool":    gg.Const(pool),
		"Sender":  Index(len(pool.dirs()), 0),
		"Fixture": Index(16, 0),
	})
}

func validFixtureRef(r FixtureRef, pool FixturePool) error {
	if r.Pool != pool {
		return fmt.Errorf("pool %d, want %d", r.Pool, pool)
	}
	if err := indexesIn([]int{r.Sender}, len(pool.dirs()), "sender"); err != nil {
		return err
	}
	return indexesIn([]int{r.Fixture}, 16, "fixture")
}

// JSONNode is a JSON value that keeps what encoding/json forgets: the order
// of an object's members and every scalar exactly as written (escapes and
// number spellings included), so a payload can be rewritten with its
// members in another order or another layout and mean the same.
type JSONNode struct {
	// Kind is '{', '[', '"' (a string) or 'a' (a number, true, false, null).
	Kind byte
	// Raw is a scalar as written; for an object, its keys as written.
	Raw  string
	Keys []string
	// Kids are an object's member values (in Keys' order) or an array's
	// elements.
	Kids []JSONNode
}

// ParseJSONTree parses one JSON value (with nothing but white space after
// it) into a JSONNode.
func ParseJSONTree(b []byte) (JSONNode, error) {
	p := &treeParser{b: b}
	n, err := p.value()
	if err != nil {
		return JSONNode{}, err
	}
	p.space()
	if p.i != len(p.b) {
		return JSONNode{}, fmt.Errorf("data after the value at byte %d", p.i)
	}
	return n, nil
}

type treeParser struct {
	b []byte
	i int
}

func (p *treeParser) space() {
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n", p.b[p.i]) >= 0 {
		p.i++
	}
}

func (p *treeParser) value() (JSONNode, error) {
	p.space()
	if p.i >= len(p.b) {
		return JSONNode{}, fmt.Errorf("unexpected end")
	}
	switch c := p.b[p.i]; c {
	case '{', '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		n := JSONNode{Kind: c}
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == close {
			p.i++
			return n, nil
		}
		for {
			if c == '{' {
				p.space()
				k, err := p.str()
				if err != nil {
					return n, err
				}
				p.space()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return n, fmt.Errorf("want ':' at byte %d", p.i)
				}
				p.i++
				n.Keys = append(n.Keys, k)
			}
			v, err := p.value()
			if err != nil {
				return n, err
			}
			n.Kids = append(n.Kids, v)
			p.space()
			if p.i >= len(p.b) {
				return n, fmt.Errorf("unexpected end")
			}
			if p.b[p.i] == close {
				p.i++
				return n, nil
			}
			if p.b[p.i] != ',' {
				return n, fmt.Errorf("want ',' at byte %d", p.i)
			}
			p.i++
		}
	case '"':
		s, err := p.str()
		return JSONNode{Kind: '"', Raw: s}, err
	default:
		start := p.i
		for p.i < len(p.b) && strings.IndexByte(" \t\r\n,]}", p.b[p.i]) < 0 {
			p.i++
		}
		return JSONNode{Kind: 'a', Raw: string(p.b[start:p.i])}, nil
	}
}

func (p *treeParser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", fmt.Errorf("want a string at byte %d", p.i)
	}
	start := p.i
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return string(p.b[start:p.i]), nil
		}
		p.i++
	}
	return "", fmt.Errorf("unterminated string")
}

// Key returns an object member's key, decoded.
func (n JSONNode) Key(i int) string {
	var s string
	if err := jsonUnquote(n.Keys[i], &s); err != nil {
		return n.Keys[i]
	}
	return s
}

// Text returns a string node's value, decoded.
func (n JSONNode) Text() string {
	var s string
	_ = jsonUnquote(n.Raw, &s)
	return s
}

func jsonUnquote(raw string, s *string) error { return json.Unmarshal([]byte(raw), s) }

// Layouts of a rewritten payload: white space only.
func Layouts() []string {
	return []string{"compact", "two-space indent", "tab indent with CRLF", "spaced one line", "four-space indent, trailing newline"}
}

// Orders of object members in a rewritten payload.
func Orders() []string { return []string{"as written", "reversed", "sorted by key", "shuffled"} }

// Write renders the node with the members of every object in order (an
// index of Orders; shuffled by seed) and white space by layout (an index of
// Layouts).
func (n JSONNode) Write(order, seed, layout int) []byte {
	var b bytes.Buffer
	rng := rand.New(rand.NewSource(int64(seed)))
	n.write(&b, order%len(Orders()), rng, layout%len(Layouts()), 0)
	if layout%len(Layouts()) == 4 {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func (n JSONNode) write(b *bytes.Buffer, order int, rng *rand.Rand, layout, depth int) {
	nl := func(d int) {
		switch layout {
		case 1:
			b.WriteString("\n" + strings.Repeat("  ", d))
		case 2:
			b.WriteString("\r\n" + strings.Repeat("\t", d))
		case 3:
			b.WriteByte(' ')
		case 4:
			b.WriteString("\n" + strings.Repeat("    ", d))
		}
	}
	switch n.Kind {
	case '{', '[':
		open, close := "{", "}"
		if n.Kind == '[' {
			open, close = "[", "]"
		}
		b.WriteString(open)
		idx := make([]int, len(n.Kids))
		for i := range idx {
			idx[i] = i
		}
		if n.Kind == '{' {
			switch order {
			case 1:
				for i, j := 0, len(idx)-1; i < j; i, j = i+1, j-1 {
					idx[i], idx[j] = idx[j], idx[i]
				}
			case 2:
				sort.SliceStable(idx, func(i, j int) bool { return n.Keys[idx[i]] < n.Keys[idx[j]] })
			case 3:
				rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			}
		}
		for k, i := range idx {
			if k > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			if n.Kind == '{' {
				b.WriteString(n.Keys[i])
				b.WriteByte(':')
				if layout != 0 {
					b.WriteByte(' ')
				}
			}
			n.Kids[i].write(b, order, rng, layout, depth+1)
		}
		if len(idx) > 0 {
			nl(depth)
		}
		b.WriteString(close)
	default:
		b.WriteString(n.Raw)
	}
}

// JSONPlace is one value inside a payload: the path of keys and array
// indexes that leads to it, dotted ("alerts.0.labels.severity").
type JSONPlace struct {
	Steps []int // child indexes from the root
	Path  string
	Node  JSONNode
}

// Places returns every value of the tree but the root, in pre-order.
func (n JSONNode) Places() []JSONPlace {
	var out []JSONPlace
	var walk func(x JSONNode, steps []int, path string)
	walk = func(x JSONNode, steps []int, path string) {
		for i, kid := range x.Kids {
			part := strconv.Itoa(i)
			if x.Kind == '{' {
				part = x.Key(i)
			}
			p := part
			if path != "" {
				p = path + "." + part
			}
			s := append(append([]int(nil), steps...), i)
			out = append(out, JSONPlace{Steps: s, Path: p, Node: kid})
			walk(kid, s, p)
		}
	}
	walk(n, nil, "")
	return out
}

// Replace returns a copy of the tree with the value at steps replaced by v.
func (n JSONNode) Replace(steps []int, v JSONNode) JSONNode {
	if len(steps) == 0 {
		return v
	}
	c := n
	c.Kids = append([]JSONNode(nil), n.Kids...)
	c.Kids[steps[0]] = n.Kids[steps[0]].Replace(steps[1:], v)
	return c
}

// Remove returns a copy of the tree without the value at steps (an
// object's member, key and all, or an array's element).
func (n JSONNode) Remove(steps []int) JSONNode {
	if len(steps) == 0 {
		return n
	}
	c := n
	i := steps[0]
	if len(steps) == 1 {
		c.Kids = append(append([]JSONNode(nil), n.Kids[:i]...), n.Kids[i+1:]...)
		if n.Kind == '{' {
			c.Keys = append(append([]string(nil), n.Keys[:i]...), n.Keys[i+1:]...)
		}
		return c
	}
	c.Kids = append([]JSONNode(nil), n.Kids...)
	c.Kids[i] = n.Kids[i].Remove(steps[1:])
	return c
}

// Find returns the steps to the value a dotted path names, read as
// sender.Value.Path reads it (at each level the longest run of the
// remaining parts that is a key wins, if what follows it is present), and
// whether there is one.
func (n JSONNode) Find(path string) ([]int, bool) {
	return n.find(strings.Split(path, "."))
}

func (n JSONNode) find(parts []string) ([]int, bool) {
	if len(parts) == 0 {
		return nil, true
	}
	if n.Kind != '{' {
		return nil, false
	}
	for k := len(parts); k >= 1; k-- {
		key := strings.Join(parts[:k], ".")
		// encoding/json keeps the last of repeated keys.
		for i := len(n.Keys) - 1; i >= 0; i-- {
			if n.Key(i) != key {
				continue
			}
			rest, ok := n.Kids[i].find(parts[k:])
			if ok && (k == len(parts) || len(rest) == 0 || !n.Kids[i].at(rest).IsNull()) {
				return append([]int{i}, rest...), true
			}
			break
		}
	}
	return nil, false
}

func (n JSONNode) at(steps []int) JSONNode {
	for _, s := range steps {
		n = n.Kids[s]
	}
	return n
}

// IsNull reports a JSON null.
func (n JSONNode) IsNull() bool { return n.Kind == 'a' && n.Raw == "null" }

// JSONKinds are the kinds of JSON value a wrong-typed field is replaced by.
func JSONKinds() []string { return []string{"number", "bool", "null", "object", "array", "string"} }

// KindOf returns the JSONKinds index of a node.
func KindOf(n JSONNode) int {
	switch {
	case n.Kind == '{':
		return 3
	case n.Kind == '[':
		return 4
	case n.Kind == '"':
		return 5
	case n.Raw == "null":
		return 2
	case n.Raw == "true" || n.Raw == "false":
		return 1
	}
	return 0
}

// WrongValues are the values of each kind of JSONKinds, simplest first:
// zero, negative, huge and fractional numbers; both booleans; empty and
// nested objects and arrays; blank, time-like, number-like and
// placeholder-like strings.
func WrongValues() [][]string {
	return [][]string{
		{"0", "-1", "3.5", "1e308", "12345678901234567890", "-0"},
		{"true", "false"},
		{"null"},
		{"{}", `{"a":1}`, `{"value":"x","nested":{"k":[1,null]}}`},
		{"[]", `[1,"x",null]`, `[{}]`, `[["deep"]]`},
		{`""`, `" "`, `"x"`, `"2026-01-01T00:00:00Z"`, `"12"`, `"true"`, `"null"`, `"\u00e9\u200d"`},
	}
}

// SenderReading is one fixture rewritten with its members in another order
// at every level and in another layout (P48).
type SenderReading struct {
	Fixture FixtureRef
	Order   int
	Seed    int
	Layout  int
}

// Body returns the rewritten payload.
func (r SenderReading) Body() []byte { return r.Fixture.Get().Tree.Write(r.Order, r.Seed, r.Layout) }

// SenderReadingGen generates fixtures of every sender with their object
// members reversed, sorted or shuffled at every level (or as written) and
// written compact, indented (spaces, tabs and CRLF) or spaced on one line.
func SenderReadingGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(SenderReading{}), map[string]gopter.Gen{
		"Fixture": fixtureRefGen(EverySender),
		"Order":   Index(len(Orders()), 0.1),
		"Seed":    Index(1<<16, 0),
		"Layout":  Index(len(Layouts()), 0.2),
	})
}

// ValidSenderReading reports indexes outside their pools.
func ValidSenderReading(r SenderReading) error {
	if err := validFixtureRef(r.Fixture, EverySender); err != nil {
		return err
	}
	if err := indexesIn([]int{r.Order}, len(Orders()), "order"); err != nil {
		return err
	}
	if err := indexesIn([]int{r.Layout}, len(Layouts()), "layout"); err != nil {
		return err
	}
	return indexesIn([]int{r.Seed}, 1<<16, "seed")
}

// DigitRun is a run of digits: N written with Zeros leading zeros.
type DigitRun struct {
	N     int
	Zeros int
}

// String returns the run as written.
func (d DigitRun) String() string { return strings.Repeat("0", d.Zeros) + strconv.Itoa(d.N) }

// RuleShapes are rule names and ids as senders send them, '#' a run of
// digits: CVE ids, numbered disks and hosts, signature ids, bare numbers,
// hex-like ids.
func RuleShapes() []string {
	return []string{"#", "CVE-#-#", "Disk # full", "rule-#", "#:#:#", "HighCPU on web-# (#%)", "ET TROJAN Win32/Agent.# CnC",
		"monitor #", "#a#b-#c#-4#", "Check # of # failed", "5xx rate > #% for # min", "T#.00#", "sid #"}
}

// RulePads are the white space around and inside a rule value.
func RulePads() []string { return []string{"", " ", "\t", "double"} }

// RuleDigits is a fixture whose rule field is set to two values that differ
// only in digits (P49): Shape's runs of digits filled by Runs, and in the
// second value one run (At) changed — another number (Change 0) or one
// leading zero more (Change 1).
type RuleDigits struct {
	Fixture FixtureRef
	Shape   int
	Runs    []DigitRun
	At      int
	Change  int
	Delta   int
	Pad     int
}

func (r RuleDigits) fill(second bool) string {
	shape := RuleShapes()[r.Shape%len(RuleShapes())]
	var b strings.Builder
	k := 0
	for _, c := range shape {
		if c != '#' {
			b.WriteRune(c)
			continue
		}
		run := DigitRun{N: 7}
		if len(r.Runs) > 0 {
			run = r.Runs[k%len(r.Runs)]
		}
		if second && k == r.At%strings.Count(shape, "#") {
			if r.Change%2 == 0 {
				run.N += 1 + r.Delta
			} else {
				run.Zeros++
			}
		}
		b.WriteString(run.String())
		k++
	}
	s := b.String()
	switch RulePads()[r.Pad%len(RulePads())] {
	case " ":
		s = " " + s + " "
	case "\t":
		s = "\t" + s + "\n"
	case "double":
		s = strings.ReplaceAll(s, " ", "  ")
	}
	return s
}

// Values returns the two rule values.
func (r RuleDigits) Values() (string, string) { return r.fill(false), r.fill(true) }

// Digits are the numbers a run draws often: 0, 1, 9, 10, the powers and the
// limits of 32-bit and 53-bit integers, and CVE-like numbers.
func Digits() []int {
	return []int{0, 1, 9, 10, 42278, 42287, 99, 100, 1000, 2147483647, 4294967296, 9007199254740993}
}

func digitRunGen() gopter.Gen {
	edges := Digits()
	n := len(edges)
	number := gopter.DeriveGen(
		func(kind, v int) int {
			if kind < n {
				return edges[kind]
			}
			return v
		},
		func(x int) (int, int) {
			for i, e := range edges {
				if e == x {
					return i, 0
				}
			}
			return n, x
		},
		Index(n+1, 0.1), Index(1_000_000_000, 0),
	)
	return gg.Struct(reflect.TypeOf(DigitRun{}), map[string]gopter.Gen{
		"N":     number,
		"Zeros": Index(3, 0.7),
	})
}

// RuleDigitsGen generates adapter senders' fixtures with their rule field
// set to two values that differ only in digits: "CVE-2021-42278" and
// "CVE-2021-42287", "Disk 1 full" and "Disk 2 full", "7" and "07", numbers
// of 1 to 19 digits, padded or with doubled spaces.
func RuleDigitsGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(RuleDigits{}), map[string]gopter.Gen{
		"Fixture": fixtureRefGen(AdapterSenders),
		"Shape":   Index(len(RuleShapes()), 0.1),
		"Runs":    SliceUpTo(4, digitRunGen(), reflect.TypeOf(DigitRun{})),
		"At":      Index(4, 0.5),
		"Change":  Index(2, 0.6),
		"Delta":   Index(1_000_000, 0.5),
		"Pad":     Index(len(RulePads()), 0.5),
	})
}

// ValidRuleDigits reports a case whose two values do not differ, or differ
// in more than digits.
func ValidRuleDigits(r RuleDigits) error {
	if err := validFixtureRef(r.Fixture, AdapterSenders); err != nil {
		return err
	}
	for _, d := range r.Runs {
		if d.N < 0 || d.Zeros < 0 {
			return fmt.Errorf("run %+v", d)
		}
	}
	if err := indexesIn([]int{r.Shape, r.At, r.Change, r.Delta, r.Pad}, 1_000_000, "rule"); err != nil {
		return err
	}
	a, b := r.Values()
	if a == b {
		return fmt.Errorf("the two values are equal: %q", a)
	}
	strip := func(s string) string {
		return strings.Map(func(c rune) rune {
			if unicode.IsDigit(c) {
				return -1
			}
			return c
		}, s)
	}
	if strip(a) != strip(b) {
		return fmt.Errorf("%q and %q differ in more than digits", a, b)
	}
	return nil
}

// WrongType is a fixture with one value replaced by a value of another kind
// (P50): the value at place Target (modulo the fixture's places, pre-order)
// by WrongValues()[kind][Variant], kind the Kind-th of the kinds other than
// the value's own.
type WrongType struct {
	Fixture FixtureRef
	Target  int
	Kind    int
	Variant int
}

// Place returns the replaced place and the value written there.
func (w WrongType) Place() (JSONPlace, string) {
	places := w.Fixture.Get().Places
	pl := places[w.Target%len(places)]
	k := w.Kind % (len(JSONKinds()) - 1)
	if k >= KindOf(pl.Node) {
		k++
	}
	vs := WrongValues()[k]
	return pl, vs[w.Variant%len(vs)]
}

// Body returns the payload with the value replaced, compact.
func (w WrongType) Body() []byte {
	pl, v := w.Place()
	repl, err := ParseJSONTree([]byte(v))
	if err != nil {
		panic(err)
	}
	return w.Fixture.Get().Tree.Replace(pl.Steps, repl).Write(0, 0, 0)
}

// Without returns the payload without the replaced value, compact.
func (w WrongType) Without() []byte {
	pl, _ := w.Place()
	return w.Fixture.Get().Tree.Remove(pl.Steps).Write(0, 0, 0)
}

// WrongTypeGen generates adapter senders' fixtures with one member or
// element, leaf or object or array, replaced by a number, boolean, null,
// object, array or string (whichever it was not).
func WrongTypeGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(WrongType{}), map[string]gopter.Gen{
		"Fixture": fixtureRefGen(AdapterSenders),
		"Target":  Index(4096, 0),
		"Kind":    Index(len(JSONKinds())-1, 0),
		"Variant": Index(8, 0.4),
	})
}

// ValidWrongType reports indexes outside their pools or a replacement of
// the value's own kind.
func ValidWrongType(w WrongType) error {
	if err := validFixtureRef(w.Fixture, AdapterSenders); err != nil {
		return err
	}
	if err := indexesIn([]int{w.Target, w.Kind, w.Variant}, 4096, "wrong type"); err != nil {
		return err
	}
	pl, v := w.Place()
	n, err := ParseJSONTree([]byte(v))
	if err != nil {
		return err
	}
	if KindOf(n) == KindOf(pl.Node) {
		return fmt.Errorf("%s replaced by %s of its own kind", pl.Path, v)
	}
	return nil
}

// LevelSenders returns the senders that document a severity scale (Levels).
func LevelSenders() []sender.Sender {
	SenderFixtures()
	return levelSenders
}

// LevelBlanks are the blanks around a severity value: none, spaces, tabs,
// line ends, a no-break space and an ideographic space.
func LevelBlanks() []string {
	return []string{"", " ", "  ", "\t", "\n", " \t\r\n", "\u00a0", "\u3000"}
}

// LevelCases are the cases a severity value is written in.
func LevelCases() []string {
	return []string{"as documented", "lower", "upper", "title", "alternating"}
}

// LevelSpelling is a documented severity value of a sender (P51) in a case
// and between blanks.
type LevelSpelling struct {
	Sender int
	Level  int
	Case   int
	Lead   int
	Trail  int
}

// Of returns the sender and the value as written.
func (l LevelSpelling) Of() (sender.Sender, string) {
	ss := LevelSenders()
	s := ss[l.Sender%len(ss)]
	w := s.Levels[l.Level%len(s.Levels)]
	switch l.Case % len(LevelCases()) {
	case 1:
		w = strings.ToLower(w)
	case 2:
		w = strings.ToUpper(w)
	case 3:
		w = strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
	case 4:
		rs := []rune(w)
		for i, r := range rs {
			if i%2 == 0 {
				rs[i] = unicode.ToUpper(r)
			} else {
				rs[i] = unicode.ToLower(r)
			}
		}
		w = string(rs)
	}
	b := LevelBlanks()
	return s, b[l.Lead%len(b)] + w + b[l.Trail%len(b)]
}

// LevelSpellingGen generates every documented severity value of every
// sender, in any case, between blanks.
func LevelSpellingGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(LevelSpelling{}), map[string]gopter.Gen{
		"Sender": Index(len(LevelSenders()), 0),
		"Level":  Index(24, 0),
		"Case":   Index(len(LevelCases()), 0.2),
		"Lead":   Index(len(LevelBlanks()), 0.4),
		"Trail":  Index(len(LevelBlanks()), 0.4),
	})
}

// ValidLevelSpelling reports indexes outside their pools.
func ValidLevelSpelling(l LevelSpelling) error {
	if err := indexesIn([]int{l.Sender}, len(LevelSenders()), "sender"); err != nil {
		return err
	}
	if err := indexesIn([]int{l.Case}, len(LevelCases()), "case"); err != nil {
		return err
	}
	if err := indexesIn([]int{l.Lead, l.Trail}, len(LevelBlanks()), "blank"); err != nil {
		return err
	}
	return indexesIn([]int{l.Level}, 24, "level")
}
