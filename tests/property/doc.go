// Package property is openrecall's property suite: every rule of the design
// that must hold for all inputs, each a subtest of TestProperties named by its
// permanent ID (P1_…, P2_…), listed with its design sentence, generator and
// found counterexamples in docs/properties.md.
//
// Run it with `go test ./tests/property/...`; OPENRECALL_PBT_SEED,
// OPENRECALL_PBT_PROFILE (fast, ci, conformance, nightly; -short means fast) and
// OPENRECALL_PBT_CASE (<caseSeed>:<size>, one case) steer it, and `-run
// '/^P11_'` runs one property. The helper is package pbt, the generators
// package gen.
package property
