package memory

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// archiveFixture is a keyed trail of four analyses of two steps each and
// their cost points, analysis i appended at 12:00:(2i+1) and its cost point
// at 12:00:(2i+2).
func archiveFixture(t *testing.T) *Store {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := Open(ctx, filepath.Join(t.TempDir(), "memory.db"), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.BindAuditKey(ctx, testKey.ID(), testSign); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		now = now.Add(time.Second)
		if err := appendKeyed(ctx, s, "b", i, 2, func() { now = now.Add(time.Second) }); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

var archiveCut = time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)

// readPrefix returns the sequences ReadTrailPrefix reads for the cut.
func readPrefix(t *testing.T, s *Store, before time.Time) (entries, costs []int64, last, lastCost string) {
	t.Helper()
	if err := s.ReadTrailPrefix(context.Background(), before, TrailReader{
		Entry: func(e openrecall.AuditEntry) error { entries, last = append(entries, e.Sequence), e.Hash; return nil },
		Cost: func(seq int64, _, hash string, _ openrecall.CostPoint) error {
			costs, lastCost = append(costs, seq), hash
			return nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	return entries, costs, last, lastCost
}

func TestReadTrailPrefixTakesWhatIsStrictlyOlder(t *testing.T) {
	s := archiveFixture(t)
	tests := []struct {
		before       time.Time
		entries, pts int
	}{
		{archiveCut.Add(-4 * time.Second), 0, 0}, // the first entries' own time: not strictly older
		{archiveCut.Add(-4*time.Second + time.Nanosecond), 2, 0},
		{archiveCut, 4, 2},
		{archiveCut.Add(time.Hour), 8, 4},
	}
	for _, tt := range tests {
		entries, costs, _, _ := readPrefix(t, s, tt.before)
		if len(entries) != tt.entries || len(costs) != tt.pts {
			t.Errorf("before %s: entries %v, cost points %v; want %d and %d", tt.before, entries, costs, tt.entries, tt.pts)
		}
	}
}

// signedArchive is the archive record of the prefix older than before.
func signedArchive(t *testing.T, s *Store, before time.Time) openrecall.TrailArchive {
	t.Helper()
	entries, costs, last, lastCost := readPrefix(t, s, before)
	a := openrecall.TrailArchive{Before: before, At: before.Add(time.Hour), FileSHA256: "00"}
	if n := len(entries); n > 0 {
		a.Through, a.ThroughHash = entries[n-1], last
	}
	if n := len(costs); n > 0 {
		a.CostThrough, a.CostThroughHash = costs[n-1], lastCost
	}
	return audit.SignArchive(testKey, a)
}

func TestRecordArchiveDeletesThePrefixAndVerifyStartsAfterIt(t *testing.T) {
	ctx := context.Background()
	s := archiveFixture(t)
	a := signedArchive(t, s, archiveCut)
	entries, costs, err := s.RecordArchive(ctx, a, openrecall.TrailArchive{})
	if err != nil || entries != 4 || costs != 2 {
		t.Fatalf("RecordArchive = %d, %d, %v; want 4, 2", entries, costs, err)
	}
	rep, err := verifyStore(t, s, testKey, nil)
	if err != nil || len(rep.Problems) != 0 || rep.Entries != 4 || rep.Costs != 2 {
		t.Fatalf("after archiving: %+v, %v", rep, err)
	}
	if got := rep.State.Archive; got.Through != 4 || got.CostThrough != 2 || !audit.ArchiveSigned(testKey, got) {
		t.Errorf("state's archive record %+v", got)
	}
	// A second archive from a stale start is refused and changes nothing.
	b := signedArchive(t, s, archiveCut.Add(time.Hour))
	if _, _, err := s.RecordArchive(ctx, b, openrecall.TrailArchive{}); !errors.Is(err, ErrArchiveMoved) {
		t.Errorf("an archive read before the latest record: %v, want ErrArchiveMoved", err)
	}
	if _, _, err := s.RecordArchive(ctx, b, a); err != nil {
		t.Fatalf("the next archive: %v", err)
	}
	if err := appendKeyed(ctx, s, "b", 4, 1, nil); err != nil {
		t.Fatal(err)
	}
	if rep, err := verifyStore(t, s, testKey, nil); err != nil || len(rep.Problems) != 0 || rep.Entries != 1 {
		t.Fatalf("appended after archiving everything: %+v, %v", rep, err)
	}
	if recs, err := s.Archives(ctx); err != nil || len(recs) != 2 || recs[0].MAC != a.MAC || recs[1].MAC != b.MAC {
		t.Errorf("Archives = %+v, %v", recs, err)
	}
}

// TestArchiveTriggers: the database refuses deleting what no archive record
// covers, a record that ends before the previous one, and changing or
// deleting records.
func TestArchiveTriggers(t *testing.T) {
	ctx := context.Background()
	s := archiveFixture(t)
	for _, q := range []string{`DELETE FROM audit_entries WHERE sequence <= 2`, `DELETE FROM cost_points WHERE seq = 1`} {
		if _, err := s.db.ExecContext(ctx, q); err == nil {
			t.Errorf("%s without an archive record: accepted", q)
		}
	}
	a := signedArchive(t, s, archiveCut)
	if _, _, err := s.RecordArchive(ctx, a, openrecall.TrailArchive{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DELETE FROM audit_entries WHERE sequence = 5`,
		`DELETE FROM cost_points WHERE seq = 3`,
		`UPDATE audit_archives SET through = 8`,
		`DELETE FROM audit_archives`,
		`INSERT INTO audit_archives (through, through_hash, cost_through, cost_through_hash, before_ns, archived_at, file_sha256, key_id, mac)
			VALUES (1, '', 1, '', 0, 0, '', '', '')`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err == nil {
			t.Errorf("%s: accepted", q)
		}
	}
	if rep, err := verifyStore(t, s, testKey, nil); err != nil || len(rep.Problems) != 0 {
		t.Errorf("after refused changes: %+v, %v", rep.Problems, err)
	}
}

// TestVerifyCatchesAPrefixGoneWithoutARecord: a prefix deleted with the
// triggers dropped and no record, or under a record that does not match
// its signature, is tampering.
func TestVerifyCatchesAPrefixGoneWithoutARecord(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		sql  []string
		kind string
	}{
		{"no record", []string{`DROP TRIGGER audit_entries_no_delete`, `DELETE FROM audit_entries WHERE sequence <= 4`}, audit.KindDeleted},
		{"forged record", []string{`INSERT INTO audit_archives (through, through_hash, cost_through, cost_through_hash, before_ns, archived_at, file_sha256, key_id, mac)
			SELECT 4, hash, 0, '', 0, 0, '', 'k1-x', 'ff' FROM audit_entries WHERE sequence = 4`, `DELETE FROM audit_entries WHERE sequence <= 4`}, audit.KindArchive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := archiveFixture(t)
			for _, q := range tt.sql {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			rep, err := verifyStore(t, s, testKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				found = found || p.Kind == tt.kind
			}
			if !found {
				t.Errorf("problems %+v, want one of kind %s", rep.Problems, tt.kind)
			}
		})
	}
}
