// Package costcurve builds, checks, summarizes and draws the cost curve of a
// batch: one point per analysed alert with its cost and its baseline (what
// the naive always-strong pipeline would have paid), and their running sums
// (DESIGN §8).
//
// Cumulative cost never decreases and the savings band (cumulative baseline
// minus cumulative cost) never decreases; Validate checks both. Money is
// integer nano-dollars; dollars appear only in the charts. The package
// imports only the root package and the standard library.
package costcurve
