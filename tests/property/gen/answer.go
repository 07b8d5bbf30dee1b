package gen

import (
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// AnswerKeys are the member names AnswerText objects use: the schema's
// fields, the two required ones in other cases and with escapes, unknown
// names, and names that hold JSON specials.
func AnswerKeys() []string {
	return []string{
		`"decision"`, `"confidence"`, `"summary"`, `"hypotheses"`, `"verification_commands"`, `"next_steps"`,
		`"skip_paths"`, `"cited_memory_ids"`, `"model"`, `"live"`,
		`"DECISION"`, `"Confidence"`, `"d\u0065cision"`, `"confidenc\u0065"`, `"decision "`, `"extra"`, `"de\"cision"`, `""`,
	}
}

// AnswerValues are the values AnswerText members take: every JSON kind, the
// closed set's decisions and others, numbers at and around the gate, nested
// objects that hold the required names, and strings that hold quotes,
// braces and the required names.
func AnswerValues() []string {
	return []string{
		`"real"`, `"known_benign"`, `"escalated"`, `"maybe"`, `0.9`, `0.6`, `1`, `1.5`, `-0`, `1e400`, `null`, `true`,
		`[]`, `["a","b"]`, `["skip: x (tried in inc-1)"]`, `{}`, `{"decision":"real","confidence":1}`, `[{"decision":1}]`,
		`"decision"`, `"a \"decision\": {[,]} \\"`, `"\u00e9\ud83d\ude00"`, `"gpt-4o"`,
	}
}

// answerTyped are, for each of the first ten AnswerKeys (the schema's
// fields, in order), values of the type the schema gives it.
var answerTyped = [][]string{
	{`"real"`, `"known_benign"`, `"escalated"`, `"maybe"`, `null`},
	{`0.9`, `0.6`, `1`, `1.5`, `-0`, `null`},
	{`"decision"`, `"a \"decision\": {[,]} \\"`, `"\u00e9\ud83d\ude00"`},
	{`[]`, `["a","b"]`, `null`}, {`["kubectl get pods"]`}, {`["page the owner"]`},
	{`["skip: x (tried in inc-1)"]`}, {`["inc-1"]`, `[]`}, {`"gpt-4o"`}, {`true`, `false`},
}

// AnswerMember is one member of an AnswerText object, by index: Value
// indexes the values of the key's type when Typed (and the key is one of
// the schema's), else AnswerValues.
type AnswerMember struct {
	Key, Value int
	Typed      bool
}

// answerTypeOf gives the other spellings of decision and confidence (by
// AnswerKeys index) the type of the field they spell.
var answerTypeOf = map[int]int{10: 0, 11: 1, 12: 0, 13: 1, 14: 0, 16: 0}

func (m AnswerMember) value() string {
	k := m.Key % len(AnswerKeys())
	if t, ok := answerTypeOf[k]; ok && m.Typed {
		k = t
	}
	if m.Typed && k < len(answerTyped) {
		return answerTyped[k][m.Value%len(answerTyped[k])]
	}
	values := AnswerValues()
	return values[m.Value%len(values)]
}

// answerRequired are the required members AnswerText may start with: none,
// both named exactly, and one of them in another case or with an escape
// (which the gate must not take for the field).
var answerRequired = []string{
	"", `"decision":"known_benign","confidence":0.9`, `"decision":"real","Confidence":0.9`,
	`"DECISION":"real","confidence":0.7`, `"decision":"real","confidenc\u0065":0.8`,
}

// AnswerText is a model answer built by index: an object of members, or
// another top-level shape, with white space or trailing data.
type AnswerText struct {
	Members []AnswerMember
	// Required starts the object with a typed decision and confidence,
	// spelled as answerRequired[Required] says (0: without them).
	Required int
	// Shape: 0 an object, 1 an object and trailing data, 2 an array of it,
	// 3 null, 4 an object with white space around, 5 an object cut short.
	Shape int
}

// String returns the answer text.
func (a AnswerText) String() string {
	keys := AnswerKeys()
	var parts []string
	if r := answerRequired[a.Required%len(answerRequired)]; r != "" {
		parts = append(parts, r)
	}
	for _, m := range a.Members {
		parts = append(parts, keys[m.Key%len(keys)]+":"+m.value())
	}
	obj := "{" + strings.Join(parts, ",") + "}"
	switch a.Shape % 6 {
	case 1:
		return obj + ` {"decision":"real"}`
	case 2:
		return "[" + obj + "]"
	case 3:
		return "null"
	case 4:
		return " \n\t" + obj + "\n "
	case 5:
		return obj[:len(obj)/2]
	}
	return obj
}

// AnswerTextGen generates model answers of up to 12 members, mostly
// objects, shrinking toward fewer members and the plain object.
func AnswerTextGen() gopter.Gen {
	member := gg.Struct(reflect.TypeOf(AnswerMember{}), map[string]gopter.Gen{
		"Key": gg.Weighted([]gg.WeightedGen{
			{Weight: 6, Gen: Index(len(answerTyped), 0.1)},
			{Weight: 1, Gen: Index(len(AnswerKeys()), 0)}, // shrinks within range, unlike IntRange
		}),
		"Value": Index(len(AnswerValues()), 0.1),
		"Typed": gg.Weighted([]gg.WeightedGen{{Weight: 9, Gen: gg.Const(true)}, {Weight: 1, Gen: gg.Const(false)}}),
	})
	return gg.Struct(reflect.TypeOf(AnswerText{}), map[string]gopter.Gen{
		"Members":  SliceUpTo(12, member, reflect.TypeOf(AnswerMember{})),
		"Required": Of([]int{1, 0, 2, 3, 4}, 0.5),
		"Shape":    Of([]int{0, 4, 1, 2, 3, 5}, 0.6),
	})
}
