package workflow

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
)

// sessionOver returns a session over a fresh store, storing its results
// through a sink when sink is set and continuing the store's groups of its
// batch when scoped is set.
func sessionOver(t *testing.T, sink, scoped bool) (*Session, *memory.Store) {
	t.Helper()
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	st, err := memory.Open(ctx, storetest.Location(t), memory.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	r, err := routing.New(routing.Config{
		Cheap: local.NewCheap(), Strong: local.NewStrong(), Prices: routing.DefaultPrices(),
		CheapMaxTokens: 400, StrongMaxTokens: 800, GateConfidence: 0.6, Vet: triage.Vet, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Fingerprinter: storetest.Fingerprinter(t), Memory: st, Router: r, Triage: triage.DefaultConfig(),
		Mode: openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, Batch: "sess", Now: now,
		Grouping: Grouping{Enabled: true},
	}
	if sink {
		key, err := audit.NewKey(bytes.Repeat([]byte{7}, audit.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		sealer := audit.NewSealer(key)
		cfg.Sink = memory.Sink{Store: st, Seal: sealer.Seal, SealCosts: sealer.SealCosts}
	}
	if scoped {
		cfg.Grouping.Store = memory.GroupScope{Store: st, Batch: cfg.Batch}
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// diskFull is firing i of a disk storm, i minutes into it.
func diskFull(t *testing.T, i int) intake.Record {
	t.Helper()
	at := time.Date(2026, 11, 30, 11, i, 0, 0, time.UTC).Format(time.RFC3339)
	line := fmt.Sprintf(`{"id":"d-%d","title":"NodeDiskFull on host-%d","text":"disk usage above threshold","severity":"warning","labels":{"alertname":"NodeDiskFull","service":"storage","instance":"10.0.0.%d:9100"},"timestamp":%q}`, i, i, i, at)
	recs, err := intake.ParseBytes([]byte(line), intake.Options{Format: intake.FormatJSONL})
	if err != nil || len(recs) != 1 {
		t.Fatalf("parse firing %d: %v", i, err)
	}
	return recs[0]
}

// openIDs returns the ids of the session's open groups, sorted.
func openIDs(s *Session) []string {
	var ids []string
	for _, list := range s.rs.groups.open {
		for _, og := range list {
			ids = append(ids, og.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestSessionStoresResultsAndTakesClosureFromTheStore: a session stores
// each result as a run does (its audit entries as sealed, its cost point,
// its group), and once the store says a person decided a group, SyncGroups
// drops it — only it, and only the groups named when ids are given — so
// the next firing of its alert opens a new group.
func TestSessionStoresResultsAndTakesClosureFromTheStore(t *testing.T) {
	ctx := context.Background()
	s, st := sessionOver(t, true, true)
	var res []openrecall.Result
	for i := range 3 {
		r, err := s.AnalyzeRecord(ctx, diskFull(t, i), i)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	head := res[0]
	if head.Group == nil || !res[1].Grouped() || !res[2].Grouped() {
		t.Fatalf("groups %v %v %v: want a head and two members", head.Group, res[1].Group, res[2].Group)
	}
	id := head.Group.ID
	for _, r := range res {
		stored, err := st.AuditByAnalysis(ctx, r.AnalysisID)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) == 0 || len(stored) != len(r.Audit) || r.Audit[0].Hash == "" || r.Audit[0].Hash != stored[0].Hash {
			t.Errorf("%s: %d audit entries stored, %d in the result (first hash %q); want the result's entries as stored", r.AnalysisID, len(stored), len(r.Audit), r.Audit[0].Hash)
		}
	}
	points, err := st.CostPoints(ctx, "sess")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 3 || points[2].Index != 2 || points[0].AlertID != "d-0" {
		t.Errorf("cost points %+v: want one per triaged result, in order", points)
	}
	g, err := st.Group(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if g.Size != 3 || g.Decided {
		t.Fatalf("stored group %+v: want 3 firings, open", g)
	}

	// A second group of another alert, left open.
	other, err := s.AnalyzeRecord(ctx, func() intake.Record {
		rec := diskFull(t, 3)
		rec.Alert.Labels["alertname"] = "NodeInodesFull"
		return rec
	}(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if other.Group == nil || other.Grouped() {
		t.Fatalf("another alert: group %v, want a head", other.Group)
	}
	fp, err := openrecall.ParseFingerprint(g.Key.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := st.DecideGroup(ctx, id, openrecall.Incident{
		Fingerprint: fp, Identity: g.Key.Identity, Severity: g.HeadSeverity, SourceAlertID: g.Head.AlertID,
		Decision: openrecall.DecisionKnownBenign, Analyst: "someone",
	}); err != nil {
		t.Fatal(err)
	}
	both := []string{id, other.Group.ID}
	slices.Sort(both)
	if err := s.SyncGroups(ctx, other.Group.ID); err != nil {
		t.Fatal(err)
	}
	if got := openIDs(s); !slices.Equal(got, both) {
		t.Errorf("after a sync of %s only: open groups %v, want %v", other.Group.ID, got, both)
	}
	if err := s.SyncGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if got := openIDs(s); !slices.Equal(got, []string{other.Group.ID}) {
		t.Errorf("after a sync: open groups %v, want only %s (the decided %s dropped)", got, other.Group.ID, id)
	}
	next, err := s.AnalyzeRecord(ctx, diskFull(t, 4), 4)
	if err != nil {
		t.Fatal(err)
	}
	if next.Group == nil || next.Grouped() || next.Group.ID == id {
		t.Errorf("the next firing of the decided group's alert: group %+v; want a new group of its own", next.Group)
	}
}

// TestSessionWithoutStorage: without a sink a session stores nothing, and
// without a group store SyncGroups leaves its groups as they are.
func TestSessionWithoutStorage(t *testing.T) {
	ctx := context.Background()
	s, st := sessionOver(t, false, false)
	r, err := s.AnalyzeRecord(ctx, diskFull(t, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Group == nil || len(r.Audit) == 0 || r.Audit[0].Hash != "" {
		t.Fatalf("result: group %v, audit %+v; want a head with its unsealed entries", r.Group, r.Audit)
	}
	if stored, err := st.AuditByAnalysis(ctx, r.AnalysisID); err != nil || len(stored) != 0 {
		t.Errorf("audit stored without a sink: %+v, %v", stored, err)
	}
	if err := s.SyncGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if got := openIDs(s); !slices.Equal(got, []string{r.Group.ID}) || !strings.HasPrefix(r.Group.ID, "g-") {
		t.Errorf("open groups %v, want %s kept", got, r.Group.ID)
	}
}
