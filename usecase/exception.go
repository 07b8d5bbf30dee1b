package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// ExceptionStore is the storage of exceptions and their proposals (DESIGN
// §6b). memory.Store satisfies it.
type ExceptionStore interface {
	AddException(ctx context.Context, e openrecall.Exception) (openrecall.Exception, bool, error)
	Exception(ctx context.Context, id string) (openrecall.Exception, error)
	Exceptions(ctx context.Context) ([]openrecall.Exception, error)
	RevokeException(ctx context.Context, id, analyst, reason string, at time.Time) (openrecall.Exception, bool, error)
	Proposal(ctx context.Context, id string) (openrecall.Proposal, error)
	Proposals(ctx context.Context, pending bool) ([]openrecall.Proposal, error)
	ProposalsFor(ctx context.Context, id openrecall.Identity) ([]openrecall.Proposal, error)
}

// ExceptionRules are the limits the configuration sets on exceptions.
type ExceptionRules struct {
	// MaxExpiry caps how far ahead an exception may expire; 0 means
	// openrecall.DefaultMaxExceptionExpiry.
	MaxExpiry time.Duration
}

func (r ExceptionRules) maxExpiry() time.Duration {
	if r.MaxExpiry <= 0 {
		return openrecall.DefaultMaxExceptionExpiry
	}
	return r.MaxExpiry
}

// ListedException is an exception with its state at the time it was
// listed, as `exception list -o json` prints it and GET /api/v1/exceptions
// answers it.
type ListedException struct {
	openrecall.Exception
	State string `json:"state"`
}

// ExceptionChange is the outcome of approving, adding or revoking an
// exception.
type ExceptionChange struct {
	Exception openrecall.Exception `json:"exception"`
	// Changed is false when nothing new was stored (the same exception
	// again, or one revoked already).
	Changed bool   `json:"changed"`
	State   string `json:"state"`
}

// ApproveRequest asks a person's approval of a proposal.
type ApproveRequest struct {
	ProposalID string
	Analyst    string
	// Expiry overrides the proposal's (30 days by default); 0 keeps it.
	Expiry time.Duration
	Note   string
}

// AddRequest writes an exception directly (a silence, a maintenance
// window): rule and service are required (an empty service is not a
// wildcard), and so are the ceiling, the expiry and the analyst.
type AddRequest struct {
	Identity openrecall.Identity
	// DNA is the critical Alert DNA the exception covers; only its critical
	// fields are kept.
	DNA         openrecall.Fingerprint
	Match       map[string]string
	MaxSeverity openrecall.Severity
	Decision    openrecall.Decision
	Expiry      time.Duration
	Analyst     string
	Note        string
}

func (a *App) exceptionStore() (ExceptionStore, error) {
	if a.Exceptions == nil {
		return nil, errors.New("usecase: no exception storage")
	}
	return a.Exceptions, nil
}

// expiryAt checks an expiry against the rules and returns when it ends.
func (a *App) expiryAt(d time.Duration) (time.Time, error) {
	switch {
	case d <= 0:
		return time.Time{}, fmt.Errorf("exception expiry %s: want a positive duration: %w", d, openrecall.ErrInvalid)
	case d > a.ExceptionRules.maxExpiry():
		return time.Time{}, fmt.Errorf("exception expiry %s is beyond the configured cap %s (exceptions.max_expiry): %w", d, a.ExceptionRules.maxExpiry(), openrecall.ErrInvalid)
	}
	return a.clock()().Add(d), nil
}

func (a *App) clock() func() time.Time {
	if a.Now != nil {
		return a.Now
	}
	return func() time.Time { return time.Now().UTC() }
}

// ApproveProposal turns proposal id into an exception a person approved
// (DESIGN §6b): the proposal's identity, critical DNA, match fields,
// decision and ceiling, the analyst as approver, audited; what waited for
// a person because of the proposal is settled. A proposal
// approved before is refused (openrecall.ErrInvalid).
func (a *App) ApproveProposal(ctx context.Context, req ApproveRequest) (ExceptionChange, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return ExceptionChange{}, err
	}
	if strings.TrimSpace(req.Analyst) == "" {
		return ExceptionChange{}, fmt.Errorf("approve: the analyst who approves is required (--analyst): %w", openrecall.ErrInvalid)
	}
	p, err := st.Proposal(ctx, req.ProposalID)
	if err != nil {
		return ExceptionChange{}, err
	}
	expiry := p.Expiry
	if req.Expiry != 0 {
		expiry = req.Expiry
	}
	expires, err := a.expiryAt(expiry)
	if err != nil {
		return ExceptionChange{}, err
	}
	e := openrecall.Exception{
		Identity: p.Identity, DNA: openrecall.CriticalDNA(p.DNA), Match: maps.Clone(p.Match), Decision: p.Decision,
		MaxSeverity: p.MaxSeverity, ExpiresAt: expires, CreatedAt: a.clock()(), Analyst: req.Analyst, Note: req.Note,
		ProposalID: p.ID,
	}
	out, err := a.storeException(ctx, st, e, openrecall.StepExceptionApprove, "approved proposal "+p.ID)
	if err != nil {
		return out, err
	}
	return out, a.settleProposal(ctx, p, out.Exception)
}

// AddException writes an exception directly, for silences and maintenance
// windows (DESIGN §6b): benign decisions only, an expiry within the cap, and
// at least one match field for a security detection; audited.
func (a *App) AddException(ctx context.Context, req AddRequest) (ExceptionChange, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return ExceptionChange{}, err
	}
	if strings.TrimSpace(req.Identity.Service) == "" {
		return ExceptionChange{}, fmt.Errorf("exception: a service is required (empty is not a wildcard): %w", openrecall.ErrInvalid)
	}
	expires, err := a.expiryAt(req.Expiry)
	if err != nil {
		return ExceptionChange{}, err
	}
	e := openrecall.Exception{
		Identity: req.Identity, DNA: openrecall.CriticalDNA(req.DNA), Match: maps.Clone(req.Match), Decision: req.Decision,
		MaxSeverity: req.MaxSeverity, ExpiresAt: expires, CreatedAt: a.clock()(), Analyst: req.Analyst, Note: req.Note,
	}
	if len(e.Match) == 0 {
		e.Match = nil
	}
	return a.storeException(ctx, st, e, openrecall.StepExceptionAdd, "written directly")
}

// storeException records the expiries due, stores e and audits its
// creation with its actor.
func (a *App) storeException(ctx context.Context, st ExceptionStore, e openrecall.Exception, step, how string) (ExceptionChange, error) {
	if err := e.Validate(); err != nil {
		return ExceptionChange{}, err
	}
	if err := a.recordExpiries(ctx); err != nil {
		return ExceptionChange{}, err
	}
	stored, created, err := st.AddException(ctx, e)
	if err != nil {
		return ExceptionChange{}, err
	}
	out := ExceptionChange{Exception: stored, Changed: created, State: stored.State(a.clock()())}
	if !created {
		return out, nil
	}
	why := fmt.Sprintf("%s %s by %s: match %s, ceiling %s, DNA %s", stored.Describe(), how, stored.Analyst,
		orNone(openrecall.MatchString(stored.Match)), stored.MaxSeverity, stored.DNA)
	if stored.Note != "" {
		why += "; note: " + stored.Note
	}
	if err := a.auditException(ctx, stored, step, why, "approved"); err != nil {
		return out, err
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// RevokeException revokes exception id, by analyst, for reason; audited.
// Revoking a revoked exception changes nothing.
func (a *App) RevokeException(ctx context.Context, id, analyst, reason string) (ExceptionChange, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return ExceptionChange{}, err
	}
	if strings.TrimSpace(analyst) == "" {
		return ExceptionChange{}, fmt.Errorf("revoke: the analyst who revokes is required (--analyst): %w", openrecall.ErrInvalid)
	}
	if err := a.recordExpiries(ctx); err != nil {
		return ExceptionChange{}, err
	}
	e, changed, err := st.RevokeException(ctx, id, analyst, reason, a.clock()())
	if err != nil {
		return ExceptionChange{}, err
	}
	out := ExceptionChange{Exception: e, Changed: changed, State: e.State(a.clock()())}
	if changed {
		why := fmt.Sprintf("%s revoked by %s", e.Describe(), analyst)
		if reason != "" {
			why += ": " + reason
		}
		if err := a.auditException(ctx, e, openrecall.StepExceptionRevoke, why, openrecall.ExceptionRevoked); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ExceptionStates returns the states ListExceptions keeps exceptions by,
// as openrecall.Exception.State names them.
func ExceptionStates() []string {
	return []string{openrecall.ExceptionActive, openrecall.ExceptionExpired, openrecall.ExceptionRevoked}
}

// ListExceptions returns every exception with its state now, oldest first;
// state, when not empty, keeps only those in that state.
func (a *App) ListExceptions(ctx context.Context, state string) ([]ListedException, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return nil, err
	}
	if state != "" && !slices.Contains(ExceptionStates(), state) {
		return nil, fmt.Errorf("exception state %q: want active, expired or revoked: %w", state, openrecall.ErrInvalid)
	}
	all, err := st.Exceptions(ctx)
	if err != nil {
		return nil, err
	}
	now := a.clock()()
	out := []ListedException{}
	for _, e := range all {
		s := e.State(now)
		if state == "" || s == state {
			out = append(out, ListedException{Exception: e, State: s})
		}
	}
	return out, nil
}

// ListProposals returns the stored proposals, oldest first; with pending
// only those no person approved yet.
func (a *App) ListProposals(ctx context.Context, pending bool) ([]openrecall.Proposal, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return nil, err
	}
	return st.Proposals(ctx, pending)
}

// ImportExceptions stores exceptions read from an export, each approved
// again by analyst (an import is a person's action, never memory's) and
// audited; an exception already held is left as it is. It returns how many
// were created.
func (a *App) ImportExceptions(ctx context.Context, list []openrecall.Exception, analyst string) (int, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return 0, err
	}
	if strings.TrimSpace(analyst) == "" {
		return 0, fmt.Errorf("importing exceptions requires --analyst: %w", openrecall.ErrInvalid)
	}
	created := 0
	for _, e := range list {
		e.ProposalID = "" // a proposal of another database
		ch, err := a.storeException(ctx, st, e, openrecall.StepExceptionImport, "imported by "+analyst)
		if err != nil {
			return created, fmt.Errorf("import exception %s: %w", e.ID, err)
		}
		if ch.Changed {
			created++
		}
	}
	return created, nil
}

// recordExpiries records the expiries due in the audit trail (actor
// system), when the App can.
func (a *App) recordExpiries(ctx context.Context) error {
	if a.RecordExpiries == nil {
		return nil
	}
	if err := a.RecordExpiries(ctx); err != nil {
		return fmt.Errorf("record exception expiries: %w", err)
	}
	return nil
}

// auditException records a change of exception e in the audit trail.
func (a *App) auditException(ctx context.Context, e openrecall.Exception, step, why, outcome string) error {
	if a.Audit == nil {
		return errors.New("usecase: no audit trail to record an exception")
	}
	err := a.Audit(ctx, []openrecall.AuditEntry{{
		AnalysisID: step + "-" + e.ID, Batch: "exceptions", Step: step, Reason: why, Outcome: outcome,
		ProposedDecision: e.Decision,
	}})
	if err != nil {
		return fmt.Errorf("exception %s was stored but the audit trail did not record it: %w", e.ID, err)
	}
	return nil
}
