// Command benchserve measures `openrecall serve` under load on loopback:
//
//	go run ./scripts/benchserve -bin ./bin/openrecall -workers 1,4
//
// It builds nothing. For each -workers value it starts
//
//	openrecall --db DIR/memory.db serve --listen 127.0.0.1:0 --workers N
//
// with a fresh database and audit key in a temporary directory and no token
// (serve needs one only off loopback; the OPENRECALL_ variables of the
// caller's environment are not passed on), and posts to it, on 127.0.0.1
// only, from -clients concurrent HTTP clients: Alertmanager webhooks of one
// alert rendered by package rulecorpus from the rule corpus (firing n of
// rule n mod the rule count, to POST /api/v1/alerts/alertmanager) and,
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
//     RSS every -soak-sample (with the database size); -retention sets
//     serve's server.retention, to watch pruning bound the database;
//     -heap-profiles starts serve with --debug-listen on loopback and saves
//     its live heap profile a minute into the soak and 10s before its end.
//
// After each phase it waits (at most -drain) until every accepted delivery
// is finished, reading GET /api/v1/results?since= page by page; triage
// throughput is the analyses finished from the phase's start to that
// moment, per second. A 503 with Retry-After (the inbox at
// server.inbox_limit) is counted, not retried; any other answer, or none,
// is an error. serve's VmRSS and VmHWM are read from /proc every 500ms.
//
// It prints one table row per phase and -workers value: requests sent, 202
// answers and their rate, new deliveries they accepted, p50 and p99 latency
// of the 202 answers, 503s, errors, analyses finished and their rate; then
// per serve run the peak RSS, the database size per finished delivery and
// the check that every delivery a 202 accepted was finished exactly once
// (and nothing else was), and the soak's first, last and largest RSS and its first
// and last database size.
// It stops serve with SIGTERM and waits for it, and removes the directory
// unless -keep or -dir. It exits 1 when a run fails (serve does not start
// or exits other than 0 after SIGTERM, an error answer, a drain past
// -drain, a delivery not finished exactly once), 2 on bad flags.
package main
