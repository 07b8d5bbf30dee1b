// Command bench measures the throughput of `openrecall analyze` on a large
// queue and compares it with merely reading and JSON-decoding the same file:
//
//	go run ./scripts/bench -bin ./bin/openrecall -n 20000
//
// It writes a queue of n alerts into a temporary directory: by default
// (-queue corpus) the fixed queue of the rule corpus (testdata) rendered as
// Alertmanager webhooks by package rulecorpus, firing i of rule i mod the
// rule count, each firing with its own instance and value; with -queue
// generated, package queuegen's mix of formats and families, re-sent alerts
// and attacks (deterministic from -seed); with -queue misses, the miss
// path: free-text alerts rendered from the corpus's summaries, each line
// ended by a reference of its own, so no two are equal. It writes queuegen's
// seed file (the analysts' decisions), seeds one database with `openrecall
// memory seed` (-memory seeded; -memory empty starts every run on a new
// database), and then, for each -workers count, -runs times (default 3),
// copies that database and times
//
//	openrecall --db COPY analyze --output jsonl --workers N QUEUE > /dev/null
//
// with --no-grouping for the rows of -grouping off (and both) and
// --no-cache, which turns the fingerprint and recall caches off, under
// -cache off. -queue misses defaults to an empty memory, the caches off and
// a row with and a row without alert groups; the other queues to the seeded
// memory, the caches on and groups on. Every run uses the deterministic
// local models, reading the child's peak resident set
// size and CPU time from its rusage. The baselines run in this process over
// the same file: a bufio.Scanner with json.Unmarshal of every line, and
// intake.NewReader (openrecall's own parser and normaliser). Each baseline
// runs -repeat times after one warm-up read and the fastest run counts.
//
// It prints one table row per baseline and per kind of run and -workers
// count (the run of
// median CPU, with the range of all its runs): records, seconds, alerts per
// second, peak RSS in MiB, CPU seconds, CPU microseconds per alert, and the
// run's wall time (and CPU time, against the JSON baseline) as a multiple of
// each baseline; then each row's cache statistics (analyze --cache-stats)
// and, with -profile (the default), the top entries of the CPU profile of
// one more run of the first -workers count, kept out of the table (analyze
// --cpuprofile, read with go tool pprof).
// It exits 1 when a run fails or analyses fewer records than it generated, 2
// on bad flags.
package main
