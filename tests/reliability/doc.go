// Package reliability holds the reliability suite: tests that drive the
// built openrecall binary as a user or an operator would, with input that is
// not alerts, a kill -9 in the middle of a run, and several processes
// writing one database at once. It has no code of its own; see its tests.
//
// The suite is skipped with -short: it builds the binary and runs it
// hundreds of times.
package reliability
