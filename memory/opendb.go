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

// openSQLite opens a pool of SQLite connections to dsn: sql.Open, or, with
// wrapConnector set, the same driver behind the wrapped connector.
func openSQLite(dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", dsn)
	if err != nil || wrapConnector == nil {
		return db, err
	}
	drv := db.Driver()
	_ = db.Close() // no connection opened yet
	return sql.OpenDB(wrapConnector(dsnConnector{dsn: dsn, drv: drv})), nil
}

// openConnector opens a pool over c (wrapped when wrapConnector is set).
func openConnector(c driver.Connector) *sql.DB {
	if wrapConnector != nil {
		c = wrapConnector(c)
	}
	return sql.OpenDB(c)
}

// dsnConnector connects to dsn through drv, as database/sql does for a
// driver without a connector of its own.
type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

func (c dsnConnector) Driver() driver.Driver { return c.drv }
