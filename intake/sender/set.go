package sender

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
)

// Kind says where a sender of a Set comes from.
type Kind string

// Kinds of senders.
const (
	// KindReader is a built-in sender intake's own reader reads
	// (Alertmanager, Grafana, Prometheus, PagerDuty Events v2, the
	// product's own alert object).
	KindReader Kind = "built-in reader"
	// KindAdapter is a sender adapter built into the binary.
	KindAdapter Kind = "built-in adapter"
	// KindMapping is a team's mapping file that adds a sender.
	KindMapping Kind = "mapping"
	// KindOverride is a team's mapping file that replaces a built-in
	// sender of the same name.
	KindOverride Kind = "override"
)

// Set is the senders one process knows, in detection order: the built-in
// senders, then the ones a team added (DESIGN §3, "Senders as data"). It
// is a value, built once at start (Merge) and passed to whoever reads
// alerts: there is no process-wide list to change. The zero Set is the
// built-in senders (All). A Set is safe for concurrent use; it must not be
// modified.
type Set struct {
	senders []Sender
	kinds   []Kind
}

// reservedNames are names no added sender may take: the generic reading's
// and those of intake's own formats (--format auto, jsonl, json, text),
// which would shadow the sender or be shadowed by it.
var reservedNames = []string{openrecall.SenderGeneric, "jsonl", "auto", "text"}

// Merge returns the set of builtins (in their order) with extra laid over
// them: a sender of extra whose name (case-insensitive) is a built-in's
// replaces it in place (an override; a built-in intake reads itself is
// then read by extra's mapping wherever its name is used); the others are
// appended after every built-in, in extra's order, so that a team's loose
// Match never takes a payload a built-in recognises. A sender of extra
// needs a name made of letters, digits, '-', '_' and '.' (it is a URL path
// segment), not a reserved one (json, jsonl, auto, text), given once, and
// a Map; an error names the first that is not, and no set is returned.
func Merge(builtins, extra []Sender) (Set, error) {
	s := Set{senders: make([]Sender, len(builtins), len(builtins)+len(extra)), kinds: make([]Kind, len(builtins), len(builtins)+len(extra))}
	copy(s.senders, builtins)
	for i, b := range builtins {
		s.kinds[i] = KindAdapter
		if b.Builtin {
			s.kinds[i] = KindReader
		}
	}
	seen := map[string]string{} // folded name → name
	for _, e := range extra {
		if err := checkExtra(e); err != nil {
			return Set{}, err
		}
		key := strings.ToLower(e.Name)
		if first, dup := seen[key]; dup {
			return Set{}, fmt.Errorf("sender %q is defined twice (first as %q): %w", e.Name, first, openrecall.ErrInvalid)
		}
		seen[key] = e.Name
		if i := s.index(e.Name); i >= 0 {
			s.senders[i], s.kinds[i] = e, KindOverride
			continue
		}
		s.senders = append(s.senders, e)
		s.kinds = append(s.kinds, KindMapping)
	}
	return s, nil
}

// nameRune reports whether r may be in a sender's name: letters, digits,
// '-', '_' and '.'.
func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}

// checkExtra checks a sender a team added.
func checkExtra(e Sender) error {
	switch {
	case e.Name == "":
		return fmt.Errorf("a sender has no name: %w", openrecall.ErrInvalid)
	case strings.IndexFunc(e.Name, func(r rune) bool { return !nameRune(r) }) >= 0 || e.Name[0] == '.':
		return fmt.Errorf("sender %q: a name is letters, digits, '-', '_' and '.' (it is the path segment of POST /api/v1/alerts/NAME): %w", e.Name, openrecall.ErrInvalid)
	case e.Builtin || e.Map == nil:
		return fmt.Errorf("sender %q: an added sender needs a Map of its own: %w", e.Name, openrecall.ErrInvalid)
	}
	for _, r := range reservedNames {
		if strings.EqualFold(e.Name, r) {
			return fmt.Errorf("sender %q: the name is reserved (%s): %w", e.Name, strings.Join(reservedNames, ", "), openrecall.ErrInvalid)
		}
	}
	return nil
}

// all returns the set's senders: the built-ins for the zero Set.
func (s Set) all() []Sender {
	if s.senders == nil {
		return All()
	}
	return s.senders
}

// resolved returns the set's senders and kinds: the built-ins for the zero
// Set.
func (s Set) resolved() ([]Sender, []Kind) {
	if s.senders == nil {
		b, _ := Merge(All(), nil) // the built-ins alone: nothing to refuse
		return b.senders, b.kinds
	}
	return s.senders, s.kinds
}

// index returns the position of the sender of a name (case-insensitive)
// in a merged set, or -1.
func (s Set) index(name string) int {
	for i, sd := range s.senders {
		if strings.EqualFold(sd.Name, name) {
			return i
		}
	}
	return -1
}

// Senders returns every sender of the set, in detection order. The slice
// may be the set's own: callers must not modify it.
func (s Set) Senders() []Sender { return s.all() }

// Lookup returns the sender of a name (case-insensitive), and whether the
// set has one.
func (s Set) Lookup(name string) (Sender, bool) {
	for _, sd := range s.all() {
		if strings.EqualFold(sd.Name, name) {
			return sd, true
		}
	}
	return Sender{}, false
}

// Names returns every sender's name, in detection order.
func (s Set) Names() []string {
	all := s.all()
	out := make([]string, len(all))
	for i, sd := range all {
		out[i] = sd.Name
	}
	return out
}

// Kind returns where the sender of a name comes from, and whether the set
// has one.
func (s Set) Kind(name string) (Kind, bool) {
	all, kinds := s.resolved()
	for i, sd := range all {
		if strings.EqualFold(sd.Name, name) {
			return kinds[i], true
		}
	}
	return "", false
}
