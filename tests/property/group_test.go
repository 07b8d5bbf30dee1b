package property

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/workflow"
)

// groupProperties are the rules of alert groups (DESIGN §6a, issue 21).
func groupProperties() []pbt.Property {
	ex := newExtractor()
	storm := func(check func(s gen.StormRun, out stormOut) error) func(gen.StormRun) error {
		return func(s gen.StormRun) error {
			out, err := runStorm(ex, s, s.Workers, nil)
			if err != nil {
				return err
			}
			return check(s, out)
		}
	}
	opts := []pbt.Option{pbt.Expensive(2), pbt.Classify(classifyStorm),
		pbt.Cover("a group member", 60), pbt.Cover("a severity rise", 20), pbt.Cover("an attack storm", 20), pbt.Cover("a firing a day late", 20)}
	return []pbt.Property{
		pbt.ForAll("P80_member_takes_head_decision",
			"A group member's decision and escalation are its head's, never anything the head did not have: the head comes first in the run, heads the member's group, and the member is never bypassed itself; a member of a head escalated without analysis is escalated without analysis too; a benign decision closes members only when memory bypassed the head: a member of a head a model answered benign is escalated to the person who decides the group; a member of a head memory bypassed ran the guard again on current memory and it still passed (DESIGN §6a).",
			"StormRunGen", gen.StormRunGen(), storm(func(_ gen.StormRun, out stormOut) error {
				heads := map[string]openrecall.Result{}
				for _, r := range out.results {
					if r.Group == nil {
						continue
					}
					if !r.Grouped() {
						heads[r.AnalysisID] = r
						continue
					}
					h, ok := heads[r.Group.HeadAnalysisID]
					switch {
					case !ok:
						return fmt.Errorf("head: member %s names head %s, which did not head a group before it", r.Position, r.Group.HeadAnalysisID)
					case r.Group.ID != openrecall.GroupID(h.AnalysisID) || h.Group.ID != r.Group.ID:
						return fmt.Errorf("head: member %s is in group %s, its head %s in %s", r.Position, r.Group.ID, h.AnalysisID, h.Group.ID)
					case r.Decision != memberDecision(h) || r.EscalatedWithoutAnalysis != h.EscalatedWithoutAnalysis:
						return fmt.Errorf("decision: member %s decided %s (unanalysed %v), its head %s decided %s (unanalysed %v)",
							r.Position, r.Decision, r.EscalatedWithoutAnalysis, h.Position, h.Decision, h.EscalatedWithoutAnalysis)
					case r.Bypassed:
						return fmt.Errorf("bypass: member %s is counted as a memory bypass", r.Position)
					case h.Bypassed && (!r.Guard.Bypass || !sameStrings(r.Triage.Supporting, h.Triage.Supporting)):
						return fmt.Errorf("guard: member %s of bypassed head %s: guard run again says bypass=%v, support %v vs %v",
							r.Position, h.Position, r.Guard.Bypass, r.Triage.Supporting, h.Triage.Supporting)
					}
				}
				return nil
			}), opts...),
		pbt.ForAll("P81_groups_follow_identity_dna_status_window",
			"No group mixes identities, canonical Alert DNA or status (nor, for an attack, entity fields), an alert without identity never groups, and the groups are exactly those of a reference grouper written from DESIGN §6a: of the open groups of its key whose last firing is within 1 h of its own time (either way), at most 24 h behind the newest firing of the run so far that its sender dated (a firing after the clock counting as the clock) and at most 24 h before any group its key opened since, and whose head it is not more severe than, a firing joins the one with the least severe head (the newest among equals), else it heads a new group.",
			"StormRunGen", gen.StormRunGen(), storm(func(s gen.StormRun, out stormOut) error {
				want := referenceGroups(out.results)
				for i, r := range out.results {
					got := -1
					if r.Group != nil {
						got = indexOf(out.results, r.Group.HeadAnalysisID)
					}
					if got != want[i] {
						return fmt.Errorf("grouping: %s (%s, severity %q, at %s) is in the group headed by result %d, want %d",
							r.Position, r.Identity, r.Alert.Severity, alertTime(r).Format(time.TimeOnly), got, want[i])
					}
					if got >= 0 && groupKey(r) != groupKey(out.results[got]) {
						return fmt.Errorf("mixed: %s (%s) grouped under %s (%s)", r.Position, groupKey(r), out.results[got].Position, groupKey(out.results[got]))
					}
				}
				return nil
			}), opts...),
		pbt.ForAll("P82_member_never_more_severe_than_head",
			"A group member is never more severe than its head (an unknown severity counts as critical against a known head, a head of unknown severity as medium): a more severe firing — a severity rise inside a storm — heads a group of its own and is triaged.",
			"StormRunGen", gen.StormRunGen(), storm(func(_ gen.StormRun, out stormOut) error {
				for _, r := range out.results {
					if !r.Grouped() {
						continue
					}
					h := out.results[indexOf(out.results, r.Group.HeadAnalysisID)]
					if designRank(r.Alert.Severity, h.Alert.Severity) > designRank(h.Alert.Severity, "") {
						return fmt.Errorf("severity: member %s (%q) is more severe than its head %s (%q)", r.Position, r.Alert.Severity, h.Position, h.Alert.Severity)
					}
				}
				return nil
			}), opts...),
		pbt.ForAll("P83_group_decision_adds_one_memory",
			"A person decides a group once: the decision adds exactly one memory (a storm is one vote), keyed by the head's alert id with the head's identity, DNA and severity; every member's stored membership carries the decision and the group is closed; deciding it again is refused and adds nothing.",
			"StormRunGen", gen.StormRunGen(), func(s gen.StormRun) error {
				_, err := runStorm(ex, s, 1, decideFirstGroup)
				return err
			}, opts...),
		pbt.ForAll("P84_grouped_alerts_make_no_model_call",
			"A group member makes no model call: its one grouped route step costs 0 and its baseline is the strong analysis of its own prompt at the expected completion (hand-priced), all of it saved, or 0 for a member of a head escalated without analysis; the run's model calls are its heads' and its ungrouped alerts', and the summary counts the members apart from bypasses.",
			"StormRunGen", gen.StormRunGen(), storm(func(_ gen.StormRun, out stormOut) error {
				members, calls := 0, 0
				var saved openrecall.NanoUSD
				for _, r := range out.results {
					for _, st := range r.Steps {
						if st.Step == openrecall.StepAnalysis && !st.Skipped {
							calls++
						}
					}
					if !r.Grouped() {
						continue
					}
					members++
					names := stepNames(r.Steps)
					if strings.Join(names, ",") != "intake,fingerprint,grouped" {
						return fmt.Errorf("steps: member %s has steps %v", r.Position, names)
					}
					prompt := openrecall.NanoUSD(routing.EstimatePromptTokens(routing.BuildPrompt(routing.Input{
						Alert: r.Alert, Fingerprint: r.Fingerprint, Matches: r.Matches, Triage: r.Triage, Guard: r.Guard})))
					want := prompt*perToken["gpt-4o"][0] + expectedCompletion*perToken["gpt-4o"][1]
					if r.EscalatedWithoutAnalysis {
						want = 0
					}
					if r.Cost != 0 || r.Baseline != want || r.Steps[2].Live {
						return fmt.Errorf("cost: member %s cost %d baseline %d (live %v), want 0 and %d", r.Position, r.Cost, r.Baseline, r.Steps[2].Live, want)
					}
					saved += r.Baseline
				}
				total := 0
				for _, n := range out.summary.ModelCalls {
					total += n
				}
				if total != calls || out.summary.Grouped != members || out.summary.GroupedSaved != saved {
					return fmt.Errorf("summary: %d model calls (made %d), %d grouped (want %d), %d saved by groups (want %d)",
						total, calls, out.summary.Grouped, members, out.summary.GroupedSaved, saved)
				}
				return nil
			}), opts...),
		pbt.ForAll("P85_workers_form_the_same_groups",
			"AnalyzeQueue with several workers forms the same groups, heads and members as the sequential run (the product's equivalence predicate covers each result's group), with the same summary, budget or not.",
			"StormRunGen", gen.StormRunGen(), func(s gen.StormRun) error {
				seq, err := runStorm(ex, s, 1, nil)
				if err != nil {
					return err
				}
				par, err := runStorm(ex, s, max(s.Workers, 2), nil)
				if err != nil {
					return err
				}
				if err := openrecall.EquivalentRuns(seq.results, par.results); err != nil {
					return fmt.Errorf("equivalence: %d workers vs 1: %v", max(s.Workers, 2), err)
				}
				if diff := cmp.Diff(seq.summary, par.summary); diff != "" {
					return fmt.Errorf("summary: %d workers vs 1 (-seq +par):\n%s", max(s.Workers, 2), diff)
				}
				return nil
			}, opts...),
	}
}

type stormOut struct {
	results []openrecall.Result
	summary workflow.Summary
}

// runStorm analyses the storm with grouping on, over a fresh store (seeded
// when the storm vouches) and the product's sink, then calls after.
func runStorm(ex workflow.Fingerprinter, s gen.StormRun, workers int, after func(ctx context.Context, st *memory.Store, out stormOut) error) (stormOut, error) {
	var out stormOut
	err := withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		st := ss[0]
		if err := seedStorm(ctx, ex, st, s); err != nil {
			return err
		}
		var budget *routing.Budget
		if s.Budget > 0 {
			budget = routing.NewBudget(s.Budget)
		}
		r, err := routing.New(routing.Config{Cheap: local.NewCheap(), Strong: local.NewStrong(), Vet: triage.Vet, Budget: budget, Now: fixedClock})
		if err != nil {
			return fmt.Errorf("setup: router: %v", err)
		}
		root, err := productRoot(st, ex, fixedClock, compose.Batch("storm"), compose.OrderedRouting(budget != nil), compose.NoExceptions())
		if err != nil {
			return err
		}
		sink, err := root.Sink(ctx)
		if err != nil {
			return fmt.Errorf("setup: sink: %v", err)
		}
		wf, err := root.Pipeline(r, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
		if err != nil {
			return fmt.Errorf("setup: workflow: %v", err)
		}
		src := workflow.Records(intake.NewReader(strings.NewReader(s.Queue()), intake.Options{Format: intake.FormatJSONL, Source: "storm.jsonl"}))
		out.summary, err = wf.AnalyzeQueue(ctx, src, workflow.QueueOptions{Workers: workers}, func(r openrecall.Result) error {
			out.results = append(out.results, r)
			return nil
		})
		if err != nil {
			return fmt.Errorf("analyze storm: %v", err)
		}
		if after != nil {
			return after(ctx, st, out)
		}
		return nil
	})
	return out, err
}

// decideFirstGroup decides the run's first group as a person would, checks
// P83, and decides it again.
func decideFirstGroup(ctx context.Context, st *memory.Store, out stormOut) error {
	var head *openrecall.Result
	for i, r := range out.results {
		if r.Group != nil && !r.Grouped() {
			head = &out.results[i]
			break
		}
	}
	if head == nil {
		return nil
	}
	before, err := incidentCount(ctx, st)
	if err != nil {
		return err
	}
	inc := openrecall.Incident{Fingerprint: head.Fingerprint, Identity: head.Identity, Severity: head.Alert.Severity,
		Decision: openrecall.DecisionFalsePositive, Note: "the whole storm is one noisy deploy", SourceAlertID: head.Alert.ID, Analyst: "pbt"}
	g, stored, _, members, err := st.DecideGroup(ctx, head.Group.ID, inc)
	if err != nil {
		return fmt.Errorf("decide: %v", err)
	}
	after, err := incidentCount(ctx, st)
	if err != nil {
		return err
	}
	size := 0
	for _, r := range out.results {
		if r.Group != nil && r.Group.ID == head.Group.ID {
			size++
		}
	}
	switch {
	case after != before+1:
		return fmt.Errorf("one vote: deciding group %s of %d firings took memory from %d to %d records", g.ID, size, before, after)
	case stored.SourceAlertID != head.Alert.ID || stored.Identity != head.Identity || stored.Fingerprint != head.Fingerprint:
		return fmt.Errorf("keyed: the group's memory is about alert %s (%s), want the head's %s (%s)", stored.SourceAlertID, stored.Identity, head.Alert.ID, head.Identity)
	case !g.Decided || g.MemoryID != stored.ID || g.Size != size || len(members) != size:
		return fmt.Errorf("closed: group %s decided %v memory %s (want %s), size %d and %d members stored, %d in the run", g.ID, g.Decided, g.MemoryID, stored.ID, g.Size, len(members), size)
	}
	for _, m := range members {
		if m.Decision != inc.Decision {
			return fmt.Errorf("members: %s of group %s carries decision %q, want %s", m.AnalysisID, g.ID, m.Decision, inc.Decision)
		}
	}
	again := inc
	again.Decision, again.Note = openrecall.DecisionReal, "on second thought"
	if _, _, _, _, err := st.DecideGroup(ctx, head.Group.ID, again); !errors.Is(err, openrecall.ErrGroupDecided) {
		return fmt.Errorf("once: deciding group %s again gave %v, want ErrDecided", g.ID, err)
	}
	if n, err := incidentCount(ctx, st); err != nil || n != after {
		return fmt.Errorf("once: a refused second decision left %d records (want %d): %v", n, after, err)
	}
	return nil
}

// alertTime is the time a result is grouped on in the storm runs: the
// alert's own, else the run's clock.
func alertTime(r openrecall.Result) time.Time {
	if !r.Alert.Timestamp.IsZero() {
		return r.Alert.Timestamp
	}
	return fixedClock()
}

// groupKey is what a group's firings share, written from DESIGN §6a.
func groupKey(r openrecall.Result) string {
	k := r.Identity.Rule + "\x00" + r.Identity.Service + "\x00" + r.Fingerprint.String() + "\x00" + r.Alert.Status
	if r.Fingerprint.AttackPattern != "" {
		var ents []string
		for n, v := range r.Alert.Entities {
			ents = append(ents, n+"="+v)
		}
		sort.Strings(ents)
		k += "\x00" + strings.Join(ents, ",")
	}
	return k
}

// designRank ranks severity sev as DESIGN §6 clause (e) does when it is
// compared with other (empty: sev is the head's own): critical 5 … info 1;
// an unknown firing counts as critical, except against a head of unknown
// severity, and an unknown head as medium.
func designRank(sev, other openrecall.Severity) int {
	switch sev {
	case openrecall.SeverityCritical:
		return 5
	case openrecall.SeverityHigh:
		return 4
	case openrecall.SeverityMedium:
		return 3
	case openrecall.SeverityLow:
		return 2
	case openrecall.SeverityInfo:
		return 1
	}
	if other == "" {
		return 3 // a head of unknown severity counts as medium
	}
	if other == openrecall.SeverityUnknown {
		return 3 // unknown against unknown: equal
	}
	return 5
}

// referenceGroups returns, per result, the index of the result heading its
// group (itself for a head), or -1: the reference grouper of P81.
func referenceGroups(results []openrecall.Result) []int {
	type group struct {
		head int
		last time.Time
	}
	open := map[string][]*group{}
	out := make([]int, len(results))
	var newest time.Time
	for i, r := range results {
		out[i] = -1
		if r.Outcome != openrecall.ResultTriaged || r.Identity.Rule == "" {
			continue
		}
		k, t := groupKey(r), alertTime(r)
		if seen := minTime(t, fixedClock()); !r.Alert.Timestamp.IsZero() && seen.After(newest) {
			newest = seen
		}
		var joined *group
		for j := len(open[k]) - 1; j >= 0; j-- {
			g := open[k][j]
			d := t.Sub(g.last)
			head := results[g.head].Alert.Severity
			if d > time.Hour || -d > time.Hour || newest.Sub(g.last) > 24*time.Hour || designRank(r.Alert.Severity, head) > designRank(head, "") {
				continue
			}
			if joined == nil || designRank(head, "") < designRank(results[joined.head].Alert.Severity, "") {
				joined = g
			}
		}
		if joined == nil {
			// A new group forgets its key's groups a day older than it.
			kept := open[k][:0:0]
			for _, g := range open[k] {
				if t.Sub(g.last) <= 24*time.Hour {
					kept = append(kept, g)
				}
			}
			open[k] = append(kept, &group{head: i, last: t})
			out[i] = i
			continue
		}
		if t.After(joined.last) {
			joined.last = t
		}
		out[i] = joined.head
	}
	return out
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// memberDecision is the decision a member of head h takes (DESIGN §6a):
// the head's, except that a benign decision a model gave the head (about
// that firing) closes no member: the member is escalated to the person who
// decides the group. Only memory's bypass, re-checked, closes members.
func memberDecision(h openrecall.Result) openrecall.Decision {
	if !h.Bypassed && h.Decision.Benign() {
		return openrecall.DecisionEscalated
	}
	return h.Decision
}

func indexOf(results []openrecall.Result, analysisID string) int {
	for i, r := range results {
		if r.AnalysisID == analysisID {
			return i
		}
	}
	return -1
}

func sameStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// classifyStorm labels a storm for coverage.
func classifyStorm(s gen.StormRun) []string {
	var labels []string
	seen := map[int]int{}
	rise, attack, member, late := false, false, false, false
	for _, f := range s.Firings {
		if gen.StormGaps()[f.Gap%len(gen.StormGaps())] < -24*60 {
			late = true
		}
		r := f.Rule % len(gen.StormRules())
		if prev, ok := seen[r]; ok && prev == 0 && f.Sev%len(gen.StormSeverities()) == 1 {
			rise = true
		}
		if _, ok := seen[r]; ok && gen.StormRules()[r].Attack {
			attack = true
		}
		if _, ok := seen[r]; ok {
			member = true
		}
		seen[r] = f.Sev % len(gen.StormSeverities())
	}
	if member {
		labels = append(labels, "a group member")
	}
	if rise {
		labels = append(labels, "a severity rise")
	}
	if attack {
		labels = append(labels, "an attack storm")
	}
	if late {
		labels = append(labels, "a firing a day late")
	}
	return labels
}
