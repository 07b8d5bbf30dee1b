package eval

import (
	"fmt"
	"sort"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/notify"
)

// Stats are the figures of a group of triaged alerts (all of them, one kind,
// or one family).
type Stats struct {
	Alerts   int `json:"alerts"`
	Bypassed int `json:"bypassed"`
	// GroupedMembers counts alerts grouped under their group's head (no
	// model call, the head's decision; DESIGN §6a).
	GroupedMembers int `json:"grouped"`
	// Excepted counts alerts closed by an exception a person approved
	// (one exception route step, no model call; DESIGN §6b): each is a
	// model call saved by exceptions.
	Excepted int `json:"excepted"`
	// FalseBypasses counts alerts closed without a model — bypassed,
	// closed by an exception, or closed benign through a group — whose
	// truth is real or a security case: the safety figure, which must be 0.
	FalseBypasses int `json:"false_bypasses"`
	// Eligible counts benign repeats that memory could know: those after
	// their family's first LearnAfter analyst decisions.
	Eligible         int `json:"eligible_repeats"`
	EligibleBypassed int `json:"eligible_bypassed"`
	// Correct counts final decisions equal to the truth.
	Correct int `json:"correct"`
	// Escalated counts alerts left to a person: not accurate, but safe.
	Escalated int `json:"escalated"`
	// Missed counts alerts whose truth is real or a security case that
	// ended with a benign decision, bypassed or not. Those bypassed are
	// also false bypasses (closed by memory without a model). The others
	// are a model's benign verdict after analysis: a proposal the analyst
	// reviews, as every alert memory did not bypass, never a closure; an
	// accuracy error a person must catch, not a safety one.
	Missed      int `json:"missed_real"`
	CheapCalls  int `json:"cheap_calls"`
	StrongCalls int `json:"strong_calls"`
	LiveCalls   int `json:"live_calls"`
	// Unanalysed counts alerts escalated without analysis (no model
	// answered); UnanalysedBaseline is their baseline, equal to their cost.
	Unanalysed         int                `json:"escalated_without_analysis"`
	UnanalysedBaseline openrecall.NanoUSD `json:"escalated_without_analysis_baseline_nano_usd"`
	Cost               openrecall.NanoUSD `json:"cost_nano_usd"`
	Baseline           openrecall.NanoUSD `json:"baseline_nano_usd"`
}

// Compression returns 1 − model calls / alerts: the share of alerts no
// model was called for (bypassed, excepted, grouped or escalated without
// analysis);
// 0 without alerts.
func (s Stats) Compression() float64 {
	if s.Alerts == 0 {
		return 0
	}
	return 1 - float64(s.CheapCalls+s.StrongCalls)/float64(s.Alerts)
}

// BypassRecall returns the share of eligible benign repeats that were
// closed without a model (bypassed, or grouped under a bypassed head), in
// [0, 1]; 0 when none were eligible.
func (s Stats) BypassRecall() float64 { return ratio(s.EligibleBypassed, s.Eligible) }

// Accuracy returns the share of alerts whose final decision equals the truth.
func (s Stats) Accuracy() float64 { return ratio(s.Correct, s.Alerts) }

// EscalationRate returns the share of alerts escalated to a person.
func (s Stats) EscalationRate() float64 { return ratio(s.Escalated, s.Alerts) }

// Savings returns baseline minus cost.
func (s Stats) Savings() openrecall.NanoUSD { return s.Baseline - s.Cost }

// SavingsPercent returns the savings as a percentage of the baseline of the
// analysed alerts (those escalated without analysis left out), 0 when it is
// 0. Only bypasses and passing cheap answers save (DESIGN §7).
func (s Stats) SavingsPercent() float64 {
	return costcurve.SavingsPercent(s.Savings(), s.Baseline-s.UnanalysedBaseline)
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// addStats returns the field-by-field sum of a and b.
func addStats(a, b Stats) Stats {
	a.Alerts += b.Alerts
	a.Bypassed += b.Bypassed
	a.GroupedMembers += b.GroupedMembers
	a.Excepted += b.Excepted
	a.FalseBypasses += b.FalseBypasses
	a.Eligible += b.Eligible
	a.EligibleBypassed += b.EligibleBypassed
	a.Correct += b.Correct
	a.Escalated += b.Escalated
	a.Missed += b.Missed
	a.CheapCalls += b.CheapCalls
	a.StrongCalls += b.StrongCalls
	a.LiveCalls += b.LiveCalls
	a.Unanalysed += b.Unanalysed
	a.UnanalysedBaseline += b.UnanalysedBaseline
	a.Cost += b.Cost
	a.Baseline += b.Baseline
	return a
}

// Group is the Stats of one named group of alerts.
type Group struct {
	Name  string `json:"name"`
	Stats Stats  `json:"stats"`
}

// Judged is an alert of the corpus held to its truth: where it was, its
// id, family, kind and ground-truth decision, and the decision it ended
// with.
type Judged struct {
	Position openrecall.Position `json:"position"`
	AlertID  string              `json:"alert_id"`
	Family   string              `json:"family"`
	Kind     Kind                `json:"kind"`
	Truth    openrecall.Decision `json:"truth"`
	Decision openrecall.Decision `json:"decision"`
}

// FalseBypass is one bypassed alert whose truth is real or a security case.
type FalseBypass struct {
	Judged
}

// MissedReal is one alert whose truth is real or a security case that
// ended with a benign decision: closed by memory (a false bypass, By
// "memory") or, after analysis, a benign verdict of the model of tier By
// ("cheap" or "strong"), which the analyst reviews.
type MissedReal struct {
	Judged
	By string `json:"by"`
	// Approval is the result's triage.requires_human_approval.
	Approval bool `json:"requires_human_approval"`
}

// decidedBy names what gave a result its decision: "memory" for a bypass,
// else the tier of the last model answer that passed the gate, or "" when
// none did.
func decidedBy(res openrecall.Result) string {
	if res.Bypassed {
		return "memory"
	}
	if res.Grouped() {
		return "group"
	}
	if res.Excepted() {
		return "exception"
	}
	by := ""
	for _, st := range res.Steps {
		if st.Step == openrecall.StepAnalysis && st.Outcome == openrecall.OutcomeAccepted {
			by = string(st.Tier)
		}
	}
	return by
}

// Rejection is a record of the alerts file that intake refused.
type Rejection struct {
	Position openrecall.Position `json:"position"`
	Reason   string              `json:"reason"`
}

// Target is one of the benchmark's targets and whether the run met it.
type Target struct {
	Name string  `json:"name"`
	Want string  `json:"want"`
	Got  float64 `json:"got"`
	Met  bool    `json:"met"`
	// Gap says by how much a missed target was missed.
	Gap string `json:"gap,omitempty"`
}

// Target thresholds.
const (
	// TargetBypassRecall is the least bypass recall over eligible repeats.
	TargetBypassRecall = 0.90
	// TargetSavingsPercent is the least saving against the always-strong
	// baseline.
	TargetSavingsPercent = 50.0
)

// Report is what a replay measured.
type Report struct {
	Corpus string          `json:"corpus"`
	Mode   openrecall.Mode `json:"mode"`
	// LearnAfter is how many analyst decisions a benign family needs before
	// its repeats count as eligible for the bypass.
	LearnAfter int `json:"learn_after"`
	// Records counts every record read: triaged, resolved and rejected.
	Records  int `json:"records"`
	Resolved int `json:"resolved"`
	Rejected int `json:"rejected"`
	// Retained counts the simulated analyst's decisions: one per group
	// (a storm is one vote), one per alert outside groups.
	Retained int   `json:"retained"`
	Overall  Stats `json:"overall"`
	// Grouped is the Stats of the group members alone (the grouped row).
	Grouped Stats `json:"grouped"`
	// Exception is the Stats of the alerts closed by an exception alone
	// (the exception row).
	Exception Stats `json:"exception"`
	// Exceptions is what the simulated analyst did with memory's
	// proposals.
	Exceptions ExceptionCheck `json:"exceptions"`
	// Storms is how the detection storms and their intruders were grouped.
	Storms StormCheck `json:"detection_storms"`
	ByKind []Group    `json:"by_kind"`
	// ByTruth groups the alerts by their ground-truth decision.
	ByTruth       []Group       `json:"by_truth"`
	ByFamily      []Group       `json:"by_family"`
	FalseBypasses []FalseBypass `json:"false_bypasses"`
	// MissedReal lists the alerts Overall.Missed counts.
	MissedReal []MissedReal `json:"missed_real"`
	Rejections []Rejection  `json:"rejections,omitempty"`
	// Pages are the pages the firings made without openrecall and with
	// it, over the route tree PagesRoute names: "default" for
	// notify.DefaultPagingRoute, "configured" for Config.Route.
	Pages      notify.Pages `json:"pages"`
	PagesRoute string       `json:"pages_route"`
	// Elapsed is the replay's wall time; Analysing the part spent inside
	// the pipeline (the analyst's retains excluded).
	Elapsed   time.Duration `json:"elapsed_ns"`
	Analysing time.Duration `json:"analysing_ns"`
	// AlertsPerSecond is triaged alerts per second of Analysing.
	AlertsPerSecond float64  `json:"alerts_per_second"`
	Targets         []Target `json:"targets"`
}

// ExceptionCheck counts the proposed exceptions of a replay (DESIGN §6b).
type ExceptionCheck struct {
	// Proposals counts results that carried a proposal.
	Proposals int `json:"proposals"`
	// Approved counts the exceptions the simulated analyst approved: one
	// per proposal made for an alert whose truth is benign, through the
	// application layer of 'openrecall exception approve'.
	Approved int `json:"approved"`
	// Declined counts proposals the analyst refused: made for an alert
	// whose truth is real or a security case.
	Declined int `json:"declined"`
}

// StormCheck is how the firings of the detection storms were grouped
// (DESIGN §6a): the storms' own firings, identical but for the container,
// and the intruders' firings, which differ from them in one entity field
// and must form groups of their own.
type StormCheck struct {
	// Firings counts the storms' own firings, Groups the distinct groups
	// they formed.
	Firings int `json:"firings"`
	Groups  int `json:"groups"`
	// Intruders counts the intruders' firings; Apart those in no group of
	// a storm's own firings; Closed those closed without a person (a
	// false closure: must be 0).
	Intruders int `json:"intruders"`
	Apart     int `json:"intruders_apart"`
	Closed    int `json:"intruders_closed"`
}

// Safe reports whether the run closed nothing it should not have: no
// alert whose truth is real or an attack was closed by memory, by an
// exception or through a group. It does not
// count a model's benign verdict on one (Missed): that is a proposal the
// analyst reviews, not a closure.
func (r Report) Safe() bool { return r.Overall.FalseBypasses == 0 }

// Err returns nil for a safe run, or an error naming how many alerts were
// falsely bypassed and the first of them.
func (r Report) Err() error {
	if r.Safe() {
		return nil
	}
	fb := r.FalseBypasses[0]
	return fmt.Errorf("eval found %d false bypass(es) in mode %s: first %s (%s, family %s, truth %s) was closed as %s without a model",
		r.Overall.FalseBypasses, r.Mode, fb.Position, fb.Kind, fb.Family, fb.Truth, fb.Decision)
}

// accumulator builds a Report alert by alert.
type accumulator struct {
	r        Report
	byKind   map[Kind]*Stats
	byTruth  map[openrecall.Decision]*Stats
	byFamily map[string]*Stats
	// stormGroups holds the groups of the storms' own firings;
	// intruderGroups the group of each intruder's firing ("" for none).
	stormGroups    map[string]bool
	intruderGroups []string
	// pages counts the pages of every result, in input order.
	pages *notify.PageCounter
}

// newAccumulator starts a report; pages are counted over route, nil for
// notify.DefaultPagingRoute.
func newAccumulator(corpus string, mode openrecall.Mode, learnAfter int, route *notify.Route) *accumulator {
	name := "configured"
	if route == nil {
		route, name = notify.DefaultPagingRoute(), "default"
	}
	return &accumulator{
		r: Report{Corpus: corpus, Mode: mode, LearnAfter: learnAfter, FalseBypasses: []FalseBypass{}, MissedReal: []MissedReal{},
			PagesRoute: name},
		byKind:      map[Kind]*Stats{},
		byTruth:     map[openrecall.Decision]*Stats{},
		byFamily:    map[string]*Stats{},
		stormGroups: map[string]bool{},
		pages:       notify.NewPageCounter(route),
	}
}

func (acc *accumulator) reject(e *intake.RecordError) {
	acc.r.Records++
	acc.r.Rejected++
	acc.r.Rejections = append(acc.r.Rejections, Rejection{Position: e.Position, Reason: e.Reason})
}

func (acc *accumulator) untriaged(res openrecall.Result) {
	acc.r.Records++
	acc.pages.Add(res)
	if res.Outcome == openrecall.ResultResolved {
		acc.r.Resolved++
		return
	}
	acc.r.Rejected++
	acc.r.Rejections = append(acc.r.Rejections, Rejection{Position: res.Position, Reason: res.Error})
}

func (acc *accumulator) add(t Truth, res openrecall.Result, eligible bool) {
	acc.r.Records++
	acc.pages.Add(res)
	dangerous := t.Decision == openrecall.DecisionReal || t.Kind.Security()
	// Closed without a model: bypassed by memory, or closed benign through
	// a group whose head was (DESIGN §6a). Each counts as a false closure
	// when the alert needed a person.
	closed := res.Bypassed || res.Excepted() || (res.Grouped() && res.Decision.Benign())
	group := ""
	if res.Group != nil {
		group = res.Group.ID
	}
	switch t.Kind {
	case KindDetectionStorm:
		acc.r.Storms.Firings++
		if group != "" {
			acc.stormGroups[group] = true
		}
	case KindStormIntruder:
		acc.r.Storms.Intruders++
		acc.intruderGroups = append(acc.intruderGroups, group)
		if closed {
			acc.r.Storms.Closed++
		}
	}
	judged := Judged{Position: res.Position, AlertID: res.Alert.ID, Family: t.Family, Kind: t.Kind, Truth: t.Decision, Decision: res.Decision}
	if closed && dangerous {
		acc.r.FalseBypasses = append(acc.r.FalseBypasses, FalseBypass{judged})
	}
	if dangerous && res.Decision.Benign() {
		acc.r.MissedReal = append(acc.r.MissedReal, MissedReal{Judged: judged, By: decidedBy(res), Approval: res.Triage.RequiresHumanApproval})
	}
	ks, ok := acc.byKind[t.Kind]
	if !ok {
		ks = &Stats{}
		acc.byKind[t.Kind] = ks
	}
	ds, ok := acc.byTruth[t.Decision]
	if !ok {
		ds = &Stats{}
		acc.byTruth[t.Decision] = ds
	}
	fs, ok := acc.byFamily[t.Family]
	if !ok {
		fs = &Stats{}
		acc.byFamily[t.Family] = fs
	}
	stats := []*Stats{&acc.r.Overall, ks, ds, fs}
	if res.Grouped() {
		stats = append(stats, &acc.r.Grouped)
	}
	if res.Excepted() {
		stats = append(stats, &acc.r.Exception)
	}
	for _, s := range stats {
		s.Alerts++
		if res.Bypassed {
			s.Bypassed++
		}
		if res.Grouped() {
			s.GroupedMembers++
		}
		if res.Excepted() {
			s.Excepted++
		}
		if closed && dangerous {
			s.FalseBypasses++
		}
		if eligible {
			s.Eligible++
			if closed {
				s.EligibleBypassed++
			}
		}
		switch res.Decision {
		case t.Decision:
			s.Correct++
		case openrecall.DecisionEscalated:
			s.Escalated++
		}
		if dangerous && res.Decision.Benign() {
			s.Missed++
		}
		for _, st := range res.Steps {
			if st.Step != openrecall.StepAnalysis || st.Skipped {
				continue
			}
			switch st.Tier {
			case openrecall.TierCheap:
				s.CheapCalls++
			case openrecall.TierStrong:
				s.StrongCalls++
			}
			if st.Live {
				s.LiveCalls++
			}
		}
		if res.EscalatedWithoutAnalysis {
			s.Unanalysed++
			s.UnanalysedBaseline += res.Baseline
		}
		s.Cost += res.Cost
		s.Baseline += res.Baseline
	}
}

func (acc *accumulator) report(elapsed, analysing time.Duration) Report {
	r := acc.r
	r.Elapsed, r.Analysing = elapsed, analysing
	if analysing > 0 {
		r.AlertsPerSecond = float64(r.Overall.Alerts) / analysing.Seconds()
	}
	r.ByKind = []Group{}
	for _, k := range Kinds {
		if s, ok := acc.byKind[k]; ok {
			r.ByKind = append(r.ByKind, Group{Name: string(k), Stats: *s})
		}
	}
	r.ByTruth = []Group{}
	for _, d := range openrecall.MemoryDecisions {
		if s, ok := acc.byTruth[d]; ok {
			r.ByTruth = append(r.ByTruth, Group{Name: string(d), Stats: *s})
		}
	}
	r.ByFamily = []Group{}
	for name, s := range acc.byFamily {
		r.ByFamily = append(r.ByFamily, Group{Name: name, Stats: *s})
	}
	sort.Slice(r.ByFamily, func(i, j int) bool {
		a, b := r.ByFamily[i], r.ByFamily[j]
		if a.Stats.Alerts != b.Stats.Alerts {
			return a.Stats.Alerts > b.Stats.Alerts
		}
		return a.Name < b.Name
	})
	r.Storms.Groups = len(acc.stormGroups)
	for _, g := range acc.intruderGroups {
		if !acc.stormGroups[g] {
			r.Storms.Apart++
		}
	}
	r.Pages = acc.pages.Pages()
	r.Targets = targets(r.Overall)
	return r
}

// targets rates the overall figures against the benchmark's targets.
func targets(s Stats) []Target {
	recall := s.BypassRecall()
	saved := s.SavingsPercent()
	out := []Target{
		{Name: "false_bypasses", Want: "= 0", Got: float64(s.FalseBypasses), Met: s.FalseBypasses == 0},
		{Name: "bypass_recall", Want: fmt.Sprintf(">= %.0f%%", 100*TargetBypassRecall), Got: recall, Met: s.Eligible > 0 && recall >= TargetBypassRecall},
		{Name: "savings_percent", Want: fmt.Sprintf(">= %.0f%%", TargetSavingsPercent), Got: saved, Met: saved >= TargetSavingsPercent},
	}
	if !out[0].Met {
		out[0].Gap = fmt.Sprintf("%d alert(s) that needed a person were closed without a model", s.FalseBypasses)
	}
	switch {
	case s.Eligible == 0:
		out[1].Gap = "no benign repeat came after its family's first decisions: the corpus cannot measure recall"
	case !out[1].Met:
		out[1].Gap = fmt.Sprintf("%.1f points short: %d of %d eligible repeats were not closed without a person (analysed by a model, or members of a group whose head waits for one)", 100*(TargetBypassRecall-recall), s.Eligible-s.EligibleBypassed, s.Eligible)
	}
	if !out[2].Met {
		out[2].Gap = fmt.Sprintf("%.1f points short", TargetSavingsPercent-saved)
	}
	return out
}
