package routing

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable marks a model error that means the provider cannot answer
// now (an outage, retries exhausted, no quota, bad credentials). The router
// then escalates the alert to a person without analysis and calls no other
// tier. Providers wrap it; routing.Router tests for it with errors.Is.
var ErrUnavailable = errors.New("model unavailable")

// Model is a language model as routing consumes it: complete one prompt and
// report token usage. Implementations must be safe for concurrent use.
type Model interface {
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// PricedModel is optionally implemented by a Model whose calls are priced as
// another model (the local model stands in for gpt-4o and gpt-4o-mini). The
// router prices the worst case of a call with PricedAs before making it.
type PricedModel interface {
	PricedAs() string
}

// Request is one completion request. System holds the instructions and the
// answer schema; Prompt holds the case file. MaxTokens caps the completion
// (0 means the model's own limit). JSON asks for a JSON object answer.
type Request struct {
	System    string
	Prompt    string
	MaxTokens int
	JSON      bool
	// Case is the case file Prompt carries, as ParseCaseFile(Prompt)
	// returns it (property P43), so an in-process model can read it
	// without decoding its own prompt again; nil when the request was not
	// built by BuildPrompt or its case file could not be carried exactly.
	// It is never sent anywhere: a model that leaves the process sends
	// Prompt.
	Case *CaseFile
}

// Response is a model's answer with its token usage. Live is true only when a
// real model was called. Model is the priced-as name the provider reported;
// empty means the model's Name (or PricedAs).
type Response struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
	Live             bool
	Model            string
	// Attempts lists every request a live provider made for this call, in
	// order, the last one being the one that answered (or failed for
	// good). A provider returns them with its error too. Each attempt but
	// the last becomes its own route step; nil for models that make no
	// requests.
	Attempts []Attempt
}

// Attempt is one request a live provider made for one Complete call.
type Attempt struct {
	// Number counts attempts from 1.
	Number int
	// Status is the HTTP status, 0 when no response came (connection error,
	// timeout).
	Status int
	// Error says why the attempt failed; empty for an answer.
	Error string
	// Latency is how long the attempt took.
	Latency time.Duration
	// Wait is the back-off slept before the next attempt (Retry-After when
	// the server sent one); 0 for the last attempt.
	Wait time.Duration
}

// MessageOverheadTokens is the fixed number of tokens EstimatePromptTokens adds
// for the chat framing of a system and a user message.
const MessageOverheadTokens = 8

// PromptFramingTokens bounds the tokens a chat API adds around a system and
// a user message (role markers, separators and the reply's priming: OpenAI
// documents 3 a message plus 3, a name 1 more). It is generous on purpose:
// PromptTokenCeiling must never be below an honest count.
const PromptFramingTokens = 16

// PromptTokenCeiling returns the most prompt tokens an honest provider can
// bill for req: one a byte of the system and user texts (a byte-level BPE
// token covers at least one byte) plus PromptFramingTokens. A reported
// prompt above it is a provider anomaly (DESIGN §7).
func PromptTokenCeiling(req Request) int {
	return len(req.System) + len(req.Prompt) + PromptFramingTokens
}

// EstimateTokens returns the deterministic token estimate of s: its length in
// bytes divided by four, rounded up.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// EstimatePromptTokens returns the deterministic prompt token estimate of
// req: EstimateTokens of the system and user texts together plus
// MessageOverheadTokens. The router prices worst cases with it when no live
// usage exists.
func EstimatePromptTokens(req Request) int {
	return (len(req.System)+len(req.Prompt)+3)/4 + MessageOverheadTokens
}
