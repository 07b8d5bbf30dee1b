package routing

import openrecall "github.com/openrecall/openrecall"

// AnswerSchemaName names AnswerSchema for providers that take a named JSON
// schema (OpenAI structured outputs).
const AnswerSchemaName = "openrecall_analysis"

// AnswerSchema returns the JSON Schema of an analysis answer, the one the
// system text of BuildPrompt describes: decision (the closed set),
// confidence, summary, hypotheses, verification commands, next steps, skip
// paths and cited memory ids, every field required and no other allowed (the
// shape strict structured outputs need). ParseAnalysis and the quality gate
// still judge every answer: a server that ignores the schema gains nothing.
// Each call returns a fresh value.
func AnswerSchema() map[string]any {
	decisions := make([]any, 0, len(openrecall.Decisions))
	for _, d := range openrecall.Decisions {
		decisions = append(decisions, string(d))
	}
	list := func() map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	}
	props := map[string]any{
		"decision":              map[string]any{"type": "string", "enum": decisions},
		"confidence":            map[string]any{"type": "number"},
		"summary":               map[string]any{"type": "string"},
		"hypotheses":            list(),
		"verification_commands": list(),
		"next_steps":            list(),
		"skip_paths":            list(),
		"cited_memory_ids":      list(),
	}
	required := []any{"decision", "confidence", "summary", "hypotheses", "verification_commands", "next_steps", "skip_paths", "cited_memory_ids"}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}
