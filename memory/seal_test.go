package memory

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// testRowSealer seals rows with testKey.
func testRowSealer() RowSealer {
	sl := audit.NewSealer(testKey)
	return RowSealer{KeyID: testKey.ID(), Seal: sl.Seal, Row: sl.RowSeal, Sealing: sl.SealingMAC}
}

// sealedTemp opens a new store that seals its rows with testKey.
func sealedTemp(t *testing.T) *Store {
	t.Helper()
	s := openTemp(t)
	if _, err := s.BindAuditKey(context.Background(), testKey.ID(), testSign); err != nil {
		t.Fatal(err)
	}
	if err := s.SealRows(context.Background(), testRowSealer()); err != nil {
		t.Fatal(err)
	}
	return s
}

// rowProblems verifies s and returns the problems of sealed rows, failing
// on any other.
func rowProblems(t *testing.T, s *Store) []audit.Problem {
	t.Helper()
	var tv *audit.TrailVerifier
	err := s.ReadTrail(context.Background(), TrailReader{
		State: func(st openrecall.TrailState) error {
			var err error
			tv, err = audit.NewTrailVerifier(testKey, st, nil)
			return err
		},
		Entry: func(e openrecall.AuditEntry) error { tv.Entry(e); return nil },
		Cost: func(seq int64, prev, hash string, p openrecall.CostPoint) error {
			tv.Cost(seq, prev, hash, p)
			return nil
		},
		Row: func(r openrecall.SealedRow) error { tv.Row(r); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Problem
	for _, p := range tv.Finish().Problems {
		if p.Chain != audit.ChainRow {
			t.Errorf("chain problem: %s", p)
			continue
		}
		out = append(out, p)
	}
	return out
}

func wantRowProblem(t *testing.T, ps []audit.Problem, kind, step, id string) {
	t.Helper()
	for _, p := range ps {
		if p.Kind == kind && p.Step == step && p.AnalysisID == id {
			return
		}
	}
	t.Errorf("want a %s problem of %s %s, got %v", kind, step, id, ps)
}

func tamper(t *testing.T, s *Store, q string, args ...any) {
	t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestEditedResultIsRefusedAndReported: a stored result whose decision is
// edited in the database (escalated -> known_benign) is not served, and
// audit verify names it. Fails without the fix (verify was intact and the
// edit served).
func TestEditedResultIsRefusedAndReported(t *testing.T) {
	ctx := context.Background()
	s := sealedTemp(t)
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("a", "high"), firing("b", "high")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2} {
		if err := s.Complete(ctx, []int64{id}, []openrecall.Result{{AnalysisID: inboxName(id), Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionEscalated}}); err != nil {
			t.Fatal(err)
		}
	}
	if ps := rowProblems(t, s); len(ps) != 0 {
		t.Fatalf("untouched: %v", ps)
	}
	tamper(t, s, `UPDATE inbox SET result = replace(result, 'escalated', 'known_benign') WHERE id = 1`)
	sv, err := s.Served(ctx, inboxName(1))
	if !errors.Is(err, openrecall.ErrIntegrity) || sv.Result != nil || sv.Integrity != "failed" {
		t.Fatalf("served an edited result: %+v, %v", sv.Result, err)
	}
	page, err := s.ServedSince(ctx, 0, 10)
	if err != nil || len(page) != 2 || page[0].Integrity != "failed" || page[0].Result != nil || page[1].Result == nil {
		t.Fatalf("results page: %+v, %v", page, err)
	}
	if s.RefusedRows() != 2 {
		t.Errorf("refused %d rows, want 2", s.RefusedRows())
	}
	ps := rowProblems(t, s)
	wantRowProblem(t, ps, audit.KindEdited, openrecall.RowResult, inboxName(1))
	if len(ps) != 1 || !strings.Contains(ps[0].String(), "result of analysis "+inboxName(1)+" was edited") {
		t.Errorf("problems %v", ps)
	}
	// Deleting a finished delivery the chain binds is reported too.
	tamper(t, s, `DELETE FROM inbox WHERE id = 2`)
	wantRowProblem(t, rowProblems(t, s), audit.KindDeleted, openrecall.RowResult, inboxName(2))
}

// TestDeletedWaitingRowIsReported: deleting what waits for a person is
// reported by verify. Fails without the fix.
func TestDeletedWaitingRowIsReported(t *testing.T) {
	ctx := context.Background()
	s := sealedTemp(t)
	res := &openrecall.Result{AnalysisID: "b-1", Decision: openrecall.DecisionEscalated}
	ws := []openrecall.Waiting{
		{AnalysisID: "b-1", Since: s.now(), Batch: "b", Reason: "escalated", Severity: "critical", AlertID: "a1", Result: res},
		{AnalysisID: "b-2", Since: s.now(), Batch: "b", Reason: "escalated", Severity: "high", AlertID: "a2", Result: res},
	}
	if err := s.RecordWaiting(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Decide(ctx, openrecall.Waiting{AnalysisID: "b-2", DecidedBy: "ana", Decision: openrecall.DecisionReal, DecidedAt: s.now()}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ps := rowProblems(t, s); len(ps) != 0 {
		t.Fatalf("untouched: %v", ps)
	}
	if _, err := s.WaitingFor(ctx, "b-2"); err != nil {
		t.Fatal(err)
	}
	tamper(t, s, `DELETE FROM waiting WHERE analysis_id = 'b-1'`)
	wantRowProblem(t, rowProblems(t, s), audit.KindDeleted, openrecall.RowWaiting, "b-1")
	// Undoing a decision (the row put back as it was sealed before) is a
	// roll back; editing it is an edit that the reader refuses.
	if q, err := s.Awaiting(ctx, openrecall.WaitingFilter{}); err != nil || len(q) != 0 {
		t.Fatalf("queue after b-1's deletion and b-2's decision: %+v, %v", q, err)
	}
	tamper(t, s, `UPDATE waiting SET decided_at = NULL WHERE analysis_id = 'b-2'`)
	if q, err := s.Awaiting(ctx, openrecall.WaitingFilter{}); err != nil || len(q) != 0 {
		t.Fatalf("the queue shows an undecided-by-edit row: %+v, %v", q, err)
	}
	wantRowProblem(t, rowProblems(t, s), audit.KindEdited, openrecall.RowWaiting, "b-2")
	tamper(t, s, `UPDATE waiting SET severity = 'low' WHERE analysis_id = 'b-2'`)
	if _, err := s.WaitingFor(ctx, "b-2"); !errors.Is(err, openrecall.ErrIntegrity) {
		t.Fatalf("edited waiting row read: %v", err)
	}
	wantRowProblem(t, rowProblems(t, s), audit.KindEdited, openrecall.RowWaiting, "b-2")
}

// TestEditedMemoryIsRefusedByRecallAndReported: a memory whose decision is
// edited in the database (memory poisoning) is ignored by recall, counted,
// and named by verify. Fails without the fix (recall believed it).
func TestEditedMemoryIsRefusedByRecallAndReported(t *testing.T) {
	ctx := context.Background()
	s := sealedTemp(t)
	rid := openrecall.Identity{Rule: "KubePodCrashLooping", Service: "api"}
	fp := fpOf("crashloopbackoff", "api_edge", "configmap", "spike", "", "prod")
	inc := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionReal, Note: "real outage", Identity: rid})
	other := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionReal, Note: "second", Identity: rid})
	if ms, err := s.Recall(ctx, rid, fp, 5); err != nil || len(ms) != 2 {
		t.Fatalf("recall before: %d, %v", len(ms), err)
	}
	if ps := rowProblems(t, s); len(ps) != 0 {
		t.Fatalf("untouched: %v", ps)
	}
	tamper(t, s, `UPDATE incidents SET decision = 'known_benign' WHERE id = $1`, inc.ID)
	ms, err := s.Recall(ctx, rid, fp, 5)
	if err != nil || len(ms) != 1 || ms[0].Incident.ID != other.ID {
		t.Fatalf("recall believed the poisoned memory: %+v, %v", ms, err)
	}
	if s.RefusedRows() != 1 {
		t.Errorf("refused %d, want 1", s.RefusedRows())
	}
	wantRowProblem(t, rowProblems(t, s), audit.KindEdited, openrecall.RowMemory, inc.ID)

	// Forgetting is a chained event, not a deletion; un-forgetting by
	// putting the earlier row back is a roll back.
	var sealBefore string
	if err := s.db.QueryRow(`SELECT seal FROM incidents WHERE id = $1`, other.ID).Scan(&sealBefore); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Forget(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	for _, p := range rowProblems(t, s) {
		if p.AnalysisID == other.ID {
			t.Fatalf("a forget is reported: %s", p)
		}
	}
	tamper(t, s, `UPDATE incidents SET forgotten_at = NULL, seal = $1 WHERE id = $2`, sealBefore, other.ID)
	wantRowProblem(t, rowProblems(t, s), audit.KindRolledBack, openrecall.RowMemory, other.ID)
	tamper(t, s, `DELETE FROM incidents WHERE id = $1`, other.ID)
	wantRowProblem(t, rowProblems(t, s), audit.KindDeleted, openrecall.RowMemory, other.ID)
}

// TestSealRowsAdoptsOldRows: rows stored before sealing are sealed once,
// recorded in the chain; a row written later without a seal is refused and
// reported.
func TestSealRowsAdoptsOldRows(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	rid := openrecall.Identity{Rule: "r", Service: "s"}
	fp := fpOf("crashloopbackoff", "api_edge", "configmap", "spike", "", "prod")
	mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionFalsePositive, Note: "old", Identity: rid})
	if _, err := s.BindAuditKey(ctx, testKey.ID(), testSign); err != nil {
		t.Fatal(err)
	}
	if err := s.SealRows(ctx, testRowSealer()); err != nil {
		t.Fatal(err)
	}
	if ps := rowProblems(t, s); len(ps) != 0 {
		t.Fatalf("after adoption: %v", ps)
	}
	if ms, err := s.Recall(ctx, rid, fp, 5); err != nil || len(ms) != 1 {
		t.Fatalf("recall of an adopted memory: %d, %v", len(ms), err)
	}
	// Opening again adopts nothing more.
	if err := s.SealRows(ctx, testRowSealer()); err != nil {
		t.Fatal(err)
	}
	tamper(t, s, `UPDATE incidents SET seal = ''`)
	if ms, err := s.Recall(ctx, rid, fp, 5); err != nil || len(ms) != 0 {
		t.Fatalf("recall of an unsealed memory: %d, %v", len(ms), err)
	}
	wantRowProblem(t, rowProblems(t, s), audit.KindUnsealed, openrecall.RowMemory, mustGetID(t, s))
}

func mustGetID(t *testing.T, s *Store) string {
	t.Helper()
	var id string
	if err := s.db.QueryRow(`SELECT id FROM incidents`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestConcurrentSealedWritesVerify: several goroutines retain, record
// waiting rows and complete deliveries at once; verify is clean.
func TestConcurrentSealedWritesVerify(t *testing.T) {
	ctx := context.Background()
	s := sealedTemp(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				note := strings.Repeat("n", g+1) + string(rune('a'+i))
				if _, _, err := s.Retain(ctx, openrecall.Incident{Fingerprint: fpOf("oom", "db", "", "", "", "prod"), Decision: openrecall.DecisionReal, Note: note}); err != nil {
					errs <- err
				}
				id := "g" + string(rune('0'+g)) + "-" + string(rune('a'+i))
				if err := s.RecordWaiting(ctx, []openrecall.Waiting{{AnalysisID: id, Since: s.now(), Batch: "g", Reason: "escalated", Result: &openrecall.Result{AnalysisID: id}}}); err != nil {
					errs <- err
				}
				ds, err := s.Enqueue(ctx, []openrecall.Delivery{firing(id, "high")}, 0, inboxName)
				if err != nil {
					errs <- err
					continue
				}
				if err := s.Complete(ctx, []int64{ds[0].ID}, []openrecall.Result{{AnalysisID: ds[0].AnalysisID, Decision: openrecall.DecisionReal}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if ps := rowProblems(t, s); len(ps) != 0 {
		t.Fatalf("concurrent writers: %v", ps)
	}
}
