package memory

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// testKey keys the chains in these tests.
var testKey, _ = audit.NewKey(bytes.Repeat([]byte{1}, audit.KeySize))

// testCostSeal chains cost points with audit's keyed cost hash.
func testCostSeal(prev string, next int64, points []openrecall.CostPoint) []string {
	return audit.NewSealer(testKey).SealCosts(prev, next, points)
}

func testSign(legacyThrough, legacyCosts int64) string {
	return audit.BoundaryMAC(testKey, legacyThrough, legacyCosts)
}

// verifyStore reads the trail in one snapshot and verifies it with k.
func verifyStore(t *testing.T, s *Store, k audit.Key, cp *audit.Checkpoint) (audit.Report, error) {
	t.Helper()
	var tv *audit.TrailVerifier
	err := s.ReadTrail(context.Background(), TrailReader{
		State: func(st openrecall.TrailState) error {
			var err error
			tv, err = audit.NewTrailVerifier(k, st, cp)
			return err
		},
		Entry: func(e openrecall.AuditEntry) error { tv.Entry(e); return nil },
		Cost: func(seq int64, prev, hash string, p openrecall.CostPoint) error {
			tv.Cost(seq, prev, hash, p)
			return nil
		},
	})
	if err != nil {
		return audit.Report{}, err
	}
	return tv.Finish(), nil
}

// appendKeyed appends one analysis of n steps and its cost point, keyed;
// between, it calls between when not nil.
func appendKeyed(ctx context.Context, s *Store, batch string, idx, n int, between func()) error {
	sealer := audit.NewSealer(testKey)
	entries := make([]openrecall.AuditEntry, n)
	for i := range entries {
		entries[i] = openrecall.AuditEntry{AnalysisID: batch, Batch: batch, StepIndex: i, Step: "intake", Cost: 3, Baseline: 9, Savings: 6}
	}
	if _, err := s.AppendAudit(ctx, entries, sealer.Seal); err != nil {
		return err
	}
	if between != nil {
		between()
	}
	return s.AppendCostPoints(ctx, []openrecall.CostPoint{{Batch: batch, Index: idx, Cost: 3, Baseline: 9,
		CumulativeCost: openrecall.NanoUSD(3 * (idx + 1)), CumulativeBaseline: openrecall.NanoUSD(9 * (idx + 1))}}, sealer.SealCosts)
}

// TestReadTrailSnapshot verifies over and over while another Store on the
// same file appends entries and cost points: every verification sees one
// consistent snapshot and finds the trail intact (reading the head apart
// from the entries reported a deleted tail here).
func TestReadTrailSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	reader, writer := openAt(t, path), openAt(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := writer.BindAuditKey(ctx, testKey.ID(), testSign); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if err := appendKeyed(ctx, writer, "prime", i, 5, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var appendErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			if err := appendKeyed(ctx, writer, "live", i, 3, nil); err != nil && ctx.Err() == nil {
				appendErr = err
				return
			}
		}
	}()
	for i := 0; i < 30; i++ {
		rep, err := verifyStore(t, reader, testKey, nil)
		if err != nil || len(rep.Problems) > 0 {
			cancel()
			wg.Wait()
			t.Fatalf("verify %d during appends: err %v, problems %v", i, err, rep.Problems)
		}
	}
	cancel()
	wg.Wait()
	if appendErr != nil {
		t.Fatal(appendErr)
	}
}

// createV1 builds a database as the previous release left it: only
// migration 0001, an incident, an unkeyed audit chain of n entries and
// costs cost points without hashes.
func createV1(t *testing.T, path string, n, costs int) {
	t.Helper()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close v1 database: %v", err)
		}
	}()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
	exec(ms[0].sql)
	exec(`INSERT INTO schema_migrations VALUES (1, $1, 0)`, ms[0].name)
	exec(`INSERT INTO incidents (id, dedupe_key, fp, k4, error_class, service_role, dependency_pattern, signal_shape,
		attack_pattern, environment, decision, note, analyst, impact_minutes, source_alert_id, created_at)
		VALUES ('inc-v1', 'dk', 1, 2, 'oomkilled', 'api', '', '', '', 'prod', 'known_benign', 'kept from v1', 'ana', 0, '', 1)`)
	entries := make([]openrecall.AuditEntry, n)
	for i := range entries {
		entries[i] = openrecall.AuditEntry{AnalysisID: "v1", Batch: "v1", StepIndex: i, Step: "intake", Reason: "old"}
	}
	for _, e := range audit.Seal("", 1, entries) {
		exec(`INSERT INTO audit_entries (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, NULL, $20, $21)`,
			e.Sequence, e.AnalysisID, e.Batch, e.AlertID, e.StepIndex, e.Step, e.Model, string(e.Tier), e.Reason, e.Outcome,
			e.MemoryHits, string(e.ProposedDecision), e.EscalationReason, e.Live, e.Skipped, 0, 0, 0, 0, e.PrevHash, e.Hash)
		exec(`UPDATE audit_head SET seq = $1, hash = $2`, e.Sequence, e.Hash)
	}
	exec(`INSERT INTO batches (name, created_at) VALUES ('v1', 1)`)
	for i := 0; i < costs; i++ {
		exec(`INSERT INTO cost_points (`+costColumns+`) VALUES ($1, 'v1', '', '', 0, 0, 0, 0, 0)`, i)
	}
}

// TestUpgradeKeepsLegacyTrail opens a database of the previous schema: its
// memories survive, its unkeyed trail verifies as written up to the
// recorded boundary, and keyed entries appended after it verify with the
// key; a missing or another key is its own error.
func TestUpgradeKeepsLegacyTrail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	createV1(t, path, 7, 2)
	s := openAt(t, path)
	ctx := context.Background()
	if st, err := s.Stats(ctx); err != nil || st.Incidents != 1 {
		t.Fatalf("stats after upgrade: %+v, %v; want the v1 incident", st, err)
	}
	rep, err := verifyStore(t, s, audit.Key{}, nil)
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("legacy trail without a key: err %v, problems %v", err, rep.Problems)
	}
	if rep.State.LegacyThrough != 7 || rep.State.LegacyCosts != 2 || rep.Entries != 7 || rep.LegacyCosts != 2 {
		t.Errorf("boundary: %+v, want legacy through 7 with 2 legacy cost points", rep)
	}
	if _, err := s.BindAuditKey(ctx, testKey.ID(), testSign); err != nil {
		t.Fatal(err)
	}
	if err := appendKeyed(ctx, s, "v2", 0, 4, nil); err != nil {
		t.Fatal(err)
	}
	rep, err = verifyStore(t, s, testKey, nil)
	if err != nil || len(rep.Problems) > 0 || rep.Entries != 11 || rep.Costs != 1 {
		t.Fatalf("after keyed appends: %+v, %v", rep, err)
	}
	if _, err := verifyStore(t, s, audit.Key{}, nil); !errors.Is(err, audit.ErrNoKey) {
		t.Errorf("without the key: %v, want ErrNoKey", err)
	}
	other, _ := audit.NewKey(bytes.Repeat([]byte{2}, audit.KeySize))
	if _, err := verifyStore(t, s, other, nil); !errors.Is(err, audit.ErrWrongKey) {
		t.Errorf("with another key: %v, want ErrWrongKey", err)
	}
	if got, err := s.BindAuditKey(ctx, other.ID(), testSign); err != nil || got != testKey.ID() {
		t.Errorf("binding another key: %q, %v; want the first key kept", got, err)
	}
	// The boundary and cost points are append-only like the entries.
	for _, q := range []string{`UPDATE audit_keying SET legacy_through = 11`, `UPDATE audit_keying SET key_id = ''`,
		`DELETE FROM cost_points`, `UPDATE cost_points SET cost = 0`} {
		if _, err := s.db.ExecContext(ctx, q); err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
}
