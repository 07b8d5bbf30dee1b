package property

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// dbFileProperties are the rules of the database file itself.
func dbFileProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P27_foreign_sqlite_refused_untouched",
			"A SQLite file that openrecall did not create (another application id, or tables of its own without openrecall's schema) is refused by an open for writing and by a read-only open, with ErrForeign, and left exactly as it was: the same bytes, modification time and files beside it.",
			"ForeignDBGen", gen.ForeignDBGen(), checkForeignRefused,
			pbt.Expensive(3),
			pbt.Found("a read-only open of a foreign WAL-mode file left -wal and -shm beside it", foreignWALFile),
		),
	}
}

// foreignWALFile is P27's shrunk counterexample: one table, WAL mode, no
// application id. Reading it through an ordinary read-only connection
// created other.db-wal and other.db-shm, which a read-only connection
// cannot remove.
var foreignWALFile = gen.ForeignDB{Tables: []int{0}, Rows: 0, Journal: 3, AppID: 0}

// regressionForeignWALFile is the named regression test of foreignWALFile.
func regressionForeignWALFile(t *testing.T) {
	if gen.ForeignJournalModes()[foreignWALFile.Journal] != "WAL" {
		t.Fatal("the pinned file is not in WAL mode")
	}
	if err := checkForeignRefused(foreignWALFile); err != nil {
		t.Fatal(err)
	}
}

func checkForeignRefused(f gen.ForeignDB) error {
	dir, err := os.MkdirTemp("", "openrecall-pbt-foreign-")
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "other.db")
	if err := writeForeign(path, f); err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, past, past); err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	before, err := fileSnapshot(path)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	for _, ro := range []bool{false, true} {
		s, err := memory.Open(context.Background(), path, memory.Options{ReadOnly: ro})
		if err == nil {
			_ = s.Close()
			return fmt.Errorf("read-only %t: opened a foreign file", ro)
		}
		if !errors.Is(err, memory.ErrForeign) {
			return fmt.Errorf("read-only %t: err = %v, want ErrForeign", ro, err)
		}
		after, err := fileSnapshot(path)
		if err != nil {
			return err
		}
		if after != before {
			return fmt.Errorf("read-only %t: the file changed:\nbefore %s\nafter  %s", ro, before, after)
		}
	}
	return nil
}

// writeForeign writes the file f describes with the driver alone.
func writeForeign(path string, f gen.ForeignDB) error {
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	stmts := []string{
		"PRAGMA journal_mode = " + gen.ForeignJournalModes()[f.Journal],
		fmt.Sprintf("PRAGMA application_id = %d", gen.ForeignAppIDs()[f.AppID]),
	}
	tables := f.TableNames()
	for _, name := range tables {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (id INTEGER PRIMARY KEY, v TEXT)", name))
		for r := 0; r < f.Rows; r++ {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (v) VALUES ('row %d')", name, r))
		}
	}
	if len(tables) == 0 {
		// An application id alone is not written until the file has a page.
		stmts = append(stmts, "CREATE TABLE t (x)", "DROP TABLE t")
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return db.Close()
}

// fileSnapshot renders what must not change: the bytes (by hash), the
// modification time and the files beside it.
func fileSnapshot(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	sib, err := filepath.Glob(path + "-*")
	if err != nil {
		return "", err
	}
	for i := range sib {
		sib[i] = filepath.Base(sib[i])
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d bytes sha256 %x, mtime %s, beside it [%s]", len(data), sha256.Sum256(data), fi.ModTime().UTC().Format(time.RFC3339Nano), strings.Join(sib, " "))
	return b.String(), nil
}
