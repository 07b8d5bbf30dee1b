package usecase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// WaitingStore keeps what waits for a person, per analysis. memory.Store
// satisfies it.
type WaitingStore interface {
	Awaiting(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error)
	// AwaitingIndex is Awaiting without checking the rows' seals: the
	// queue orders and pages it, then reads each row it shows through
	// WaitingFor, which checks it.
	AwaitingIndex(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error)
	WaitingFor(ctx context.Context, analysisID string) (openrecall.Waiting, error)
	Decide(ctx context.Context, w openrecall.Waiting) (bool, error)
	// AwaitingProposal returns the analyses not decided yet whose result
	// carried the exception proposal id.
	AwaitingProposal(ctx context.Context, id string) ([]openrecall.Waiting, error)
}

// WaitingFor is the product's rule of what waits for a person (DESIGN
// §12a): a triaged alert that was not bypassed nor closed by an exception, and either was escalated
// (Reason WaitEscalated) or needs a person's approval
// (TriageResult.RequiresHumanApproval: no memory to vouch for it, a real
// incident, an attack, an alert more severe than its support; Reason
// WaitApproval). Proposed is the model's decision when it answered with
// one a person can retain, else memory's. The workflow's sink records it
// with the analysis's audit entries; Since is left for the store's clock.
func WaitingFor(r openrecall.Result) (openrecall.Waiting, bool) {
	// An exception a person approved is that person's approval given in
	// advance: what it closed does not wait (triage asks approval of every
	// attack, and the exception answers it).
	if r.Outcome != openrecall.ResultTriaged || r.Bypassed || r.Excepted() {
		return openrecall.Waiting{}, false
	}
	w := openrecall.Waiting{
		AnalysisID: r.AnalysisID, Batch: r.Batch, Severity: r.Alert.Severity, Identity: r.Identity,
		AlertID: r.Alert.ID,
	}
	switch {
	case r.Analysis != nil && r.Analysis.Decision.Retainable():
		w.Proposed = r.Analysis.Decision
	case r.Triage.Decision.Retainable():
		w.Proposed = r.Triage.Decision
	}
	switch {
	case r.Decision == openrecall.DecisionEscalated:
		w.Reason, w.Why = openrecall.WaitEscalated, escalatedWhy(r)
	case r.Triage.RequiresHumanApproval:
		w.Reason = openrecall.WaitApproval
		w.Why = "needs a person's approval: " + approvalWhy(r)
	default:
		return openrecall.Waiting{}, false
	}
	w.Title = titleOf(r)
	res := r
	res.Audit = nil
	w.Result = &res
	return w, true
}

// titleOf is the title a person reads for r's alert: its own, else the
// first line of its text, cut at 160 bytes.
func titleOf(r openrecall.Result) string {
	if r.Alert.Title != "" {
		return r.Alert.Title
	}
	t, _, _ := strings.Cut(r.Alert.Text, "\n")
	if len(t) > 160 {
		t = strings.ToValidUTF8(t[:160], "") + "…"
	}
	return t
}

// approvalWhy says why a decision needs a person's approval.
func approvalWhy(r openrecall.Result) string {
	who := "memory proposes " + string(r.Triage.Decision)
	if r.Analysis != nil && r.Analysis.Decision != "" {
		who = "the model decided " + string(r.Analysis.Decision)
	}
	switch {
	case r.Triage.EscalationReason != "":
		return who + "; " + r.Triage.EscalationReason
	case r.Guard.Reason != "":
		return who + "; " + r.Guard.Reason
	}
	return who
}

func escalatedWhy(r openrecall.Result) string {
	switch {
	case r.EscalatedWithoutAnalysis:
		return "escalated unanalysed: no model answered"
	case r.Triage.EscalationReason != "":
		return "escalated: " + r.Triage.EscalationReason
	case r.Guard.Reason != "":
		return "escalated: " + r.Guard.Reason
	}
	return "escalated to a person"
}

// Queue returns what waits for a person, as f selects (QueuePage, from
// its first page): what `openrecall queue` prints and the cockpit's queue
// shows. It holds the analyses that wait and the open alert groups that
// wait (GroupWaits), each group as one item with its size (Reason
// WaitGroup), its firings that wait folded into it; f.Limit caps the
// whole list.
func (a *App) Queue(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	p, err := a.QueuePage(ctx, f)
	return p.Items, err
}

var errNoWaiting = errors.New("usecase: no record of what waits for a person")

// groupWaiting is open group g as one item of the queue: its head's alert
// at a glance (the head's own row when it waited), its size and key.
func (a *App) groupWaiting(ctx context.Context, g openrecall.Group) (openrecall.Waiting, error) {
	w := openrecall.Waiting{
		AnalysisID: g.Head.AnalysisID, Batch: g.Batch, Since: g.FirstAt, Reason: openrecall.WaitGroup,
		Why:      fmt.Sprintf("an alert group of %d firings waits for one decision (its head: %s)", g.Size, headSays(g.Head)),
		Severity: g.HeadSeverity, Identity: g.Key.Identity, AlertID: g.Head.AlertID, Group: &g,
	}
	head, err := a.Waiting.WaitingFor(ctx, g.Head.AnalysisID)
	switch {
	case err == nil:
		// A group is as urgent as its head's alert; it resolves firing by
		// firing, so it is never marked resolved as a whole.
		w.Title, w.Proposed, w.Attack, w.Labels = head.Title, head.Proposed, head.Attack, head.Labels
	case !errors.Is(err, openrecall.ErrNotFound):
		return w, err
	}
	if w.Title == "" {
		w.Title = g.Key.Identity.String()
	}
	return w, nil
}

// headSays is what a group's head concluded, as its members took it.
func headSays(h openrecall.GroupHead) string {
	switch {
	case h.Unanalysed:
		return "escalated without analysis"
	case h.ModelBenign:
		return "a model answered " + string(h.Decision) + " about that one firing"
	}
	return string(h.Decision)
}

// GroupReview is an open or decided alert group as a person reviews it:
// the group and its head's review when the head waited (its firings come
// a page at a time: GroupFirings).
type GroupReview struct {
	Group openrecall.Group
	// Head is the review of the head's analysis; nil when the head did
	// not wait for a person itself (its members did).
	Head *Review
	// Proposed is the decision proposed for the head, when any.
	Proposed openrecall.Decision
}

// ReviewGroup returns group id as a person reviews it before deciding it
// once (DecideGroup); an unknown group wraps openrecall.ErrNotFound.
func (a *App) ReviewGroup(ctx context.Context, id string, limit int) (GroupReview, error) {
	if a.Groups == nil {
		return GroupReview{}, errors.New("usecase: no group storage")
	}
	g, err := a.Groups.Group(ctx, id)
	if err != nil {
		return GroupReview{}, err
	}
	gr := GroupReview{Group: g}
	if a.Waiting == nil {
		return gr, nil
	}
	rv, err := a.ReviewOf(ctx, g.Head.AnalysisID, limit)
	switch {
	case err == nil:
		gr.Head, gr.Proposed = &rv, rv.Waiting.Proposed
	case !errors.Is(err, openrecall.ErrNotFound):
		return GroupReview{}, err
	}
	return gr, nil
}

// Review is one analysis that waited for a person, with what a reviewer
// reads: its result (the alert, the model's analysis, the guard's clauses),
// the memories recalled for it now, and its audit entries.
type Review struct {
	Waiting  openrecall.Waiting
	Recalled Recalled
}

// ReviewOf returns the analysis analysisID as a person reviews it; an
// analysis that never waited wraps openrecall.ErrNotFound.
func (a *App) ReviewOf(ctx context.Context, analysisID string, limit int) (Review, error) {
	if a.Waiting == nil {
		return Review{}, errors.New("usecase: no record of what waits for a person")
	}
	w, err := a.Waiting.WaitingFor(ctx, analysisID)
	if err != nil {
		return Review{}, err
	}
	rv := Review{Waiting: w, Recalled: Recalled{Identity: w.Result.Identity, Fingerprint: w.Result.Fingerprint}}
	if rv.Recalled.Matches, err = a.Store.Recall(ctx, rv.Recalled.Identity, rv.Recalled.Fingerprint, limit); err != nil {
		return Review{}, err
	}
	return rv, nil
}

// DecideRequest is a person's decision about an analysis that waits.
type DecideRequest struct {
	AnalysisID string
	// AsProposed approves the decision proposed; otherwise
	// Decision.Decision is the person's, with a required note.
	AsProposed bool
	Decision   Decision
}

// Decided is the outcome of a decision about an analysis.
type Decided struct {
	Waiting openrecall.Waiting
	// Changed is false when the analysis had been decided already: nothing
	// was retained or audited again.
	Changed  bool
	Retained *Retained
}

// Decide settles an analysis that waits for a person: it retains the
// decision (the proposed one, or the person's with a required note and its
// dead ends) about the analysed alert through Retain, which marks the
// analysis decided and audits it with the analyst. A named analyst is
// required. Deciding an analysis decided already changes nothing.
func (a *App) Decide(ctx context.Context, req DecideRequest) (Decided, error) {
	d := req.Decision
	d.Analyst = strings.TrimSpace(d.Analyst)
	d.Note = strings.TrimSpace(d.Note)
	d.DeadEnds = cleanDeadEnds(d.DeadEnds)
	if d.Analyst == "" {
		return Decided{}, fmt.Errorf("a decision needs a named analyst: %w", openrecall.ErrInvalid)
	}
	if a.Waiting == nil {
		return Decided{}, errors.New("usecase: no record of what waits for a person")
	}
	w, err := a.Waiting.WaitingFor(ctx, req.AnalysisID)
	if err != nil {
		return Decided{}, err
	}
	if w.Decided {
		return Decided{Waiting: w}, nil
	}
	switch {
	case req.AsProposed && !w.Proposed.Retainable():
		return Decided{}, noProposal(req.AnalysisID)
	case req.AsProposed:
		d.Decision = w.Proposed
		if d.Note == "" {
			d.Note = "approved as proposed (" + w.Why + ")"
		}
	case d.Note == "":
		return Decided{}, fmt.Errorf("deciding otherwise than proposed needs a note: %w", openrecall.ErrInvalid)
	}
	out, err := a.Retain(ctx, RetainRequest{Decision: d, Subject: Subject{AnalysisID: req.AnalysisID}, IdentityHint: "the alert has no alertname, class or title"})
	if err != nil {
		return Decided{}, err
	}
	w, err = a.Waiting.WaitingFor(ctx, req.AnalysisID)
	if err != nil {
		return Decided{}, err
	}
	return Decided{Waiting: w, Changed: w.DecidedBy == d.Analyst && w.MemoryID == out[0].Incident.ID, Retained: &out[0]}, nil
}

// noProposal is the error of approving analysisID, which has no proposed
// decision.
func noProposal(analysisID string) error {
	return fmt.Errorf("analysis %s has no proposed decision to approve: decide with a note: %w", analysisID, openrecall.ErrInvalid)
}

// cleanDeadEnds trims the dead ends and drops empty ones.
func cleanDeadEnds(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// StepAnalystDecision is the audit step of a person's decision about an
// analysis that waited.
const StepAnalystDecision = "analyst-decision"

// settle marks analysisID decided by d's analyst, as memory memoryID
// (which may be an earlier memory of the same decision; empty when an
// approved exception settled it), and audits the decision with its analyst,
// note, dead ends and how it was taken (as: "memory inc_…", "exception
// exc_…"). An analysis that did not wait, or was decided already, is left
// as it is.
func (a *App) settle(ctx context.Context, analysisID string, d Decision, memoryID, as string) error {
	if a.Waiting == nil {
		return nil
	}
	now := time.Now().UTC()
	if a.Now != nil {
		now = a.Now().UTC()
	}
	w, err := a.Waiting.WaitingFor(ctx, analysisID)
	if errors.Is(err, openrecall.ErrNotFound) || err == nil && w.Decided {
		return nil
	}
	if err != nil {
		return err
	}
	w.Decided, w.DecidedAt, w.DecidedBy, w.Decision, w.MemoryID = true, now, d.Analyst, d.Decision, memoryID
	changed, err := a.Waiting.Decide(ctx, w)
	if err != nil || !changed {
		return err
	}
	if a.Audit == nil {
		return errors.New("usecase: no audit trail to record a decision")
	}
	who := d.Analyst
	if who == "" {
		who = "an unnamed analyst"
	}
	why := fmt.Sprintf("%s decided %s%s (%s)", who, d.Decision, fromOrigin(d.Origin), as)
	if w.Proposed != "" {
		why += fmt.Sprintf(", proposed %s", w.Proposed)
	}
	if d.Note != "" {
		why += ": " + d.Note
	}
	if len(d.DeadEnds) > 0 {
		why += "; dead ends: " + strings.Join(d.DeadEnds, " | ")
	}
	err = a.Audit(ctx, []openrecall.AuditEntry{{
		AnalysisID: analysisID, Batch: w.Batch, AlertID: w.AlertID, Step: StepAnalystDecision,
		Reason: why, Outcome: string(d.Decision), ProposedDecision: w.Proposed, Time: now,
	}})
	if err != nil {
		return fmt.Errorf("analysis %s was decided but the audit trail did not record it: %w", analysisID, err)
	}
	return nil
}

// fromOrigin is " from origin" for an audit reason, or "" when the
// decision has no origin of its own.
func fromOrigin(origin string) string {
	if origin == "" {
		return ""
	}
	return " from " + origin
}

// settleProposal settles what waited for a person because memory proposed
// exception p (DESIGN §6b, §12a): every analysis not decided yet whose
// result carried p is decided p's decision by the person who approved it,
// as exception e, and audited with them.
func (a *App) settleProposal(ctx context.Context, p openrecall.Proposal, e openrecall.Exception, origin string) error {
	if a.Waiting == nil {
		return nil
	}
	ws, err := a.Waiting.AwaitingProposal(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("exception %s was approved but what waited for it: %w", e.ID, err)
	}
	d := Decision{Decision: p.Decision, Analyst: e.Analyst, Note: e.Note, Origin: origin}
	for _, w := range ws {
		if err := a.settle(ctx, w.AnalysisID, d, "", "approved exception "+e.ID+" of proposal "+p.ID); err != nil {
			return fmt.Errorf("exception %s was approved but analysis %s was not settled: %w", e.ID, w.AnalysisID, err)
		}
	}
	return nil
}
