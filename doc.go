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
//
// The design is docs/design.md. Comments, tests and documents throughout the
// module cite its numbered sections as "DESIGN §N" (DESIGN §6 e is clause
// (e) of section 6); design_test.go keeps every cited section a heading
// there.
package openrecall
