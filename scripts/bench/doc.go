// Command bench measures the throughput of `openrecall analyze` on a large
// generated queue and compares it with merely reading and JSON-decoding the
// same file:
//
//	go run ./scripts/bench -bin ./bin/openrecall -n 100000
//
// It writes a queue of n alerts (package queuegen: mixed formats and
// families, re-sent alerts, attacks; deterministic from -seed) and its seed
// file into a temporary directory, seeds one database with
// `openrecall memory seed`, and then, for each -workers count, copies that
// database and times
//
//	openrecall --db COPY analyze --output jsonl --workers N QUEUE > /dev/null
//
// with the deterministic local models, reading the child's peak resident set
// size and CPU time from its rusage. The baselines run in this process over
// the same file: a bufio.Scanner with json.Unmarshal of every line, and
// intake.NewReader (openrecall's own parser and normaliser). Each baseline
// runs -repeat times after one warm-up read and the fastest run counts.
//
// It prints one table row per run: records, seconds, alerts per second, peak
// RSS in MiB, CPU seconds, and the run's time as a multiple of each baseline.
// It exits 1 when a run fails or analyses fewer records than it generated, 2
// on bad flags.
package main
