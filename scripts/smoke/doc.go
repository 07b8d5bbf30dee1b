// Command smoke drives the built openrecall binary as a user would, on a
// fresh temporary database, and asserts the system-level figures of the
// bundled example:
//
//	go run ./scripts/smoke -bin ./bin/openrecall
//
// It seeds memory from examples/seed.jsonl, analyses examples/queue.jsonl
// with --output jsonl and checks, against the ground truth in
// examples/truth.json: one result per alert in input order; at least one
// memory bypass, and every bypass a repeat of a benign family (never an
// attack, never a real incident); no benign decision on an attack; audit and
// route traces of equal length; cost ≤ baseline for every result and every
// persisted cost point; honest savings (only a bypass or a passing cheap
// answer saves, every other baseline equals its cost, the total equals those
// savings to the nano-dollar) of at least 50% on the seeded example. It
// compares `cost --output json` with the results, checks `audit show`
// against the results' route steps, checks that analysing left memory as
// seeded and that `analyze --workers 4` on the same seeded memory is
// equivalent to the sequential run.
//
// The binary's contract — exit codes, seeding twice, the malformed-input
// demo, a bad flag, the resolved Alertmanager webhook, `audit verify` on an
// intact and on a tampered trail, the -o shapes — is checked by the
// testscript scripts of cmd/openrecall/testdata/script (TestScripts).
//
// On success it prints one figures line (bypass_steps=… results=…
// savings=…%) and exits 0. Otherwise it lists every failed assertion on
// stderr and exits 1; it exits 2 when it cannot run at all (no binary, no
// example files).
package main
