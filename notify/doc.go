// Package notify decides who hears of a stored result and carries it to
// them (DESIGN §12b): a route tree like Alertmanager's chooses the
// receivers of each result. This file set holds the tree: its matchers,
// its parsing from the configuration (errors name the line) and its
// walk.
//
// A route matches a result when all its matchers hold. The tree is walked
// depth first from the root, which matches every result: a matching
// route's children are tried in order, and the first that matches ends
// the walk of its siblings unless it says continue; a route none of whose
// children matched is itself a match. Each match names its receiver (a
// child without one takes its parent's), and a receiver reached by
// several matches is notified once.
package notify
