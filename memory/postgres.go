package memory

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// PostgreSQL is the shared backend (DESIGN §13): the same Store, the same
// statements with PostgreSQL's spellings (pgDialect, dialect.go), a schema
// of its own (migrations_pg), and locks where SQLite has one writer at a
// time.

//go:embed migrations_pg/*.sql
var pgMigrationFiles embed.FS

// IsPostgres reports whether a database location is a PostgreSQL URL
// (postgres:// or postgresql://) rather than a SQLite file path.
func IsPostgres(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// Redact returns a database location fit to print or log: a PostgreSQL
// URL without its password (in the userinfo or a password parameter); a
// file path as it is.
func Redact(location string) string {
	if !IsPostgres(location) {
		return location
	}
	u, err := url.Parse(location)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// pgPoolSize bounds each pool of a PostgreSQL store (writers and readers):
// three serve processes of two pools each stay well inside PostgreSQL's
// default 100 connections.
const pgPoolSize = 8

// openPostgres opens the PostgreSQL database at location (a URL), applying
// pending migrations under an advisory lock unless read-only.
func openPostgres(ctx context.Context, location string, opts Options) (*Store, error) {
	safe := Redact(location)
	cfg, err := pgx.ParseConfig(location)
	if err != nil {
		return nil, fmt.Errorf("open memory %s: not a usable PostgreSQL URL: %w", safe, openrecall.ErrInvalid)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "openrecall"
	}
	// Recall's UNION ALL yields its tiers in order and stops at the limit;
	// a parallel append could interleave them. The queries are index
	// lookups, which gain nothing from parallel workers.
	cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	readCfg := cfg.Copy()
	readCfg.RuntimeParams["default_transaction_read_only"] = "on"
	if opts.ReadOnly {
		cfg = readCfg
	}
	// The write lock's key is the schema's; pgInit reads the schema on the
	// pool's first connection and sets key before any write transaction.
	key := new(atomic.Int64)
	db := openConnector(newPGConnector(stdlib.GetConnector(*cfg), key))
	db.SetMaxOpenConns(pgPoolSize)
	db.SetMaxIdleConns(pgPoolSize)
	s := newStore(&conn{db: db, path: safe, loc: location, log: opts.Logger.Named("memory"), now: opts.Now, pg: true, d: pgDialect, sql: statementsOf(pgDialect),
		leases: newLeases(opts)})
	if err := s.pgInit(ctx, opts.ReadOnly, key); err != nil {
		_ = db.Close() // the open already failed; that error is the one to report
		return nil, fmt.Errorf("open memory %s: %w", safe, err)
	}
	readers := openConnector(newPGConnector(stdlib.GetConnector(*readCfg), nil))
	readers.SetMaxOpenConns(min(pgPoolSize, maxReaders()))
	readers.SetMaxIdleConns(min(pgPoolSize, maxReaders()))
	if err := s.prepareRecall(ctx, readers); err != nil {
		_ = db.Close() // as above
		return nil, fmt.Errorf("open memory %s: %w", safe, err)
	}
	return s, nil
}

// pgInit derives the store's lock key from its schema and stores it in
// writeLock (the write pool's), checks the schema and, for writing,
// migrates it: under a session-level advisory lock, so processes starting
// together apply each migration once.
func (s *conn) pgInit(ctx context.Context, readOnly bool, writeLock *atomic.Int64) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return translate("connect", err)
	}
	defer func() { _ = conn.Close() }() // released to the pool
	// The lock key is the schema's: two installations in two schemas of
	// one database do not wait for each other. The schema is read on
	// this connection, the pool's first, since one of its own would cost
	// a server process's start (some 15 ms, a quarter of an open); the
	// key is set before anything else runs, and every connection of the
	// pool, this one included, reads it as a transaction begins
	// (pgConnector).
	var schema string
	if err := conn.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return translate("connect", err)
	}
	s.lockKey = int64(ApplicationID)<<32 | int64(crc32.ChecksumIEEE([]byte(schema)))
	writeLock.Store(s.lockKey)
	if !readOnly {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", s.lockKey+1); err != nil {
			return translate("migration lock", err)
		}
		defer func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", s.lockKey+1) // a closed session drops it too
		}()
	}
	tables, err := pgTables(ctx, conn)
	if err != nil {
		return err
	}
	hasSchema := false
	for _, t := range tables {
		if t == "schema_migrations" {
			hasSchema = true
		}
	}
	if !hasSchema && len(tables) > 0 {
		if len(tables) > 5 {
			tables = append(tables[:5:5], "…")
		}
		return fmt.Errorf("a PostgreSQL schema with tables of its own (%s) that openrecall did not create, left untouched: %w", strings.Join(tables, ", "), ErrForeign)
	}
	latest := SchemaVersion()
	version := 0
	if hasSchema {
		if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&version); err != nil {
			return translate("read schema version", err)
		}
	}
	switch {
	case version > latest:
		return fmt.Errorf("schema version %d, this binary knows up to %d; upgrade openrecall to use this database: %w", version, latest, ErrNewerSchema)
	case readOnly && !hasSchema:
		return fmt.Errorf("no openrecall tables in it (an empty PostgreSQL schema): %w", ErrNoDatabase)
	case readOnly && version < latest:
		return fmt.Errorf("schema version %d, this binary's is %d, and a read-only command does not upgrade it: run 'openrecall memory migrate' first: %w", version, latest, ErrOlderSchema)
	case readOnly || version == latest:
		return nil
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return translate("create schema_migrations", err)
	}
	ms, err := loadPGMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	for _, m := range ms {
		if m.version <= version {
			continue
		}
		if err := s.applyPG(ctx, conn, m); err != nil {
			return err
		}
		s.log.Info("applied migration", zap.Int("version", m.version), zap.String("name", m.name), zap.String("database", s.path))
	}
	return nil
}

// applyPG applies one migration and records it in one transaction.
func (s *conn) applyPG(ctx context.Context, conn *sql.Conn, m migration) error {
	tx, err := conn.BeginTx(withRowLocks(ctx), nil)
	if err != nil {
		return translate("begin migration", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return translate("apply migration "+m.name, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
		m.version, m.name, s.now().UTC().UnixNano()); err != nil {
		return translate("record migration "+m.name, err)
	}
	return translate("commit migration "+m.name, tx.Commit())
}

// pgTables lists the tables and views of the connection's current schema:
// what information_schema.tables lists (its relation kinds, those the user
// has any privilege on), read from pg_catalog directly, which on a new
// connection takes a few milliseconds less than the view.
func pgTables(ctx context.Context, conn *sql.Conn) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT c.relname::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'f', 'p')
			AND (pg_has_role(c.relowner, 'USAGE')
				OR has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
				OR has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))
		ORDER BY c.relname`)
	if err != nil {
		return nil, translate("read tables", err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, translate("read tables", err)
		}
		tables = append(tables, name)
	}
	return tables, translate("read tables", rows.Err())
}

func loadPGMigrations() ([]migration, error) {
	return readMigrations(pgMigrationFiles, "migrations_pg")
}

// classifyPG maps a PostgreSQL error to the package's or the root
// package's sentinel; nil when none applies.
func classifyPG(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch {
	case strings.HasPrefix(pe.Code, "23"): // integrity constraint violation
		return openrecall.ErrInvalid
	case pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03": // serialization failure, deadlock, lock not available
		return ErrBusy
	case pe.Code == "53100": // disk_full
		return openrecall.ErrNoSpace
	}
	return nil
}

// ScratchSchema creates a new, empty schema named prefix plus a random
// suffix in the PostgreSQL database at location, for a run that wants a
// memory of its own (eval's PostgreSQL rows, benchmarks), and returns the
// location of that schema and a function that drops it with everything in
// it.
func ScratchSchema(ctx context.Context, location, prefix string) (string, func() error, error) {
	cfg, err := pgx.ParseConfig(location)
	if err != nil {
		return "", nil, fmt.Errorf("scratch schema in %s: not a usable PostgreSQL URL: %w", Redact(location), openrecall.ErrInvalid)
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	schema := prefix + hex.EncodeToString(b[:])
	run := func(ctx context.Context, stmt string) error {
		db := stdlib.OpenDB(*cfg)
		defer func() { _ = db.Close() }() // one statement's pool
		_, err := db.ExecContext(ctx, stmt)
		return err
	}
	if err := run(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("scratch schema in %s: %w", Redact(location), err)
	}
	u, err := url.Parse(location)
	if err != nil {
		return "", nil, fmt.Errorf("scratch schema in %s: %w", Redact(location), err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() error { return run(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE") }
	return u.String(), drop, nil
}
