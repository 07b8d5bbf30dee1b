package cockpit

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

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

// renderPart executes the template part of page name alone, with the
// page's data around body as render gives it: a piece of a page the
// cockpit's script puts in place.
func (c *Cockpit) renderPart(w http.ResponseWriter, r *http.Request, name, part string, s session, body any) {
	p := page{Analyst: s.analyst, CanAct: s.can(ScopeRetain), Body: body}
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, part, p); err != nil {
		c.cfg.ErrorLog(r, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
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
	usecase.QueuePage
	// Proposals counts the proposed exceptions that wait for a person's
	// approval (the exceptions page lists them).
	Proposals int
	// The filter as asked (Query for links that keep it).
	Q, Severity, State, Rule, Service, Sort, After string
	Query                                          string
	// Filtered says a filter narrows the list: an empty answer says so.
	Filtered bool
	// Severities, States and Sorts are the filters' choices.
	Severities, States []string
	Sorts              []kv
	// BySeverity counts the selected items by severity (Key), most
	// severe first, for the severities that have any.
	BySeverity []kv
}

// QueuePageSize is the number of rows of one page of the queue; the next
// page follows a cursor, with no cap on how many there are.
const QueuePageSize = 100

// queueData reads the queue as the request asks: its filter, order and
// cursor (urgency first unless it asks otherwise).
func (c *Cockpit) queueData(r *http.Request) (queueData, error) {
	q := r.URL.Query()
	d := queueData{Q: strings.TrimSpace(q.Get("q")), Severity: q.Get("severity"), State: q.Get("state"), Rule: strings.TrimSpace(q.Get("rule")),
		Service: strings.TrimSpace(q.Get("service")), Sort: q.Get("sort"), After: q.Get("after"),
		States: []string{openrecall.QueueFiring, openrecall.QueueResolved},
		Sorts: []kv{{openrecall.QueueUrgency, "most urgent first"}, {openrecall.QueueNewest, "newest first"},
			{openrecall.QueueOldest, "oldest first"}},
	}
	if d.Sort == "" {
		d.Sort = openrecall.QueueUrgency
	}
	for _, sv := range openrecall.Severities {
		d.Severities = append(d.Severities, string(sv))
	}
	d.Filtered = d.Q != "" || d.Severity != "" || d.State != "" || d.Rule != "" || d.Service != ""
	keep := url.Values{}
	for k, v := range map[string]string{"q": d.Q, "severity": d.Severity, "state": d.State, "rule": d.Rule, "service": d.Service, "sort": d.Sort} {
		if v != "" {
			keep.Set(k, v)
		}
	}
	d.Query = keep.Encode()
	var err error
	d.QueuePage, err = c.cfg.UseCases.QueuePage(r.Context(), openrecall.WaitingFilter{Severity: openrecall.Severity(d.Severity),
		Rule: d.Rule, Service: d.Service, Search: d.Q, State: d.State, Sort: d.Sort, After: d.After, Limit: QueuePageSize})
	if err != nil {
		return d, err
	}
	for _, sv := range openrecall.Severities {
		if n := d.Counts.Severity[sv]; n > 0 {
			d.BySeverity = append(d.BySeverity, kv{string(sv), strconv.Itoa(n)})
		}
	}
	pending, err := c.cfg.UseCases.ListProposals(r.Context(), true)
	d.Proposals = len(pending)
	return d, err
}

// queuePage lists what waits for a person, most urgent first.
func (c *Cockpit) queuePage(w http.ResponseWriter, r *http.Request, s session) {
	d, err := c.queueData(r)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "queue", s, "Queue", d)
}

// queueLive answers the cockpit's script, which asks every few seconds
// whether the queue it shows changed (v, the version it has): 204 when it
// did not, else the queue's list alone, to put in place of its own.
func (c *Cockpit) queueLive(w http.ResponseWriter, r *http.Request, s session) {
	d, err := c.queueData(r)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if d.Version == r.URL.Query().Get("v") {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("X-Queue-Version", d.Version)
	c.renderPart(w, r, "queue", "list", s, d)
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
	// Group is the alert group the analysis is a firing of, if any; Head
	// is set when it is the group's head. Deciding a firing of an open
	// group decides the group.
	Group *openrecall.Group
	Head  bool
	// Proposal is the exception proposed in the analysis's result, as
	// stored now.
	Proposal *proposalNote
}

// proposalNote is an exception proposal as the review page mentions it:
// Expires is when the exception would expire if approved now.
type proposalNote struct {
	openrecall.Proposal
	Expires time.Time
	// Stored is false when the proposal is not stored (only the result
	// carries it): nothing can approve it.
	Stored bool
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
	grp, ok, err := c.cfg.UseCases.GroupOfAnalysis(r.Context(), rv.Waiting.AnalysisID)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	// A group of one firing is no storm: the page does not speak of it.
	if ok && grp.Size > 1 {
		d.Group, d.Head = &grp, grp.Head.AnalysisID == rv.Waiting.AnalysisID
	}
	if res.Proposal != nil {
		p, err := c.cfg.UseCases.ProposalOf(r.Context(), res.Proposal.ID)
		stored := err == nil
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
			p = *res.Proposal // not stored: the result's own says what was proposed
		case err != nil:
			c.failErr(w, r, err)
			return
		}
		d.Proposal = &proposalNote{Proposal: p, Expires: c.now().Add(p.Expiry), Stored: stored}
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
		dec, ok := c.chosenDecision(w, r)
		if !ok {
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

type analysisData struct {
	ID      string
	Waiting *openrecall.Waiting
	Steps   []openrecall.RouteStep
	Audit   []openrecall.AuditEntry
	// Links is the check of this analysis's entries, made on every view;
	// Chain the last verification of the whole trail (the badge).
	Links usecase.Links
	Chain chainState
	// Integrity says why the analysis's waiting row is not shown: it does
	// not match its seal in the audit chain.
	Integrity string
	// Closure is the analysis as openrecall closed it without a person
	// (history.go), nil when it did not.
	Closure *openrecall.Closure
}

// analysisPage shows an analysis's route steps and audit entries, whether
// its entries match their content and link to the entries before them
// (checked on every view, without reading the whole trail), and the last
// verification of the whole trail, refreshed in the background when older
// than Config.ChainEvery.
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
	if d.Links, err = c.cfg.UseCases.VerifyAnalysisLinks(r.Context(), id); err != nil {
		c.failErr(w, r, err)
		return
	}
	d.Chain = c.chainStatus(r)
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
	batch := r.URL.Query().Get("batch")
	cost, err := usecase.ReadCost(r.Context(), c.cfg.Store, usecase.CostRequest{Batch: batch, Prefer: c.cfg.CostBatch()})
	if errors.Is(err, openrecall.ErrNotFound) {
		if batch != "" {
			// A run asked by name that has no cost points is not "no run
			// yet": say which was not found.
			c.fail(w, r, http.StatusNotFound, "No run named "+strconv.Quote(batch)+" has cost points; /ui/cost shows the latest run.")
			return
		}
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
