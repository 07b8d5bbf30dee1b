// Command benchserve measures `openrecall serve` under load on loopback:
//
//	go run ./scripts/benchserve -bin ./bin/openrecall -workers 1,4
//
// It builds nothing. For each -procs value and each -workers value (a run)
// it starts that many processes
//
//	openrecall --config DIR/serve-I/config.yaml --db DB serve --listen 127.0.0.1:0 --workers N
//
// one after the other, on one fresh database and audit key and no token
// (serve needs one only off loopback; the OPENRECALL_ variables of the
// caller's environment are not passed on), each with its own
// server.instance (bench-I) and port; the config file also sets, for
// every process, server.inbox_limit (-inbox-limit), server.retention
// (-retention, to watch pruning bound the database) and server.lease
// (-lease: a short one, at least 3s, renews and reclaims often) when given. DB is
// -db: with sqlite (the default) a file in the run's temporary directory;
// with postgres a fresh schema per run on the server $OPENRECALL_PG_DSN
// names, or without it on a throwaway cluster scripts/pgcluster.sh starts
// (fsync off there, so its 202s are not durable as on a real server); with
// a postgres:// URL a fresh schema per run on that server, which must be
// on loopback. The schema is dropped after the run unless -keep. The
// report's header says the database and how durable its commits are. It posts, on 127.0.0.1
// only, delivery n to process n mod -procs, from -clients concurrent HTTP
// clients: Alertmanager webhooks of one alert rendered by package
// rulecorpus from the rule corpus (firing n of rule n mod the rule count,
// to POST /api/v1/alerts/alertmanager) and,
// every -sender-every-th delivery, a captured sender payload of
// intake/testdata/senders (to POST /api/v1/alerts, which recognises the
// sender), its id-like fields suffixed per delivery so each is a new alert
// (fixtures whose alert id no such suffix changes are left out). Every
// phase is bounded by count (-n) and by time:
//
//   - warm-up: -warmup deliveries, drained, not reported;
//   - max: as fast as the clients can, for at most -duration: the maximum
//     durable accept rate (202 answers per second: serve answers 202 only
//     once the inbox rows are committed);
//   - one constant-rate phase per -rates percentage of that maximum, for at
//     most -phase each, open loop: a delivery's latency counts from the
//     moment it was due, so a server that falls behind shows it;
//   - with -soak, a constant rate of -soak-rate percent of the triage
//     throughput the max phase measured, for that long, sampling serve's
//     RSS every -soak-sample (with the database size and the inbox
//     depth); one process only. -heap-profiles (with -soak, so one
//     process) starts serve with --debug-listen 127.0.0.1:0 and saves its
//     live heap profile (/debug/pprof/heap?gc=1) a minute into the soak (a
//     third of it when shorter) and 10s before its end, as
//     heap-soak-early.pb.gz and heap-soak-late.pb.gz in the run's
//     directory, keeps the work directory, and prints the
//     go tool pprof -diff_base command that shows what grew.
//
// After each phase it waits (at most -drain) until every accepted delivery
// is finished, reading GET /api/v1/results?since= page by page (from the
// first process: they share the results; with -archive also every second
// during the phase, since serve forgets a delivery a retention after it
// finished); triage
// throughput is the analyses finished from the phase's start to that
// moment, per second. A 503 with Retry-After (the inbox at
// server.inbox_limit) is counted, not retried; any other answer, or none,
// is an error. serve's VmRSS and VmHWM are read from /proc every 500ms.
//
// It prints one table row per phase and run (-procs, -workers): requests sent, 202
// answers and their rate, new deliveries they accepted, p50 and p99 latency
// of the 202 answers, 503s, errors, analyses finished and their rate; then
// per run the peak RSS (of the largest process), the database size
// (SQLite: the file and its WAL; PostgreSQL: the schema's tables with
// their indexes) per finished delivery and
// the check that every delivery a 202 accepted was finished exactly once
// (and nothing else was), and the soak's first, last and largest RSS and its first
// and last database size, then by minute its RSS, inbox depth and database
// size.
// It stops serve with SIGTERM and waits for it, and removes the directory
// unless -keep, -dir or -heap-profiles. It exits 1 when a run fails (serve does not start
// or exits other than 0 after SIGTERM, an error answer, a drain past
// -drain, a delivery not finished exactly once), 2 on bad flags.
package main
