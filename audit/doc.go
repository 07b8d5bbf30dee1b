// Package audit turns route steps into audit entries, seals them into an
// append-only SHA-256 hash chain, and verifies a stored chain (DESIGN §9).
//
// Every route step has exactly one audit entry, in the same order. Each
// entry's Hash covers a canonical, versioned encoding of all its other
// fields, PrevHash and Sequence included, so editing any field, deleting or
// reordering entries, or cutting the tail (checked against a separately
// stored head record) is detected by a Verifier. The chain starts at
// sequence 1 with an empty PrevHash.
//
// The audit trail is data, not logs. The package imports only the root
// package and the standard library.
package audit
