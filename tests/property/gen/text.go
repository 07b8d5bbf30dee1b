package gen

import (
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// TextAtoms are the pieces free text is built from: ASCII, every kind of
// white space, invisible format characters, NFC/NFD pairs, case-folding
// traps (ß, ẞ, final sigma, Kelvin sign, dotted and dotless i), compatibility
// forms (ligatures, fullwidth, circled and roman numerals, superscripts),
// an emoji, control characters and an invalid UTF-8 byte.
func TextAtoms() []string {
	return []string{
		"", "a", "Z", "disk", "Pod", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u2028",
		"\u200b", "\u200d", "\u200e", "\u200f", "\u202e", "\u2066", "\ufeff", "\u00ad",
		"é", "e\u0301", "ß", "ẞ", "Σ", "ς", "σ", "K", "\u212a", "Å", "\u212b", "İ", "ı", "ǅ", "ᾼ", "\u0345",
		"ﬁ", "ﬃ", "Ａ", "ｂ", "①", "Ⅻ", "ᴬ", "²", "…", "㎒", "\U0001F600", "_", "-", "0", "9", "%", "\u0000", "\x7f", "\xff",
		"\u1e9b\u0323", "ΐ", "ᾈ", "ﬅ", "ᄀ", "\u1161", "\u0301", "Ⓐ", "㍱", "ǈ", "\u03d3", "\u0130\u0307", "\u00df\u0301", "\ufb03\u0301",
	}
}

// Text is a piece of free text, as the indexes of its atoms in TextAtoms.
type Text struct {
	Atoms []int
}

// String returns the text.
func (t Text) String() string { return joinPieces(TextAtoms(), t.Atoms) }

// TextGen generates free text with Unicode and white-space traps: up to 24
// atoms, shrinking toward fewer and simpler atoms.
func TextGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(Text{}), map[string]gopter.Gen{
		"Atoms": SliceUpTo(24, Index(len(TextAtoms()), 0.05), reflect.TypeOf(0)),
	})
}

// NoteWords are the words analyst notes are made of, including words whose
// case, normalization or compatibility forms are traps.
func NoteWords() []string {
	return []string{
		"restart", "fixed", "by", "the", "Nightly", "ETL", "job", "known", "noisy", "alert", "see", "INC-42",
		"café", "Straße", "naïve", "Σίσυφος", "ﬁle", "ＯＫ", "Ⅳ", "İstanbul", "ǅemal", "résumé", "KELVIN", "Ωmega",
	}
}

// Spaces are the white-space runs a note variant may use between words.
func Spaces() []string {
	return []string{" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", " \u200b", "\u2009", "\u202f"}
}

// NoteVariant is one analyst note written two ways that differ only in
// case, white space (ASCII and Unicode), invisible characters and Unicode
// normalization form: A is the plain form, B the variant.
type NoteVariant struct {
	Words []int
	// Forms picks, per word, how B writes it: as is, upper case, title case,
	// NFD, or with a zero-width space inside.
	Forms []int
	// Seps picks, per gap, the white space B puts between words.
	Seps []int
	// Lead and Trail pick white space B puts around the note (0: none).
	Lead, Trail int
}

// Forms are the ways NoteVariant writes a word in B.
func Forms() []string { return []string{"as is", "upper", "title", "NFD", "zero-width inside"} }

// A returns the plain note.
func (n NoteVariant) A() string {
	words := NoteWords()
	parts := make([]string, 0, len(n.Words))
	for _, w := range n.Words {
		parts = append(parts, words[w%len(words)])
	}
	return strings.Join(parts, " ")
}

// B returns the variant of the note.
func (n NoteVariant) B() string {
	words, spaces := NoteWords(), Spaces()
	var b strings.Builder
	if n.Lead > 0 {
		b.WriteString(spaces[n.Lead%len(spaces)])
	}
	for i, w := range n.Words {
		if i > 0 {
			sep := 0
			if i-1 < len(n.Seps) {
				sep = n.Seps[i-1]
			}
			b.WriteString(spaces[sep%len(spaces)])
		}
		form := 0
		if i < len(n.Forms) {
			form = n.Forms[i]
		}
		b.WriteString(wordForm(words[w%len(words)], form))
	}
	if n.Trail > 0 {
		b.WriteString(spaces[n.Trail%len(spaces)])
	}
	return b.String()
}

// wordForm writes w in one of the Forms, changing only what full case
// folding, NFKC and invisible-character removal erase: a case change that
// full folding would not undo (the Turkish dotless ı) keeps the rune.
func wordForm(w string, form int) string {
	switch form % len(Forms()) {
	case 1:
		return foldSafe(w, strings.ToUpper)
	case 2:
		r := []rune(w)
		return foldSafe(string(r[0]), strings.ToUpper) + string(r[1:])
	case 3:
		return norm.NFD.String(w)
	case 4:
		r := []rune(w)
		if len(r) < 2 {
			return w + "\u200b"
		}
		return string(r[:1]) + "\u200b" + string(r[1:])
	}
	return w
}

// foldSafe applies f to each rune of w whose case folding it preserves.
func foldSafe(w string, f func(string) string) string {
	fold := cases.Fold()
	var b strings.Builder
	for _, r := range w {
		s := string(r)
		if t := f(s); fold.String(t) == fold.String(s) {
			s = t
		}
		b.WriteString(s)
	}
	return b.String()
}

// NoteVariantGen generates notes and their case, white-space and Unicode
// variants; it shrinks toward short notes written the same way twice.
func NoteVariantGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(NoteVariant{}), map[string]gopter.Gen{
		"Words": SliceUpTo(8, Index(len(NoteWords()), 0.1), reflect.TypeOf(0)),
		"Forms": SliceUpTo(8, Index(len(Forms()), 0.3), reflect.TypeOf(0)),
		"Seps":  SliceUpTo(8, Index(len(Spaces()), 0.3), reflect.TypeOf(0)),
		"Lead":  Index(len(Spaces()), 0.5),
		"Trail": Index(len(Spaces()), 0.5),
	})
}
