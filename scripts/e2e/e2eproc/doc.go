// Package e2eproc starts, watches and stops the processes of the
// end-to-end checks (scripts/e2e/alertmanager, scripts/e2e/notify): each
// started process keeps its combined output for the log dump of a failure
// and hands each line to a watcher, and a Group stops them all, the last
// started first. It also has the small helpers those checks share: a
// random secret and a free loopback port.
package e2eproc
