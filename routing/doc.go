// Package routing is the routing stage of the pipeline (DESIGN §7): for one
// alert that has been fingerprinted, recalled, triaged and judged by the
// guard, it decides whether the memory bypass happens or which model tiers
// analyse the alert, gates every model answer, prices every call in integer
// nano-dollars against the naive always-strong baseline, and enforces the
// optional run budget.
//
// The package declares the Model interface it consumes; model adapters
// (model/local, later OpenAI-compatible providers) implement it. Routing
// imports only the root package and the standard library.
//
// Conservation: for every alert, the cost of the analysis steps never
// exceeds the always-strong baseline of that alert, that is
// Output.Cost ≤ Output.Baseline + Router.FingerprintBaseline(alert), and
// Output.Cost ≤ Output.Baseline whenever at most one model tier was called.
// It holds whenever every model call stays within the usage it was asked for
// (always for the local model); a live provider that reports more usage than
// requested is charged what it reports, and the router then makes no further
// call that could pass the baseline.
package routing
