package gen

import (
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// ReplyKinds are the kinds of reply a scripted OpenAI-compatible server
// gives, answers first (and most often).
func ReplyKinds() []string {
	return []string{"answer", "answer", "answer", "invalid JSON", "429 Retry-After", "500", "503 Retry-After date",
		"insufficient_quota", "400 schema error", "empty content"}
}

// AnswerDecisions are the decisions a scripted answer proposes: the closed
// set, then values outside it.
func AnswerDecisions() []string {
	out := make([]string, 0, len(openrecall.Decisions)+3)
	for _, d := range openrecall.Decisions {
		out = append(out, string(d))
	}
	return append(out, "ignore_forever", "", "FALSE_POSITIVE")
}

// Citations say what a scripted answer cites: nothing, the first recalled
// memory, or an id memory never held.
func Citations() []string { return []string{"none", "a recalled memory", "an unknown id"} }

// ScriptedReply is one reply of a scripted server, by indexes so that it
// shrinks.
type ScriptedReply struct {
	Kind int
	// Decision indexes AnswerDecisions.
	Decision int
	// Confidence is in hundredths; values outside 0..100 occur.
	Confidence int
	// Cite indexes Citations.
	Cite int
	// Usage: 0 no usage object, 1 usage of what was sent and written, 2 a
	// completion of exactly max_tokens.
	Usage int
}

// LiveRun is a workflow run against a scripted server: the run's input
// and the replies, answered in order and then again from the start.
type LiveRun struct {
	Input  WorkflowInput
	Script []ScriptedReply
}

// LiveRunGen generates live runs: WorkflowInputGen's input and up to eight
// scripted replies of every kind.
func LiveRunGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(LiveRun{}), map[string]gopter.Gen{
		"Input": WorkflowInputGen(),
		"Script": SliceUpTo(8, gg.Struct(reflect.TypeOf(ScriptedReply{}), map[string]gopter.Gen{
			"Kind":       Index(len(ReplyKinds()), 0.4),
			"Decision":   Index(len(AnswerDecisions()), 0.2),
			"Confidence": Of([]int{90, 0, 59, 60, 61, 100, 150, -5}, 0.4),
			"Cite":       Index(len(Citations()), 0.5),
			"Usage":      Of([]int{1, 0, 2}, 0.5),
		}), reflect.TypeOf(ScriptedReply{})),
	})
}

// Usages are what a scripted reply reports as its usage, by
// ScriptedReply.Usage: the first three are honest (LiveRunGen draws only
// those), the rest are a provider's anomalies (DESIGN §7, "usage bounded by
// what was asked").
func Usages() []string {
	return []string{"none", "what was sent and written", "max_tokens", "50 M prompt tokens",
		"max_tokens + 1", "negative counts", "50 M completion tokens", "50 M of both"}
}

// HonestUsage reports whether Usages()[i] is within what a call can use.
func HonestUsage(i int) bool { return i <= 2 }

// LyingUsageRunGen generates live runs whose server reports every kind of
// usage, honest and anomalous, over up to eight answers.
func LyingUsageRunGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(LiveRun{}), map[string]gopter.Gen{
		"Input": WorkflowInputGen(),
		"Script": SliceUpTo(8, gg.Struct(reflect.TypeOf(ScriptedReply{}), map[string]gopter.Gen{
			"Kind":       Index(3, 0.6), // the three "answer" kinds: every reply is billed
			"Decision":   Index(len(AnswerDecisions()), 0.2),
			"Confidence": Of([]int{90, 0, 59, 60, 61, 100, 150, -5}, 0.4),
			"Cite":       Index(len(Citations()), 0.5),
			"Usage":      Index(len(Usages()), 0.2),
		}), reflect.TypeOf(ScriptedReply{})),
	})
}
