// Command smoke drives the built openrecall binary as a user would, on a
// fresh temporary database, and asserts the system-level numbers of the
// bundled example:
//
//	go run ./scripts/smoke -bin ./bin/openrecall
//
// It seeds memory from examples/seed.jsonl (twice: the second time must store
// nothing new), analyses examples/queue.jsonl with --output jsonl and checks,
// against the ground truth in examples/truth.json: one result per alert in
// input order; at least one memory bypass, and every bypass a repeat of a
// benign family (never an attack, never a real incident); no benign decision
// on an attack; audit and route traces of equal length; cost ≤ baseline for
// every result and every persisted cost point; honest savings (only a bypass
// or a passing cheap answer saves, every other baseline equals its cost, the
// total equals those savings to the nano-dollar) of at least 50% on the
// seeded example. It compares `cost --output json` with the results, runs
// `audit show`, checks that analysing left memory as seeded and that
// `analyze --workers 4` on the same seeded memory is equivalent to the
// sequential run, runs the malformed-input demo (exit
// status 3, line 1 reported) and a bad flag (exit status 2),
// the captured resolved Alertmanager webhook of intake/testdata (recorded,
// not triaged), `audit verify` on the intact trail, and
// finally edits one audit row with database/sql and asserts that `audit
// verify` exits 4 naming the entry.
//
// On success it prints one figures line (bypass_steps=… results=…
// savings=…%) and exits 0. Otherwise it lists every failed assertion on
// stderr and exits 1; it exits 2 when it cannot run at all (no binary, no
// example files).
package main
