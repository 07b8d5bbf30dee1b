// Package audit turns route steps into audit entries, seals them and the
// cost points into append-only hash chains, and verifies a stored trail
// (DESIGN §9).
//
// Every route step has exactly one audit entry, in the same order. Each
// entry's hash covers a canonical, versioned encoding of all its other
// fields, PrevHash and Sequence included, so editing any field, deleting or
// reordering entries, or cutting the tail (checked against a separately
// stored head record) is detected by a Verifier. The chain starts at
// sequence 1 with an empty PrevHash.
//
// The chain is keyed: a Sealer hashes with HMAC-SHA-256 under a Key kept
// outside the database (HashKeyed, CostHash), so whoever holds only the file
// cannot re-hash a rewritten trail. Entries written before keying keep their
// unkeyed SHA-256 (Hash) and verify as written up to the recorded boundary
// (State.LegacyThrough, signed with BoundaryMAC). Cost points have their own
// keyed chain. A Checkpoint is a signed copy of the trail's State kept
// elsewhere; a TrailVerifier checks a whole trail read in one snapshot, and
// against a checkpoint catches truncation and head rollback too. After an
// archive (SignArchive) the chains start after the latest archive record
// whose signature checks (Verifier.Start); a record that does not check is
// a KindArchive problem and the chains are then checked from 1. A missing or
// wrong key is ErrNoKey or ErrWrongKey, never a Problem.
//
// The audit trail is data, not logs. The package imports only the root
// package and the standard library.
package audit
