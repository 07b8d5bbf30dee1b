// Package testenv holds what tests share about their environment.
//
// Missing says what a test does when a data file it needs is missing.
// Every data file the tests read ships in the repository's testdata (the
// rule corpus, the security detection corpus, the captured payloads, the
// sender fixtures), so a missing one means a broken checkout: in CI
// (CI=true) the test fails; elsewhere, for someone working on a partial
// copy, it is skipped with the reason.
//
// Tools says the same of a program a test needs, and Build builds the
// openrecall binary for tests that drive it. Deadline, Expiry, Remaining
// and Poll bound a test's liveness waits by the test binary's own deadline
// (go test -timeout), never by a fixed duration.
package testenv
