package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditArchive runs `audit archive` on an analysed database (a real
// SQLite file): the prefix moves to the file, `audit verify` then starts
// after the signed record, `audit verify --archive` checks the file, and
// an existing --out is refused.
func TestAuditArchive(t *testing.T) {
	useTestKey(t)
	db := analyzedDB(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "trail-2026.jsonl")
	head := runCLI(t, "", "--db", db, "audit", "head")
	if head.code != exitOK {
		t.Fatalf("audit head: exit %d\n%s", head.code, head.stderr)
	}

	r := runCLI(t, "", "--db", db, "audit", "archive", "--before", "2026-11-01", "--out", out)
	if r.code != exitOK || !strings.Contains(r.stdout, "nothing to archive") {
		t.Fatalf("archive before the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("nothing archived, yet the file was left: %v", err)
	}

	r = runCLI(t, "", "--db", db, "audit", "archive", "--before", "2026-12-01", "--out", out)
	if r.code != exitOK || !strings.Contains(r.stdout, "archived entries 1-") {
		t.Fatalf("archive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK || !strings.Contains(r.stdout, "archived before them") {
		t.Fatalf("verify after archiving: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify", "--checkpoint", strings.TrimSpace(head.stdout)); r.code != exitOK {
		t.Errorf("a checkpoint taken before archiving: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify", "--archive", out); r.code != exitOK || !strings.Contains(r.stdout, "archive intact") {
		t.Fatalf("verify --archive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "audit", "archive", "--before", "2027-01-01", "--out", out); r.code != exitFailure || !strings.Contains(r.stderr, "exists") {
		t.Errorf("archive onto an existing file: exit %d\n%s", r.code, r.stderr)
	}
	// New runs append after the archived prefix and verify.
	if r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", "../../examples/queue.jsonl"); r.code != exitOK {
		t.Fatalf("analyze after archiving: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK {
		t.Fatalf("verify after a later run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The archive file edited: one byte of one entry changed.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.jsonl")
	if err := os.WriteFile(edited, bytes.Replace(b, []byte(`"outcome":"ok"`), []byte(`"outcome":"ko"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify", "--archive", edited); r.code != exitTampered || !strings.Contains(r.stdout, "was edited") {
		t.Errorf("verify --archive of an edited file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The record deleted by hand (triggers dropped): the missing prefix is
	// tampering again.
	tamper(t, db, `DROP TRIGGER audit_archives_no_delete`, `DELETE FROM audit_archives`)
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitTampered || !strings.Contains(r.stdout, "missing from the chain") {
		t.Errorf("verify without the archive record: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAuditArchiveRefusesATamperedTrail: nothing is archived, nothing is
// written, exit 4.
func TestAuditArchiveRefusesATamperedTrail(t *testing.T) {
	useTestKey(t)
	db := analyzedDB(t)
	tamper(t, db, `UPDATE audit_entries SET reason = 'edited' WHERE sequence = 3`)
	out := filepath.Join(t.TempDir(), "a.jsonl")
	r := runCLI(t, "", "--db", db, "audit", "archive", "--before", "2027-01-01", "--out", out)
	if r.code != exitTampered || !strings.Contains(r.stdout, "TAMPERED") {
		t.Fatalf("archive of a tampered trail: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the file of a refused archive exists: %v", err)
	}
}

func TestAuditArchiveUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	for _, args := range [][]string{
		{"audit", "archive", "--out", "x.jsonl"},
		{"audit", "archive", "--before", "2026-01-01"},
		{"audit", "archive", "--before", "yesterday", "--out", "x.jsonl"},
		{"audit", "verify", "--archive", "x.jsonl", "--checkpoint", "y"},
	} {
		if r := runCLI(t, "", append([]string{"--db", db}, args...)...); r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}
