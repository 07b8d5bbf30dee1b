package main

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
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
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK {
		t.Fatalf("verify on a new file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := memory.Open(ctx, db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
