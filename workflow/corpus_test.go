package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/figures"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/workflow"
)

// The corpus tests render the community rule corpus (645 Prometheus alert
// rules nobody on this project wrote) as Alertmanager alerts, teach memory
// analyst decisions through a real SQLite file and run other firings
// through the real workflow (DESIGN §4–§6, issue #7).

// loadCorpus returns the corpus rules; a missing corpus skips, or fails in
// CI.
func loadCorpus(t *testing.T) []rulecorpus.Rule {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the rule-corpus tests in -short mode: they run thousands of alerts (make test runs them)")
	}
	path, err := rulecorpus.Path(".")
	if errors.Is(err, rulecorpus.ErrAbsent) {
		testenv.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rules, err := rulecorpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 600 {
		t.Fatalf("corpus %s has %d rules, want the 645 shipped", path, len(rules))
	}
	return rules
}

// firings numbers firings so that every rendered alert has its own
// instance, value and id.
type firings struct{ n int }

func (f *firings) next(r rulecorpus.Rule, service, severity string) map[string]any {
	f.n++
	return rulecorpus.Alert(r, rulecorpus.Firing{N: f.n, Service: service, Severity: severity})
}

// parseAlerts renders alerts as one Alertmanager webhook and reads them back
// through the real intake.
func parseAlerts(t *testing.T, alerts []map[string]any) []openrecall.Alert {
	t.Helper()
	body, err := rulecorpus.Webhook(alerts...)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := intake.ParseBytes(body, intake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]openrecall.Alert, 0, len(recs))
	for _, rec := range recs {
		if rec.Err != nil {
			t.Fatalf("intake rejected a corpus alert: %v", rec.Err)
		}
		out = append(out, rec.Alert)
	}
	if len(out) != len(alerts) {
		t.Fatalf("intake read %d alerts of %d", len(out), len(alerts))
	}
	return out
}

// retainAll retains a benign decision on each alert as `openrecall retain`
// does (its fingerprint, identity, severity and id), in batches through
// memory import.
func (p *pipeline) retainAll(t *testing.T, alerts []openrecall.Alert) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, a := range alerts {
		if err := enc.Encode(openrecall.Incident{
			Fingerprint: p.ex.Extract(a), Identity: p.ex.Identify(a), Severity: a.Severity,
			Decision: openrecall.DecisionKnownBenign, Note: "benign, taught by the corpus test",
			SourceAlertID: a.ID, Analyst: "corpus", CreatedAt: fixedNow(),
		}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := p.store.Import(context.Background(), &buf)
	if err != nil || rep.Created != len(alerts) || len(rep.Rejected) > 0 {
		t.Fatalf("retain %d decisions: %+v, %v", len(alerts), rep, err)
	}
}

// analyzeAll runs alerts through the real workflow as one webhook, in
// order, and returns their results.
func (p *pipeline) analyzeAll(t *testing.T, alerts []map[string]any) []openrecall.Result {
	t.Helper()
	body, err := rulecorpus.Webhook(alerts...)
	if err != nil {
		t.Fatal(err)
	}
	w := p.workflow(t, nil, nil)
	var out []openrecall.Result
	_, err = w.AnalyzeQueue(context.Background(), workflow.Records(intake.NewReader(bytes.NewReader(body), intake.Options{})),
		workflow.QueueOptions{Workers: 2}, func(r openrecall.Result) error {
			out = append(out, r)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(alerts) {
		t.Fatalf("%d results for %d alerts", len(out), len(alerts))
	}
	for _, r := range out {
		if r.Outcome != openrecall.ResultTriaged {
			t.Fatalf("%s: outcome %s (%s)", r.Position, r.Outcome, r.Error)
		}
	}
	return out
}

// byService groups rules by their corpus service, services in name order.
func byService(rules []rulecorpus.Rule) ([]string, map[string][]rulecorpus.Rule) {
	m := map[string][]rulecorpus.Rule{}
	for _, r := range rules {
		m[r.Service] = append(m[r.Service], r)
	}
	names := make([]string, 0, len(m))
	for s := range m {
		names = append(names, s)
	}
	sort.Strings(names)
	return names, m
}

// taughtTimes is how many benign decisions teach a rule: the fewest that
// vouch at the default thresholds (6/7 ≥ 0.85).
const taughtTimes = 5

// TestCorpusCrossRule is check (a): for every ordered pair of different
// rules of one corpus service, five benign decisions on the first never
// bypass a firing of the second — all pairs, not a sample. Both fire for
// the same service label at the same severity, so only the rule tells them
// apart. Round k teaches the k-th rule of every service in one fresh memory
// (identities of different services cannot meet) and fires every other rule
// of its service once.
func TestCorpusCrossRule(t *testing.T) {
	rules := loadCorpus(t)
	names, groups := byService(rules)
	rounds := 0
	for _, s := range names {
		rounds = max(rounds, len(groups[s]))
	}
	var fr firings
	pairs, bypassed, sameDNA, related := 0, 0, 0, 0
	examples := []string{}
	for k := 0; k < rounds; k++ {
		p := newPipeline(t)
		var teach, fire []map[string]any
		var taught, fired []rulecorpus.Rule
		for _, s := range names {
			g := groups[s]
			if k >= len(g) {
				continue
			}
			for range taughtTimes {
				teach = append(teach, fr.next(g[k], s, "warning"))
			}
			for j, b := range g {
				if j != k {
					fire = append(fire, fr.next(b, s, "warning"))
					taught, fired = append(taught, g[k]), append(fired, b)
				}
			}
		}
		if len(fire) == 0 {
			continue
		}
		teachAlerts := parseAlerts(t, teach)
		p.retainAll(t, teachAlerts)
		taughtDNA := map[string]openrecall.Fingerprint{}
		for i, a := range teachAlerts {
			taughtDNA[teach[i]["labels"].(map[string]string)["alertname"]+"\x00"+a.Service] = p.ex.Extract(a)
		}
		for i, r := range p.analyzeAll(t, fire) {
			pairs++
			a, b := taught[i], fired[i]
			if fp, ok := taughtDNA[a.Alert+"\x00"+r.Alert.Service]; ok && openrecall.SameCritical(fp, r.Fingerprint) {
				sameDNA++
			}
			if len(r.Matches) > 0 {
				related++
			}
			for _, m := range r.Matches {
				if !m.Related {
					t.Errorf("%s fired after %s was taught: a memory of another rule is a strong match: %+v", b.Alert, a.Alert, m)
				}
			}
			if r.Bypassed {
				bypassed++
				if len(examples) < 10 {
					examples = append(examples, fmt.Sprintf("%s/%s bypassed after %s was taught (%s)", b.Service, b.Alert, a.Alert, r.Guard.Reason))
				}
			}
		}
	}
	t.Logf("(a) cross-rule: %d false bypasses of %d ordered pairs of different rules of one service (%d pairs share the critical Alert DNA, %d firings recalled related memories)",
		bypassed, pairs, sameDNA, related)
	if bypassed != 0 {
		t.Errorf("(a) %d of %d cross-rule pairs bypassed, want 0; first: %v", bypassed, pairs, examples)
	}
	if pairs < 10000 {
		t.Errorf("(a) only %d pairs checked, want every pair of the corpus (10068)", pairs)
	}
}

// TestCorpusSameRule holds checks (b), (c) and (d) on one memory per check:
// every rule is taught five times, then fires once more on another
// instance: (b) as taught — it is bypassed, at least 95% of rules; (c)
// taught at warning, firing at critical — never bypassed; (d) for another
// service — never bypassed.
func TestCorpusSameRule(t *testing.T) {
	rules := loadCorpus(t)
	var fr firings

	// (b) and (d): taught at the rule's own severity on its service.
	p := newPipeline(t)
	var teach, sixth, other []map[string]any
	for _, r := range rules {
		for range taughtTimes {
			teach = append(teach, fr.next(r, r.Service, ""))
		}
		sixth = append(sixth, fr.next(r, r.Service, ""))
		other = append(other, fr.next(r, r.Service+"-other", ""))
	}
	taught := parseAlerts(t, teach)
	p.retainAll(t, taught)
	nonEmpty := 0
	for i := 0; i < len(taught); i += taughtTimes {
		if fp := p.ex.Extract(taught[i]); fp.ErrorClass != "" || fp.ServiceRole != "" {
			nonEmpty++
		}
	}

	bypassed, attack := 0, 0
	var missed []string
	for i, r := range p.analyzeAll(t, sixth) {
		switch {
		case r.Bypassed:
			bypassed++
		case r.Fingerprint.HasAttack():
			attack++ // an attack pattern is never bypassed, by design
		case len(missed) < 10:
			missed = append(missed, fmt.Sprintf("%s/%s (%s; %s)", rules[i].Service, rules[i].Alert, r.Guard.Reason, r.Fingerprint))
		}
	}
	rate := float64(bypassed) / float64(len(rules))
	t.Logf("(b) same rule: %d of %d rules (%.1f%%) bypassed on a sixth firing on another instance; %d not bypassed for an attack pattern; %d of %d rules have a non-empty Alert DNA (error class or service role)",
		bypassed, len(rules), 100*rate, attack, nonEmpty, len(rules))
	if rate < 0.95 {
		t.Errorf("(b) same-rule bypass rate %.1f%%, want at least 95%%; first misses: %v", 100*rate, missed)
	}

	crossService := 0
	for i, r := range p.analyzeAll(t, other) {
		if r.Bypassed {
			crossService++
			t.Errorf("(d) %s taught on %s was bypassed firing for %s", rules[i].Alert, rules[i].Service, r.Alert.Service)
		}
	}
	t.Logf("(d) cross-service: %d of %d rules bypassed when firing for another service", crossService, len(rules))

	// (c): taught at warning, firing at critical.
	pc := newPipeline(t)
	var warn, crit []map[string]any
	for _, r := range rules {
		for range taughtTimes {
			warn = append(warn, fr.next(r, r.Service, "warning"))
		}
		crit = append(crit, fr.next(r, r.Service, "critical"))
	}
	pc.retainAll(t, parseAlerts(t, warn))
	escalated, refusedBySeverity := 0, 0
	for i, r := range pc.analyzeAll(t, crit) {
		if r.Bypassed {
			escalated++
			t.Errorf("(c) %s/%s taught at warning was bypassed at critical", rules[i].Service, rules[i].Alert)
		}
		if r.Guard.RefusedOnlyBySeverity() {
			refusedBySeverity++
			if !r.Triage.RequiresHumanApproval || cheapTier(r) {
				t.Errorf("(c) %s refused only by the severity clause must go to the strong model with a person's approval: %+v", rules[i].Alert, r.Steps)
			}
		}
	}
	t.Logf("(c) severity: %d of %d rules taught at warning bypassed at critical (%d refused by the severity clause alone, sent to the strong model for a person's approval)",
		escalated, len(rules), refusedBySeverity)
	figures.Report(t, "corpus summary: cross-service false bypasses %d, severity false bypasses %d, same-rule bypass rate %.1f%% (%d/%d), non-empty DNA %d/%d",
		crossService, escalated, 100*rate, bypassed, len(rules), nonEmpty, len(rules))
}

// cheapTier reports whether a result called the cheap model.
func cheapTier(r openrecall.Result) bool {
	for _, s := range r.Steps {
		if s.Step == openrecall.StepAnalysis && s.Tier == openrecall.TierCheap {
			return true
		}
	}
	return false
}

// TestCorpusStorm is the storm of issue #21 (DESIGN §6a): every rule of
// the corpus fires 30 times within 30 minutes on other instances, one
// firing of every tenth non-critical rule at critical, into an empty
// memory with grouping on. Model calls stay at most 13% of the alerts
// (87% compression), no group mixes identities, Alert DNA or status, and
// every severity rise is triaged on its own.
func TestCorpusStorm(t *testing.T) {
	rules := loadCorpus(t)
	var buf bytes.Buffer
	opts := rulecorpus.StormOptions{Firings: 30, Span: 30 * time.Minute, RiseEvery: 10, Seed: 21}
	if err := rulecorpus.WriteStormQueue(&buf, rules, opts); err != nil {
		t.Fatal(err)
	}
	storm := rulecorpus.Storm(rules, opts)
	rises := 0
	for _, f := range storm {
		if f.Rise {
			rises++
		}
	}
	p := newPipeline(t)
	w := p.grouping(t, nil, nil, nil)
	var results []openrecall.Result
	sum, err := w.AnalyzeQueue(context.Background(), workflow.Records(intake.NewReader(bytes.NewReader(buf.Bytes()), intake.Options{})),
		workflow.QueueOptions{Workers: 2}, func(r openrecall.Result) error {
			results = append(results, r)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Triaged != len(rules)*opts.Firings {
		t.Fatalf("%d triaged of %d firings", sum.Triaged, len(rules)*opts.Firings)
	}
	calls := 0
	for _, n := range sum.ModelCalls {
		calls += n
	}
	heads := map[string]openrecall.Result{}
	groupsOf := map[int]map[string]bool{}
	mixed, riseHeads, riseMembers := 0, 0, 0
	for i, r := range results {
		if r.Group == nil {
			continue
		}
		rule := storm[i].Rule
		if groupsOf[rule] == nil {
			groupsOf[rule] = map[string]bool{}
		}
		groupsOf[rule][r.Group.ID] = true
		if !r.Grouped() {
			heads[r.AnalysisID] = r
		} else if h := heads[r.Group.HeadAnalysisID]; h.Identity != r.Identity || h.Fingerprint != r.Fingerprint || h.Alert.Status != r.Alert.Status {
			mixed++
			t.Errorf("mixed group %s: member %s (%s, %s) under head %s (%s, %s)", r.Group.ID, r.Position, r.Identity, r.Fingerprint, h.Position, h.Identity, h.Fingerprint)
		}
		if !storm[i].Rise {
			continue
		}
		if r.Grouped() && heads[r.Group.HeadAnalysisID].Alert.Severity != openrecall.SeverityCritical {
			riseMembers++
			t.Errorf("severity rise %s joined the %s group of %s", r.Position, heads[r.Group.HeadAnalysisID].Alert.Severity, r.Group.HeadAnalysisID)
		} else if !r.Grouped() {
			riseHeads++
		}
	}
	split := 0
	for _, gs := range groupsOf {
		if len(gs) > 1 {
			split++
		}
	}
	share := float64(calls) / float64(sum.Triaged)
	figures.Report(t, "storm: %d rules × %d firings in %s (+%d severity rises): %d model calls for %d alerts (%.1f%%, compression %.1f%%), %d groups, %d grouped, %d groups mixing identities, %d rises triaged on their own; %d rules in more than one group (a rise, or firings whose text gives another Alert DNA)",
		len(rules), opts.Firings, opts.Span, rises, calls, sum.Triaged, 100*share, 100*(1-share), sum.Groups, sum.Grouped, mixed, riseHeads, split)
	if share > 0.13 {
		t.Errorf("model calls are %.1f%% of the alerts, want at most 13%%", 100*share)
	}
	if riseMembers > 0 || riseHeads != rises {
		t.Errorf("%d of %d severity rises joined a less severe group; %d headed their own", riseMembers, rises, riseHeads)
	}
}
