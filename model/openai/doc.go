// Package openai is the routing.Model provider for any OpenAI-compatible
// chat-completions server (OpenAI, Groq, vLLM, Ollama, llama.cpp, LiteLLM),
// built on the official client github.com/openai/openai-go/v3.
//
// It asks for the answer's JSON schema (structured outputs) and falls back
// to the JSON object format, then to plain text, when a server refuses the
// response_format; the router parses every answer strictly either way. Each
// attempt has its own timeout under the caller's context. The provider owns
// retries: connection errors, timeouts and HTTP 408, 409, 429 and 5xx are
// retried with exponential back-off and jitter, honouring Retry-After
// (seconds or an HTTP date); insufficient_quota, authentication errors and
// other 4xx answers never are. The client's own retries are off, so every
// attempt is reported in Response.Attempts and becomes a route step. When
// the server cannot answer, the error wraps routing.ErrUnavailable and the
// router escalates the alert to a person.
//
// Usage comes from the response: a call is billed on the token counts the
// server reports, never an estimate when they are present. A Limiter caps
// the calls in flight across tiers. The API key is read by the caller and
// only ever sent in the Authorization header: no error, reason or result
// carries it. Clock, sleep and jitter are injected, so tests never wait for
// a real back-off.
package openai
