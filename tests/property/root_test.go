package property

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// rootProperties are the laws of the root vocabulary.
func rootProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P1_fingerprint_format_parse_round_trip",
			"Format/parse round-trips every valid fingerprint exactly (and the field accessors follow the canonical order), and parsing is strict: every non-canonical string is rejected with ErrInvalid.",
			"FingerprintMutationGen", gen.FingerprintMutationGen(), checkFingerprintRoundTrip,
			pbt.Pin("all unknown", gen.FingerprintMutation{Mutation: 9}),
			pbt.Pin("trailing separator", gen.FingerprintMutation{Fingerprint: openrecall.Fingerprint{ErrorClass: "oomkilled"}, Mutation: 5}),
			pbt.Pin("doubled separator at the start", gen.FingerprintMutation{Mutation: 3}),
			pbt.Classify(func(m gen.FingerprintMutation) []string {
				labels := []string{"mutation: " + gen.Mutations()[m.Mutation%len(gen.Mutations())]}
				if m.Fingerprint.IsZero() {
					labels = append(labels, "all fields empty")
				} else if hasEmptyField(m.Fingerprint) {
					labels = append(labels, "some field empty")
				}
				return labels
			}),
			pbt.Cover("some field empty", 20),
			pbt.Cover("mutation: swap two pairs", 2),
		),
		pbt.ForAll("P10_similarity_in_unit_interval",
			"Each match has a score in [0, 1]; identical fingerprints of the same identity score 1; any difference in attack_pattern, error_class, service_role or environment, or in identity (another rule or service, or none), keeps the score at or below 0.80, under every allowed strong-match threshold (> 0.80: one shared constant).",
			"FingerprintPairGen", gen.FingerprintPairGen(), checkSimilarity,
			pbt.Classify(func(p gen.FingerprintPair) []string {
				b := p.Second()
				switch {
				case p.A == b:
					return []string{"identical"}
				case openrecall.SameCritical(p.A, b):
					return []string{"same critical fields"}
				}
				return []string{"critical field differs"}
			}),
			pbt.Cover("identical", 5), pbt.Cover("same critical fields", 5), pbt.Cover("critical field differs", 20),
		),
		pbt.ForAll("P13_dedupe_ignores_case_and_whitespace",
			"Retain deduplicates notes that differ only in case and white space (Unicode spaces included): equivalent content gives one dedupe key, and the store keeps one record.",
			"NoteVariantGen", gen.NoteVariantGen(), checkNoteVariantDedupe,
			pbt.Expensive(3),
			pbt.Pin("fullwidth OK and NBSP", gen.NoteVariant{Words: []int{17, 3}, Forms: []int{1}, Seps: []int{5}}),
			pbt.Pin("empty note against white space", gen.NoteVariant{Lead: 6, Trail: 3}),
			pbt.Classify(func(n gen.NoteVariant) []string {
				var labels []string
				if n.A() != n.B() {
					labels = append(labels, "variant differs")
				}
				if hasUnicodeSpace(n.B()) {
					labels = append(labels, "Unicode white space")
				}
				for i := range n.Words {
					if i < len(n.Forms) && n.Forms[i]%len(gen.Forms()) == 1 {
						labels = append(labels, "upper-cased word")
						break
					}
				}
				return labels
			}),
			pbt.Cover("variant differs", 50), pbt.Cover("Unicode white space", 15), pbt.Cover("upper-cased word", 15),
		),
		pbt.ForAll("P24_canonicalization_idempotent",
			"Canonicalization is idempotent (a law): canonical(canonical(x)) == canonical(x) for openrecall.CanonicalText and openrecall.CanonicalToken, and CanonicalToken follows its rule (lowercase, runs outside [a-z0-9] folded to one '_', trimmed), yielding a canonical token or nothing.",
			"TextGen", gen.TextGen(), checkCanonicalIdempotent,
			pbt.Pin("dotted capital I", gen.Text{Atoms: []int{33}}),
			pbt.Pin("ypogegrammeni", gen.Text{Atoms: []int{36, 37}}),
			pbt.Classify(func(x gen.Text) []string {
				s := x.String()
				var labels []string
				if openrecall.CanonicalText(s) != s {
					labels = append(labels, "changed by CanonicalText")
				}
				if s == "" {
					labels = append(labels, "empty")
				}
				return labels
			}),
			pbt.Cover("changed by CanonicalText", 40), pbt.Cover("empty", 0.5),
		),
	}
}

func hasEmptyField(fp openrecall.Fingerprint) bool {
	for _, v := range fp.Values() {
		if v == "" {
			return true
		}
	}
	return false
}

func hasUnicodeSpace(s string) bool {
	for _, r := range s {
		if r > 0x7f && (r == '\u00a0' || r == '\u2003' || r == '\u3000' || r == '\u2009' || r == '\u202f') {
			return true
		}
	}
	return false
}

func checkFingerprintRoundTrip(m gen.FingerprintMutation) error {
	fp := m.Fingerprint
	got, err := openrecall.ParseFingerprint(fp.String())
	if err != nil {
		return fmt.Errorf("round trip: parse(%q): %v", fp.String(), err)
	}
	if got != fp {
		return fmt.Errorf("round trip: parse(format(x)) = %#v, want %#v", got, fp)
	}
	for i, name := range openrecall.FingerprintFields {
		if v, ok := fp.Get(name); !ok || v != fp.Values()[i] {
			return fmt.Errorf("accessors: Get(%q) = %q, %v; want %q", name, v, ok, fp.Values()[i])
		}
		if g, ok := (openrecall.Fingerprint{}).With(name, fp.Values()[i]); !ok || g.Values()[i] != fp.Values()[i] {
			return fmt.Errorf("accessors: With(%q, %q) gave %#v", name, fp.Values()[i], g)
		}
	}
	if fp.IsZero() != (fp == openrecall.Fingerprint{}) {
		return fmt.Errorf("accessors: IsZero() = %v for %#v", fp.IsZero(), fp)
	}
	bad := m.Text()
	parsed, err := openrecall.ParseFingerprint(bad)
	if err == nil {
		return fmt.Errorf("strictness: parse accepted the non-canonical %q (%s) as %#v", bad, gen.Mutations()[m.Mutation%len(gen.Mutations())], parsed)
	}
	if !errors.Is(err, openrecall.ErrInvalid) {
		return fmt.Errorf("strictness: parse(%q) error %q does not wrap ErrInvalid", bad, err)
	}
	return nil
}

func checkSimilarity(p gen.FingerprintPair) error {
	a, b := p.A, p.Second()
	s, back := openrecall.Similarity(a, b), openrecall.Similarity(b, a)
	switch {
	case !(s >= 0 && s <= 1):
		return fmt.Errorf("range: Similarity = %v, outside [0, 1]", s)
	case s != back:
		return fmt.Errorf("symmetry: Similarity(a, b) = %v, Similarity(b, a) = %v", s, back)
	case openrecall.Similarity(a, a) != 1:
		return fmt.Errorf("identity: Similarity(a, a) = %v, want 1", openrecall.Similarity(a, a))
	case a == b && s != 1:
		return fmt.Errorf("identity: identical fingerprints score %v, want 1", s)
	case a != b && s == 1:
		return fmt.Errorf("identity: different fingerprints score 1")
	case !openrecall.SameCritical(a, b) && s >= openrecall.MinStrongThreshold:
		return fmt.Errorf("critical: a critical field differs but the score %v reaches %v", s, openrecall.MinStrongThreshold)
	}
	id := openrecall.Identity{Rule: "HostOutOfDiskSpace", Service: "node"}
	for _, other := range []openrecall.Identity{{}, {Rule: "HostDiskWillFillIn24Hours", Service: "node"}, {Rule: "HostOutOfDiskSpace", Service: "db"}, id} {
		m := openrecall.ScoreMatch(id, a, openrecall.Incident{Fingerprint: b, Identity: other}, gen.Epoch())
		same := other == id && openrecall.SameCritical(a, b)
		switch {
		case !(m.Score >= 0 && m.Score <= 1):
			return fmt.Errorf("range: ScoreMatch = %v, outside [0, 1]", m.Score)
		case !same && (!m.Related || m.Score > 0.80):
			return fmt.Errorf("identity: a memory of %s scored %v (related %v) for %s", other, m.Score, m.Related, id)
		case same && (m.Related || m.Score != s):
			return fmt.Errorf("identity: a memory of the alert itself scored %v (related %v), want Similarity %v", m.Score, m.Related, s)
		}
	}
	return nil
}

func checkNoteVariantDedupe(n gen.NoteVariant) error {
	fp := openrecall.Fingerprint{ErrorClass: "oomkilled", Environment: "prod"}
	for _, d := range openrecall.MemoryDecisions {
		ka := openrecall.DedupeKey(fp, d, n.A(), "am-1")
		kb := openrecall.DedupeKey(fp, d, n.B(), "am-1")
		if ka != kb {
			return fmt.Errorf("key: notes %q and %q differ only in case and white space but get two dedupe keys (CanonicalText %q vs %q)",
				n.A(), n.B(), openrecall.CanonicalText(n.A()), openrecall.CanonicalText(n.B()))
		}
	}
	return retainTwiceLeavesOne(fp, n.A(), n.B())
}

func checkCanonicalIdempotent(x gen.Text) error {
	s := x.String()
	once := openrecall.CanonicalText(s)
	if twice := openrecall.CanonicalText(once); twice != once {
		return fmt.Errorf("CanonicalText: not idempotent on %q: once %q, twice %q", s, once, twice)
	}
	tok := openrecall.CanonicalToken(s)
	if again := openrecall.CanonicalToken(tok); again != tok {
		return fmt.Errorf("CanonicalToken: not idempotent on %q: once %q, twice %q", s, tok, again)
	}
	if tok != "" && !openrecall.IsCanonicalToken(tok) {
		return fmt.Errorf("CanonicalToken: %q gave %q, which is not a canonical token", s, tok)
	}
	if want := canonicalTokenOracle(s); tok != want {
		return fmt.Errorf("CanonicalToken oracle: %q gave %q, want %q (lowercase, runs outside [a-z0-9] folded to one '_', trimmed)", s, tok, want)
	}
	return nil
}

// canonicalTokenOracle is CanonicalToken's documented rule written with a
// regular expression: lowercase, every run of characters outside [a-z0-9]
// folded into one '_', '_' trimmed at both ends.
func canonicalTokenOracle(s string) string {
	nonToken := regexp.MustCompile(`[^a-z0-9]+`)
	return strings.Trim(nonToken.ReplaceAllString(strings.ToLower(s), "_"), "_")
}
