// Package runner is the work of `openrecall serve` beside its HTTP
// receivers (package server): what Alertmanager keeps in its dispatcher
// and notifiers, apart from its API.
//
// # Draining
//
// The receivers write each accepted delivery to the inbox (memory) and
// call Wake. Run drains the inbox through the analyze use case, the same
// workflow `openrecall analyze` runs, in one run over one pipeline for the
// life of the runner: the daily model budget is keyed by UTC day inside
// the router (routing.NewDailyBudget) and each day's points join that
// day's cost curve ("serve-2006-01-02", CostBatch; costcurve.Daily),
// continuing what the day already stored. Deliveries are
// claimed under a lease a few at a time, oldest first; the sink stores
// each batch of results and completes their deliveries in one
// transaction, retrying storage errors until the shutdown deadline. A
// lease is renewed every third of it while the workers hold it; a
// delivery another process reclaimed is counted (Observer.LeasesLost).
// The exception expiries due are recorded at the start and at each batch.
//
// # Retention
//
// With a retention, a pass at start and every PruneInterval empties the
// documents of finished inbox rows older than it; with an archive
// directory, the pass then archives the audit and cost chains older than
// it into a signed file and forgets the rows only those analyses needed.
//
// # Stopping
//
// Closing Run's stop channel ends claims and passes; the analyses in
// flight finish and are stored, then the webhook posts in flight, unless
// Run's context ends first (the caller's shutdown deadline): deliveries
// left unfinished stay in the inbox for the next start. A claim that
// meets a database another openrecall migrated stops the runner from
// within: Failed is closed and Run returns the error.
//
// Alerts left to a person are posted to the webhook (Escalation) in the
// background, never holding up the inbox.
package runner
