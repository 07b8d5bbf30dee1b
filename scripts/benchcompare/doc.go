// Command benchcompare compares two builds of openrecall in one run, so
// that a performance claim comes with its A/B measured on the same machine
// at the same time:
//
//	go run ./scripts/benchcompare -base da97e60    (make bench-compare BASE=da97e60)
//
// A is built from -base in a detached `git worktree add` under a temporary
// directory (removed again after the build), B from the working tree as it
// stands, uncommitted changes included. Both are built the same way, with
// `go build -overlay` laying two files over cmd/openrecall without touching
// either tree: a hook file, and main.go with its one os.Exit call rewritten
// to call the hook, which, when OPENRECALL_BENCHCOMPARE_OUT names a file,
// writes there the process's cumulative heap allocations (runtime/metrics
// /gc/heap/allocs:objects plus /gc/heap/tiny/allocs:objects, the count
// -benchmem reports, and /gc/heap/allocs:bytes) and /proc/self/io, then
// exits. It runs after run has returned (the database closed, the output
// flushed), whatever the command. A revision whose main.go has not exactly
// one os.Exit call cannot be hooked and is refused with that reason.
//
// The queues are written once, as scripts/bench writes them (package
// benchkit): the misses queue (free-text alerts, all distinct) and the
// corpus queue (the rule corpus of testdata/prometheus-rules rendered as
// Alertmanager webhooks, the real-rule webhooks). The kinds of run
// (-queues) are misses (empty memory, --no-cache), corpus-nocache (seeded
// memory, --no-cache), corpus (seeded memory, caches on) and webhooks (the
// corpus queue on an empty memory, caches on). Each build seeds its own
// database (its own schema version) from the same seed file; every run
// starts on a fresh copy of it, or on a new database.
//
// After one uncounted warm-up run of each build, -rounds rounds (default 5)
// run every kind of run on A then B in even rounds and B then A in odd ones
// (A,B,B,A,…), each as
//
//	openrecall --db COPY analyze --output jsonl --workers W QUEUE
//
// and again on the queue's first alert alone, the start-up run. Each round
// also times Python's json.loads of every line of each queue file (the CPU
// of a second pass, interpreter start-up excluded; -python "" skips it).
// A run's measures: CPU (rusage user+sys of the child), allocations, bytes
// the database file grew by and the -wal file left beside it (SQLite
// checkpoints and removes the WAL when the last connection closes, so it
// is normally 0), bytes written to files (the hook's wchar less what the
// child wrote to stdout and stderr: WAL frames and checkpoints) and peak
// RSS. "per alert" divides the whole run by the alerts; "less start-up"
// subtracts the start-up run and divides by the alerts beyond the first:
// the cost of one more alert.
//
// It prints one table row per kind of run and measure: A's median, B's
// median, B/A and each side's min–max over the rounds; then each kind of
// run's CPU per alert as a multiple of json.loads of its lines. The header
// gives the load average at the start and the end: on a loaded machine the
// medians and spreads say how far to trust a ratio. It exits 1 when a
// build or run fails, 2 on bad flags.
package main
