// Package usecase is openrecall's application layer: each use case that a
// person or a program asks of the product (retain a decision about alerts,
// a fingerprint or an analysis, supersede one, forget one, recall what
// memory holds, verify the audit trail) is implemented here once, and the
// command line (cmd/openrecall), the HTTP server (server) and any later
// interface call it. Adapters turn their input (flags and files, HTTP
// requests) into this package's requests and print or serve its answers,
// whose JSON shapes are the same wherever they appear.
//
// The package declares what it needs of storage as small interfaces that
// memory.Store satisfies, and imports no concrete storage or model.
package usecase
