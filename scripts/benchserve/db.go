package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/openrecall/openrecall/internal/pgtest"
)

// database is the one database the serve processes of a run share: a
// SQLite file in the run's directory, or a fresh schema on a PostgreSQL
// server.
type database struct {
	location string // serve's --db: the file, or a URL whose search_path is the schema
	file     string // SQLite: the file
	pg       *sql.DB
	drop     func() error // PostgreSQL: drops the schema
}

// isPostgres says whether -db names PostgreSQL ("postgres" or a URL).
func isPostgres(spec string) bool {
	return spec == "postgres" || strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// pgServer returns the PostgreSQL server -db names: the URL itself, or for
// "postgres" OPENRECALL_PG_DSN or a throwaway cluster scripts/pgcluster.sh
// starts (stopped when this process exits). The server must be on
// loopback: the bench creates and drops schemas on it.
func pgServer(spec string) (string, error) {
	base := spec
	if spec == "postgres" {
		var err error
		if base, err = pgtest.Find(); err != nil {
			return "", err
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("-db: not a URL: %w", err)
	}
	hosts := []string{u.Hostname()}
	if h := u.Query().Get("host"); h != "" {
		hosts = append(hosts, h)
	}
	for _, h := range hosts {
		ip := net.ParseIP(h)
		if h != "" && h != "localhost" && !strings.HasPrefix(h, "/") && (ip == nil || !ip.IsLoopback()) {
			return "", fmt.Errorf("-db: PostgreSQL at %q: the bench runs on loopback only (127.0.0.1, localhost or a socket)", h)
		}
	}
	return base, nil
}

// describe says which database the runs use and how durable its commits
// are, for the report's header.
func describe(ctx context.Context, server string) (string, error) {
	if server == "" {
		return "SQLite (WAL, synchronous=NORMAL: a commit survives a crash of serve, not of the machine)", nil
	}
	db, err := sql.Open("pgx", server)
	if err != nil {
		return "", err
	}
	defer func() { _ = db.Close() }() // one query's pool
	var version, fsync, commit string
	if err := db.QueryRowContext(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')`).
		Scan(&version, &fsync, &commit); err != nil {
		return "", fmt.Errorf("PostgreSQL: %w", err)
	}
	return fmt.Sprintf("PostgreSQL %s (fsync %s, synchronous_commit %s), a fresh schema per run", version, fsync, commit), nil
}

// newDatabase returns a new, empty database for one run: dir/memory.db
// when server is "", else a new schema on server.
func newDatabase(server, dir string) (*database, error) {
	if server == "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		f := filepath.Join(dir, "memory.db")
		return &database{location: f, file: f}, nil
	}
	dsn, drop, err := pgtest.FreshAt(server, "benchserve_")
	if err != nil {
		return nil, err
	}
	pool, err := sql.Open("pgx", dsn)
	if err != nil {
		_ = drop() // the schema is of no use without a pool
		return nil, err
	}
	pool.SetMaxOpenConns(1)
	return &database{location: dsn, pg: pool, drop: drop}, nil
}

// bytes returns the database's size: the file with its WAL, or the
// schema's tables with their indexes and TOAST.
func (d *database) bytes() int64 {
	if d.pg != nil {
		var n int64
		_ = d.pg.QueryRow(`SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
		return n
	}
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(d.file + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// schema returns the PostgreSQL schema's name ("" for SQLite).
func (d *database) schema() string {
	u, err := url.Parse(d.location)
	if d.pg == nil || err != nil {
		return ""
	}
	return u.Query().Get("search_path")
}

// close closes the PostgreSQL pool and, unless keep, drops the schema (a
// SQLite file goes with the work directory).
func (d *database) close(keep bool) error {
	if d.pg == nil {
		return nil
	}
	_ = d.pg.Close() // the size queries' pool
	if keep {
		return nil
	}
	return d.drop()
}
