package memory

import (
	"context"
	"database/sql/driver"
	"sync/atomic"
)

// The PostgreSQL backend runs the statements the SQLite one runs, each
// written once with the differences between the two databases named at
// the query site (dialect.go) and numbered placeholders ($1) both take as
// written: pgx is given each statement's text unchanged. Everything else
// the two backends do differently (schema, locks, errors, sizes) is in
// postgres.go.

// pgConnector wraps pgx's database/sql connector: a write transaction
// takes the store's write lock unless its context says it locks rows
// itself. Statements pass through as written.
type pgConnector struct {
	inner driver.Connector
	// writeLock holds the advisory lock key every write transaction takes
	// (see withRowLocks); nil or 0 takes none. It is read as each
	// transaction begins, not at connect: openPostgres learns the key
	// (its schema's) on the pool's first connection, which the connector
	// made before the key was known and which serves writes afterwards.
	writeLock *atomic.Int64
}

// newPGConnector returns a connector over inner whose write transactions
// take the advisory lock writeLock holds when they begin (nil or 0: none).
func newPGConnector(inner driver.Connector, writeLock *atomic.Int64) pgConnector {
	return pgConnector{inner: inner, writeLock: writeLock}
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn, writeLock: c.writeLock}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgConn is one connection of pgConnector.
type pgConn struct {
	driver.Conn
	writeLock *atomic.Int64
}

// The interfaces database/sql looks for, which pgx's connection has.
var (
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
	_ driver.Validator          = (*pgConn)(nil)
)

// rowLocks marks a context whose write transaction takes row locks of its
// own instead of the store's write lock: the inbox's enqueue, claim and
// lease renewal, which many processes run at once, and the budget's
// single-row updates.
type rowLocks struct{}

// withRowLocks returns ctx marked so that a transaction begun with it on
// PostgreSQL does not take the store's write lock.
func withRowLocks(ctx context.Context) context.Context {
	return context.WithValue(ctx, rowLocks{}, true)
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if key := c.lockKey(); !opts.ReadOnly && key != 0 && ctx.Value(rowLocks{}) == nil {
		// Every write transaction is serialised by one transaction-level
		// advisory lock, as SQLite's immediate transactions serialise
		// writers: the read-then-write steps of the store stay atomic
		// across processes. The inbox's hot paths lock rows instead.
		if _, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)",
			[]driver.NamedValue{{Ordinal: 1, Value: key}}); err != nil {
			_ = tx.Rollback() // the lock failed; that error is the one to report
			return nil, err
		}
	}
	return tx, nil
}

// lockKey returns the key of the write lock this connection's write
// transactions take now (0: none).
func (c *pgConn) lockKey() int64 {
	if c.writeLock == nil {
		return 0
	}
	return c.writeLock.Load()
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *pgConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *pgConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *pgConn) CheckNamedValue(*driver.NamedValue) error { return nil }

func (c *pgConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}
