package memory

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

func schemaVersion(t *testing.T, s *Store) int {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.SchemaVersion
}

func TestOpenCreatesParentAndUsesWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b?c#d%20", "memory.db")
	s := openAt(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not at the given path: %v", err)
	}
	var mode string
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
	var fk int
	if err := s.db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d (%v), want 1", fk, err)
	}
	if v := schemaVersion(t, s); v != SchemaVersion() || v < 1 {
		t.Errorf("schema version %d, want %d", v, SchemaVersion())
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future.sql', 0)`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	_, err = Open(context.Background(), path, Options{})
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer database: err = %v, want ErrNewerSchema", err)
	}
	if !strings.Contains(err.Error(), "upgrade openrecall") {
		t.Errorf("error %q does not tell the user what to do", err)
	}
}

func TestOpenNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not sqlite\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("err = %v, want ErrCorrupt", err)
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := Open(context.Background(), "", Options{}); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

func TestStats(t *testing.T) {
	s := openTemp(t)
	fpA := fpOf("timeout", "cache", "", "", "", "prod")
	fpB := fpOf("http_5xx", "api_edge", "", "", "", "prod")
	for i, d := range []openrecall.Decision{openrecall.DecisionDuplicate, openrecall.DecisionDuplicate, openrecall.DecisionReal} {
		mustRetain(t, s, openrecall.Incident{Fingerprint: fpA, Decision: d, Note: itoa(i), Identity: rid})
	}
	other := openrecall.Incident{Fingerprint: fpB, Decision: openrecall.DecisionFalsePositive, Note: "other rule",
		Identity: openrecall.Identity{Rule: "HTTPErrors"}}
	mustRetain(t, s, other)
	mustRetain(t, s, openrecall.Incident{Fingerprint: fpB, Decision: openrecall.DecisionFalsePositive})
	forgotten := mustRetain(t, s, openrecall.Incident{Fingerprint: fpB, Decision: openrecall.DecisionReal, Identity: rid})
	if _, ok, err := s.Forget(context.Background(), forgotten.ID); err != nil || !ok {
		t.Fatalf("Forget = %v, %v", ok, err)
	}
	if err := s.AppendCostPoints(context.Background(), []openrecall.CostPoint{{Batch: "b1", Index: 0}, {Batch: "b2", Index: 0}, {Batch: "b2", Index: 1}}, testCostSeal); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(context.Background(), []openrecall.AuditEntry{{Step: "intake"}}, testSeal); err != nil {
		t.Fatal(err)
	}
	got, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		Incidents: 6,
		ByDecision: map[openrecall.Decision]int{openrecall.DecisionDuplicate: 2, openrecall.DecisionReal: 2,
			openrecall.DecisionFalsePositive: 2, openrecall.DecisionKnownBenign: 0},
		Fingerprints:    2,
		TopFamilies:     []FamilyCount{{fpB, 3}, {fpA, 3}},
		WithoutIdentity: 1,
		Forgotten:       1,
		Identities:      2,
		TopIdentities:   []IdentityCount{{rid, 4}, {openrecall.Identity{Rule: "HTTPErrors"}, 1}},
		AuditEntries:    1,
		CostPoints:      3,
		Batches:         2,
		SchemaVersion:   SchemaVersion(),
		Path:            s.Path(),
	}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestStatsTopFamilies(t *testing.T) {
	s := openTemp(t)
	var want []FamilyCount
	for f := 1; f <= 12; f++ {
		fp := fpOf(openrecall.ErrorClasses[f], "cache", "", "", "", "dev")
		for i := 0; i < f; i++ {
			mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionDuplicate, Note: itoa(i)})
		}
		if f >= 3 {
			want = append([]FamilyCount{{fp, f}}, want...)
		}
	}
	got, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Fingerprints != 12 {
		t.Errorf("Fingerprints = %d, want 12", got.Fingerprints)
	}
	if diff := cmpDiff(want, got.TopFamilies); diff != "" {
		t.Errorf("TopFamilies (-want +got):\n%s", diff)
	}
}

// Every connection of a store keeps SQLite's temporary files in memory
// (dsnConnector), the writer's and the readers': the statement journals of
// a batch's multi-row INSERTs were written to /var/tmp, more bytes per
// alert than the WAL.
func TestConnectionsKeepTemporaryFilesInMemory(t *testing.T) {
	sqliteOnly(t)
	s := openTemp(t)
	ctx := context.Background()
	for name, db := range map[string]*sql.DB{"writer": s.db, "reader": s.readers} {
		if db == nil {
			t.Fatalf("%s: no pool", name)
		}
		var mode int
		if err := db.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != 2 {
			t.Errorf("%s: temp_store = %d, want 2 (MEMORY)", name, mode)
		}
	}
}
