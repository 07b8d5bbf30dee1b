package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// fullStore returns a SQLite Store capped at the pages its file has now:
// every write that needs a new page fails with SQLITE_FULL, as on a full
// disk.
func fullStore(t *testing.T) (*Store, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // checkpoints the WAL into the file
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, Options{MaxPages: int(fi.Size() / z.PageSize)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// TestWritableMeetsAFullDatabase: readiness's write probe fails when the
// database cannot grow, as every enqueue then does. The probe used to be
// an UPDATE of no row, which a full database takes: /readyz said
// "writable" while every enqueue failed. Fails without the fix.
func TestWritableMeetsAFullDatabase(t *testing.T) {
	if testBackend() == "postgres" {
		t.Skip("max_page_count is SQLite's")
	}
	ctx := context.Background()
	s, _ := fullStore(t)
	body := []openrecall.Delivery{firing("a", "low")}
	body[0].Alert.Text = strings.Repeat("disk usage above 95% on /var ", 400)
	if _, err := s.Enqueue(ctx, body, 0, inboxName); !errors.Is(err, openrecall.ErrNoSpace) {
		t.Fatalf("enqueue into a full database: %v, want openrecall.ErrNoSpace", err)
	}
	err := s.Writable(ctx)
	if !errors.Is(err, openrecall.ErrNoSpace) {
		t.Fatalf("Writable on a full database: %v, want openrecall.ErrNoSpace", err)
	}
}

// TestWritableLeavesNothing: the probe's row is rolled back, and a database
// with room is writable.
func TestWritableLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for range 3 {
		if err := s.Writable(ctx); err != nil {
			t.Fatalf("Writable: %v", err)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM write_probe`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("write_probe holds %d rows (%v), want 0", n, err)
	}
}
