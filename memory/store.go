package memory

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNewerSchema marks a database written by a newer openrecall: its schema
// version is above the newest migration this binary knows.
var ErrNewerSchema = errors.New("database schema is newer than this binary")

// ErrBusy marks an operation that gave up waiting for another writer (the
// busy timeout passed).
var ErrBusy = errors.New("database is busy")

// ErrCorrupt marks a file that is not a usable SQLite database.
var ErrCorrupt = errors.New("not a usable database")

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Logger receives diagnostics; nil means zap.NewNop().
	Logger *zap.Logger
	// Now is the clock used for created times; nil means time.Now().UTC().
	Now func() time.Time
}

// Store is the embedded SQLite memory. It is safe for concurrent use, and
// several Stores (in one process or many) may share one file.
type Store struct {
	db   *sql.DB
	path string
	log  *zap.Logger
	now  func() time.Time
	// recall holds the prepared recall tier queries, by query text.
	recall map[string]*sql.Stmt
}

type migration struct {
	version int
	name    string
	sql     string
}

// Open opens (creating when missing) the database at path, creating its
// parent directory, and applies pending migrations, one per transaction. A
// database whose schema is newer than this binary's is refused with an error
// wrapping ErrNewerSchema.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("open memory: empty database path: %w", openrecall.ErrInvalid)
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return time.Now().UTC() }
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("open memory %s: create directory: %w", path, err)
		}
	}
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open memory %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db, path: path, log: opts.Logger.Named("memory"), now: opts.Now}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open memory %s: %w", path, err)
	}
	return s, nil
}

// dsn builds the connection string; characters that SQLite's URI parser
// treats specially in a path are percent-encoded.
func dsn(path string) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + p + "?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate"
}

func (s *Store) init(ctx context.Context) error {
	mode, err := s.journalMode(ctx)
	if err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.recall = map[string]*sql.Stmt{}
	for _, q := range []string{recallExact, recallShapeDiffers, recallDependencyDiffers, recallBothDiffer} {
		stmt, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return translate("prepare recall", err)
		}
		s.recall[q] = stmt
	}
	return nil
}

// journalMode reads the journal mode, waiting while another process is
// switching a new file to WAL: SQLite answers SQLITE_BUSY at once there,
// without consulting the busy handler, so the busy timeout does not cover it.
func (s *Store) journalMode(ctx context.Context) (string, error) {
	deadline := time.Now().Add(busyWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		var mode string
		err := translate("read journal mode", s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
		if err == nil || !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			return mode, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(delay):
		}
	}
}

// busyWait is how long Open waits for another process that holds the file
// while it creates or converts it; it matches the DSN's busy timeout.
const busyWait = 5 * time.Second

func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]migration, 0, len(names))
	for i, name := range names {
		base := filepath.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want name %04d_*.sql", base, i+1)
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(body)})
	}
	return out, nil
}

// SchemaVersion returns the newest schema version this binary knows.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return translate("create schema_migrations", err)
	}
	latest := ms[len(ms)-1].version
	for _, m := range ms {
		applied, err := s.applyMigration(ctx, m, latest)
		if err != nil {
			return err
		}
		if applied {
			s.log.Info("applied migration", zap.Int("version", m.version), zap.String("name", m.name), zap.String("path", s.path))
		}
	}
	return nil
}

// applyMigration applies m unless the database already has it; the version
// check runs inside the immediate transaction so that two processes opening
// one new file apply each migration once.
func (s *Store) applyMigration(ctx context.Context, m migration, latest int) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, translate("begin migration", err)
	}
	defer tx.Rollback()
	var current int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return false, translate("read schema version", err)
	}
	if current > latest {
		return false, fmt.Errorf("schema version %d, this binary knows up to %d; upgrade openrecall to use this database: %w", current, latest, ErrNewerSchema)
	}
	if current >= m.version {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, translate("apply migration "+m.name, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.version, m.name, s.now().UTC().UnixNano()); err != nil {
		return false, translate("record migration "+m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, translate("commit migration "+m.name, err)
	}
	return true, nil
}

// Close closes the database. The Store must not be used afterwards.
func (s *Store) Close() error {
	for _, stmt := range s.recall {
		stmt.Close()
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close memory %s: %w", s.path, err)
	}
	return nil
}

// Path returns the database path the Store was opened with.
func (s *Store) Path() string { return s.path }

// translate wraps a database error with op, mapping SQLite result codes to
// the package's and the root package's sentinels.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, openrecall.ErrNotFound)
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%s: %w: %w", op, ErrBusy, err)
		case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
			return fmt.Errorf("%s: %w: %w", op, ErrCorrupt, err)
		case sqlite3.ErrConstraint:
			return fmt.Errorf("%s: %w: %w", op, openrecall.ErrInvalid, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// nanos converts t to UTC unix nanoseconds, refusing times that do not fit.
func nanos(t time.Time) (int64, error) {
	if t.Year() < 1678 || t.Year() > 2261 {
		return 0, fmt.Errorf("time %s is outside the storable range (years 1678-2261): %w", t.Format(time.RFC3339), openrecall.ErrInvalid)
	}
	return t.UnixNano(), nil
}

func fromNanos(ns int64) time.Time { return time.Unix(0, ns).UTC() }
