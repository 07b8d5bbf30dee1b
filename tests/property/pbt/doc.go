// Package pbt is openrecall's thin helper around gopter v0.2.11. It owns the
// run loop of every property so that the traps measured in
// shared/PBT.md cannot bite the suite:
//
//   - one seed per property, derived from the base seed
//     (OPENRECALL_PBT_SEED, default 20260101) and the property ID, so one
//     property reproduces alone;
//   - profiles (OPENRECALL_PBT_PROFILE = fast | ci | conformance | nightly;
//     -short means fast) that fix the number of cases, the size ramp and the
//     shrink budget;
//   - one-case replay (OPENRECALL_PBT_CASE=<caseSeed>:<size>): every case has
//     its own seed and size, and the failure report prints the exact command
//     that regenerates and reshrinks it;
//   - panics recovered per call, and a slippage guard: while shrinking, only
//     failures of the first failure's kind count, other kinds are reported
//     beside it;
//   - pinned examples (shrunk counterexamples kept as values) run before any
//     generated case;
//   - label statistics with required coverage per label;
//   - the failure report goes through the test's T (never gopter's stdout
//     reporter), with the counterexample printed as paste-ready Go (%#v).
//
// Each property is a subtest named by its permanent ID, so
// `go test ./tests/property/ -run '/^P11_'` runs one property.
//
// Stateful properties built on gopter's commands package run through the same
// loop with [ForAllProp]; gopter shrinks their command sequences itself.
package pbt
