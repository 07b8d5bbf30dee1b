// Package openrecall holds the domain vocabulary of the alert-triage pipeline:
// alerts, their six-field Alert DNA fingerprint, analyst decisions, memory
// incidents and matches, triage results, route steps, audit entries, cost
// points and per-alert results.
//
// Every stage package (fingerprint, triage, routing, costcurve, audit) speaks
// these types and imports nothing else from the module; adapters (SQLite,
// HTTP, model providers, the command line) sit at the edges. The package
// imports no database driver, no wire format and no CLI library.
//
// Money is integer nano-dollars ([NanoUSD]); dollars appear only on display.
package openrecall
