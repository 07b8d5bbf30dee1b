// Package server is the HTTP adapter of `openrecall serve`: it turns
// Alertmanager webhooks, PagerDuty Events v2 and any other intake format into
// the same intake records the analyze command reads and queues them durably;
// results, retain, recall, cost, audit verification and the outbox's
// notifications (listed, dead letters retried) go back out as JSON, and the
// cockpit (server/cockpit) serves the analysts' web UI. It answers
// HTTP and nothing else: the work beside it — draining the inbox through the
// workflow, pruning, lease renewal, the escalation webhook — is a Daemon
// (package runner) that Serve starts and stops after the HTTP server.
//
// # Durability
//
// A request body is streamed through intake within a size limit (413 past
// it), then every accepted record is written to the inbox (Store.Enqueue) in
// one transaction before the 202 answer names their analysis ids (the
// Daemon names them). The Daemon analyses inbox deliveries in id order and
// stores each result with its audit entries and cost point, completing its
// delivery in the same transaction. A process killed after a 202 finds its
// deliveries pending at the next start and drains them. A redelivered
// notification (same alert id: for Alertmanager the alert fingerprint and
// its start time) is answered with the earlier analysis id and not triaged
// twice; a re-trigger whose severity rose is triaged again. Past the inbox
// limit receivers answer 503 with Retry-After, which Alertmanager retries.
//
// # Security
//
// Bearer tokens carry scopes (ingest, retain, read); a request without a
// valid token is answered 401, one whose token lacks the scope 403. On the
// PagerDuty endpoints the event's routing_key is accepted as an ingest
// token. With no token configured, CheckListen refuses any address that is
// not loopback. Every answer is JSON (HTML-escaped), with the request id in
// the X-Request-Id header and in error bodies.
//
// # Observation
//
// The server reports what happens through the Observer interface;
// Prometheus is its implementation (NewPrometheus), and the runner's
// observers' too (the inbox's, and the outbox dispatcher's: Sent, Failed,
// Dead, LeaseLost; WatchOutbox reads the outbox's counts at each scrape),
// so /metrics serves them all. Metrics observe and never steer.
package server
