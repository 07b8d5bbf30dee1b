package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/memory"
)

// A PostgreSQL schema takes about a hundred statements to migrate, which a
// property that opens a store per case would pay thousands of times. The
// schemas a run releases are reset instead and handed out again: every
// table but schema_migrations emptied (identities restarted), then given
// the rows a newly migrated schema has (pristine's: the chain heads, the
// keyed boundary, the recall counter). A reset schema is a newly migrated
// one, row for row. Only a schema whose definition is still pristine's is
// reused: one whose relations, triggers, functions, columns, indexes or
// recorded migrations a test changed (a tamperer's dropped trigger, a
// newer binary's version) is dropped.
//
// A reset is paid per case, so it is kept to two queries besides its
// transaction's begin and commit: the shape read from pg_catalog in one
// (information_schema's views take twice as long), and the rows reset in
// the other, on the tables known from pristine (the same shape has the
// same tables). The rows go by DELETE with the append-only
// triggers off (session_replication_role = replica, which only a
// superuser or a role granted it may set), not by TRUNCATE, which gives
// every table and index of the schema a new file and a new catalog row,
// most of what a reset cost; a server that refuses the setting gets
// TRUNCATE all the same.

var pool struct {
	sync.Mutex
	base     string   // the server
	pristine string   // a migrated schema nothing uses: what a reset copies
	shape    string   // pristine's definition (see shapeOf)
	tables   []string // pristine's tables but schema_migrations: what a reset empties
	seeded   []string // those of them with rows in pristine: what a reset copies
	free     []string // reset schemas, ready
	err      error
	once     sync.Once
	db       *sql.DB // statements on base (create, reset)
	// truncate is set once the server refused session_replication_role:
	// resets truncate from then on.
	truncate atomic.Bool
}

// Fresh returns the location of a new, empty memory on the backend under
// test and a function that releases it once every store on it is closed:
// memory.db in dir for SQLite (the caller removes dir), or a PostgreSQL
// schema, reused after a reset when one was released.
func Fresh(dir string) (string, func(), error) {
	if !Postgres() {
		return filepath.Join(dir, "memory.db"), func() {}, nil
	}
	schema, err := takeSchema()
	if err != nil {
		return "", nil, err
	}
	return pgtest.WithSchema(pool.base, schema), func() { giveBack(schema) }, nil
}

func setup() {
	pool.base, pool.err = pgtest.Find()
	if pool.err != nil {
		return
	}
	if pool.db, pool.err = sql.Open("pgx", pool.base); pool.err != nil {
		return
	}
	if pool.pristine, pool.err = migrated("pristine_"); pool.err != nil {
		return
	}
	if pool.shape, pool.err = shapeOf(pool.pristine); pool.err != nil {
		return
	}
	pool.tables, pool.seeded, pool.err = tablesOf(pool.pristine)
}

// shapeQuery lists the definition of the schema it names, from
// pg_catalog: its relations (tables, indexes, sequences, views), their
// columns, its indexes' definitions, its triggers and functions (with
// their source) and the migrations it recorded. The name is in the text,
// not a parameter, so that the plan is made for it (and its
// schema_migrations is named anyway); sorting bytewise ("C") makes the
// text the same on a server of any collation.
const shapeQuery = `SELECT COALESCE(string_agg(x, ',' ORDER BY x COLLATE "C"), '') FROM (
	SELECT 'rel:' || c.relname || ':' || c.relkind::text AS x FROM pg_class c WHERE c.relnamespace = '%[1]s'::regnamespace
	UNION ALL SELECT 'col:' || c.relname || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = '%[1]s'::regnamespace AND c.relkind IN ('r', 'v', 'f', 'p') AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL SELECT 'idx:' || c.relname || ':' || md5(replace(pg_get_indexdef(c.oid), '%[1]s.', '')) FROM pg_class c
		WHERE c.relnamespace = '%[1]s'::regnamespace AND c.relkind = 'i'
	UNION ALL SELECT 'trg:' || c.relname || '.' || t.tgname || ':' || t.tgenabled::text FROM pg_trigger t
		JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = '%[1]s'::regnamespace AND NOT t.tgisinternal
	UNION ALL SELECT 'fn:' || p.proname || ':' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = '%[1]s'::regnamespace
	UNION ALL SELECT 'ver:' || version FROM %[1]s.schema_migrations
) AS shape`

// shapeOf returns the definition of schema as shapeQuery lists it.
func shapeOf(schema string) (string, error) {
	var shape string
	err := pool.db.QueryRow(fmt.Sprintf(shapeQuery, schema)).Scan(&shape)
	return shape, err
}

// tablesOf returns the tables of schema but schema_migrations, and those
// of them that have rows.
func tablesOf(schema string) (tables, seeded []string, err error) {
	rows, err := pool.db.Query(`SELECT relname::text FROM pg_class
		WHERE relnamespace = $1::regnamespace AND relkind = 'r' AND relname <> 'schema_migrations' ORDER BY relname`, schema)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, nil, err
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	for _, t := range tables {
		var has bool
		if err := pool.db.QueryRow("SELECT EXISTS (SELECT 1 FROM " + schema + "." + t + ")").Scan(&has); err != nil {
			return nil, nil, err
		}
		if has {
			seeded = append(seeded, t)
		}
	}
	return tables, seeded, nil
}

// migrated creates a schema named prefix and random digits and migrates
// it by opening a store on it.
func migrated(prefix string) (string, error) {
	dsn, _, err := pgtest.FreshAt(pool.base, prefix)
	if err != nil {
		return "", err
	}
	st, err := memory.Open(context.Background(), dsn, memory.Options{})
	if err != nil {
		return "", fmt.Errorf("storetest: migrate %s: %w", memory.Redact(dsn), err)
	}
	if err := st.Close(); err != nil {
		return "", err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	return u.Query().Get("search_path"), nil
}

func takeSchema() (string, error) {
	pool.once.Do(setup)
	if pool.err != nil {
		return "", pool.err
	}
	pool.Lock()
	if n := len(pool.free); n > 0 {
		s := pool.free[n-1]
		pool.free = pool.free[:n-1]
		pool.Unlock()
		return s, nil
	}
	pool.Unlock()
	return migrated("s_")
}

// giveBack resets schema to pristine's rows and keeps it for the next
// Fresh; a schema that cannot be reset is dropped instead.
func giveBack(schema string) {
	if err := reset(schema); err != nil {
		_, _ = pool.db.Exec("DROP SCHEMA " + schema + " CASCADE") // a schema left behind costs only space
		return
	}
	pool.Lock()
	pool.free = append(pool.free, schema)
	pool.Unlock()
}

func reset(schema string) error {
	ctx := context.Background()
	if shape, err := shapeOf(schema); err != nil {
		return err
	} else if shape != pool.shape {
		return fmt.Errorf("storetest: schema %s was changed by its test: not reused", schema)
	}
	truncate := pool.truncate.Load()
	err := resetRows(ctx, schema, truncate)
	var pe *pgconn.PgError
	if !truncate && errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege: session_replication_role refused
		pool.truncate.Store(true)
		err = resetRows(ctx, schema, true)
	}
	return err
}

// resetRows gives the tables of schema pristine's rows, in one
// transaction and one query: a text of several statements, which pgx
// sends as one simple query since it has no arguments.
func resetRows(ctx context.Context, schema string, truncate bool) error {
	var b strings.Builder
	if truncate {
		qualified := make([]string, len(pool.tables))
		for i, t := range pool.tables {
			qualified[i] = schema + "." + t
		}
		b.WriteString("TRUNCATE " + strings.Join(qualified, ", ") + " RESTART IDENTITY CASCADE;\n")
	} else {
		// With the triggers off (for this transaction only), DELETE
		// empties the append-only tables too, and no foreign key is
		// checked: every table is emptied. The DELETE of an empty
		// table costs some 20 µs, less than a query to find the
		// tables with rows. setval does what RESTART IDENTITY does,
		// to each sequence that moved: a schema of pristine's shape
		// has no sequences but its identity and serial columns'.
		// setval is not undone by a rollback, but a reset that fails
		// drops the schema.
		b.WriteString("SET LOCAL session_replication_role = replica;\n")
		for _, t := range pool.tables {
			b.WriteString("DELETE FROM " + schema + "." + t + ";\n")
		}
		b.WriteString("SELECT setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid\n" +
			"\tWHERE c.relnamespace = '" + schema + "'::regnamespace AND pg_sequence_last_value(s.seqrelid) IS NOT NULL;\n")
	}
	for _, t := range pool.seeded {
		b.WriteString("INSERT INTO " + schema + "." + t + " OVERRIDING SYSTEM VALUE SELECT * FROM " + pool.pristine + "." + t + ";\n")
	}
	tx, err := pool.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, b.String()); err != nil {
		return err
	}
	return tx.Commit()
}
