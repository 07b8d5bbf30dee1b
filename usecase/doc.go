// Package usecase is openrecall's application layer: each use case that a
// person or a program asks of the product (analyze a queue or the server's
// inbox, retain a decision about alerts, a fingerprint, an analysis or an
// alert group, supersede one, forget one, recall what memory holds, read
// results and the cost curve, verify the audit trail, list groups, approve,
// write and revoke exceptions, list and decide what waits for a person) is
// implemented here once, and the command line (cmd/openrecall), the HTTP
// server (server) and the cockpit (server/cockpit) call it. Adapters turn
// their input (flags and files, HTTP requests and forms) into this
// package's requests and print or serve its answers, whose JSON shapes are
// the same wherever they appear.
//
// The package declares what it needs of storage as small interfaces that
// memory.Store satisfies, and imports no concrete storage or model.
package usecase
