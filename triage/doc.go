// Package triage turns a fingerprint and its recalled memory matches into a
// triage proposal, and holds the guard: the one pure rule that decides
// whether the memory bypass may skip the language model, and that vets every
// decision a model proposes.
//
// Triage proposes; it never acts. The guard allows a bypass only when memory
// is strong, consistent and confident that a non-attack alert is benign
// (DESIGN §6). Every function here is pure: it reads its arguments, never
// modifies them, and is safe for concurrent use. The package imports only
// the root package and the standard library.
package triage
