// Package costcurve builds, checks, summarizes and draws the cost curve of a
// batch: one point per triaged alert with its cost and its baseline (what
// the strong model analysing it would have cost when a bypass or a passing
// cheap answer spared that call, else its cost: DESIGN §7), and their
// running sums (DESIGN §8). Alerts escalated without analysis are marked
// with TierUnanalysed and left out of the savings percentage.
//
// Cumulative cost never decreases and the savings band (cumulative baseline
// minus cumulative cost) never decreases; Validate checks both. Money is
// integer nano-dollars; dollars appear only in the charts. The package
// imports only the root package and the standard library.
package costcurve
