// Package probe tries a running `openrecall serve` as a hostile network and
// a careless sender would (issue 33): every guarded route with every bad
// credential, hostile bodies on every ingest and write endpoint, and every
// field of every sender fixture removed, nulled, retyped and emptied. It
// starts serve itself on a loopback port over a new SQLite file, checks
// the process is alive after each family, waits until every accepted
// delivery is analysed, and reports each family's probes and failures.
// scripts/probe runs it whole; tests/reliability runs a fixed tenth.
package probe
