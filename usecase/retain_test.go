package usecase_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

func TestRetainRefuses(t *testing.T) {
	fp := openrecall.Fingerprint{ErrorClass: "timeout"}
	tests := []struct {
		name string
		req  usecase.RetainRequest
		want error
	}{
		{"escalated is the pipeline's, not a person's", usecase.RetainRequest{
			Decision: usecase.Decision{Decision: openrecall.DecisionEscalated},
			Subject:  usecase.Subject{Fingerprint: &fp},
		}, openrecall.ErrInvalid},
		{"an unknown decision", usecase.RetainRequest{
			Decision: usecase.Decision{Decision: "maybe"},
			Subject:  usecase.Subject{Fingerprint: &fp},
		}, openrecall.ErrInvalid},
		{"an unknown analysis", usecase.RetainRequest{
			Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive},
			Subject:  usecase.Subject{AnalysisID: "b1-404"},
		}, openrecall.ErrNotFound},
		{"no subject", usecase.RetainRequest{
			Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive},
		}, openrecall.ErrInvalid},
		{"two subjects", usecase.RetainRequest{
			Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive},
			Subject:  usecase.Subject{Fingerprint: &fp, Alerts: []openrecall.Alert{alert("a1", "r", "s", "timeout")}},
		}, openrecall.ErrInvalid},
		{"a superseding decision about two alerts", usecase.RetainRequest{
			Decision:   usecase.Decision{Decision: openrecall.DecisionFalsePositive},
			Subject:    usecase.Subject{Alerts: []openrecall.Alert{alert("a1", "r", "s", "timeout"), alert("a2", "r", "s", "timeout")}},
			Supersedes: "inc_1",
		}, openrecall.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			_, err := d.app.Retain(context.Background(), tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Retain: error %v, want %v", err, tt.want)
			}
			if len(d.store.incidents) != 0 || len(d.audit) != 0 {
				t.Errorf("a refused retain stored %d memories and %d audit entries, want none", len(d.store.incidents), len(d.audit))
			}
		})
	}
}

func TestRetainOfARejectedOrPrunedAnalysis(t *testing.T) {
	d := newDesk(t)
	d.store.served["b1-1"] = openrecall.Served{Delivery: openrecall.Delivery{Rejection: "not JSON"}, Done: true}
	d.store.served["b1-2"] = openrecall.Served{Done: true, Pruned: true, PrunedAt: now}
	req := usecase.RetainRequest{Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive}}

	req.Subject.AnalysisID = "b1-1"
	if _, err := d.app.Retain(context.Background(), req); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("retain about a rejected record: error %v, want ErrInvalid", err)
	}
	req.Subject.AnalysisID = "b1-2"
	if _, err := d.app.Retain(context.Background(), req); !errors.Is(err, openrecall.ErrPruned) {
		t.Errorf("retain about a pruned analysis: error %v, want ErrPruned", err)
	}
	if len(d.store.incidents) != 0 {
		t.Errorf("stored %d memories, want none", len(d.store.incidents))
	}
}

// A decision about an analysis that waits is retained with its analyst and
// dead ends, settles the analysis, and is audited once; retaining it again
// changes nothing and audits nothing.
func TestRetainAboutAWaitingAnalysis(t *testing.T) {
	d := newDesk(t)
	a := alert("a1", "disk_full", "db", "disk_full")
	d.store.served["b1-1"] = openrecall.Served{Delivery: openrecall.Delivery{Alert: a}, Done: true}
	d.waitOn("b1-1", a, openrecall.DecisionKnownBenign)
	req := usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Note: "nightly backup", Analyst: "ana",
			DeadEnds: []string{"checked the replica", "restarted nothing"}},
		Subject: usecase.Subject{AnalysisID: "b1-1"},
	}
	out, err := d.app.Retain(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !out[0].Created {
		t.Fatalf("Retain = %+v, want one memory created", out)
	}
	inc := out[0].Incident
	want := openrecall.Incident{
		ID: inc.ID, CreatedAt: now, Decision: openrecall.DecisionKnownBenign, Note: "nightly backup", Analyst: "ana",
		DeadEnds:    []string{"checked the replica", "restarted nothing"},
		Fingerprint: openrecall.Fingerprint{ErrorClass: "disk_full", Environment: "prod"},
		Identity:    openrecall.Identity{Rule: "disk_full", Service: "db"}, Severity: openrecall.SeverityHigh, SourceAlertID: "a1",
	}
	if diff := cmp.Diff(want, inc); diff != "" {
		t.Errorf("memory retained (-want +got):\n%s", diff)
	}
	w := d.waiting.by["b1-1"]
	if !w.Decided || w.DecidedBy != "ana" || w.Decision != openrecall.DecisionKnownBenign || w.MemoryID != inc.ID || !w.DecidedAt.Equal(now) {
		t.Errorf("the analysis was not settled by ana as %s: %+v", inc.ID, w)
	}
	if diff := cmp.Diff([]string{usecase.StepAnalystDecision}, d.steps()); diff != "" {
		t.Fatalf("audit steps (-want +got):\n%s", diff)
	}
	e := d.audit[0]
	for _, s := range []string{"ana decided known_benign", "memory " + inc.ID, "nightly backup", "dead ends: checked the replica | restarted nothing"} {
		if !strings.Contains(e.Reason, s) {
			t.Errorf("audit reason %q does not say %q", e.Reason, s)
		}
	}
	if e.AnalysisID != "b1-1" || e.AlertID != "a1" || e.Outcome != string(openrecall.DecisionKnownBenign) {
		t.Errorf("audit entry %+v is not about b1-1's alert a1 decided known_benign", e)
	}
	if i, j := d.log.index("expiries"), d.log.index("retain"); i < 0 || i > j {
		t.Errorf("expiries were not recorded before the retain: %v", *d.log)
	}

	// Again: memory holds it, and the analysis was decided already.
	req.Decision.Analyst = "bob"
	again, err := d.app.Retain(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Created || again[0].Incident.ID != inc.ID {
		t.Errorf("retaining the same decision again: %+v, want memory %s held (Created false)", again[0], inc.ID)
	}
	if len(d.audit) != 1 || d.waiting.by["b1-1"].DecidedBy != "ana" {
		t.Errorf("a decided analysis was decided again: %d audit entries, decided by %q", len(d.audit), d.waiting.by["b1-1"].DecidedBy)
	}
}

// An analysis of an analyze run is not in the server's inbox: what waited
// holds its alert.
func TestRetainAboutAnAnalysisThatOnlyWaited(t *testing.T) {
	d := newDesk(t)
	d.waitOn("run-7", alert("a7", "oom", "api", "oom"), openrecall.DecisionFalsePositive)
	out, err := d.app.Retain(context.Background(), usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive, Analyst: "ana"},
		Subject:  usecase.Subject{AnalysisID: "run-7"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Incident; got.SourceAlertID != "a7" || got.Identity.Rule != "oom" {
		t.Errorf("memory %+v is not about alert a7 of rule oom", got)
	}
}

func TestRetainAlertsOneMemoryEach(t *testing.T) {
	d := newDesk(t)
	out, err := d.app.Retain(context.Background(), usecase.RetainRequest{
		Decision:     usecase.Decision{Decision: openrecall.DecisionDuplicate, Analyst: "ana"},
		Subject:      usecase.Subject{Alerts: []openrecall.Alert{alert("a1", "r1", "s", "x"), alert("a2", "", "s", "y")}},
		IdentityHint: "give --rule",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Incident.SourceAlertID != "a1" || out[1].Incident.SourceAlertID != "a2" {
		t.Fatalf("Retain = %+v, want a memory for a1 then a2", out)
	}
	if out[0].Warning != "" {
		t.Errorf("a memory with identity warns %q", out[0].Warning)
	}
	if !strings.Contains(out[1].Warning, "never votes") || !strings.Contains(out[1].Warning, "give --rule") {
		t.Errorf("a memory without identity warns %q, want it never votes, and the hint", out[1].Warning)
	}
	if len(d.audit) != 0 {
		t.Errorf("retaining new memories audited %v; only decisions taken back or about analyses are", d.steps())
	}
}

// Superseding takes the old memory back (audited once, naming the new
// one) and stores the new one.
func TestRetainSupersedes(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	fp := openrecall.Fingerprint{ErrorClass: "timeout"}
	id := openrecall.Identity{Rule: "latency", Service: "api"}
	first, err := d.app.Retain(ctx, usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive, Analyst: "ana"},
		Subject:  usecase.Subject{Fingerprint: &fp, Identity: id},
	})
	if err != nil {
		t.Fatal(err)
	}
	old := first[0].Incident.ID
	out, err := d.app.Retain(ctx, usecase.RetainRequest{
		Decision:   usecase.Decision{Decision: openrecall.DecisionReal, Analyst: "bob", Note: "it was real"},
		Subject:    usecase.Subject{Fingerprint: &fp, Identity: id},
		Supersedes: old,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := out[0]
	if r.Superseded == nil || r.Superseded.ID != old || r.Superseded.ForgottenAt.IsZero() {
		t.Fatalf("Superseded = %+v, want memory %s taken back", r.Superseded, old)
	}
	if !r.Created || r.Incident.ID == old || r.Incident.Decision != openrecall.DecisionReal {
		t.Errorf("new memory %+v, want a new real memory", r.Incident)
	}
	if diff := cmp.Diff([]string{usecase.StepMemoryForget}, d.steps()); diff != "" {
		t.Fatalf("audit steps (-want +got):\n%s", diff)
	}
	if e := d.audit[0]; !strings.Contains(e.Reason, "superseded by "+r.Incident.ID) || !strings.Contains(e.Reason, "by bob") ||
		e.AnalysisID != "forget-"+old {
		t.Errorf("audit entry %+v does not say memory %s was superseded by %s, by bob", e, old, r.Incident.ID)
	}
}

// Forgetting takes a decision back once: audited with who and why; a
// memory taken back already changes nothing and is not audited again.
func TestForget(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	fp := openrecall.Fingerprint{ErrorClass: "timeout"}
	out, err := d.app.Retain(ctx, usecase.RetainRequest{
		Decision: usecase.Decision{Decision: openrecall.DecisionFalsePositive, Analyst: "ana"},
		Subject:  usecase.Subject{Fingerprint: &fp, Identity: openrecall.Identity{Rule: "latency"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := out[0].Incident.ID
	f, err := d.app.Forget(ctx, id, "wrong call", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Changed || f.Incident.ID != id {
		t.Errorf("Forget = %+v, want memory %s changed", f, id)
	}
	if diff := cmp.Diff([]string{usecase.StepMemoryForget}, d.steps()); diff != "" {
		t.Fatalf("audit steps (-want +got):\n%s", diff)
	}
	if e := d.audit[0]; !strings.HasSuffix(e.Reason, "taken back by bob: wrong call") || e.Outcome != "forgotten" {
		t.Errorf("audit entry %+v does not say who took it back and why", e)
	}
	if i, j := slices.Index(*d.log, "expiries"), d.log.index("forget"); i > j {
		t.Errorf("expiries recorded after the forget: %v", *d.log)
	}
	f, err = d.app.Forget(ctx, id, "again", "bob")
	if err != nil || f.Changed {
		t.Errorf("forgetting again = %+v, %v, want unchanged", f, err)
	}
	if len(d.audit) != 1 {
		t.Errorf("forgetting again audited: %v", d.steps())
	}
	if _, err := d.app.Forget(ctx, "inc_404", "", "bob"); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("forgetting an unknown memory: %v, want ErrNotFound", err)
	}
}

func TestRecall(t *testing.T) {
	d := newDesk(t)
	d.exceptions.proposals["p1"] = openrecall.Proposal{ID: "p1", Identity: openrecall.Identity{Rule: "r1", Service: "s"}}
	got, err := d.app.Recall(context.Background(), usecase.Subject{Alerts: []openrecall.Alert{alert("a1", "r1", "s", "x"), alert("a2", "r2", "s", "y")}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got.Matches == nil || len(got.Matches) != 0 {
		t.Errorf("Matches = %#v, want empty, never null", got.Matches)
	}
	if got.Identity.Rule != "r1" || len(got.Proposals) != 1 {
		t.Errorf("Recall = %+v, want the first alert's identity and its proposal", got)
	}
	if diff := cmp.Diff(calls{"recall r1 @ s error_class=x;service_role=;dependency_pattern=;signal_shape=;attack_pattern=;environment=prod 5"}, *d.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
