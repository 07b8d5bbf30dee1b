package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/memory"
)

// A PostgreSQL schema takes about a hundred statements to migrate, which a
// property that opens a store per case would pay thousands of times. The
// schemas a run releases are reset instead and handed out again: every
// table but schema_migrations truncated (identities restarted), then
// given the rows a newly migrated schema has (pristine's: the chain heads,
// the keyed boundary, the recall counter). A reset schema is a newly
// migrated one, row for row. Only a schema whose definition is still
// pristine's is reused: one whose triggers, functions, columns, indexes or
// recorded migrations a test changed (a tamperer's dropped trigger, a
// newer binary's version) is dropped.

var pool struct {
	sync.Mutex
	base     string   // the server
	pristine string   // a migrated schema nothing uses: what a reset copies
	shape    string   // pristine's definition (see shapeOf)
	free     []string // reset schemas, ready
	err      error
	once     sync.Once
	db       *sql.DB // statements on base (create, reset)
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
	pool.shape, pool.err = shapeOf(pool.pristine)
}

// shapeQuery lists a schema's definition: its tables' columns, indexes,
// triggers and functions (with their source) and the migrations it
// recorded.
const shapeQuery = `SELECT COALESCE(string_agg(x, ',' ORDER BY x), '') FROM (
	SELECT 'col:' || table_name || '.' || column_name || ':' || data_type AS x FROM information_schema.columns WHERE table_schema = $1
	UNION ALL SELECT 'idx:' || indexname || ':' || md5(replace(indexdef, $1 || '.', '')) FROM pg_indexes WHERE schemaname = $1
	UNION ALL SELECT 'trg:' || c.relname || '.' || t.tgname || ':' || t.tgenabled::text FROM pg_trigger t
		JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal
	UNION ALL SELECT 'fn:' || p.proname || ':' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
) AS shape`

// shapeOf returns the definition of schema as shapeQuery lists it, with the
// versions in its schema_migrations.
func shapeOf(schema string) (string, error) {
	var shape, versions string
	if err := pool.db.QueryRow(shapeQuery, schema).Scan(&shape); err != nil {
		return "", err
	}
	if err := pool.db.QueryRow("SELECT COALESCE(string_agg(version::text, ',' ORDER BY version), '') FROM " + schema + ".schema_migrations").Scan(&versions); err != nil {
		return "", err
	}
	return shape + "|" + versions, nil
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
	rows, err := pool.db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name`, schema)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	tx, err := pool.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	qualified := make([]string, len(tables))
	for i, t := range tables {
		qualified[i] = schema + "." + t
	}
	if _, err := tx.ExecContext(ctx, "TRUNCATE "+strings.Join(qualified, ", ")+" RESTART IDENTITY CASCADE"); err != nil {
		return err
	}
	for _, t := range tables {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+pool.pristine+"."+t).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+schema+"."+t+" OVERRIDING SYSTEM VALUE SELECT * FROM "+pool.pristine+"."+t); err != nil {
			return err
		}
	}
	return tx.Commit()
}
