package memory

import (
	"context"
	"database/sql"
	"database/sql/driver"
)

// wrapConnector, when set, wraps the connector of every pool a Store opens
// from then on. It is nil in the product; a test that kills its process
// between two statements of a transaction counts the statements through it
// (crash_test.go).
var wrapConnector func(driver.Connector) driver.Connector

// openSQLite opens a pool of SQLite connections to dsn, each keeping its
// temporary files in memory (dsnConnector), behind wrapConnector when set.
func openSQLite(dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return db, err
	}
	drv := db.Driver()
	_ = db.Close() // no connection opened yet
	var c driver.Connector = dsnConnector{dsn: dsn, drv: drv}
	if wrapConnector != nil {
		c = wrapConnector(c)
	}
	return sql.OpenDB(c), nil
}

// openConnector opens a pool over c (wrapped when wrapConnector is set).
func openConnector(c driver.Connector) *sql.DB {
	if wrapConnector != nil {
		c = wrapConnector(c)
	}
	return sql.OpenDB(c)
}

// dsnConnector connects to dsn through drv, as database/sql does for a
// driver without a connector of its own, and sets each connection's
// temp_store to MEMORY: a batch's multi-row INSERT runs in a statement
// journal (it writes many rows and may abort on a constraint), which SQLite
// spills to an unlinked file in /var/tmp beyond 64 KiB — 17 KB of file
// writes per alert on the misses queue, more than the WAL. The journal
// holds pages the transaction holds in its cache anyway. The other
// temporary structures it moves to memory are the sorts of the few
// whole-table reads without an index for their order (memories and
// exceptions by creation time, the tie-break of the queue's order).
type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (c dsnConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if _, err := conn.(driver.ExecerContext).ExecContext(ctx, "PRAGMA temp_store = MEMORY", nil); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

func (c dsnConnector) Driver() driver.Driver { return c.drv }
