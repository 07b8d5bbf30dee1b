package usecase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

const day = 24 * time.Hour

// proposal stores proposal p1 for a shell spawned on ci @ runner, and two
// analyses that wait because of it.
func (d *desk) proposal() openrecall.Proposal {
	p := openrecall.Proposal{
		ID: "p1", Identity: openrecall.Identity{Rule: "shell_spawn", Service: "ci"},
		DNA:      openrecall.Fingerprint{AttackPattern: "shell_spawn", Environment: "prod", SignalShape: "spike"},
		Match:    map[string]string{"image": "runner"},
		Decision: openrecall.DecisionKnownBenign, MaxSeverity: openrecall.SeverityHigh, Expiry: openrecall.DefaultProposalExpiry,
	}
	d.exceptions.proposals[p.ID] = p
	for _, id := range []string{"b1-1", "b1-2"} {
		d.waitOn(id, alert("a"+id[3:], "shell_spawn", "ci", ""), openrecall.DecisionKnownBenign)
		d.waiting.by[id].Result.Proposal = &p
	}
	return p
}

// Approving a proposal makes an exception of its identity, critical DNA,
// match fields, decision and ceiling, approved by the analyst, expiring
// within the cap; audited once; the analyses that waited for it are
// settled; approving it again changes nothing.
func TestApproveProposal(t *testing.T) {
	d := newDesk(t)
	d.app.ExceptionRules.MaxExpiry = 7 * day
	p := d.proposal()
	ctx := context.Background()

	if _, err := d.app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: "p1", Analyst: "ana"}); !errors.Is(err, openrecall.ErrInvalid) ||
		!strings.Contains(err.Error(), "exceptions.max_expiry") {
		t.Fatalf("approving a 30-day proposal under a 7-day cap: %v, want ErrInvalid naming the cap", err)
	}
	if _, err := d.app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: "p1", Analyst: " "}); !errors.Is(err, openrecall.ErrInvalid) {
		t.Fatalf("approving without an analyst: %v, want ErrInvalid", err)
	}
	if _, err := d.app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: "p9", Analyst: "ana", Expiry: day}); !errors.Is(err, openrecall.ErrNotFound) {
		t.Fatalf("approving an unknown proposal: %v, want ErrNotFound", err)
	}
	if len(d.exceptions.exceptions) != 0 || len(d.audit) != 0 {
		t.Fatalf("refused approvals stored %d exceptions, audited %v", len(d.exceptions.exceptions), d.steps())
	}

	ch, err := d.app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: "p1", Analyst: "ana", Expiry: 7 * day, Note: "CI runners"})
	if err != nil {
		t.Fatal(err)
	}
	want := openrecall.Exception{
		ID: ch.Exception.ID, Identity: p.Identity, DNA: openrecall.Fingerprint{AttackPattern: "shell_spawn", Environment: "prod"},
		Match: map[string]string{"image": "runner"}, Decision: openrecall.DecisionKnownBenign, MaxSeverity: openrecall.SeverityHigh,
		ExpiresAt: now.Add(7 * day), CreatedAt: now, Analyst: "ana", Note: "CI runners", ProposalID: "p1",
	}
	if diff := cmp.Diff(want, ch.Exception); diff != "" {
		t.Errorf("exception (-want +got):\n%s", diff)
	}
	if !ch.Changed || ch.State != openrecall.ExceptionActive {
		t.Errorf("approval changed %v, state %q, want a new active exception", ch.Changed, ch.State)
	}
	wantSteps := []string{openrecall.StepExceptionApprove, usecase.StepAnalystDecision, usecase.StepAnalystDecision}
	if diff := cmp.Diff(wantSteps, d.steps()); diff != "" {
		t.Fatalf("audit steps (-want +got):\n%s", diff)
	}
	if r := d.audit[0].Reason; !strings.Contains(r, "approved from proposal p1 by ana") || !strings.Contains(r, "match image=runner") {
		t.Errorf("approval reason %q does not say who approved which proposal and its match", r)
	}
	for _, id := range []string{"b1-1", "b1-2"} {
		w := d.waiting.by[id]
		if !w.Decided || w.DecidedBy != "ana" || w.Decision != openrecall.DecisionKnownBenign || w.MemoryID != "" {
			t.Errorf("analysis %s not settled by ana's exception: %+v", id, w)
		}
	}
	for _, e := range d.audit[1:] {
		if !strings.Contains(e.Reason, "approved exception "+ch.Exception.ID+" of proposal p1") {
			t.Errorf("settlement reason %q does not name the exception", e.Reason)
		}
	}
	if i, j := d.log.index("expiries"), d.log.index("add exception"); i < 0 || i > j {
		t.Errorf("expiries not recorded before the exception was stored: %v", *d.log)
	}

	again, err := d.app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: "p1", Analyst: "bob", Expiry: day})
	if err != nil || again.Changed || again.Exception.ID != ch.Exception.ID {
		t.Errorf("approving again = %+v, %v, want the same exception unchanged", again, err)
	}
	if len(d.audit) != 3 {
		t.Errorf("approving again audited: %v", d.steps())
	}
}

func TestAddExceptionRefuses(t *testing.T) {
	good := usecase.AddRequest{
		Identity: openrecall.Identity{Rule: "disk_full", Service: "db"}, DNA: openrecall.Fingerprint{ErrorClass: "disk_full"},
		MaxSeverity: openrecall.SeverityMedium, Decision: openrecall.DecisionFalsePositive, Expiry: 2 * day, Analyst: "ana",
	}
	tests := []struct {
		name string
		edit func(r *usecase.AddRequest)
		want string
	}{
		{"no service", func(r *usecase.AddRequest) { r.Identity.Service = " " }, "a service is required"},
		{"no rule", func(r *usecase.AddRequest) { r.Identity.Rule = "" }, "a rule is required"},
		{"a real decision", func(r *usecase.AddRequest) { r.Decision = openrecall.DecisionReal }, "want false_positive, duplicate or known_benign"},
		{"no expiry", func(r *usecase.AddRequest) { r.Expiry = 0 }, "want a positive duration"},
		{"beyond the cap", func(r *usecase.AddRequest) { r.Expiry = 3 * day }, "beyond the configured cap 48h0m0s"},
		{"no ceiling", func(r *usecase.AddRequest) { r.MaxSeverity = openrecall.SeverityUnknown }, "severity ceiling"},
		{"no analyst", func(r *usecase.AddRequest) { r.Analyst = "" }, "the analyst who approves it is required"},
		{"an attack without a match field", func(r *usecase.AddRequest) { r.DNA.AttackPattern = "shell_spawn" }, "at least one match field is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			d.app.ExceptionRules.MaxExpiry = 2 * day
			req := good
			tt.edit(&req)
			_, err := d.app.AddException(context.Background(), req)
			if !errors.Is(err, openrecall.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddException: %v, want ErrInvalid saying %q", err, tt.want)
			}
			if len(d.exceptions.exceptions) != 0 || len(d.audit) != 0 {
				t.Errorf("a refused exception was stored or audited")
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		d := newDesk(t)
		d.app.ExceptionRules.MaxExpiry = 2 * day
		req := good
		req.DNA.SignalShape = "spike" // not critical: dropped
		ch, err := d.app.AddException(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Exception.DNA != (openrecall.Fingerprint{ErrorClass: "disk_full"}) || !ch.Exception.ExpiresAt.Equal(now.Add(2*day)) {
			t.Errorf("exception %+v, want the critical DNA only, expiring in 48h", ch.Exception)
		}
		if diff := cmp.Diff([]string{openrecall.StepExceptionAdd}, d.steps()); diff != "" {
			t.Errorf("audit steps (-want +got):\n%s", diff)
		}
	})
}

// The default cap is openrecall.DefaultMaxExceptionExpiry.
func TestExceptionDefaultCap(t *testing.T) {
	d := newDesk(t)
	req := usecase.AddRequest{
		Identity: openrecall.Identity{Rule: "r", Service: "s"}, MaxSeverity: openrecall.SeverityLow,
		Decision: openrecall.DecisionDuplicate, Expiry: openrecall.DefaultMaxExceptionExpiry, Analyst: "ana",
	}
	if _, err := d.app.AddException(context.Background(), req); err != nil {
		t.Fatalf("an exception at the default cap: %v", err)
	}
	req.Expiry += time.Second
	if _, err := d.app.AddException(context.Background(), req); !errors.Is(err, openrecall.ErrInvalid) {
		t.Fatalf("an exception beyond the default cap: %v, want ErrInvalid", err)
	}
}

func TestRevokeException(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	ch, err := d.app.AddException(ctx, usecase.AddRequest{
		Identity: openrecall.Identity{Rule: "r", Service: "s"}, MaxSeverity: openrecall.SeverityLow,
		Decision: openrecall.DecisionDuplicate, Expiry: day, Analyst: "ana",
	})
	if err != nil {
		t.Fatal(err)
	}
	id := ch.Exception.ID
	if _, err := d.app.RevokeException(ctx, id, "", "done"); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("revoking without an analyst: %v, want ErrInvalid", err)
	}
	if _, err := d.app.RevokeException(ctx, id, "bob", " "); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("revoking without a reason: %v, want ErrInvalid", err)
	}
	got, err := d.app.RevokeException(ctx, id, "bob", "maintenance over")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Changed || got.State != openrecall.ExceptionRevoked || got.Exception.RevokedBy != "bob" {
		t.Errorf("RevokeException = %+v, want revoked by bob", got)
	}
	again, err := d.app.RevokeException(ctx, id, "bob", "again")
	if err != nil || again.Changed {
		t.Errorf("revoking again = %+v, %v, want unchanged", again, err)
	}
	want := []string{openrecall.StepExceptionAdd, openrecall.StepExceptionRevoke}
	if diff := cmp.Diff(want, d.steps()); diff != "" {
		t.Fatalf("audit steps (-want +got):\n%s", diff)
	}
	if r := d.audit[1].Reason; !strings.HasSuffix(r, "revoked by bob: maintenance over") || d.audit[1].Outcome != openrecall.ExceptionRevoked {
		t.Errorf("revoke entry %+v does not say who revoked and why", d.audit[1])
	}
}

func TestListExceptionsByState(t *testing.T) {
	d := newDesk(t)
	d.exceptions.exceptions = []openrecall.Exception{
		{ID: "e1", ExpiresAt: now.Add(day)},
		{ID: "e2", ExpiresAt: now},
		{ID: "e3", ExpiresAt: now.Add(day), RevokedAt: now},
	}
	for state, want := range map[string][]string{
		"":                          {"e1", "e2", "e3"},
		openrecall.ExceptionActive:  {"e1"},
		openrecall.ExceptionExpired: {"e2"},
		openrecall.ExceptionRevoked: {"e3"},
	} {
		got, err := d.app.ListExceptions(context.Background(), state)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, e := range got {
			ids = append(ids, e.ID)
			if state != "" && e.State != state {
				t.Errorf("state %q lists %s as %q", state, e.ID, e.State)
			}
		}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Errorf("state %q (-want +got):\n%s", state, diff)
		}
	}
	if _, err := d.app.ListExceptions(context.Background(), "pending"); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("an unknown state: %v, want ErrInvalid", err)
	}
}

// An import keeps only exceptions that obey the rules of `exception add`
// now; one held already is left as it is; each stored one is audited with
// the importing analyst as actor and the first approver named.
func TestImportExceptions(t *testing.T) {
	d := newDesk(t)
	d.app.ExceptionRules.MaxExpiry = 10 * day
	d.exceptions.exceptions = []openrecall.Exception{{ID: "held", ExpiresAt: now.Add(day)}}
	ok := openrecall.Exception{
		ID: "e1", Identity: openrecall.Identity{Rule: "r", Service: "s"}, MaxSeverity: openrecall.SeverityLow,
		Decision: openrecall.DecisionDuplicate, ExpiresAt: now.Add(day), CreatedAt: now.Add(-day), Analyst: "ana", ProposalID: "elsewhere",
	}
	with := func(id string, edit func(e *openrecall.Exception)) openrecall.Exception {
		e := ok
		e.ID = id
		edit(&e)
		return e
	}
	list := []openrecall.Exception{
		ok,
		{ID: "held"},
		with("revoked", func(e *openrecall.Exception) { e.RevokedAt, e.RevokedBy = now.Add(-time.Hour), "bob" }),
		with("expired", func(e *openrecall.Exception) { e.ExpiresAt = now }),
		with("too-far", func(e *openrecall.Exception) { e.ExpiresAt = now.Add(11 * day) }),
		with("no-service", func(e *openrecall.Exception) { e.Identity.Service = "" }),
		with("real", func(e *openrecall.Exception) { e.Decision = openrecall.DecisionReal }),
	}
	if _, err := d.app.ImportExceptions(context.Background(), list, ""); !errors.Is(err, openrecall.ErrInvalid) {
		t.Fatalf("an import without an analyst: %v, want ErrInvalid", err)
	}
	got, err := d.app.ImportExceptions(context.Background(), list, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if got.Created != 1 || got.Existing != 1 {
		t.Errorf("created %d, existing %d, want 1 and 1", got.Created, got.Existing)
	}
	var refused []string
	for _, r := range got.Refused {
		refused = append(refused, r.ID)
		if !errors.Is(r.Err, openrecall.ErrInvalid) {
			t.Errorf("refusal of %s: %v, want ErrInvalid", r.ID, r.Err)
		}
	}
	if diff := cmp.Diff([]string{"revoked", "expired", "too-far", "no-service", "real"}, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
	stored, err := d.exceptions.Exception(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	if stored.Analyst != "ana" || stored.ProposalID != "" || !stored.CreatedAt.Equal(now.Add(-day)) {
		t.Errorf("imported exception %+v, want ana's, created a day ago, without another database's proposal", stored)
	}
	if diff := cmp.Diff([]string{openrecall.StepExceptionImport}, d.steps()); diff != "" {
		t.Fatalf("audit steps (-want +got):\n%s", diff)
	}
	if r := d.audit[0].Reason; !strings.Contains(r, "imported by carol (first approved by ana at ") {
		t.Errorf("import reason %q does not name the importing analyst and the first approver", r)
	}
}

// Every writing use case records the exception expiries due first, and a
// failure to record them stops it before anything is written.
func TestWritingUseCasesRecordExpiriesFirst(t *testing.T) {
	fp := openrecall.Fingerprint{ErrorClass: "x"}
	writes := map[string]func(d *desk) error{
		"retain": func(d *desk) error {
			_, err := d.app.Retain(context.Background(), usecase.RetainRequest{
				Decision: usecase.Decision{Decision: openrecall.DecisionReal}, Subject: usecase.Subject{Fingerprint: &fp}})
			return err
		},
		"forget": func(d *desk) error {
			_, err := d.app.Forget(context.Background(), "inc_1", "why", "ana")
			return err
		},
		"decide group": func(d *desk) error {
			d.stormGroup()
			_, err := d.app.DecideGroup(context.Background(), "g1", usecase.Decision{Decision: openrecall.DecisionReal})
			return err
		},
		"add exception": func(d *desk) error {
			_, err := d.app.AddException(context.Background(), usecase.AddRequest{
				Identity: openrecall.Identity{Rule: "r", Service: "s"}, MaxSeverity: openrecall.SeverityLow,
				Decision: openrecall.DecisionDuplicate, Expiry: day, Analyst: "ana"})
			return err
		},
		"revoke exception": func(d *desk) error {
			d.exceptions.exceptions = []openrecall.Exception{{ID: "e1", ExpiresAt: now.Add(day)}}
			_, err := d.app.RevokeException(context.Background(), "e1", "ana", "why")
			return err
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			d := newDesk(t)
			d.store.incidents = []openrecall.Incident{{ID: "inc_1"}}
			broken := errors.New("the trail is read-only")
			d.app.Expiries = func(context.Context) error {
				d.log.add("expiries")
				return broken
			}
			if err := write(d); !errors.Is(err, broken) {
				t.Fatalf("%s with expiries failing: %v, want that failure", name, err)
			}
			if diff := cmp.Diff(calls{"expiries"}, *d.log); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
