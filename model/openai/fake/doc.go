// Package fake is an in-process OpenAI-compatible chat-completions server on
// loopback (net/http/httptest), scripted per test: normal answers, invalid
// JSON, errors with or without Retry-After, insufficient_quota, slow answers,
// huge completions, usage present or absent. It records every request it
// received, so a test can prove what left the machine.
//
// It is what openrecall's tests and `eval --modes` (the row labelled fake,
// never live) point the openai provider at. It imports only the standard
// library.
package fake
