package memory

import (
	"context"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestExistenceIndexSeesGroupDecision holds the one own write P175's plans
// never make: a group's decision retains its memory through DecideGroup,
// not Retain, and the existence index must learn its keys too, or the
// next recall of the family would find nothing.
func TestExistenceIndexSeesGroupDecision(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	st.EnableRecallIndex(0)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := openrecall.Identity{Rule: "DiskFull", Service: "db"}
	fp := openrecall.Fingerprint{ErrorClass: "disk_full", ServiceRole: "db_primary"}
	head := alertResult("head", "x", false)
	head.Identity, head.Fingerprint = id, fp
	gid := openrecall.GroupID(head.AnalysisID)
	head.Group = &openrecall.GroupRef{ID: gid, Role: openrecall.GroupRoleHead, HeadAnalysisID: head.AnalysisID, HeadAlertID: head.Alert.ID, At: at}
	persistNotified(t, st, notifyBoth, head)
	if got, err := st.Recall(ctx, id, fp, 5); err != nil || len(got) != 0 {
		t.Fatalf("recall before the decision = %d matches, %v; want none", len(got), err)
	}
	inc := openrecall.Incident{Fingerprint: fp, Identity: id, Severity: openrecall.SeverityHigh,
		Decision: openrecall.DecisionFalsePositive, Note: "one noisy deploy", SourceAlertID: "x", Analyst: "ana"}
	if _, _, _, _, err := st.DecideGroup(ctx, gid, inc); err != nil {
		t.Fatal(err)
	}
	got, err := st.Recall(ctx, id, fp, 5)
	if err != nil || len(got) != 1 {
		t.Fatalf("recall after the group's decision = %d matches, %v; want its memory (%s)", len(got), err, st.CacheStats())
	}
}
