// Package benchkit holds what the analyze benchmarks share: the queues they
// write (the rule corpus as Alertmanager webhooks, the miss path's free-text
// alerts, queuegen's mixed queue), the seeded database they start from and
// copy before every run, and one timed run of `openrecall analyze` as a
// child process with its CPU time and peak RSS from rusage.
//
// scripts/bench (make bench-analyze) times one binary; scripts/benchcompare
// (make bench-compare) compares two builds with the same pieces.
package benchkit
