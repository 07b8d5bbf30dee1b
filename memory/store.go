package memory

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver
	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNewerSchema marks a database written by a newer openrecall: its schema
// version is above the newest migration this binary knows.
var ErrNewerSchema = errors.New("database schema is newer than this binary")

// ErrOlderSchema marks a database opened read-only whose schema is older
// than this binary's: a read-only open never migrates.
var ErrOlderSchema = errors.New("database schema is older than this binary")

// ErrBusy marks an operation that gave up waiting for another writer (the
// busy timeout passed).
var ErrBusy = errors.New("database is busy")

// ErrCorrupt marks a file that is not a usable SQLite database.
var ErrCorrupt = errors.New("not a usable database")

// ErrForeign marks a SQLite database that belongs to another application:
// it carries another application id, or tables of its own and no
// openrecall schema. Open refuses it without changing a byte.
var ErrForeign = errors.New("not an openrecall database")

// ErrNoDatabase marks a read-only open of a path where no database exists;
// a read-only open never creates one.
var ErrNoDatabase = errors.New("no database at this path")

// ApplicationID is the SQLite application id (PRAGMA application_id) that
// marks openrecall databases: "orcl" in ASCII.
const ApplicationID = 0x6f72636c

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Logger receives diagnostics; nil means zap.NewNop().
	Logger *zap.Logger
	// Now is the clock used for created times; nil means time.Now().UTC().
	Now func() time.Time
	// ReadOnly opens an existing database for reading: the file is opened
	// with mode=ro, never created, migrated or marked, and no write lock is
	// ever taken, so it works on a read-only copy and while a writer holds
	// the lock. A missing file is refused (ErrNoDatabase), and so is a
	// schema older than this binary's (ErrOlderSchema): open it once for
	// writing to upgrade it.
	ReadOnly bool
	// Instance names this process among the serve processes sharing the
	// database: a delivery a former start of the same instance claimed is
	// claimed again at once, without waiting for its lease to pass. Empty
	// is one instance like any other.
	Instance string
	// Lease is how long a claim of an inbox delivery or an outbox intent
	// lasts unless renewed (DefaultLease when 0).
	Lease time.Duration
	// AfterRenew, when set, runs inside RenewLeases once its transaction
	// committed and before it judges the claims it renewed: the point
	// where a test commits a Claim during a renewal. serve leaves it nil.
	AfterRenew func()
	// MaxPages caps a SQLite database at this many pages (PRAGMA
	// max_page_count on the connection that writes): past it every write
	// that needs a new page fails with openrecall.ErrNoSpace, as on a full disk. 0
	// leaves SQLite's own limit; PostgreSQL ignores it.
	MaxPages int
}

// Store is the memory, on SQLite or PostgreSQL: the aggregates below, each
// a type of its own over the one connection and dialect they share,
// composed so that a Store has all their methods. It is safe for
// concurrent use, and several Stores (in one process or many) may share
// one database.
type Store struct {
	*conn
	// Memories retains and recalls analysts' decisions.
	Memories
	// Inbox is serve's durable inbox and its leases.
	Inbox
	// Trail is the audit and cost trail and what binds to it.
	Trail
	// Decisions are alert groups, exceptions and what waits for a person.
	Decisions
	// Budget is serve's daily model budget.
	Budget
	// Sessions are the cockpit's sessions.
	Sessions
	// Outbox is the notification intents and their dispatch.
	Outbox
}

// Memories retains analysts' decisions (incidents) and recalls them:
// incidents.go, search.go, forget.go, recallcache.go, exchange.go,
// stats.go. It is safe for concurrent use.
type Memories struct{ *conn }

// Inbox is serve's durable inbox and the leases of its deliveries:
// inbox.go, lease.go. It is safe for concurrent use.
type Inbox struct{ *conn }

// Trail is the audit trail and the cost curve, their archives and
// keying, the row seals bound to them and the strong completions they
// record: audit.go, cost.go, trail.go, archive.go, seal.go,
// completions.go. It is safe for concurrent use.
type Trail struct{ *conn }

// Decisions are the alert groups, the exceptions and their proposals,
// and what waits for a person's decision: groups.go, exceptions.go,
// waiting.go. It is safe for concurrent use.
type Decisions struct{ *conn }

// Budget is serve's daily model budget, shared by every process: budget.go.
// It is safe for concurrent use.
type Budget struct{ *conn }

// Sessions are the cockpit's sessions: sessions.go. It is safe for
// concurrent use.
type Sessions struct{ *conn }

// Outbox is the notification intents written with their results and the
// dispatcher's claims, outcomes, dead letters and counts of them:
// outbox.go. It is safe for concurrent use.
type Outbox struct{ *conn }

// The aggregates' zero values are not usable: each is a field of a Store.

// newStore composes the aggregates over c.
func newStore(c *conn) *Store {
	return &Store{conn: c, Memories: Memories{c}, Inbox: Inbox{c}, Trail: Trail{c},
		Decisions: Decisions{c}, Budget: Budget{c}, Sessions: Sessions{c}, Outbox: Outbox{c}}
}

// conn is what the aggregates of a Store share: the connections, the
// dialect and its statements, the clock, the logger, the recall cache,
// the leases and the row seals.
type conn struct {
	// db is the one connection every write, and every read but recall,
	// goes through (read-only for a read-only Store); its PRAGMA
	// data_version is what the recall cache compares.
	db *sql.DB
	// readers is a pool of read-only connections to the same file that
	// recall reads through, so that several workers recall at once while
	// db appends.
	readers *sql.DB
	path    string
	log     *zap.Logger
	now     func() time.Time
	// recall holds the prepared recall queries, by query text.
	recall map[string]*sql.Stmt
	// rcache is the per-run recall cache (nil: off); incidentWrites counts
	// this store's committed writes of incidents, which empty it.
	rcache         *recallCache
	incidentWrites atomic.Int64
	// d is the SQL dialect of the database (dialect.go), chosen at open,
	// and sql its statements that differ between the dialects.
	d   dialect
	sql *statements
	// pg is set for a PostgreSQL store (postgres.go); lockKey is then the
	// advisory lock key of its write transactions (the migration lock is
	// lockKey+1).
	pg      bool
	lockKey int64
	// leases are the inbox deliveries and outbox intents this Store
	// claimed (lease.go, outbox.go); lost counts the inbox claims it found
	// reclaimed by another owner.
	leases *leases
	lost   atomic.Int64
	// seal seals rows and checks them on reading once SealRows ran (nil:
	// rows are written unsealed and read unchecked).
	seal *rowSealing
	// loc is the location Open was given (path keeps it without a
	// password, for printing).
	loc string
	// docs holds *jsonfast.Docs between batches persisted without a
	// Sink.Docs (serve's): their buffers are reused, not made per batch.
	docs sync.Pool
}

type migration struct {
	version int
	name    string
	sql     string
}

// Open opens the database at path and applies pending migrations, one per
// transaction. For writing (the default) a missing file and its parent
// directory are created, and the file is marked with ApplicationID. A
// SQLite file of another application is refused untouched (ErrForeign); a
// database whose schema is newer than this binary's is refused with an
// error wrapping ErrNewerSchema. See Options.ReadOnly for read-only opens.
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
	if IsPostgres(path) {
		return openPostgres(ctx, path, opts)
	}
	var err error
	if opts.ReadOnly {
		err = checkExists(path)
	} else {
		err = createFile(path)
	}
	if err == nil {
		err = precheck(ctx, path)
	}
	if err != nil {
		return nil, fmt.Errorf("open memory %s: %w", path, err)
	}
	s, err := open(ctx, path, dsn(path, opts.ReadOnly), dsn(path, true), opts)
	if err != nil && opts.ReadOnly && needsImmutable(path, err) {
		s, err = open(ctx, path, dsn(path, true)+"&immutable=1", dsn(path, true)+"&immutable=1", opts)
	}
	if err != nil {
		return nil, fmt.Errorf("open memory %s: %w", path, err)
	}
	return s, nil
}

// open opens the Store's connection with dsn and, once init has found the
// file to be an openrecall database of this binary's schema, its pool of
// readers with readDSN (always read-only).
func open(ctx context.Context, path, dsn, readDSN string, opts Options) (*Store, error) {
	db, err := openSQLite(dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	s := newStore(&conn{db: db, path: path, loc: path, log: opts.Logger.Named("memory"), now: opts.Now, leases: newLeases(opts),
		d: sqliteDialect, sql: statementsOf(sqliteDialect)})
	if err := s.init(ctx, opts.ReadOnly); err != nil {
		_ = db.Close() // the open already failed; that error is the one to report
		return nil, err
	}
	if err := s.openReaders(ctx, readDSN); err != nil {
		_ = db.Close() // as above
		return nil, err
	}
	if opts.MaxPages > 0 {
		// The one writing connection lives as long as the Store: the
		// pragma holds for every write.
		if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", opts.MaxPages)); err != nil {
			_ = s.Close() // as above
			return nil, translate("max_page_count", err)
		}
	}
	return s, nil
}

// maxReaders bounds the pool of read connections: more than the processors
// that can run them gains nothing.
func maxReaders() int { return min(max(2, runtime.GOMAXPROCS(0)), 8) }

// openReaders opens the pool of read-only connections recall reads through
// and prepares the recall queries on it. It runs after init, so it never
// meets a foreign, newer or unmigrated file.
func (s *conn) openReaders(ctx context.Context, readDSN string) error {
	readers, err := openSQLite(readDSN)
	if err != nil {
		return err
	}
	n := maxReaders()
	readers.SetMaxOpenConns(n)
	readers.SetMaxIdleConns(n)
	readers.SetConnMaxLifetime(0)
	return s.prepareRecall(ctx, readers)
}

// prepareRecall makes readers the Store's pool of readers and prepares the
// recall queries on it; on failure it closes the pool.
func (s *conn) prepareRecall(ctx context.Context, readers *sql.DB) error {
	s.readers = readers
	s.recall = map[string]*sql.Stmt{}
	for _, q := range s.sql.recall.all() {
		stmt, err := readers.PrepareContext(ctx, q.text)
		if err != nil {
			s.closeReaders()
			return translate("prepare recall", err)
		}
		s.recall[q.text] = stmt
	}
	return nil
}

// closeReaders closes the recall statements and the pool of readers.
func (s *conn) closeReaders() {
	for _, stmt := range s.recall {
		_ = stmt.Close() // read-only: nothing to lose
	}
	if s.readers != nil {
		_ = s.readers.Close() // read-only connections: nothing to lose
	}
}

// needsImmutable reports whether a read-only open failed only because
// SQLite cannot create the WAL index (-shm) beside a database in a
// directory we may not write to, a read-only copy: with no WAL content
// beside it, the database file alone holds every committed transaction,
// and SQLite can read it as immutable (no locks, no -shm).
func needsImmutable(path string, err error) bool {
	if !cannotOpenWritable(err) {
		return false
	}
	fi, statErr := os.Stat(path + "-wal")
	return errors.Is(statErr, fs.ErrNotExist) || (statErr == nil && fi.Size() == 0)
}

// createFile creates the parent directory and the file when missing, so
// that a failure names its real cause (SQLite reports "unable to open
// database file: no such file or directory" for a read-only directory).
func createFile(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create directory: %w", pathErrCause(err))
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return pathErrCause(err)
	}
	return f.Close()
}

// checkExists refuses a path with no database file, for read-only opens.
func checkExists(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w (read-only commands never create one: check --db or $OPENRECALL_DB, or create it with 'openrecall memory seed' or 'openrecall analyze')", ErrNoDatabase)
	case err != nil:
		return pathErrCause(err)
	case fi.IsDir():
		return errors.New("is a directory, not a database file")
	case fi.Size() == 0:
		return fmt.Errorf("empty file: %w", ErrNoDatabase)
	}
	return nil
}

// pathErrCause drops the path from an *fs.PathError, which the caller's
// message already names.
func pathErrCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// dsn builds the connection string; characters that SQLite's URI parser
// treats specially in a path are percent-encoded. The journal mode is not
// in it: it is switched to WAL only after the file is known to be ours.
func dsn(path string, readOnly bool) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	if readOnly {
		return "file:" + p + "?mode=ro&_busy_timeout=5000&_foreign_keys=on&_txlock=deferred"
	}
	// The writer keeps its prepared statements (_stmt_cache_size): the
	// statements of an append repeat on every batch.
	return "file:" + p + "?_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate&_stmt_cache_size=64"
}

func (s *conn) init(ctx context.Context, readOnly bool) error {
	state, err := s.inspect(ctx)
	if err != nil {
		return err
	}
	latest := SchemaVersion()
	switch {
	case state.foreign != nil:
		return state.foreign
	case state.version > latest:
		return fmt.Errorf("schema version %d, this binary knows up to %d; upgrade openrecall to use this database: %w", state.version, latest, ErrNewerSchema)
	case readOnly && !state.hasSchema:
		return fmt.Errorf("no openrecall tables in it (an empty SQLite database): %w", ErrNoDatabase)
	case readOnly && state.version < latest:
		return fmt.Errorf("schema version %d, this binary's is %d, and a read-only command does not upgrade it: run 'openrecall memory migrate' first: %w", state.version, latest, ErrOlderSchema)
	case !readOnly:
		if !state.hasSchema {
			// A new file's pages are 8 KiB: a stored result (alert, analysis,
			// steps, links) is 3–7 KB of JSON, which in 4 KiB pages spills
			// into an overflow page of its own, about half of it empty. Set
			// before WAL, the only time SQLite accepts it; an existing file
			// keeps its size.
			if _, err := s.db.ExecContext(ctx, "PRAGMA page_size = 8192"); err != nil {
				return translate("set page size", err)
			}
		}
		if err := s.useWAL(ctx); err != nil {
			return err
		}
		if state.appID != ApplicationID || state.version < latest {
			if err := s.migrate(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileState is what inspect reads from a database without writing to it.
type fileState struct {
	appID     int64
	hasSchema bool  // schema_migrations exists
	version   int   // the newest applied migration, 0 without one
	foreign   error // not nil when the file belongs to another application
}

// inspect reads the application id, the tables and the schema version. It
// only reads, so a foreign file is left as it was.
func (s *conn) inspect(ctx context.Context) (fileState, error) {
	var st fileState
	var tables []string
	err := retryBusy(ctx, func() error {
		var err error
		st = fileState{}
		st.appID, tables, err = readOwner(ctx, s.db)
		if err != nil {
			return err
		}
		st.hasSchema = slices.Contains(tables, "schema_migrations")
		if st.hasSchema {
			if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&st.version); err != nil {
				return translate("read schema version", err)
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.foreign = foreignErr(st.appID, tables)
	return st, nil
}

// readOwner reads the application id and the names of the tables and views.
func readOwner(ctx context.Context, db *sql.DB) (int64, []string, error) {
	var appID int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, nil, translate("read application id", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return 0, nil, translate("read tables", err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return 0, nil, translate("read tables", err)
		}
		tables = append(tables, name)
	}
	return appID, tables, translate("read tables", rows.Err())
}

// foreignErr says why a file with this application id and these tables
// belongs to another application; nil when it is openrecall's or new.
func foreignErr(appID int64, tables []string) error {
	switch {
	case appID != 0 && appID != ApplicationID:
		return fmt.Errorf("a SQLite database of another application (application_id %#x), left untouched: %w", appID, ErrForeign)
	case appID == 0 && len(tables) > 0 && !slices.Contains(tables, "schema_migrations"):
		if len(tables) > 5 {
			tables = append(tables[:5:5], "…")
		}
		return fmt.Errorf("a SQLite database with tables of its own (%s) that openrecall did not create, left untouched: %w", strings.Join(tables, ", "), ErrForeign)
	}
	return nil
}

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// precheck refuses a foreign file before any ordinary connection touches
// it: even reading a WAL-mode file through one creates -wal and -shm
// beside it. It reads the application id from the file header (offset 68)
// and, when that is 0, the tables through an immutable connection, which
// takes no locks and creates no files. Tables that only a WAL file holds
// are not seen here; inspect checks again.
func precheck(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return pathErrCause(err)
	}
	hdr := make([]byte, 100)
	n, err := io.ReadFull(f, hdr)
	_ = f.Close() // read-only
	if n < len(hdr) || !bytes.HasPrefix(hdr, []byte(sqliteHeader)) {
		return nil // new, empty or not SQLite at all: SQLite itself says which
	}
	if err != nil {
		return err
	}
	switch id := int64(int32(binary.BigEndian.Uint32(hdr[68:72]))); id {
	case ApplicationID:
		return nil
	case 0:
	default:
		return foreignErr(id, nil)
	}
	db, err := sql.Open("sqlite3", dsn(path, true)+"&immutable=1")
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }() // read-only and immutable: nothing to lose
	db.SetMaxOpenConns(1)
	appID, tables, err := readOwner(ctx, db)
	if err != nil {
		// An immutable read can see a page that a writer's checkpoint is
		// changing: inconclusive, and inspect decides under the locks.
		return nil
	}
	return foreignErr(appID, tables)
}

// useWAL switches the file to WAL unless it already is.
func (s *conn) useWAL(ctx context.Context) error {
	var mode string
	err := retryBusy(ctx, func() error {
		return translate("set journal mode", s.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode))
	})
	if err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	return nil
}

// retryBusy runs f again while it fails with ErrBusy, up to busyWait: while
// another process switches a new file to WAL, SQLite answers SQLITE_BUSY
// at once, without consulting the busy handler, so the busy timeout does
// not cover it.
func retryBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(busyWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := f()
		if err == nil || !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// busyWait is how long Open waits for another process that holds the file
// while it creates or converts it; it matches the DSN's busy timeout.
const busyWait = 5 * time.Second

func loadMigrations() ([]migration, error) { return readMigrations(migrationFiles, "migrations") }

// readMigrations reads the migrations of one backend from dir of files.
func readMigrations(files embed.FS, dir string) ([]migration, error) {
	names, err := fs.Glob(files, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]migration, 0, len(names))
	for i, name := range names {
		base := filepath.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		// Numbers rise but may skip: a number is reserved for a change
		// that lands later (0007, exceptions) and is applied then.
		if !ok || err != nil || v < 1 || i > 0 && v <= out[i-1].version {
			return nil, fmt.Errorf("migration %s: want name NNNN_*.sql numbered above the one before", base)
		}
		body, err := files.ReadFile(name)
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

func (s *conn) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if err := s.claim(ctx); err != nil {
		return err
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

// claim marks the file as openrecall's and creates schema_migrations, in
// one immediate transaction that checks again, under the write lock, that
// no other application's tables appeared since inspect.
func (s *conn) claim(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return translate("begin claim", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var id int64
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return translate("read application id", err)
	}
	if id == ApplicationID {
		return nil
	}
	var others int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations')`).Scan(&others); err != nil {
		return translate("read tables", err)
	}
	if id != 0 || others > 0 {
		return fmt.Errorf("another application's tables appeared while opening, left untouched: %w", ErrForeign)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
		return translate("set application id", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return translate("create schema_migrations", err)
	}
	if err := tx.Commit(); err != nil {
		return translate("commit claim", err)
	}
	// Copy the mark into the database file now, not at the next automatic
	// checkpoint, so that precheck reads it from the header of a file that
	// a writer keeps open. Best effort: a busy reader only delays it.
	if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		s.log.Debug("checkpoint after marking", zap.Error(err))
	}
	return nil
}

// applyMigration applies m unless the database already has it; the version
// check runs inside the immediate transaction so that two processes opening
// one new file apply each migration once.
func (s *conn) applyMigration(ctx context.Context, m migration, latest int) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, translate("begin migration", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var current int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return false, translate("read schema version", err)
	}
	if current > latest {
		return false, fmt.Errorf("schema version %d, this binary knows up to %d; upgrade openrecall to use this database: %w", current, latest, ErrNewerSchema)
	}
	var applied int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = $1", m.version).Scan(&applied); err != nil {
		return false, translate("read schema version", err)
	}
	if applied > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, translate("apply migration "+m.name, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
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
	s.closeReaders()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close memory %s: %w", s.path, err)
	}
	return nil
}

// Path returns the database path the Store was opened with.
func (s *Store) Path() string { return s.path }

// Backend names the database the Store keeps its memory in: "sqlite" or
// "postgres" (the memory half of a run's mode).
func (s *Store) Backend() string {
	if s.pg {
		return "postgres"
	}
	return "sqlite"
}

// location returns the location the Store was opened with, password
// included: for opening the same database again.
func (s *conn) location() string { return s.loc }

// translate wraps a database error with op, mapping SQLite result codes to
// the package's and the root package's sentinels.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, openrecall.ErrNotFound)
	}
	sentinel := classify(err)
	if sentinel == nil {
		sentinel = classifyPG(err)
	}
	if sentinel != nil {
		return fmt.Errorf("%s: %w: %w", op, sentinel, err)
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
