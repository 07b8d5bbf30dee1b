package notify

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// This file renders a result for the people a receiver reaches, once for
// every receiver (view): the alert, what happened, the severity, the
// decision and how it was taken, why, the analysis, the memories that
// voted, the dead ends, the cost, the review link. Each receiver lays the
// view out its own way: PagerDuty's custom details and Opsgenie's details
// (details, flat), Opsgenie's description, Alertmanager's annotations, a
// Slack message, a Teams card, a mail.

// Bounds of what a notification carries of an analysis: a page is read on
// a phone, and every receiver's API limits its fields.
const (
	maxReasonRunes  = 1000 // the reason
	maxItemRunes    = 300  // one memory's note, one dead end, a kept reason
	maxMemories     = 10   // memories that voted
	maxDeadEnds     = 10   // dead ends
	maxLabelRunes   = 1024 // one label or annotation value
	maxDetailRunes  = 2000 // one detail of the analysis
	defaultSummary  = "openrecall alert"
	reviewLinkTitle = "Review in openrecall"
)

// view is what a person reads of a notification, whatever the medium.
// viewOf builds it; it holds no secret.
type view struct {
	// Kind is the notification's kind.
	Kind string
	// Title names the alert as a message heads it: its title as the
	// sender wrote it (trimmed), else its identity, else its id.
	Title string
	// SummaryLine is the alert on one line, as a page heads it: its title,
	// else the first line of its text, else its identity, else its id,
	// white space folded.
	SummaryLine string
	// Headline says what happened: "Escalated to a person", "Resolved",
	// "Decided real by alice".
	Headline string
	// Verb is a subject's word: the decision, "resolved", or the person's
	// decision.
	Verb string
	// Severity is the alert's normalized severity, unknown when it has
	// none.
	Severity    openrecall.Severity
	Identity    string
	Service     string
	Environment string
	Host        string
	Sender      string
	// Decision is openrecall's decision and Route how it was reached
	// (RouteOf); for a resolve, the trigger's, as its delivery kept them
	// (keptOf).
	Decision openrecall.Decision
	Route    string
	// Reason says why in the words of the step that decided (stepReason):
	// what the escalation webhook always said; for a resolve, the
	// trigger's.
	Reason string
	// Conclusion says why with the analysis's conclusion first
	// (decisionReason), at most maxReasonRunes: what a page's details
	// say.
	Conclusion string
	Confidence float64
	// AnalysisSummary, Hypotheses and NextSteps are the analysis's.
	AnalysisSummary string
	Hypotheses      []string
	NextSteps       []string
	// DeadEnds are the paths not to walk again (deadEndsOf).
	DeadEnds []string
	// Memories are the memories that voted (memoriesOf); none for a
	// resolve.
	Memories []vote
	// Exception names the exception a person approved that closed the
	// alert; Group the analysis whose decision a group member took.
	Exception string
	Group     string
	// Cost is what the analysis cost (0 for a resolve).
	Cost openrecall.NanoUSD
	// ReviewURL is the cockpit's page when it is an http(s) URL, else "".
	ReviewURL string
	// Decided is a person's decision the notification carries (nil
	// otherwise); Note its note, for an update.
	Decided *Decided
	Note    string
	// AwaitsPerson says a trigger's result is left to a person (escalated,
	// or judged real) and no one decided yet.
	AwaitsPerson bool
	// Proposed is the analysis's decision a person may approve as is, ""
	// when there is none to approve.
	Proposed openrecall.Decision
}

// viewOf returns what a person reads of n. A resolve's result is the
// recovery's, which says nothing of the analysis: what openrecall had
// decided comes from the trigger's delivery (n.Prior, see keptOf).
func viewOf(n Notification) view {
	r := n.Result
	v := view{
		Kind:        n.Kind,
		Title:       titleOf(r),
		SummaryLine: summaryLine(r),
		Severity:    severityOf(r),
		Identity:    identityOrEmpty(r.Identity),
		Service:     r.Alert.Service,
		Environment: r.Alert.Environment,
		Host:        hostOf(r.Alert),
		Sender:      r.Alert.Sender,
		Decision:    r.Decision,
		Route:       RouteOf(r),
		Reason:      stepReason(r),
		Conclusion:  clip(decisionReason(r), maxReasonRunes),
		DeadEnds:    deadEndsOf(r),
		Memories:    memoriesOf(r),
		Cost:        r.Cost,
		ReviewURL:   webURL(n.ReviewURL),
		Decided:     n.Decision,
	}
	if v.Service == "" {
		v.Service = r.Identity.Service
	}
	if a := r.Analysis; a != nil {
		v.Confidence, v.AnalysisSummary, v.Hypotheses, v.NextSteps = a.Confidence, a.Summary, a.Hypotheses, a.NextSteps
		if a.Decision.Retainable() {
			v.Proposed = a.Decision
		}
	}
	if r.Exception != nil {
		v.Exception = r.Exception.ID + " approved by " + r.Exception.Analyst
	}
	if r.Grouped() {
		v.Group = r.Group.HeadAnalysisID
	}
	switch n.Kind {
	case KindResolve:
		v.Headline, v.Verb = "Resolved", "resolved"
		if !n.At.IsZero() {
			v.Headline = "Resolved at " + n.At.UTC().Format("2006-01-02 15:04 UTC")
		}
		if d := n.Prior["decision"]; d != "" || n.Prior["route"] != "" {
			v.Decision, v.Route, v.Reason = openrecall.Decision(d), n.Prior["route"], n.Prior["reason"]
		}
		v.Memories, v.Cost = nil, 0
	case KindUpdate:
		if d := n.Decision; d != nil {
			v.Verb = string(d.Decision)
			v.Headline = "Decided " + string(d.Decision)
			if d.Analyst != "" {
				v.Headline += " by " + d.Analyst
			}
			v.Note = d.Note
		} else {
			v.Verb, v.Headline = "updated", "Updated"
		}
	default:
		v.Verb, v.Headline = triggerWords(r)
		v.AwaitsPerson = r.Outcome == openrecall.ResultTriaged && (r.Decision == openrecall.DecisionEscalated || r.Decision == openrecall.DecisionReal)
	}
	return v
}

// triggerWords returns a trigger's subject word and headline.
func triggerWords(r openrecall.Result) (verb, headline string) {
	if r.Outcome != openrecall.ResultTriaged {
		status := r.Alert.Status
		switch status {
		case openrecall.StatusResolved:
			return status, "Resolved"
		case openrecall.StatusAcknowledged:
			return status, "Acknowledged"
		case openrecall.StatusNotice:
			return status, "A sender's notice for a person"
		}
		return "recorded", "Recorded, not triaged"
	}
	d := r.Decision
	switch {
	case r.EscalatedWithoutAnalysis:
		return string(d), "Escalated to a person without analysis"
	case d == openrecall.DecisionEscalated:
		return string(d), "Escalated to a person"
	case d == openrecall.DecisionReal:
		return string(d), "Judged a real incident"
	case d.Benign():
		return string(d), "Closed by openrecall as " + string(d)
	}
	return string(d), "Triaged"
}

// titleOf names r's alert for a message: its title, else its identity,
// else its id.
func titleOf(r openrecall.Result) string {
	switch {
	case strings.TrimSpace(r.Alert.Title) != "":
		return strings.TrimSpace(r.Alert.Title)
	case !r.Identity.IsZero():
		return r.Identity.String()
	case r.Alert.ID != "":
		return "alert " + r.Alert.ID
	}
	return "alert"
}

// summaryLine is the line a person reads first on a page: the alert's
// title, else the first line of its text, else its identity, else its id.
func summaryLine(r openrecall.Result) string {
	for _, s := range []string{r.Alert.Title, firstLine(r.Alert.Text), identityOrEmpty(r.Identity), r.Alert.ID} {
		if s = oneLine(s); s != "" {
			return s
		}
	}
	return defaultSummary
}

func identityOrEmpty(id openrecall.Identity) string {
	if id.IsZero() {
		return ""
	}
	return id.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// stepReason says why r was decided as the escalation POST of
// server.webhook_url always said it, in the words of the step that
// decided: the last analysis or memory bypass step's reason, else triage's
// escalation reason. The webhook's reason member, and a message's "Why",
// hold it.
func stepReason(r openrecall.Result) string {
	reason := r.Triage.EscalationReason
	for _, st := range r.Steps {
		if (st.Step == openrecall.StepAnalysis || st.Step == openrecall.StepMemoryBypass) && st.Reason != "" {
			reason = st.Reason
		}
	}
	return reason
}

// decisionReason says why the result was decided as it was, the
// conclusion first: the analysis's summary (a model's or the memory
// bypass's), else why it was escalated, else the guard's ruling. A page's
// details hold it.
func decisionReason(r openrecall.Result) string {
	if r.Analysis != nil && strings.TrimSpace(r.Analysis.Summary) != "" {
		return r.Analysis.Summary
	}
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if e := r.Steps[i].EscalationReason; e != "" {
			return e
		}
	}
	if r.Triage.EscalationReason != "" {
		return r.Triage.EscalationReason
	}
	return r.Guard.Reason
}

// decisionText is a decision and its route as a message says them:
// "escalated (strong model)".
func decisionText(d openrecall.Decision, route string) string {
	how := map[string]string{
		RouteBypass: "closed from memory", RouteException: "an approved exception", RouteGroup: "its group's head",
		RouteCheap: "cheap model", RouteStrong: "strong model", RouteUnanalysed: "no analysis",
	}[route]
	switch {
	case d == "" && how == "":
		return ""
	case d == "":
		return how
	case how == "":
		return string(d)
	}
	return string(d) + " (" + how + ")"
}

// vote is a memory that voted for the decision: a supporting strong match.
type vote struct {
	ID       string              `json:"id"`
	Decision openrecall.Decision `json:"decision"`
	Score    float64             `json:"score"`
	Analyst  string              `json:"analyst,omitempty"`
	Note     string              `json:"note,omitempty"`
}

// String renders the vote on one line: "inc_1 known_benign 1.00 by alice:
// nightly ETL restarts".
func (v vote) String() string {
	s := fmt.Sprintf("%s %s %.2f", v.ID, v.Decision, v.Score)
	if v.Analyst != "" {
		s += " by " + v.Analyst
	}
	if v.Note != "" {
		s += ": " + v.Note
	}
	return s
}

// joinVotes renders votes on one line, "; " between them.
func joinVotes(vs []vote) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, "; ")
}

// votesOf returns the memories that voted for r's decision: its
// supporting strong matches, in triage's order, each with what it
// recorded when r still holds its match (its id alone otherwise), as
// recorded.
func votesOf(r openrecall.Result) []vote {
	var votes []vote
	for _, id := range r.Triage.Supporting {
		v := vote{ID: id}
		if m, ok := matchOf(r, id); ok {
			v.Decision, v.Score, v.Analyst, v.Note = m.Incident.Decision, m.Score, m.Incident.Analyst, m.Incident.Note
		}
		votes = append(votes, v)
	}
	return votes
}

// memoriesOf returns votesOf(r) for a person: notes on one line and
// shortened, at most maxMemories.
func memoriesOf(r openrecall.Result) []vote {
	votes := votesOf(r)
	for i := range votes {
		votes[i].Note = clip(oneLine(votes[i].Note), maxItemRunes)
	}
	if len(votes) > maxMemories {
		votes = votes[:maxMemories]
	}
	return votes
}

// deadEndsOf returns the paths a person should not walk again: the
// analysis's (what it says memory ruled out), then those r's matches
// record, the supporting memories' first; each once (compared as
// CanonicalText), on one line and shortened, at most maxDeadEnds.
func deadEndsOf(r openrecall.Result) []string {
	var lists [][]string
	if r.Analysis != nil {
		lists = append(lists, r.Analysis.SkipPaths)
	}
	for _, id := range r.Triage.Supporting {
		if m, ok := matchOf(r, id); ok {
			lists = append(lists, m.Incident.DeadEnds)
		}
	}
	for _, m := range r.Matches {
		if !slices.Contains(r.Triage.Supporting, m.Incident.ID) {
			lists = append(lists, m.Incident.DeadEnds)
		}
	}
	var dead []string
	seen := map[string]bool{}
	for _, list := range lists {
		for _, d := range list {
			key := openrecall.CanonicalText(d)
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			dead = append(dead, clip(oneLine(d), maxItemRunes))
		}
	}
	if len(dead) > maxDeadEnds {
		dead = dead[:maxDeadEnds]
	}
	return dead
}

// matchOf returns r's first match of the memory id.
func matchOf(r openrecall.Result, id string) (openrecall.Match, bool) {
	for _, m := range r.Matches {
		if m.Incident.ID == id {
			return m, true
		}
	}
	return openrecall.Match{}, false
}

// severityOf returns the alert's normalized severity, SeverityUnknown when
// it has none.
func severityOf(r openrecall.Result) openrecall.Severity {
	if s := r.Alert.Severity; s.Valid() {
		return s
	}
	return openrecall.SeverityUnknown
}

// pagedAs returns the severity an alert of severity s is paged at: its own,
// except that an unknown severity is paged as critical. openrecall never
// guesses a missing severity (DESIGN §3), and everything that counts
// urgency reads unknown as critical (the queue's order, the guard's
// severity clause): a page must not be quieter than the queue.
func pagedAs(s openrecall.Severity) openrecall.Severity {
	if !s.Valid() || s == openrecall.SeverityUnknown {
		return openrecall.SeverityCritical
	}
	return s
}

// hostOf returns the host an alert is about, from the labels senders
// commonly name it in, else the alert's source; "" when none.
func hostOf(a openrecall.Alert) string {
	for _, k := range []string{"host", "hostname", "instance", "node", "pod"} {
		if v := strings.TrimSpace(a.Labels[k]); v != "" {
			return v
		}
	}
	return strings.TrimSpace(a.Source)
}

// keptOf returns what a trigger's delivery keeps of r for its episode's
// resolve, whose own result is the recovery's: the decision, the route
// and the reason (shortened).
// keptFor is what the delivery of n keeps for the episode's later
// notifications: a trigger's own decision, route and reason (keptOf); a
// later notification's, those its prior carried on, so that a resolve
// after a decision's update still says what openrecall decided.
func keptFor(n Notification) map[string]string {
	if n.Kind == KindTrigger {
		return keptOf(n.Result)
	}
	kept := map[string]string{}
	for _, k := range []string{"decision", "route", "reason"} {
		if v := n.Prior[k]; v != "" {
			kept[k] = v
		}
	}
	return kept
}

func keptOf(r openrecall.Result) map[string]string {
	kept := map[string]string{"route": RouteOf(r)}
	if r.Decision != "" {
		kept["decision"] = string(r.Decision)
	}
	if reason := stepReason(r); reason != "" {
		kept["reason"] = clip(reason, maxItemRunes)
	}
	return kept
}

// details renders the view as a JSON object (PagerDuty's custom_details):
// the memories as objects, the dead ends as a list, the cost in dollars
// and in integer nano-dollars. Empty fields are left out.
func (v view) details() map[string]any {
	d := map[string]any{}
	set := func(k, s string) {
		if s != "" {
			d[k] = clip(s, maxDetailRunes)
		}
	}
	set("decision", string(v.Decision))
	set("route", v.Route)
	set("reason", v.Conclusion)
	set("identity", v.Identity)
	set("severity", string(v.Severity))
	set("service", v.Service)
	set("environment", v.Environment)
	set("sender", v.Sender)
	set("exception", v.Exception)
	set("group_head", v.Group)
	set("review_url", v.ReviewURL)
	if v.Confidence != 0 {
		d["confidence"] = v.Confidence
	}
	if len(v.Memories) > 0 {
		d["memories"] = v.Memories
	}
	if len(v.DeadEnds) > 0 {
		d["dead_ends"] = v.DeadEnds
	}
	d["cost"] = v.Cost.String()
	d["cost_nano_usd"] = int64(v.Cost)
	if v.Decided != nil {
		set("decided", string(v.Decided.Decision))
		set("decided_by", v.Decided.Analyst)
		set("decision_note", clip(v.Decided.Note, maxReasonRunes))
	}
	return d
}

// flat renders the view as strings by name (Opsgenie's details): the same
// names as details, lists joined by "; ".
func (v view) flat() map[string]string {
	f := map[string]string{}
	for k, x := range v.details() {
		switch x := x.(type) {
		case string:
			f[k] = x
		case []string:
			f[k] = strings.Join(x, "; ")
		case []vote:
			f[k] = joinVotes(x)
		case float64:
			f[k] = fmt.Sprintf("%.2f", x)
		default:
			f[k] = fmt.Sprint(x)
		}
	}
	return f
}

// facts returns a message's facts, label and value, those with a value:
// severity, decision (decisionText), service, environment.
func (v view) facts() [][2]string {
	var out [][2]string
	for _, f := range [][2]string{{"Severity", string(v.Severity)}, {"Decision", decisionText(v.Decision, v.Route)},
		{"Service", v.Service}, {"Environment", v.Environment}} {
		if f[1] != "" {
			out = append(out, f)
		}
	}
	return out
}

// paragraphs returns a message's paragraphs, label and text, those with a
// text: why, the person's note, the analysis.
func (v view) paragraphs() [][2]string {
	var out [][2]string
	for _, p := range [][2]string{{"Why", v.Reason}, {"Note", v.Note}, {"Analysis", v.AnalysisSummary}} {
		if p[1] != "" {
			out = append(out, p)
		}
	}
	return out
}

// memoryIDs returns the ids of the memories that voted.
func (v view) memoryIDs() []string {
	ids := make([]string, len(v.Memories))
	for i, m := range v.Memories {
		ids[i] = m.ID
	}
	return ids
}

// costText returns the cost as a message shows it: "" when nothing was
// spent.
func (v view) costText() string {
	if v.Cost <= 0 {
		return ""
	}
	return v.Cost.String()
}

// webURL returns u when it is an absolute http or https URL, else "": a
// link a receiver shows is never a javascript: or relative one.
func webURL(u string) string {
	u = strings.TrimSpace(u)
	lower := strings.ToLower(u)
	if (strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://")) && !strings.ContainsAny(u, " \t\r\n") {
		return u
	}
	return ""
}

// clip returns s cut to at most n runes (the last one an ellipsis when it
// was cut), valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}

// oneLine folds white space, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
