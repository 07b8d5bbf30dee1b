//go:build cgo

package memory

import (
	"errors"

	"github.com/mattn/go-sqlite3"

	"github.com/openrecall/openrecall"
)

// The SQLite driver's error codes are only defined when cgo is: this file
// holds every use of them (see nocgo.go for the build without cgo).

// classify maps a SQLite error to the package's or the root package's
// sentinel; nil when none applies.
func classify(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return ErrBusy
	case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
		return ErrCorrupt
	case sqlite3.ErrConstraint:
		return openrecall.ErrInvalid
	case sqlite3.ErrFull:
		return openrecall.ErrNoSpace
	}
	return nil
}

// cannotOpenWritable reports a read-only connection that failed because
// SQLite could not create or write a file beside the database (SQLITE_READONLY
// or SQLITE_CANTOPEN).
func cannotOpenWritable(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrReadonly || se.Code == sqlite3.ErrCantOpen)
}
