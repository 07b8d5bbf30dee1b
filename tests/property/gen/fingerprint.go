package gen

import (
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// ExtraTokens are canonical tokens outside the default vocabulary (a rules
// file may add such values); "_" and "0" are the shortest canonical tokens.
func ExtraTokens() []string { return []string{"custom_value", "x", "0", "_", "a_b_c_9"} }

// FieldGen returns the values of one fingerprint field: empty (unknown) with
// probability pEmpty, else a value of the field's vocabulary or, now and then,
// a canonical token outside it. It shrinks toward empty.
func FieldGen(field string, pEmpty float64) gopter.Gen {
	pool := Prepend("", append(append([]string(nil), openrecall.Vocabulary(field)...), ExtraTokens()...))
	return Of(pool, pEmpty)
}

// AlertFingerprintGen generates valid Alert DNA: each field empty about one
// time in five (the attack pattern empty two times in three, as in real
// queues), else from the production vocabulary or another canonical token.
func AlertFingerprintGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(openrecall.Fingerprint{}), map[string]gopter.Gen{
		"ErrorClass":        FieldGen(openrecall.FieldErrorClass, 0.2),
		"ServiceRole":       FieldGen(openrecall.FieldServiceRole, 0.2),
		"DependencyPattern": FieldGen(openrecall.FieldDependencyPattern, 0.2),
		"SignalShape":       FieldGen(openrecall.FieldSignalShape, 0.2),
		"AttackPattern":     FieldGen(openrecall.FieldAttackPattern, 0.65),
		"Environment":       FieldGen(openrecall.FieldEnvironment, 0.2),
	})
}

// FingerprintMutation is a canonical fingerprint string broken in one way.
// Text returns the broken string; every mutation yields a string that is not
// canonical, whatever the fingerprint.
type FingerprintMutation struct {
	Fingerprint openrecall.Fingerprint
	// Mutation selects how the string is broken (see Mutations).
	Mutation int
	// At selects where (taken modulo the places available).
	At int
}

// Mutations names the ways FingerprintMutation breaks a canonical string.
func Mutations() []string {
	return []string{
		"uppercase a letter", "insert a space", "drop a pair", "doubled separator",
		"swap two pairs", "trailing separator", "':' instead of '='", "non-token character in a value",
		"surrounding whitespace", "empty string", "Cyrillic lookalike in a name", "unknown field name",
		"pair without '='", "value with '=' inside", "separator ',' instead of ';'", "leading separator",
	}
}

// Text returns the broken string.
func (m FingerprintMutation) Text() string {
	s := m.Fingerprint.String()
	pairs := strings.Split(s, ";")
	at := m.At
	if at < 0 {
		at = -at
	}
	pick := func(n int) int { return at % n }
	switch m.Mutation % len(Mutations()) {
	case 0:
		var idx []int
		for i := 0; i < len(s); i++ {
			if s[i] >= 'a' && s[i] <= 'z' {
				idx = append(idx, i)
			}
		}
		i := idx[pick(len(idx))]
		return s[:i] + strings.ToUpper(s[i:i+1]) + s[i+1:]
	case 1:
		i := pick(len(s) + 1)
		return s[:i] + " " + s[i:]
	case 2:
		i := pick(len(pairs))
		return strings.Join(append(append([]string(nil), pairs[:i]...), pairs[i+1:]...), ";")
	case 3:
		i := pick(len(pairs)-1) + 1
		return strings.Join(pairs[:i], ";") + ";;" + strings.Join(pairs[i:], ";")
	case 4:
		i := pick(len(pairs) - 1)
		p := append([]string(nil), pairs...)
		p[i], p[i+1] = p[i+1], p[i]
		return strings.Join(p, ";")
	case 5:
		return s + ";"
	case 6:
		i := pick(len(pairs))
		p := append([]string(nil), pairs...)
		p[i] = strings.Replace(p[i], "=", ":", 1)
		return strings.Join(p, ";")
	case 7:
		i := pick(len(pairs))
		bad := []string{"-", "é", "\u200b", ".", "A", " ", "ß"}[pick(7)]
		p := append([]string(nil), pairs...)
		p[i] += bad
		return strings.Join(p, ";")
	case 8:
		return []string{" ", "\t", "\n", "\u00a0"}[pick(4)] + s
	case 9:
		return ""
	case 10:
		i := pick(len(pairs))
		p := append([]string(nil), pairs...)
		p[i] = strings.Replace(p[i], "e", "\u0435", 1)
		if p[i] == pairs[i] {
			p[i] = "\u0430" + p[i][1:]
		}
		return strings.Join(p, ";")
	case 11:
		i := pick(len(pairs))
		p := append([]string(nil), pairs...)
		_, v, _ := strings.Cut(p[i], "=")
		p[i] = "severity=" + v
		return strings.Join(p, ";")
	case 12:
		i := pick(len(pairs))
		p := append([]string(nil), pairs...)
		p[i] = strings.Replace(p[i], "=", "", 1)
		return strings.Join(p, ";")
	case 13:
		i := pick(len(pairs))
		p := append([]string(nil), pairs...)
		p[i] += "=x"
		return strings.Join(p, ";")
	case 14:
		return strings.Join(pairs, ",")
	default:
		return ";" + s
	}
}

// FingerprintMutationGen generates broken fingerprint strings for the strict
// parser, every mutation kind about equally often.
func FingerprintMutationGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(FingerprintMutation{}), map[string]gopter.Gen{
		"Fingerprint": AlertFingerprintGen(),
		"Mutation":    IntUpTo(len(Mutations()) - 1),
		"At":          IntUpTo(1000),
	})
}

// FingerprintPair is two fingerprints: A, and Second(), which takes from B
// each field whose bit is set in Differ and from A every other field (bit i
// is field i of openrecall.FingerprintFields). It shrinks toward identical
// fingerprints.
type FingerprintPair struct {
	A, B   openrecall.Fingerprint
	Differ int
}

// Second returns the second fingerprint of the pair.
func (p FingerprintPair) Second() openrecall.Fingerprint {
	out := p.A
	for i, field := range openrecall.FingerprintFields {
		if p.Differ&(1<<i) != 0 {
			v, _ := p.B.Get(field)
			out, _ = out.With(field, v)
		}
	}
	return out
}

// FingerprintPairGen generates pairs of fingerprints that are identical,
// differ in descriptive fields only, or differ in critical fields.
func FingerprintPairGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(FingerprintPair{}), map[string]gopter.Gen{
		"A":      AlertFingerprintGen(),
		"B":      AlertFingerprintGen(),
		"Differ": Of([]int{0, 1 << 2, 1 << 3, 1<<2 | 1<<3, 1, 1 << 1, 1 << 4, 1 << 5, 63, 17, 42}, 0.15),
	})
}

// Families returns a small pool of alert families' fingerprints and their
// descriptive variants, so that recall finds exact, 89-point and 80-point
// matches and critical-field strangers.
func Families() []openrecall.Fingerprint {
	base := []openrecall.Fingerprint{
		{ErrorClass: "crashloopbackoff", ServiceRole: "batch_worker", DependencyPattern: "configmap", SignalShape: "flapping", Environment: "prod"},
		{ErrorClass: "crashloopbackoff", ServiceRole: "batch_worker", DependencyPattern: "configmap", SignalShape: "flapping", Environment: "dev"},
		{ErrorClass: "auth_failure", ServiceRole: "auth_service", AttackPattern: "brute_force", Environment: "prod"},
		{},
	}
	var out []openrecall.Fingerprint
	for _, b := range base {
		out = append(out, b)
		v := b
		v.DependencyPattern = "dns"
		out = append(out, v)
		v = b
		v.SignalShape = "spike"
		out = append(out, v)
		v.DependencyPattern = "queue"
		out = append(out, v)
	}
	return out
}

// FamilyFingerprintGen draws from Families.
func FamilyFingerprintGen() gopter.Gen { return Of(Families(), 0) }
