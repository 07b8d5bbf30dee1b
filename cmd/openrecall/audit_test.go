package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

// useTestKey makes a fresh audit key the key of this test, through
// OPENRECALL_AUDIT_KEY.
func useTestKey(t *testing.T) audit.Key {
	t.Helper()
	k, err := audit.CreateKeyFile(filepath.Join(t.TempDir(), "audit.key"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envAuditKey, k.Text())
	return k
}

// TestAuditVerifyDuringAppends runs `audit verify` over and over while another
// Store on the same file appends to the trail. Verification reads one
// snapshot, so it never reports a deleted tail that is only a newer head.
func TestAuditVerifyDuringAppends(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := memory.Open(ctx, db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK {
		t.Fatalf("verify on a new file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	k := useTestKey(t)
	seal := audit.NewSealer(k)
	if _, err := st.BindAuditKey(ctx, k.ID(), func(l, c int64) string { return audit.BoundaryMAC(k, l, c) }); err != nil {
		t.Fatal(err)
	}
	// Prime the trail so a verify walks more than one page.
	for i := 0; i < 3; i++ {
		if err := appendRun(context.Background(), st, seal, 300); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var appendErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := appendRun(ctx, st, seal, 5); err != nil && ctx.Err() == nil {
				appendErr = err
				return
			}
		}
	}()
	for i := 0; i < 25; i++ {
		r := runCLI(t, "", "--db", db, "audit", "verify")
		if r.code != exitOK || !strings.Contains(r.stdout, "intact") {
			cancel()
			wg.Wait()
			t.Fatalf("verify %d while another Store appends: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
	}
	cancel()
	wg.Wait()
	if appendErr != nil {
		t.Fatalf("appender: %v", appendErr)
	}
}

// appendRun appends n audit entries of one made-up analysis.
func appendRun(ctx context.Context, st *memory.Store, seal audit.Sealer, n int) error {
	entries := make([]openrecall.AuditEntry, n)
	for i := range entries {
		entries[i] = openrecall.AuditEntry{AnalysisID: "concurrent", StepIndex: i, Step: "intake", Reason: "appended during verify"}
	}
	_, err := st.AppendAudit(ctx, entries, seal.Seal)
	return err
}

// analyzedDB is a seeded database on which the example queue was analysed
// once (keyed with the test's key).
func analyzedDB(t *testing.T) string {
	t.Helper()
	db := seededDB(t)
	if r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", "../../examples/queue.jsonl"); r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", r.code, r.stderr)
	}
	return db
}

// tamper runs statements on db as someone holding the file would, with the
// append-only triggers dropped.
func tamper(t *testing.T, db string, stmts ...string) {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := conn.Close(); err != nil {
			t.Errorf("close tampering connection: %v", err)
		}
	}()
	for _, trig := range []string{"audit_entries_no_update", "audit_entries_no_delete", "cost_points_no_update",
		"cost_points_no_delete", "audit_keying_boundary_fixed", "audit_keying_key_once", "audit_keying_no_delete"} {
		if _, err := conn.Exec("DROP TRIGGER IF EXISTS " + trig); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range stmts {
		if _, err := conn.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rehashFrom edits entry `from` and re-hashes it and every later entry with
// the unkeyed hash, moving the head: a full rewrite without the key.
func rehashFrom(t *testing.T, db string, from int64) []string {
	t.Helper()
	st, err := memory.Open(context.Background(), db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all []openrecall.AuditEntry
	err = st.WalkAudit(context.Background(), func(e openrecall.AuditEntry) error { all = append(all, e); return nil })
	if cerr := st.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	rest := all[from-1:]
	rest[0].Reason = "nothing to see here"
	resealed := audit.Seal(rest[0].PrevHash, from, rest)
	var stmts []string
	for _, e := range resealed {
		stmts = append(stmts, fmt.Sprintf("UPDATE audit_entries SET reason = '%s', prev_hash = '%s', hash = '%s' WHERE sequence = %d",
			e.Reason, e.PrevHash, e.Hash, e.Sequence))
	}
	last := resealed[len(resealed)-1]
	return append(stmts, fmt.Sprintf("UPDATE audit_head SET seq = %d, hash = '%s'", last.Sequence, last.Hash))
}

// TestAuditCheckpointCatchesRewrites keeps a checkpoint from `audit head`,
// appends more, then rewrites the trail the ways someone holding the file
// could: every rewrite fails verification with the checkpoint (exit 4), and
// the truncation with a rolled-back head is what only the checkpoint sees.
func TestAuditCheckpointCatchesRewrites(t *testing.T) {
	useTestKey(t)
	setup := func(t *testing.T) (db, cp string, head int64) {
		db = analyzedDB(t)
		r := runCLI(t, "", "--db", db, "audit", "head")
		if r.code != exitOK || !audit.LooksLikeCheckpoint(r.stdout) {
			t.Fatalf("audit head: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		c, err := audit.ParseCheckpoint(r.stdout)
		if err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", "../../examples/queue.jsonl"); r.code != exitOK {
			t.Fatalf("second analyze: exit %d\n%s", r.code, r.stderr)
		}
		return db, strings.TrimSpace(r.stdout), c.HeadSeq
	}
	t.Run("untouched", func(t *testing.T) {
		db, cp, _ := setup(t)
		file := filepath.Join(t.TempDir(), "checkpoint")
		if err := os.WriteFile(file, []byte(cp+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, arg := range []string{cp, file} {
			if r := runCLI(t, "", "--db", db, "audit", "verify", "--checkpoint", arg); r.code != exitOK || !strings.Contains(r.stdout, "extends the checkpoint") {
				t.Errorf("verify --checkpoint %s: exit %d\n%s%s", arg, r.code, r.stdout, r.stderr)
			}
		}
	})
	tests := []struct {
		name string
		// attack returns the statements that rewrite the trail.
		attack func(t *testing.T, db string, head int64) []string
		// plainCaught: verify without the checkpoint catches it too.
		plainCaught bool
		want        string
	}{
		{"truncate and roll the head back", func(t *testing.T, db string, head int64) []string {
			return []string{fmt.Sprintf("DELETE FROM audit_entries WHERE sequence > %d", head-3),
				fmt.Sprintf("UPDATE audit_head SET seq = %d, hash = (SELECT hash FROM audit_entries WHERE sequence = %d)", head-3, head-3)}
		}, false, "no longer holds"},
		{"edit a row and re-hash the rest", func(t *testing.T, db string, head int64) []string {
			return rehashFrom(t, db, 2)
		}, true, "edited"},
		{"re-hash the rest as if unkeyed, moving the boundary", func(t *testing.T, db string, head int64) []string {
			return append(rehashFrom(t, db, 2), "UPDATE audit_keying SET legacy_through = (SELECT seq FROM audit_head)")
		}, true, "boundary was moved"},
		{"edit a cost point", func(*testing.T, string, int64) []string {
			return []string{"UPDATE cost_points SET cost = 0, cumulative_cost = 0 WHERE seq = 2"}
		}, true, "cost point 2 (batch"},
		{"delete a cost point", func(*testing.T, string, int64) []string {
			return []string{"DELETE FROM cost_points WHERE seq = 3"}
		}, true, "cost point 3 is missing"},
		{"truncate the cost chain and roll its head back", func(*testing.T, string, int64) []string {
			return []string{"DELETE FROM cost_points WHERE seq > 1", "UPDATE cost_head SET seq = 1, hash = (SELECT hash FROM cost_points WHERE seq = 1)"}
		}, false, "cost point"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, cp, head := setup(t)
			tamper(t, db, tt.attack(t, db, head)...)
			r := runCLI(t, "", "--db", db, "audit", "verify", "--checkpoint", cp)
			if r.code != exitTampered || !strings.Contains(r.stdout, tt.want) {
				t.Errorf("verify --checkpoint: exit %d, want %d with %q\n%s%s", r.code, exitTampered, tt.want, r.stdout, r.stderr)
			}
			plain := runCLI(t, "", "--db", db, "audit", "verify")
			if caught := plain.code == exitTampered; caught != tt.plainCaught {
				t.Errorf("verify without the checkpoint: exit %d, caught %v, want %v\n%s", plain.code, caught, tt.plainCaught, plain.stdout)
			}
		})
	}
	t.Run("forged checkpoint", func(t *testing.T) {
		db, cp, head := setup(t)
		forged := strings.Replace(cp, fmt.Sprintf("orcp1.%d.", head), fmt.Sprintf("orcp1.%d.", head-1), 1)
		r := runCLI(t, "", "--db", db, "audit", "verify", "--checkpoint", forged)
		if r.code != exitFailure || !strings.Contains(r.stderr, "invalid audit checkpoint") {
			t.Errorf("forged checkpoint: exit %d, want %d\n%s%s", r.code, exitFailure, r.stdout, r.stderr)
		}
	})
}

// TestAuditKeyFile: the key file is created on first use in the user's
// config directory with mode 0600; a missing or another key is its own
// error (exit 1), never "tampered", and no new key is made for a keyed
// trail.
func TestAuditKeyFile(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	keyFile := filepath.Join(cfg, "openrecall", "audit.key")
	db := analyzedDB(t)
	fi, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("no key file after analyze: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	k, err := audit.ReadKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK || !strings.Contains(r.stdout, k.ID()) {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	moved := keyFile + ".away"
	if err := os.Rename(keyFile, moved); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"audit", "verify"}, {"audit", "head"}, {"analyze", "-o", "jsonl", "../../examples/queue.jsonl"}} {
		r := runCLI(t, "", append([]string{"--db", db}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "audit key missing") || strings.Contains(r.stdout, "TAMPERED") {
			t.Errorf("%v without the key: exit %d, want %d and 'audit key missing'\n%s%s", args, r.code, exitFailure, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(keyFile); err == nil {
		t.Errorf("a new key file was made for a keyed trail")
	}
	other := useTestKey(t) // another key, through OPENRECALL_AUDIT_KEY
	r := runCLI(t, "", "--db", db, "audit", "verify")
	if r.code != exitFailure || !strings.Contains(r.stderr, "does not match") || !strings.Contains(r.stderr, other.ID()) || strings.Contains(r.stdout, "TAMPERED") {
		t.Errorf("another key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv(envAuditKey, "not hex")
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitFailure || !strings.Contains(r.stderr, envAuditKey) {
		t.Errorf("a malformed %s: exit %d\n%s", envAuditKey, r.code, r.stderr)
	}
	t.Setenv(envAuditKey, "")
	if err := os.Rename(moved, keyFile); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK {
		t.Errorf("key restored: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAuditVerifyJSON: audit verify -o json is one document that says
// whether the trail is intact, and names each problem of a tampered one
// with the same exit status as the table output.
func TestAuditVerifyJSON(t *testing.T) {
	useTestKey(t)
	db := analyzedDB(t)
	decode := func(r runResult) usecase.Verified {
		t.Helper()
		var got usecase.Verified
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("verify -o json: %v\n%s%s", err, r.stdout, r.stderr)
		}
		return got
	}
	r := runCLI(t, "", "--db", db, "audit", "verify", "-o", "json")
	got := decode(r)
	if r.code != exitOK || !got.Intact || got.Entries == 0 || got.CostPoints == 0 || got.KeyID == "" || len(got.Problems) != 0 {
		t.Fatalf("intact trail: exit %d, %+v", r.code, got)
	}
	tamper(t, db, `UPDATE audit_entries SET reason = 'nothing to see' WHERE sequence = 5`)
	r = runCLI(t, "", "--db", db, "audit", "verify", "-o", "json")
	got = decode(r)
	if r.code != exitTampered || got.Intact || len(got.Problems) == 0 || got.Problems[0].Sequence != 5 || got.Problems[0].Chain != "audit" {
		t.Fatalf("edited entry 5: exit %d, %+v", r.code, got)
	}
}
