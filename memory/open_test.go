package memory

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// rawDB opens path with the driver alone, as another application or a
// person with the sqlite3 shell would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func applicationID(t *testing.T, path string) int64 {
	t.Helper()
	var id int64
	if err := rawDB(t, path).QueryRow("PRAGMA application_id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// headerApplicationID reads the application id from the file header
// (offset 68, big-endian), as precheck does.
func headerApplicationID(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 100 {
		t.Fatalf("read header: %v (%d bytes)", err, len(b))
	}
	return int64(int32(binary.BigEndian.Uint32(b[68:72])))
}

// snapshot is what must not change when openrecall refuses a file: its
// bytes, its modification time and the files beside it.
type snapshot struct {
	data    []byte
	mtime   time.Time
	sibling []string
}

func takeSnapshot(t *testing.T, path string) snapshot {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sib, err := filepath.Glob(path + "*")
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{data: data, mtime: fi.ModTime(), sibling: sib}
}

func (a snapshot) equal(b snapshot) bool {
	return bytes.Equal(a.data, b.data) && a.mtime.Equal(b.mtime) && strings.Join(a.sibling, ",") == strings.Join(b.sibling, ",")
}

// TestForeignSQLiteFileRefusedUntouched: a SQLite file of another
// application passed as the memory database is refused, for writing and
// for reading, and left byte for byte as it was (no tables added, journal
// mode not switched, no -wal or -shm beside it). Before application ids,
// Open added its tables and switched the file to WAL.
func TestForeignSQLiteFileRefusedUntouched(t *testing.T) {
	dir := t.TempDir()
	tables := filepath.Join(dir, "crm.db")
	db := rawDB(t, tables)
	mustExec(t, db, `CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('ada')`)
	_ = db.Close()
	stamped := filepath.Join(dir, "stamped.db")
	db = rawDB(t, stamped)
	mustExec(t, db, `PRAGMA application_id = 42; CREATE TABLE t (x)`)
	mustExec(t, db, `DROP TABLE t`) // an application id and no tables at all
	_ = db.Close()

	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, path := range []string{tables, stamped} {
		if err := os.Chtimes(path, past, past); err != nil {
			t.Fatal(err)
		}
		before := takeSnapshot(t, path)
		for _, ro := range []bool{false, true} {
			s, err := Open(context.Background(), path, Options{ReadOnly: ro})
			if err == nil {
				_ = s.Close()
				t.Errorf("%s (read-only %t): opened a foreign database", filepath.Base(path), ro)
				continue
			}
			if !errors.Is(err, ErrForeign) {
				t.Errorf("%s (read-only %t): err = %v, want ErrForeign", filepath.Base(path), ro, err)
			}
			if !before.equal(takeSnapshot(t, path)) {
				t.Errorf("%s (read-only %t): the refused file changed", filepath.Base(path), ro)
			}
		}
	}
}

// TestOpenMarksFiles: a new database carries openrecall's application id;
// a database from before application ids (schema_migrations, id 0) still
// opens, read-only without being changed, and is marked by the next open
// for writing, its memories kept.
func TestOpenMarksFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openAt(t, path)
	inc := mustRetain(t, s, openrecall.Incident{Fingerprint: fpOf("timeout", "", "", "", "", ""), Decision: openrecall.DecisionReal})
	if id := applicationID(t, path); id != ApplicationID {
		t.Fatalf("new database: application_id %#x, want %#x", id, ApplicationID)
	}
	// The mark is in the file header while the writer is still open, where
	// a reader checks it without taking a lock.
	if id := headerApplicationID(t, path); id != ApplicationID {
		t.Errorf("file header of an open database: application_id %#x, want %#x", id, ApplicationID)
	}
	mustExec(t, rawDB(t, path), "PRAGMA application_id = 0") // as written before this change

	ro, err := Open(context.Background(), path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of an unmarked openrecall file: %v", err)
	}
	if _, err := ro.Get(context.Background(), inc.ID); err != nil {
		t.Errorf("read-only: %v", err)
	}
	_ = ro.Close()
	if id := applicationID(t, path); id != 0 {
		t.Errorf("a read-only open marked the file (application_id %#x)", id)
	}

	rw := openAt(t, path)
	if id := applicationID(t, path); id != ApplicationID {
		t.Errorf("after an open for writing: application_id %#x, want %#x", id, ApplicationID)
	}
	if _, err := rw.Get(context.Background(), inc.ID); err != nil {
		t.Errorf("memory lost when marking: %v", err)
	}
}

// TestReadOnlyOpenRefusesMissingFile: a typo'd path is an error, not a new
// empty database, and nothing is created on the way (not even the
// directory).
func TestReadOnlyOpenRefusesMissingFile(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "typo.db"), filepath.Join(dir, "no", "such", "dir", "x.db")} {
		_, err := Open(context.Background(), path, Options{ReadOnly: true})
		if !errors.Is(err, ErrNoDatabase) {
			t.Errorf("%s: err = %v, want ErrNoDatabase", path, err)
		}
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), empty, Options{ReadOnly: true}); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("empty file: err = %v, want ErrNoDatabase", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("read-only opens created files: %v", entries)
	}
}

// TestReadOnlyOpenNeverTakesTheWriteLock: while another connection holds
// the write lock (an open immediate transaction), a read-only Store opens
// and reads everything; it cannot write. Before, Open took the write lock
// for its migrations and failed with ErrBusy after the busy timeout.
func TestReadOnlyOpenNeverTakesTheWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	w := openAt(t, path)
	inc := mustRetain(t, w, openrecall.Incident{Fingerprint: fpOf("timeout", "", "", "", "", ""), Decision: openrecall.DecisionReal})

	holder := rawDB(t, path)
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()

	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open while a writer holds the lock: %v", err)
	}
	defer func() { _ = ro.Close() }()
	if _, err := ro.Stats(ctx); err != nil {
		t.Errorf("Stats: %v", err)
	}
	var buf bytes.Buffer
	if n, err := ro.Export(ctx, &buf); err != nil || n != 1 {
		t.Errorf("Export: %d, %v", n, err)
	}
	if _, err := ro.Get(ctx, inc.ID); err != nil {
		t.Errorf("Get: %v", err)
	}
	if _, _, err := ro.Retain(ctx, openrecall.Incident{Fingerprint: fpOf("oom", "", "", "", "", ""), Decision: openrecall.DecisionReal}); err == nil {
		t.Error("a read-only Store wrote a memory")
	}
}

// TestReadOnlyOpenRefusesOlderSchema: a read-only open does not migrate,
// so an older schema is refused with what to run instead.
func TestReadOnlyOpenRefusesOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	_ = openAt(t, path)
	mustExec(t, rawDB(t, path), "DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)")
	_, err := Open(context.Background(), path, Options{ReadOnly: true})
	if !errors.Is(err, ErrOlderSchema) || !strings.Contains(err.Error(), "openrecall memory migrate") {
		t.Errorf("err = %v, want ErrOlderSchema naming 'openrecall memory migrate'", err)
	}
}
