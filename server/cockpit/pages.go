package cockpit

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/server/httperr"
	"github.com/openrecall/openrecall/usecase"
)

// page is what the layout renders around every page's Body.
type page struct {
	Title   string
	Analyst string
	CanAct  bool
	Badge   Badge
	// Outbox counts the notifications not delivered, when there are any.
	Outbox *outboxBadge
	Flash  string
	Body   any
}

// flashes are the messages a redirect after an action names by code, so no
// text of the request is ever echoed.
var flashes = map[string]string{
	"decided":   "Decided: the memory is retained and the analysis left the queue.",
	"already":   "That analysis was decided already; nothing changed.",
	"approved":  "Approved as proposed.",
	"forgotten": "The memory was taken back.",
	"none":      "Nothing was selected.",
	"exception": "Approved: the proposal is an exception now.",
	"revoked":   "The exception was revoked.",
	"group":     "Decided: the group is one memory now, and its firings left the queue.",
	"groupdone": "That group was decided already; nothing changed.",
	"unchanged": "That exception was revoked already; nothing changed.",
	"retried":   "The dead letter is pending again: the dispatcher tries it at once.",
}

// render executes page name with data into a buffer first, so a template
// error answers 500 instead of half a page.
func (c *Cockpit) render(w http.ResponseWriter, r *http.Request, code int, name string, s session, title string, body any) {
	p := page{Title: title, Analyst: s.analyst, CanAct: s.can(ScopeRetain), Body: body, Flash: flashes[r.URL.Query().Get("done")]}
	if s.analyst != "" {
		p.Badge = c.cfg.Badge(r.Context())
		p.Outbox = c.headerCounts(r)
	}
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, "layout.html", p); err != nil {
		c.cfg.ErrorLog(r, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

type failData struct {
	Code    int
	Message string
}

// fail answers an error page with code.
func (c *Cockpit) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s, _ := c.sessionOf(r)
	c.render(w, r, code, "error", s, http.StatusText(code), failData{Code: code, Message: msg})
}

// failErr answers err with httperr.Status's code (the API's too): its
// text for a client's error, "internal error" for a server's (logged, not
// shown).
func (c *Cockpit) failErr(w http.ResponseWriter, r *http.Request, err error) {
	code := httperr.Status(err)
	if httperr.Shown(code) {
		c.fail(w, r, code, err.Error())
		return
	}
	c.cfg.ErrorLog(r, err)
	c.fail(w, r, code, "internal error; see the server log")
}

type queueData struct {
	Items []openrecall.Waiting
	// Proposals counts the proposed exceptions that wait for a person's
	// approval (the exceptions page lists them).
	Proposals int
	// More is true when more than QueuePageLimit wait: Items are the
	// oldest of them.
	More     bool
	Limit    int
	Severity string
	Rule     string
	Service  string
	// Severities, Rules and Services are the filter choices.
	Severities []string
}

// QueuePageLimit caps the rows of the queue page: the oldest are shown,
// and the page says there are more.
const QueuePageLimit = 1000

// queuePage lists what waits for a person, oldest first.
func (c *Cockpit) queuePage(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	d := queueData{Severity: q.Get("severity"), Rule: q.Get("rule"), Service: q.Get("service"), Limit: QueuePageLimit}
	for _, sv := range []openrecall.Severity{openrecall.SeverityCritical, openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityLow, openrecall.SeverityInfo} {
		d.Severities = append(d.Severities, string(sv))
	}
	var err error
	d.Items, err = c.cfg.UseCases.Queue(r.Context(), openrecall.WaitingFilter{Severity: openrecall.Severity(d.Severity), Rule: d.Rule, Service: d.Service, Limit: QueuePageLimit + 1})
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	if len(d.Items) > QueuePageLimit {
		d.Items, d.More = d.Items[:QueuePageLimit], true
	}
	pending, err := c.cfg.UseCases.ListProposals(r.Context(), true)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	d.Proposals = len(pending)
	c.render(w, r, http.StatusOK, "queue", s, "Queue", d)
}

// bulkApprove approves the proposed decision of every selected analysis.
func (c *Cockpit) bulkApprove(w http.ResponseWriter, r *http.Request, s session) {
	ids := r.PostForm["id"]
	if len(ids) == 0 {
		http.Redirect(w, r, Prefix+"queue?done=none", http.StatusSeeOther)
		return
	}
	for _, id := range ids {
		if _, err := c.cfg.UseCases.Decide(r.Context(), usecase.DecideRequest{AnalysisID: id, AsProposed: true,
			Decision: usecase.Decision{Analyst: s.analyst, Note: r.PostFormValue("note")}}); err != nil {
			c.failErr(w, r, err)
			return
		}
	}
	http.Redirect(w, r, Prefix+"queue?done=approved", http.StatusSeeOther)
}

type reviewData struct {
	Review    usecase.Review
	Result    openrecall.Result
	Decisions []openrecall.Decision
	Clauses   []clause
	Labels    []kv
	Sources   sources
	DeadEnds  []int
	CanAccept bool
}

type clause struct {
	Name string
	OK   bool
}

type kv struct{ Key, Value string }

// reviewPage shows one analysis as a reviewer reads it, with its forms.
func (c *Cockpit) reviewPage(w http.ResponseWriter, r *http.Request, s session) {
	rv, err := c.cfg.UseCases.ReviewOf(r.Context(), r.PathValue("id"), c.cfg.RecallLimit)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	res := *rv.Waiting.Result
	g := res.Guard
	d := reviewData{
		Review: rv, Result: res, Decisions: openrecall.MemoryDecisions, DeadEnds: []int{1, 2, 3, 4},
		CanAccept: rv.Waiting.Proposed.Retainable(),
		Clauses: []clause{
			{"(a) a strong match exists", g.StrongMatch}, {"(b) memory is consistent", g.Consistent},
			{"(c) confidence reaches the bypass threshold", g.Confident}, {"(d) benign, no attack pattern", g.BenignNoAttack},
			{"(e) severity covered by the supporting memories", g.SeverityCovered},
		},
		Labels:  sortedPairs(res.Alert.Labels),
		Sources: c.sourcesOf(r, rv.Waiting, res.Alert),
	}
	c.render(w, r, http.StatusOK, "review", s, "Review "+rv.Waiting.AnalysisID, d)
}

func sortedPairs(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// decide settles one analysis: approve as proposed, or decide otherwise
// with a note and dead ends.
func (c *Cockpit) decide(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	req := usecase.DecideRequest{AnalysisID: id, AsProposed: r.PostFormValue("action") == "approve",
		Decision: usecase.Decision{Analyst: s.analyst, Note: r.PostFormValue("note"), DeadEnds: deadEnds(r.PostForm["dead_end"])}}
	if !req.AsProposed {
		dec, err := usecase.ParseDecision(r.PostFormValue("decision"))
		if err != nil {
			c.fail(w, r, http.StatusBadRequest, err.Error())
			return
		}
		req.Decision.Decision = dec
	}
	out, err := c.cfg.UseCases.Decide(r.Context(), req)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	done := "decided"
	if !out.Changed {
		done = "already"
	}
	http.Redirect(w, r, Prefix+"queue?done="+done, http.StatusSeeOther)
}

// deadEnds reads the repeated dead-end fields; a field may also hold one
// dead end per line.
func deadEnds(fields []string) []string {
	var out []string
	for _, f := range fields {
		for _, line := range strings.Split(f, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

type groupData struct {
	Review    usecase.GroupReview
	Decisions []openrecall.Decision
	DeadEnds  []int
	// Shown are the firings listed; More is true when the group has more.
	Shown []openrecall.GroupMember
	More  bool
}

// groupMembersShown caps the firings the group page lists.
const groupMembersShown = 50

// groupPage shows an alert group as a person reviews it, with the form
// that decides it once.
func (c *Cockpit) groupPage(w http.ResponseWriter, r *http.Request, s session) {
	gr, err := c.cfg.UseCases.ReviewGroup(r.Context(), r.PathValue("id"), c.cfg.RecallLimit)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	d := groupData{Review: gr, Decisions: openrecall.MemoryDecisions, DeadEnds: []int{1, 2, 3, 4}, Shown: gr.Members}
	if len(d.Shown) > groupMembersShown {
		d.Shown, d.More = d.Shown[:groupMembersShown], true
	}
	c.render(w, r, http.StatusOK, "group", s, "Group "+gr.Group.ID, d)
}

// decideGroup decides an alert group once, by the session's analyst,
// through the group decision use case (`retain --group`, POST
// /api/v1/groups/{id}/decision): one memory, every firing settled. A note
// is required; a group decided before changes nothing.
func (c *Cockpit) decideGroup(w http.ResponseWriter, r *http.Request, s session) {
	dec, err := usecase.ParseDecision(r.PostFormValue("decision"))
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	if note == "" {
		c.fail(w, r, http.StatusBadRequest, "deciding a group needs a note")
		return
	}
	_, err = c.cfg.UseCases.DecideGroup(r.Context(), r.PathValue("id"), usecase.Decision{Decision: dec, Note: note,
		DeadEnds: deadEnds(r.PostForm["dead_end"]), Analyst: s.analyst})
	switch {
	case errors.Is(err, openrecall.ErrGroupDecided):
		http.Redirect(w, r, Prefix+"queue?done=groupdone", http.StatusSeeOther)
	case err != nil:
		c.failErr(w, r, err)
	default:
		http.Redirect(w, r, Prefix+"queue?done=group", http.StatusSeeOther)
	}
}

type analysisData struct {
	ID      string
	Waiting *openrecall.Waiting
	Steps   []openrecall.RouteStep
	Audit   []openrecall.AuditEntry
	Chain   usecase.Verified
	// Integrity says why the analysis's waiting row is not shown: it does
	// not match its seal in the audit chain.
	Integrity string
	// Closure is the analysis as openrecall closed it without a person
	// (history.go), nil when it did not.
	Closure *openrecall.Closure
}

// analysisPage shows an analysis's route steps and audit entries, and
// whether the audit chain verifies.
func (c *Cockpit) analysisPage(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	d := analysisData{ID: id}
	rv, err := c.cfg.UseCases.ReviewOf(r.Context(), id, 1)
	switch {
	case err == nil:
		d.Waiting, d.Steps = &rv.Waiting, rv.Waiting.Result.Steps
	case errors.Is(err, openrecall.ErrIntegrity):
		d.Integrity = err.Error()
	case !errors.Is(err, openrecall.ErrNotFound):
		c.failErr(w, r, err)
		return
	}
	if d.Closure, err = c.closureOf(r, id); err != nil {
		c.failErr(w, r, err)
		return
	}
	if d.Steps == nil && d.Closure != nil {
		d.Steps = d.Closure.Result.Steps
	}
	if d.Audit, err = c.cfg.Store.AuditByAnalysis(r.Context(), id); err != nil {
		c.failErr(w, r, err)
		return
	}
	if d.Waiting == nil && len(d.Audit) == 0 && d.Integrity == "" {
		c.fail(w, r, http.StatusNotFound, "no analysis "+strconv.Quote(id)+" in the audit trail")
		return
	}
	if d.Chain, err = c.cfg.UseCases.VerifyAudit(r.Context(), ""); err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "analysis", s, "Analysis "+id, d)
}

type costData struct {
	Batch   string
	Summary costcurve.Summary
	Sources []costcurve.Source
	None    bool
	Invalid string
}

// costPage shows the cost curve of the run and its savings by source.
func (c *Cockpit) costPage(w http.ResponseWriter, r *http.Request, s session) {
	cost, err := usecase.ReadCost(r.Context(), c.cfg.Store, usecase.CostRequest{Batch: r.URL.Query().Get("batch"), Prefer: c.cfg.CostBatch()})
	if errors.Is(err, openrecall.ErrNotFound) {
		c.render(w, r, http.StatusOK, "cost", s, "Cost", costData{None: true})
		return
	}
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	d := costData{Batch: cost.Batch, Summary: cost.Summary, Sources: cost.Summary.Sources()}
	if cost.Invalid != nil {
		d.Invalid = cost.Invalid.Error()
	}
	c.render(w, r, http.StatusOK, "cost", s, "Cost", d)
}

// costSVG answers the SVG `cost --svg` writes.
func (c *Cockpit) costSVG(w http.ResponseWriter, r *http.Request, s session) {
	cost, err := usecase.ReadCost(r.Context(), c.cfg.Store, usecase.CostRequest{Batch: r.URL.Query().Get("batch"), Prefer: c.cfg.CostBatch()})
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := costcurve.RenderSVGNote(&b, cost.Points, "openrecall cost curve — "+cost.Batch, costcurve.EstimatedNote); err != nil {
		c.failErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

type memoryData struct {
	ID        string
	Incident  *openrecall.Incident
	Filter    openrecall.IncidentFilter
	Searched  bool
	Found     []openrecall.Incident
	Decisions []openrecall.Decision
	Limit     int
}

// memorySearchLimit caps a memory search's answer.
const memorySearchLimit = 200

// memoryPage searches memories by identity rule, service and decision, or
// shows one by id, with the forget form.
func (c *Cockpit) memoryPage(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	d := memoryData{ID: strings.TrimSpace(q.Get("id")), Decisions: openrecall.MemoryDecisions, Limit: memorySearchLimit,
		Filter: openrecall.IncidentFilter{Rule: strings.TrimSpace(q.Get("rule")), Service: strings.TrimSpace(q.Get("service")),
			Decision: openrecall.Decision(q.Get("decision")), Forgotten: q.Get("forgotten") != "", Limit: memorySearchLimit}}
	if f := d.Filter; f.Rule != "" || f.Service != "" || f.Decision != "" || q.Has("search") {
		found, err := c.cfg.Store.SearchIncidents(r.Context(), f)
		if err != nil {
			c.failErr(w, r, err)
			return
		}
		d.Searched, d.Found = true, found
	}
	if d.ID != "" {
		inc, err := c.cfg.Store.Get(r.Context(), d.ID)
		if err != nil {
			c.failErr(w, r, err)
			return
		}
		d.Incident = &inc
	}
	c.render(w, r, http.StatusOK, "memory", s, "Memory", d)
}

// forget takes a memory back, with a required reason.
func (c *Cockpit) forget(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" {
		c.fail(w, r, http.StatusBadRequest, "taking a memory back needs a reason")
		return
	}
	if _, err := c.cfg.UseCases.Forget(r.Context(), id, reason, s.analyst); err != nil {
		c.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"memory?done=forgotten&id="+url.QueryEscape(id), http.StatusSeeOther)
}

type exceptionsData struct {
	// State filters the exceptions: active, expired, revoked, or "" for
	// all.
	State      string
	States     []string
	Exceptions []usecase.ListedException
	// Proposals are the proposed exceptions no person approved yet.
	Proposals []openrecall.Proposal
}

// exceptionsPage lists the proposed exceptions that wait for a person's
// approval and the exceptions in the state asked for, each with its form.
func (c *Cockpit) exceptionsPage(w http.ResponseWriter, r *http.Request, s session) {
	d := exceptionsData{State: r.URL.Query().Get("state"),
		States: usecase.ExceptionStates()}
	var err error
	if d.Proposals, err = c.cfg.UseCases.ListProposals(r.Context(), true); err != nil {
		c.failErr(w, r, err)
		return
	}
	if d.Exceptions, err = c.cfg.UseCases.ListExceptions(r.Context(), d.State); err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "exceptions", s, "Exceptions", d)
}

// approveProposal turns a proposed exception into one the session's
// analyst approved, with an optional note.
func (c *Cockpit) approveProposal(w http.ResponseWriter, r *http.Request, s session) {
	if _, err := c.cfg.UseCases.ApproveProposal(r.Context(), usecase.ApproveRequest{ProposalID: r.PathValue("id"),
		Analyst: s.analyst, Note: strings.TrimSpace(r.PostFormValue("note"))}); err != nil {
		c.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"exceptions?done=exception", http.StatusSeeOther)
}

// revokeException revokes an exception, with a required reason.
func (c *Cockpit) revokeException(w http.ResponseWriter, r *http.Request, s session) {
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" {
		c.fail(w, r, http.StatusBadRequest, "revoking an exception needs a reason")
		return
	}
	ch, err := c.cfg.UseCases.RevokeException(r.Context(), r.PathValue("id"), s.analyst, reason)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	done := "revoked"
	if !ch.Changed {
		done = "unchanged"
	}
	http.Redirect(w, r, Prefix+"exceptions?done="+done, http.StatusSeeOther)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
