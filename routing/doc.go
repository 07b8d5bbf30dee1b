// Package routing is the routing stage of the pipeline (DESIGN §7): for one
// alert that has been fingerprinted, recalled, triaged and judged by the
// guard, it decides whether the memory bypass happens or which one model
// tier analyses the alert, gates every model answer, prices every call in integer
// nano-dollars against the honest baseline (below), and enforces the
// optional run budget.
//
// The package declares the Model interface it consumes; model adapters
// (model/local, later OpenAI-compatible providers) implement it. Routing
// imports only the root package and the standard library.
//
// Baseline and conservation (DESIGN §7): the baseline of an alert is what
// the naive pipeline, the strong model analysing every alert, would pay for
// it: the strong analysis prompt priced with the strong model's expected
// completion (Config.ExpectedCompletionTokens, never the completion cap).
// Fingerprinting is deterministic on both sides and unpriced. Only a memory
// bypass (cost 0) or a cheap answer that passes the gate saves money; every
// other alert's baseline is its cost. So for every alert
// Output.Cost ≤ Output.Baseline, the saving is 0 unless a model call was
// spared, and a live cheap answer billed above the baseline (a provider
// reporting more usage than the estimate) is counted as saving nothing.
package routing
