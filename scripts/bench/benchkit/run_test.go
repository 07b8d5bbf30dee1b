package benchkit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCopyDatabaseReplacesTheTarget(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for path, body := range map[string]string{src: "seeded", src + "-wal": "wal", dst: "old run", dst + "-shm": "stale"} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := CopyDatabase(src, dst); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{dst: "seeded", dst + "-wal": "wal"} {
		b, err := os.ReadFile(path)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", filepath.Base(path), b, err, want)
		}
	}
	if _, err := os.Stat(dst + "-shm"); !os.IsNotExist(err) {
		t.Errorf("stale -shm left beside the copy: %v", err)
	}
}
