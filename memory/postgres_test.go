package memory

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to set up schemas by hand

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
)

// These tests are PostgreSQL's own (what SQLite's file tests are to
// SQLite): they run in every pass of make test, on the test server.

func rawPG(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// A password in the URL is never printed: not by Path, Stats, nor an
// error of Open.
func TestPostgresPasswordNeverShown(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret-pw") // trust auth takes any password
	withPW := u.String()
	s := openAt(t, withPW)
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"Path": s.Path(), "Stats.Path": st.Path} {
		if strings.Contains(text, "s3cret-pw") || !strings.Contains(text, "xxxxx") {
			t.Errorf("%s = %q: the password shows, or no mark of it", what, text)
		}
	}
	q := u.Query()
	q.Set("search_path", "no_such_schema_here")
	u.RawQuery = q.Encode()
	_, err = Open(context.Background(), u.String(), Options{ReadOnly: true})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("read-only open of an empty schema: %v; want an error without the password", err)
	}
	if got := Redact("postgres://u@h/db?password=s3cret-pw"); strings.Contains(got, "s3cret-pw") {
		t.Errorf("Redact of a password parameter: %q", got)
	}
}

// A schema with tables openrecall did not create is refused untouched.
func TestPostgresForeignSchemaRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	raw := rawPG(t, dsn)
	if _, err := raw.Exec(`CREATE TABLE customers (id int)`); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), dsn, Options{})
	if !errors.Is(err, ErrForeign) {
		t.Fatalf("open a foreign schema: %v; want ErrForeign", err)
	}
	var n int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("tables after the refusal: %d, %v; want the one it had", n, err)
	}
}

// A schema migrated by a newer binary is refused; a read-only open never
// migrates.
func TestPostgresSchemaVersions(t *testing.T) {
	dsn := pgtest.DSN(t)
	if _, err := Open(context.Background(), dsn, Options{ReadOnly: true}); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("read-only open of an empty schema: %v; want ErrNoDatabase", err)
	}
	s := openAt(t, dsn)
	if _, err := s.db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), dsn, Options{}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("open a newer schema: %v; want ErrNewerSchema", err)
	}
}

// Processes opening one new schema at once apply each migration once.
func TestPostgresConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), dsn, Options{})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var rows, distinct int
	if err := rawPG(t, dsn).QueryRow(`SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != distinct {
		t.Fatalf("%d migration rows for %d versions", rows, distinct)
	}
}

// A read-only store reads and never writes: its transactions are
// PostgreSQL's read-only ones.
func TestPostgresReadOnlyStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := openAt(t, dsn)
	mustRetain(t, w, openrecall.Incident{Fingerprint: fpOf("timeout", "api", "db", "spike", "none", "prod"),
		Decision: openrecall.DecisionFalsePositive, Analyst: "ana"})
	r, err := Open(context.Background(), dsn, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }() // read-only: nothing to lose
	if st, err := r.Stats(context.Background()); err != nil || st.Incidents != 1 {
		t.Fatalf("read-only stats: %+v, %v", st, err)
	}
	_, _, err = r.Retain(context.Background(), openrecall.Incident{Fingerprint: fpOf("oom", "api", "db", "spike", "none", "prod"),
		Decision: openrecall.DecisionReal, Analyst: "ana"})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("retain through a read-only store: %v; want a read-only transaction error", err)
	}
}

// Both backends reach the same schema version, so a binary's version check
// means the same on either, and every SQLite migration after PostgreSQL's
// first has its PostgreSQL twin under the same number.
func TestBackendsShareSchemaVersion(t *testing.T) {
	lite, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := loadPGMigrations()
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int]bool{}
	for _, m := range pg {
		versions[m.version] = true
	}
	for _, m := range lite {
		if m.version >= pg[0].version && !versions[m.version] {
			t.Errorf("SQLite migration %s has no PostgreSQL twin in migrations_pg", m.name)
		}
	}
	if lite[len(lite)-1].version != pg[len(pg)-1].version {
		t.Errorf("SQLite's schema version %d, PostgreSQL's %d", lite[len(lite)-1].version, pg[len(pg)-1].version)
	}
}
