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
	// Origin names where the approval was given when not the cockpit, the
	// CLI or the API ("slack"); the audit entries say it.
	Origin string
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
	out, err := a.storeException(ctx, st, e, openrecall.StepExceptionApprove, req.Analyst+fromOrigin(req.Origin), "approved from proposal "+p.ID)
	if err != nil {
		return out, err
	}
	return out, a.settleProposal(ctx, p, out.Exception, req.Origin)
}

// AddException writes an exception directly, for silences and maintenance
// windows (DESIGN §6b): benign decisions only, an expiry within the cap, and
// at least one match field for a security detection; audited.
func (a *App) AddException(ctx context.Context, req AddRequest) (ExceptionChange, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return ExceptionChange{}, err
	}
	if err := requireService(req.Identity); err != nil {
		return ExceptionChange{}, err
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
	return a.storeException(ctx, st, e, openrecall.StepExceptionAdd, req.Analyst, "written directly")
}

// requireService refuses an identity without a service: an exception's
// service is matched exactly, and an empty one is not a wildcard.
func requireService(id openrecall.Identity) error {
	if strings.TrimSpace(id.Service) == "" {
		return fmt.Errorf("exception: a service is required (empty is not a wildcard): %w", openrecall.ErrInvalid)
	}
	return nil
}

// storeException records the expiries due, stores e and audits its
// creation by actor (the person who approved, wrote or imported it).
func (a *App) storeException(ctx context.Context, st ExceptionStore, e openrecall.Exception, step, actor, how string) (ExceptionChange, error) {
	if err := e.Validate(); err != nil {
		return ExceptionChange{}, err
	}
	if err := a.RecordExpiries(ctx); err != nil {
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
	why := fmt.Sprintf("%s %s by %s: match %s, ceiling %s, DNA %s", stored.Describe(), how, actor,
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
// The analyst and the reason are required (openrecall.ErrInvalid without
// them): the trail must say who ended an exception and why. Revoking a
// revoked exception changes nothing.
func (a *App) RevokeException(ctx context.Context, id, analyst, reason string) (ExceptionChange, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return ExceptionChange{}, err
	}
	if strings.TrimSpace(analyst) == "" {
		return ExceptionChange{}, fmt.Errorf("revoke: the analyst who revokes is required (--analyst): %w", openrecall.ErrInvalid)
	}
	if strings.TrimSpace(reason) == "" {
		return ExceptionChange{}, fmt.Errorf("revoke: the reason is required (--reason): %w", openrecall.ErrInvalid)
	}
	if err := a.RecordExpiries(ctx); err != nil {
		return ExceptionChange{}, err
	}
	e, changed, err := st.RevokeException(ctx, id, analyst, reason, a.clock()())
	if err != nil {
		return ExceptionChange{}, err
	}
	out := ExceptionChange{Exception: e, Changed: changed, State: e.State(a.clock()())}
	if changed {
		why := fmt.Sprintf("%s revoked by %s: %s", e.Describe(), analyst, reason)
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

// ProposalOf returns the stored proposal id, approved or not (ApprovedAs
// says); an unknown id wraps openrecall.ErrNotFound.
func (a *App) ProposalOf(ctx context.Context, id string) (openrecall.Proposal, error) {
	st, err := a.exceptionStore()
	if err != nil {
		return openrecall.Proposal{}, err
	}
	return st.Proposal(ctx, id)
}

// ImportedExceptions is what ImportExceptions did with the exceptions of an
// export.
type ImportedExceptions struct {
	// Created counts the exceptions stored, Existing those held already
	// (left as they are).
	Created, Existing int
	// Refused lists the exceptions not imported because they break a rule
	// of `exception add`, in the order given.
	Refused []RefusedException
}

// RefusedException is an exception ImportExceptions refused: Index is its
// place in the list given, Err why (wrapping openrecall.ErrInvalid).
type RefusedException struct {
	Index int
	ID    string
	Err   error
}

// ImportExceptions stores exceptions read from an export (DESIGN §6b). An
// import is a person's action, never memory's: analyst is required and is
// the actor of each exception-import audit entry, which also names the
// person who approved the exception first; the stored exception keeps its
// id, that original approver (Analyst) and its creation time, so the
// results it closes still name who approved it. Each exception must obey
// the rules of `exception add` against this database's configuration — a
// rule and a service, a benign decision, a known ceiling, a match field for
// an attack pattern, an expiry in the future and within
// exceptions.max_expiry from now (an expired or revoked exception is not
// imported) — or it is refused, named in Refused, and nothing of it is
// stored. An exception held already is left as it is. A storage or audit
// failure stops the import with an error.
func (a *App) ImportExceptions(ctx context.Context, list []openrecall.Exception, analyst string) (ImportedExceptions, error) {
	var out ImportedExceptions
	st, err := a.exceptionStore()
	if err != nil {
		return out, err
	}
	if strings.TrimSpace(analyst) == "" {
		return out, fmt.Errorf("importing exceptions requires --analyst: %w", openrecall.ErrInvalid)
	}
	for i, e := range list {
		if e.ID != "" {
			if _, err := st.Exception(ctx, e.ID); err == nil {
				out.Existing++
				continue
			} else if !errors.Is(err, openrecall.ErrNotFound) {
				return out, fmt.Errorf("import exception %s: %w", e.ID, err)
			}
		}
		e.ProposalID = "" // a proposal of another database
		if err := a.admitImported(e); err != nil {
			out.Refused = append(out.Refused, RefusedException{Index: i, ID: e.ID, Err: err})
			continue
		}
		// The importing analyst is the entry's actor; the first approver
		// stays the exception's.
		actor := fmt.Sprintf("%s (first approved by %s at %s)", analyst, e.Analyst, e.CreatedAt.UTC().Format(time.RFC3339))
		ch, err := a.storeException(ctx, st, e, openrecall.StepExceptionImport, actor, "imported")
		if err != nil {
			return out, fmt.Errorf("import exception %s: %w", e.ID, err)
		}
		if ch.Changed {
			out.Created++
		} else {
			out.Existing++
		}
	}
	return out, nil
}

// admitImported checks an imported exception against the rules of
// `exception add` now: a service, not revoked, an expiry in the future
// within the cap, and Validate's rules.
func (a *App) admitImported(e openrecall.Exception) error {
	if err := requireService(e.Identity); err != nil {
		return err
	}
	if !e.RevokedAt.IsZero() {
		return fmt.Errorf("exception was revoked at %s by %s: only an active exception is imported: %w",
			e.RevokedAt.UTC().Format(time.RFC3339), e.RevokedBy, openrecall.ErrInvalid)
	}
	now := a.clock()()
	switch {
	case e.ExpiresAt.IsZero():
		return fmt.Errorf("exception: an expiry is required: %w", openrecall.ErrInvalid)
	case !e.ExpiresAt.After(now):
		return fmt.Errorf("exception expired at %s: only an active exception is imported: %w",
			e.ExpiresAt.UTC().Format(time.RFC3339), openrecall.ErrInvalid)
	case e.ExpiresAt.Sub(now) > a.ExceptionRules.maxExpiry():
		return fmt.Errorf("exception expires at %s, %s from now, beyond the configured cap %s (exceptions.max_expiry): %w",
			e.ExpiresAt.UTC().Format(time.RFC3339), e.ExpiresAt.Sub(now).Round(time.Second), a.ExceptionRules.maxExpiry(), openrecall.ErrInvalid)
	}
	return e.Validate()
}

// RecordExpiries records in the audit trail, with actor system, the
// exception expiries due (DESIGN §6b): an exception whose expiry passed is
// recorded by the next writing command. Every writing use case calls it
// first — approving, adding, importing and revoking exceptions, retaining,
// deciding a group or an analysis, forgetting — and so do `analyze` at the
// start of its run and `serve` at its start and at each inbox batch. Each
// expiry is recorded once; without App.Expiries it records nothing.
func (a *App) RecordExpiries(ctx context.Context) error {
	if a.Expiries == nil {
		return nil
	}
	if err := a.Expiries(ctx); err != nil {
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
