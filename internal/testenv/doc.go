// Package testenv says what a test does when a data file it needs is
// missing. Every data file the tests read ships in the repository's
// testdata (the rule corpus, the security detection corpus, the captured
// payloads, the sender fixtures), so a missing one means a broken
// checkout: in CI (CI=true) the test fails; elsewhere, for someone working
// on a partial copy, it is skipped with the reason.
package testenv
