package memory

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestMigrationFromV1KeepsMemories builds a schema v1 database by hand with
// one memory, opens it with this binary and checks that the memory is kept
// as related knowledge (no identity, no vote), that re-retaining it with an
// identity restores its vote, and that nothing else changed.
func TestMigrationFromV1KeepsMemories(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	raw, err := sql.Open("sqlite3", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	body, err := migrationFiles.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	fp := fpOf("timeout", "db_primary", "database", "sustained", "", "prod")
	old := openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: "nightly backup",
		SourceAlertID: "am-1", Analyst: "ana", CreatedAt: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)}.Normalized()
	created, _ := nanos(old.CreatedAt)
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		string(body),
		`INSERT INTO schema_migrations VALUES (1, '0001_init.sql', 0)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`INSERT INTO incidents (id, dedupe_key, fp, k4, error_class, service_role, dependency_pattern,
		signal_shape, attack_pattern, environment, decision, note, dead_ends, analyst, impact_minutes, source_alert_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, '[]', $13, 0, $14, $15)`, old.ID, old.DedupeKey, fpKey(fp), k4Key(fp),
		fp.ErrorClass, fp.ServiceRole, fp.DependencyPattern, fp.SignalShape, fp.AttackPattern, fp.Environment,
		string(old.Decision), old.Note, old.Analyst, old.SourceAlertID, created); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path)
	got, err := s.Get(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Identity.IsZero() || got.Severity != openrecall.SeverityUnknown || got.Note != old.Note || !got.CreatedAt.Equal(old.CreatedAt) {
		t.Fatalf("migrated memory = %+v, want the v1 record without identity and with unknown severity", got)
	}
	id := openrecall.Identity{Rule: "MySQLSlowQueries", Service: "mysql"}
	ms, err := s.Recall(ctx, id, fp, 10)
	if err != nil || len(ms) != 1 || !ms[0].Related || ms[0].Score != openrecall.MinStrongThreshold {
		t.Fatalf("Recall after migration = %+v, %v; want one related match scored %v", ms, err, openrecall.MinStrongThreshold)
	}
	again := old
	again.ID, again.DedupeKey, again.CreatedAt = "", "", time.Time{}
	again.Identity, again.Severity = id, openrecall.SeverityMedium
	stored, isNew, err := s.Retain(ctx, again)
	if err != nil || isNew || stored.ID != old.ID || stored.Identity != id || stored.Severity != openrecall.SeverityMedium {
		t.Fatalf("re-retain with identity = %+v, new=%v, %v; want the same record with the identity filled in", stored, isNew, err)
	}
	ms, err = s.Recall(ctx, id, fp, 10)
	if err != nil || len(ms) != 1 || ms[0].Related || ms[0].Score != 1 {
		t.Fatalf("Recall after re-seeding = %+v, %v; want one strong match", ms, err)
	}
	// An identity once set is never overwritten by another retain.
	other := again
	other.Identity = openrecall.Identity{Rule: "SomethingElse"}
	if stored, _, err := s.Retain(ctx, other); err != nil || stored.Identity != id {
		t.Fatalf("retain with another identity changed the stored one: %+v, %v", stored, err)
	}
}

func TestForgetAndSupersede(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	fp := fpOf("disk_pressure", "storage", "", "sustained", "", "prod")
	a := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: "a", SourceAlertID: "1", Identity: rid})
	b := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: "b", SourceAlertID: "2", Identity: rid})

	forgotten, ok, err := s.Forget(ctx, a.ID)
	if err != nil || !ok || forgotten.ForgottenAt.IsZero() {
		t.Fatalf("Forget = %+v, %v, %v", forgotten, ok, err)
	}
	if _, ok, err := s.Forget(ctx, a.ID); err != nil || ok {
		t.Errorf("second Forget = %v, %v; want false, nil", ok, err)
	}
	if _, _, err := s.Forget(ctx, "inc_nope"); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("Forget of an unknown id: err = %v, want ErrNotFound", err)
	}
	ms, err := s.Recall(ctx, rid, fp, 10)
	if err != nil || len(ms) != 1 || ms[0].Incident.ID != b.ID {
		t.Fatalf("Recall after forget = %+v, %v; want only %s", ms, err, b.ID)
	}
	// Retaining the forgotten decision again does not bring its vote back.
	if again, isNew, err := s.Retain(ctx, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: "a", SourceAlertID: "1", Identity: rid}); err != nil || isNew || again.ForgottenAt.IsZero() {
		t.Errorf("re-retain of a forgotten memory = %+v, new=%v, %v; want it still forgotten", again, isNew, err)
	}

	repl := openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionReal, Note: "it was a real outage", SourceAlertID: "2", Identity: rid}
	stored, old, created, err := s.Supersede(ctx, b.ID, repl)
	if err != nil || !created || old.ID != b.ID || old.ForgottenAt.IsZero() || stored.Decision != openrecall.DecisionReal {
		t.Fatalf("Supersede = %+v, %+v, %v, %v", stored, old, created, err)
	}
	ms, err = s.Recall(ctx, rid, fp, 10)
	if err != nil || len(ms) != 1 || ms[0].Incident.ID != stored.ID {
		t.Fatalf("Recall after supersede = %+v, %v; want only %s", ms, err, stored.ID)
	}
	for _, tt := range []struct {
		name string
		old  string
		want error
	}{
		{"unknown id", "inc_nope", openrecall.ErrNotFound},
		{"already forgotten", b.ID, openrecall.ErrInvalid},
		{"itself", stored.ID, openrecall.ErrInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := countIncidents(t, s)
			if _, _, _, err := s.Supersede(ctx, tt.old, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionReal,
				Note: "it was a real outage", SourceAlertID: "2", Identity: rid}); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if countIncidents(t, s) != n {
				t.Errorf("a refused supersede stored something")
			}
		})
	}
}

func TestExpiredMemoryNoLongerVotes(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t) // its clock starts at 2026-03-01 12:00 and ticks a second per reading
	fp := fpOf("cert_expiry", "api_edge", "", "", "", "prod")
	live := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: "live",
		Identity: rid, ExpiresAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	expired := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: "expired",
		Identity: rid, ExpiresAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	ms, err := s.Recall(ctx, rid, fp, 10)
	if err != nil || len(ms) != 2 {
		t.Fatalf("Recall = %+v, %v", ms, err)
	}
	if ms[0].Incident.ID != live.ID || ms[0].Related || ms[0].Score != 1 {
		t.Errorf("first match = %+v, want the live memory, strong", ms[0])
	}
	if ms[1].Incident.ID != expired.ID || !ms[1].Related || ms[1].Score > openrecall.MinStrongThreshold {
		t.Errorf("second match = %+v, want the expired memory as a related match", ms[1])
	}
	if !ms[1].Incident.ExpiresAt.Equal(expired.ExpiresAt) {
		t.Errorf("expiry not stored: %v", ms[1].Incident.ExpiresAt)
	}
}

func TestRelatedNeedsDNA(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	empty := openrecall.Fingerprint{Environment: "prod"}
	mine := mustRetain(t, s, openrecall.Incident{Fingerprint: empty, Decision: openrecall.DecisionKnownBenign, Note: "mine", Identity: rid})
	mustRetain(t, s, openrecall.Incident{Fingerprint: empty, Decision: openrecall.DecisionKnownBenign, Note: "other",
		Identity: openrecall.Identity{Rule: "MySQLRestarted", Service: rid.Service}})
	ms, err := s.Recall(ctx, rid, empty, 10)
	if err != nil || len(ms) != 1 || ms[0].Incident.ID != mine.ID || ms[0].Related || ms[0].Score != 1 {
		t.Fatalf("Recall with an empty DNA = %+v, %v; want only the alert's own memory, strong", ms, err)
	}
	if ms, err := s.Recall(ctx, openrecall.Identity{}, empty, 10); err != nil || len(ms) != 0 {
		t.Errorf("Recall without identity and DNA = %+v, %v; want nothing", ms, err)
	}
}
