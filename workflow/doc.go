// Package workflow composes the stages into the product's pipeline: intake
// record → fingerprint → recall → triage → guard → routing (memory bypass or
// model cascade) → audit entries and cost points, one record at a time.
//
// Analyze runs one alert. AnalyzeQueue streams a queue: it reads records one
// at a time, runs them on N workers and emits results strictly in input order,
// so memory stays bounded by the number of records in flight, not by the
// queue's length. Audit entries and cost points are persisted in that same
// order by the optional Sink, so a concurrent run writes the same trail as a
// sequential one. When a run budget is set, routing (the only stage that
// spends money) takes turns in input order, so the budget is spent exactly as
// a sequential run spends it.
//
// The workflow never retains anything into memory: its own bypass decisions
// cannot reinforce themselves. Memory grows only through explicit retain.
package workflow
