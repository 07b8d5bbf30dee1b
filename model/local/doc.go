// Package local is the embedded deterministic analyst: a routing.Model that
// answers from templates per error class, dependency and attack pattern,
// using the recalled memories and their dead ends, without any network call.
//
// It reads only the case file that routing.BuildPrompt writes between its
// markers, and decides only from the fingerprint, the triage proposal, the
// memories and the severity: the alert's free text is untrusted data and can
// never change its decision. Every answer it writes says it is not live
// ("live": false and a model name starting with "local-"). Its token usage is
// the same deterministic estimate the router prices worst cases with, and it
// is priced as the model it stands in for (gpt-4o-mini for the cheap tier,
// gpt-4o for the strong tier).
package local
