package routing_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
)

// stepView is what a table asserts about one step.
type stepView struct {
	Step    string
	Tier    openrecall.Tier
	Model   string
	Outcome string
	Skipped bool
}

func view(steps []openrecall.RouteStep) []stepView {
	out := make([]stepView, len(steps))
	for i, s := range steps {
		out[i] = stepView{Step: s.Step, Tier: s.Tier, Model: s.Model, Outcome: s.Outcome, Skipped: s.Skipped}
	}
	return out
}

// checkInvariants asserts what holds for every routed alert.
func checkInvariants(t *testing.T, r *routing.Router, in routing.Input, out routing.Output) {
	t.Helper()
	if len(out.Steps) == 0 {
		t.Fatal("no steps")
	}
	var sum openrecall.NanoUSD
	calls := 0
	for i, s := range out.Steps {
		sum += s.Cost
		if s.Cost < 0 {
			t.Errorf("step %d: negative cost %d", i, s.Cost)
		}
		last := i == len(out.Steps)-1
		if last && s.Baseline != out.Baseline {
			t.Errorf("last step baseline %d, want Output.Baseline %d", s.Baseline, out.Baseline)
		}
		if !last && s.Baseline != 0 {
			t.Errorf("step %d baseline %d, want 0", i, s.Baseline)
		}
		if s.MemoryHits != len(in.Matches) {
			t.Errorf("step %d memory hits %d, want %d", i, s.MemoryHits, len(in.Matches))
		}
		if s.Skipped && s.Cost != 0 {
			t.Errorf("step %d skipped but cost %d", i, s.Cost)
		}
		if s.Step == openrecall.StepAnalysis && !s.Skipped && s.Outcome != openrecall.OutcomeModelError {
			calls++
		}
		if s.Reason == "" {
			t.Errorf("step %d has no reason", i)
		}
		if s.Latency <= 0 {
			t.Errorf("step %d latency %v not measured with the injected clock", i, s.Latency)
		}
	}
	if sum != out.Cost {
		t.Errorf("Output.Cost %d != sum of step costs %d", out.Cost, sum)
	}
	if out.Cost > out.Baseline {
		t.Errorf("conservation: cost %d > baseline %d", out.Cost, out.Baseline)
	}
	if calls > 1 {
		t.Errorf("%d model calls: the strong model must never follow the cheap one", calls)
	}
	saves := out.Bypassed || len(out.Steps) == 1 && out.Steps[0].Tier == openrecall.TierCheap && out.Steps[0].Outcome == openrecall.OutcomeAccepted
	switch {
	case saves && out.Baseline <= 0:
		t.Errorf("a spared strong call has baseline %d, want > 0", out.Baseline)
	case !saves && out.Baseline != out.Cost:
		t.Errorf("no strong call spared, yet baseline %d != cost %d", out.Baseline, out.Cost)
	}
	if out.Unanalysed && (out.Decision != openrecall.DecisionEscalated || out.Analysis != nil) {
		t.Errorf("escalated without analysis, yet decision %s analysis %v", out.Decision, out.Analysis)
	}
	if r.ExpectedCompletionTokens() <= 0 {
		t.Errorf("expected completion %d", r.ExpectedCompletionTokens())
	}
	if !out.Decision.Valid() {
		t.Errorf("decision %q outside the closed set", out.Decision)
	}
	if in.Fingerprint.HasAttack() && (out.Bypassed || out.Decision.Benign()) {
		t.Errorf("attack alert ended bypassed=%v decision=%s", out.Bypassed, out.Decision)
	}
	if out.Bypassed && out.Cost != 0 {
		t.Errorf("bypass cost %d", out.Cost)
	}
	if out.Analysis != nil && out.Analysis.Live {
		for _, s := range out.Steps {
			if s.Live {
				return
			}
		}
		t.Errorf("analysis claims live but no step was live")
	}
}

func newRouter(t *testing.T, cfg routing.Config) *routing.Router {
	t.Helper()
	if cfg.Vet == nil {
		cfg.Vet = vet
	}
	if cfg.Now == nil {
		cfg.Now = stepClock()
	}
	r, err := routing.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func worst(t *testing.T, in routing.Input, model string, maxTokens int) openrecall.NanoUSD {
	t.Helper()
	c, err := routing.DefaultPrices().Cost(model, routing.EstimatePromptTokens(routing.BuildPrompt(in)), maxTokens)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoute(t *testing.T) {
	analysis := func(tier openrecall.Tier, model, outcome string) stepView {
		return stepView{Step: openrecall.StepAnalysis, Tier: tier, Model: model, Outcome: outcome}
	}
	skipped := func(tier openrecall.Tier, model, outcome string) stepView {
		return stepView{Step: openrecall.StepAnalysis, Tier: tier, Model: model, Outcome: outcome, Skipped: true}
	}
	cheap := func(answer func(routing.Request) (routing.Response, error)) routing.Model {
		return &fakeModel{name: "fake-cheap", priced: "gpt-4o-mini", answer: answer}
	}
	strong := func(answer func(routing.Request) (routing.Response, error)) routing.Model {
		return &fakeModel{name: "fake-strong", priced: "gpt-4o", answer: answer}
	}
	cheapWorst := worst(t, benignInput(openrecall.SeverityLow), "gpt-4o-mini", routing.DefaultCheapMaxTokens)

	tests := []struct {
		name         string
		in           routing.Input
		cfg          routing.Config
		want         []stepView
		wantDecision openrecall.Decision
		wantBypass   bool
		wantReason   string // substring of the first step's reason
		wantEsc      string // substring of the last step's escalation reason
	}{
		{
			name:         "bypass",
			in:           bypassInput(),
			want:         []stepView{{Step: openrecall.StepMemoryBypass, Model: "memory", Outcome: openrecall.OutcomeOK, Skipped: true}},
			wantDecision: openrecall.DecisionKnownBenign,
			wantBypass:   true,
			wantReason:   "memory vouches",
		},
		{
			name:         "cheap accepted",
			in:           benignInput(openrecall.SeverityLow),
			want:         []stepView{analysis(openrecall.TierCheap, "gpt-4o-mini", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionKnownBenign,
			wantReason:   "cheap model confirms",
		},
		{
			name:         "cheap gate-failed escalates to a person, no strong call",
			in:           benignInput(openrecall.SeverityCritical),
			want:         []stepView{analysis(openrecall.TierCheap, "gpt-4o-mini", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
			wantReason:   "cheap model confirms",
			wantEsc:      "cheap answer gate-failed",
		},
		{
			name:         "attack forces strong",
			in:           attackInput(),
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionReal,
			wantReason:   "attack pattern brute_force",
		},
		{
			name: "guard says bypass on an attack: strong instead",
			in: func() routing.Input {
				in := attackInput()
				in.Guard.Bypass = true
				return in
			}(),
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionReal,
			wantReason:   "guard verdict says bypass but",
		},
		{
			name:         "no memory forces strong",
			in:           noMemoryInput(),
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionReal,
			wantReason:   "weak or absent memory",
		},
		{
			name:         "budget exceeded before the first call",
			in:           noMemoryInput(),
			cfg:          routing.Config{Budget: routing.NewBudget(1)},
			want:         []stepView{skipped(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeBudgetExceeded)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "run budget",
		},
		{
			name:         "budget exceeded before the cheap call",
			in:           benignInput(openrecall.SeverityLow),
			cfg:          routing.Config{Budget: routing.NewBudget(cheapWorst - 1)},
			want:         []stepView{skipped(openrecall.TierCheap, "gpt-4o-mini", openrecall.OutcomeBudgetExceeded)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "escalated without analysis",
		},
		{
			name:         "strong model error escalates",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(failing("connection reset by peer"))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeModelError)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "connection reset by peer",
		},
		{
			name: "strong model panic is a model error",
			in:   noMemoryInput(),
			cfg: routing.Config{Strong: strong(func(routing.Request) (routing.Response, error) {
				panic("boom")
			})},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeModelError)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "panicked",
		},
		{
			name:         "cheap model error escalates without analysis",
			in:           benignInput(openrecall.SeverityLow),
			cfg:          routing.Config{Cheap: cheap(failing("timeout"))},
			want:         []stepView{analysis(openrecall.TierCheap, "gpt-4o-mini", openrecall.OutcomeModelError)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "timeout",
		},
		{
			name:         "cited unknown memory id fails the gate",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(fixed(`{"decision":"real","confidence":0.95,"cited_memory_ids":["inc_made_up"]}`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "inc_made_up",
		},
		{
			name:         "cheap cites unknown memory: escalated",
			in:           benignInput(openrecall.SeverityLow),
			cfg:          routing.Config{Cheap: cheap(fixed(`{"decision":"known_benign","confidence":0.9,"cited_memory_ids":["inc_a","inc_zzz"]}`))},
			want:         []stepView{analysis(openrecall.TierCheap, "gpt-4o-mini", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "inc_zzz",
		},
		{
			name:         "benign on attack refused even when vet accepts",
			in:           attackInput(),
			cfg:          routing.Config{Vet: vetNothing, Strong: strong(fixed(`{"decision":"known_benign","confidence":0.99,"cited_memory_ids":["inc_a"]}`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeRefused)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "attack pattern brute_force",
		},
		{
			name: "vet refusal",
			in:   noMemoryInput(),
			cfg: routing.Config{
				Vet:    func(openrecall.Fingerprint, openrecall.Decision) (bool, string) { return false, "policy says no" },
				Strong: strong(fixed(`{"decision":"real","confidence":0.9}`)),
			},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeRefused)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "policy says no",
		},
		{
			name:         "decision outside the closed set refused",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(fixed(`{"decision":"auto_close","confidence":0.9}`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeRefused)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "auto_close",
		},
		{
			name:         "prose instead of JSON fails the gate",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(fixed(`Sure! The decision is real.`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "invalid answer",
		},
		{
			name:         "unknown field fails the gate",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(fixed(`{"decision":"real","confidence":0.9,"bypass_guard":true}`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
		},
		{
			name:         "missing confidence fails the gate",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(fixed(`{"decision":"real"}`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "confidence",
		},
		{
			name:         "low confidence fails the gate",
			in:           noMemoryInput(),
			cfg:          routing.Config{Strong: strong(fixed(`{"decision":"real","confidence":0.59}`))},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeGateFailed)},
			wantDecision: openrecall.DecisionEscalated,
			wantEsc:      "below the gate",
		},
		{
			name: "cheap that does not fit under the baseline is not tried",
			in:   benignInput(openrecall.SeverityLow),
			cfg: func() routing.Config {
				p := routing.DefaultPrices()
				p["gpt-4o-mini"] = routing.Price{InputPerMillion: 100 * openrecall.NanoPerDollar, OutputPerMillion: 100 * openrecall.NanoPerDollar}
				return routing.Config{Prices: p}
			}(),
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionKnownBenign,
			wantReason:   "would pass the baseline",
		},
		{
			name:         "no cheap model configured",
			in:           benignInput(openrecall.SeverityLow),
			cfg:          routing.Config{Cheap: routing.Model(nil)},
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionKnownBenign,
			wantReason:   "no cheap model",
		},
		{
			name: "triage real forces strong",
			in: func() routing.Input {
				in := benignInput(openrecall.SeverityHigh)
				in.Triage.Decision = openrecall.DecisionReal
				return in
			}(),
			want:         []stepView{analysis(openrecall.TierStrong, "gpt-4o", openrecall.OutcomeAccepted)},
			wantDecision: openrecall.DecisionReal,
			wantReason:   "triage proposes real",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.Strong == nil {
				cfg.Strong = local.NewStrong()
			}
			if cfg.Cheap == nil && tt.name != "no cheap model configured" {
				cfg.Cheap = local.NewCheap()
			}
			r := newRouter(t, cfg)
			out := r.Route(context.Background(), tt.in)
			if diff := cmp.Diff(tt.want, view(out.Steps)); diff != "" {
				t.Fatalf("steps (-want +got):\n%s\nsteps: %+v", diff, out.Steps)
			}
			if out.Decision != tt.wantDecision {
				t.Errorf("decision %s, want %s", out.Decision, tt.wantDecision)
			}
			if out.Bypassed != tt.wantBypass {
				t.Errorf("bypassed %v, want %v", out.Bypassed, tt.wantBypass)
			}
			if !strings.Contains(out.Steps[0].Reason, tt.wantReason) {
				t.Errorf("first reason %q lacks %q", out.Steps[0].Reason, tt.wantReason)
			}
			last := out.Steps[len(out.Steps)-1]
			if !strings.Contains(last.EscalationReason, tt.wantEsc) {
				t.Errorf("last escalation reason %q lacks %q", last.EscalationReason, tt.wantEsc)
			}
			if out.Decision == openrecall.DecisionEscalated && last.EscalationReason == "" {
				t.Errorf("escalated without a reason")
			}
			checkInvariants(t, r, tt.in, out)
		})
	}
}

func TestRouteBypassAnalysis(t *testing.T) {
	r := newRouter(t, routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap()})
	in := bypassInput()
	out := r.Route(context.Background(), in)
	want := &openrecall.Analysis{
		Decision:    openrecall.DecisionKnownBenign,
		Confidence:  0.9,
		Summary:     "Closed from memory without a model call: 3 of 3 strong matches were decided known_benign (confidence 0.90).",
		SkipPaths:   []string{"skip: restarting the pod (tried in inc_a)", "skip: rolled back the deploy (tried in inc_b)"},
		CitedMemory: []string{"inc_a", "inc_b", "inc_c"},
		Model:       "memory",
	}
	if diff := cmp.Diff(want, out.Analysis); diff != "" {
		t.Errorf("bypass analysis (-want +got):\n%s", diff)
	}
	s := out.Steps[0]
	if s.Live || s.Cost != 0 || s.PromptTokens != 0 || s.Proposed != openrecall.DecisionKnownBenign {
		t.Errorf("bypass step %+v: want not live, free, no tokens, proposing known_benign", s)
	}
	// gpt-4o: $2.50 and $10 per million tokens, 2500 and 10000 nano-dollars
	// a token; the expected completion is the default 220 tokens, never the
	// 800-token cap.
	prompt := routing.EstimatePromptTokens(routing.BuildPrompt(in))
	if want := openrecall.NanoUSD(prompt*2500 + 220*10000); out.Baseline != want {
		t.Errorf("bypass baseline %d, want %d (%d prompt tokens, 220 expected completion)", out.Baseline, want, prompt)
	}
}

// TestRouteDailyExpectedCompletion: with Config.Completions, a router that
// lives for days prices each day's baselines at the mean it reads on the
// day's first route (DESIGN §7), once a day; a reading that fails keeps
// the last value and is tried again on the next route.
func TestRouteDailyExpectedCompletion(t *testing.T) {
	at := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	reads, mean, fail := 0, 0, false
	r := newRouter(t, routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap(), Now: func() time.Time { return at },
		Completions: func() (int, bool, error) {
			reads++
			if fail {
				return 0, false, errors.New("database is locked")
			}
			return mean, mean > 0, nil
		}})
	in := bypassInput()
	prompt := routing.EstimatePromptTokens(routing.BuildPrompt(in))
	baseline := func(tokens int) openrecall.NanoUSD { return openrecall.NanoUSD(prompt*2500 + tokens*10000) }
	steps := []struct {
		name    string
		advance time.Duration
		mean    int
		fail    bool
		tokens  int
		reads   int
	}{
		{"first route, nothing recorded: the configured default", 0, 0, false, 220, 1},
		{"same day: frozen, not read again", 10 * time.Minute, 500, false, 220, 1},
		{"next day: the mean read again", time.Hour, 500, false, 500, 2},
		{"a later day whose reading fails keeps the last value", 24 * time.Hour, 600, true, 500, 3},
		{"and reads again on the next route", 0, 600, false, 600, 4},
		{"then holds for the day", time.Minute, 700, false, 600, 4},
	}
	for _, st := range steps {
		at = at.Add(st.advance)
		mean, fail = st.mean, st.fail
		out := r.Route(context.Background(), in)
		if out.Baseline != baseline(st.tokens) || reads != st.reads {
			t.Errorf("%s: baseline %d after %d readings; want %d (%d tokens) after %d",
				st.name, out.Baseline, reads, baseline(st.tokens), st.tokens, st.reads)
		}
	}
}

func TestRouteStepAccounting(t *testing.T) {
	in := benignInput(openrecall.SeverityCritical)
	b := routing.NewBudget(openrecall.NanoPerDollar)
	r := newRouter(t, routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap(), Budget: b})
	out := r.Route(context.Background(), in)
	if len(out.Steps) != 1 {
		t.Fatalf("steps %+v", out.Steps)
	}
	prompt := routing.EstimatePromptTokens(routing.BuildPrompt(in))
	var spent openrecall.NanoUSD
	for i, s := range out.Steps {
		if s.PromptTokens != prompt {
			t.Errorf("step %d prompt tokens %d, want %d", i, s.PromptTokens, prompt)
		}
		want, err := routing.DefaultPrices().Cost(s.Model, s.PromptTokens, s.CompletionTokens)
		if err != nil || s.Cost != want {
			t.Errorf("step %d cost %d, want %d (%v)", i, s.Cost, want, err)
		}
		spent += s.Cost
		if s.Budget.Spent != spent || s.Budget.Limit != openrecall.NanoPerDollar {
			t.Errorf("step %d budget %+v, want spent %d", i, s.Budget, spent)
		}
		if s.Live {
			t.Errorf("step %d: the local model must never be reported live", i)
		}
	}
	if out.Steps[0].Proposed != openrecall.DecisionEscalated || out.Decision != openrecall.DecisionEscalated {
		t.Errorf("proposal %s, decision %s", out.Steps[0].Proposed, out.Decision)
	}
	if out.Analysis == nil || out.Analysis.Live || out.Analysis.Model != "local-cheap" {
		t.Errorf("analysis %+v: want the cheap answer attached for the person, not live", out.Analysis)
	}
}

func TestRouteLiveUsage(t *testing.T) {
	in := noMemoryInput()
	est := routing.EstimatePromptTokens(routing.BuildPrompt(in))
	strong := &fakeModel{name: "live-strong", priced: "gpt-4o", answer: func(routing.Request) (routing.Response, error) {
		return routing.Response{Text: `{"decision":"real","confidence":0.8}`, PromptTokens: est + 100, CompletionTokens: 50, Live: true, Model: "gpt-4o-2024-08-06"}, nil
	}}
	r := newRouter(t, routing.Config{Strong: strong})
	out := r.Route(context.Background(), in)
	s := out.Steps[0]
	if !s.Live || s.PromptTokens != est+100 || s.CompletionTokens != 50 || s.Model != "gpt-4o-2024-08-06" {
		t.Errorf("step %+v: want the live usage and the reported model", s)
	}
	// The strong model ran: its baseline is what it was billed, priced on
	// the provider's counts at 2500 and 10000 nano-dollars a token.
	wantBase := openrecall.NanoUSD((est+100)*2500 + 50*10000)
	if out.Cost != wantBase || out.Baseline != wantBase || s.Baseline != wantBase {
		t.Errorf("cost %d, baseline %d / step %d, want both %d", out.Cost, out.Baseline, s.Baseline, wantBase)
	}
	if !out.Analysis.Live || out.Analysis.Model != "live-strong" {
		t.Errorf("analysis %+v", out.Analysis)
	}
	checkInvariants(t, r, in, out)
}

func TestRouteCheapUsageAboveItsPromptIsClamped(t *testing.T) {
	// A live cheap model that reports 5 M prompt tokens for a prompt of a
	// few kilobytes ([trust]: a lying provider booked $625 against a $0.05
	// budget): it is booked at the prompt's ceiling (one token a byte plus
	// the framing), the step says why, its answer stands and no strong call
	// follows.
	in := benignInput(openrecall.SeverityLow)
	var ceiling int
	cheap := &fakeModel{name: "live-cheap", priced: "gpt-4o-mini", answer: func(req routing.Request) (routing.Response, error) {
		ceiling = len(req.System) + len(req.Prompt) + routing.PromptFramingTokens
		return routing.Response{Text: `{"decision":"known_benign","confidence":0.9}`, PromptTokens: 5_000_000, CompletionTokens: 10, Live: true}, nil
	}}
	strong := &fakeModel{name: "fake-strong", priced: "gpt-4o", answer: fixed(`{"decision":"known_benign","confidence":0.9}`)}
	r := newRouter(t, routing.Config{Strong: strong, Cheap: cheap})
	out := r.Route(context.Background(), in)
	want := []stepView{{Step: openrecall.StepAnalysis, Tier: openrecall.TierCheap, Model: "gpt-4o-mini", Outcome: openrecall.OutcomeAccepted}}
	if diff := cmp.Diff(want, view(out.Steps)); diff != "" {
		t.Fatalf("steps (-want +got):\n%s", diff)
	}
	s := out.Steps[0]
	// gpt-4o-mini: 150 and 600 nano-dollars a token.
	if wantCost := openrecall.NanoUSD(ceiling*150 + 10*600); out.Cost != wantCost || s.PromptTokens != ceiling || s.CompletionTokens != 10 {
		t.Errorf("cost %d with %d/%d tokens, want %d with %d/10", out.Cost, s.PromptTokens, s.CompletionTokens, wantCost, ceiling)
	}
	if !strings.Contains(s.UsageAnomaly, "prompt tokens 5000000 above the prompt's ceiling") {
		t.Errorf("usage anomaly %q does not say why", s.UsageAnomaly)
	}
	if strong.calls.Load() != 0 || out.Decision != openrecall.DecisionKnownBenign {
		t.Errorf("strong calls %d, decision %s", strong.calls.Load(), out.Decision)
	}
	checkInvariants(t, r, in, out)
}

func TestRouteUsageWithinBoundsIsBelieved(t *testing.T) {
	// The liveness side of the bound: a usage at exactly the prompt's
	// ceiling and max_tokens is booked as reported, with no anomaly; one
	// past either bound, or negative, or a pricier reported model, is not.
	in := benignInput(openrecall.SeverityHigh)
	tests := []struct {
		name        string
		prompt, out func(ceiling, max int) int
		model       string
		anomaly     string
	}{
		{"at both bounds", func(c, _ int) int { return c }, func(_, m int) int { return m }, "", ""},
		{"a dated snapshot of the model asked", func(c, _ int) int { return c / 2 }, func(_, m int) int { return m / 2 }, "gpt-4o-2024-08-06", ""},
		{"a cheaper reported model", func(c, _ int) int { return c / 2 }, func(_, m int) int { return m / 2 }, "gpt-4o-mini", ""},
		{"one prompt token past", func(c, _ int) int { return c + 1 }, func(_, m int) int { return m }, "", "prompt tokens"},
		{"one completion token past", func(c, _ int) int { return c }, func(_, m int) int { return m + 1 }, "", "above max_tokens"},
		{"negative", func(int, int) int { return -1 }, func(int, int) int { return 5 }, "", "negative prompt tokens"},
		{"a pricier reported model", func(c, _ int) int { return c / 2 }, func(_, m int) int { return m / 2 }, "claude-opus-4", "priced above gpt-4o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ceiling, maxTok int
			strong := &fakeModel{name: "live-strong", priced: "gpt-4o", answer: func(req routing.Request) (routing.Response, error) {
				ceiling, maxTok = routing.PromptTokenCeiling(req), req.MaxTokens
				return routing.Response{Text: `{"decision":"real","confidence":0.9}`, Live: true, Model: tt.model,
					PromptTokens: tt.prompt(ceiling, maxTok), CompletionTokens: tt.out(ceiling, maxTok)}, nil
			}}
			r := newRouter(t, routing.Config{Strong: strong})
			out := r.Route(context.Background(), in)
			s := out.Steps[len(out.Steps)-1]
			if tt.anomaly == "" {
				if s.UsageAnomaly != "" || s.PromptTokens != tt.prompt(ceiling, maxTok) || s.CompletionTokens != tt.out(ceiling, maxTok) {
					t.Fatalf("an honest usage was not booked as reported: %+v", s)
				}
			} else if !strings.Contains(s.UsageAnomaly, tt.anomaly) {
				t.Fatalf("usage anomaly %q, want it to say %q", s.UsageAnomaly, tt.anomaly)
			}
			if s.PromptTokens > ceiling || s.CompletionTokens > maxTok || s.PromptTokens < 0 || s.CompletionTokens < 0 {
				t.Fatalf("booked %d/%d tokens, bounds %d/%d", s.PromptTokens, s.CompletionTokens, ceiling, maxTok)
			}
			// gpt-4o: 2500 and 10000 nano-dollars a token.
			if top := openrecall.NanoUSD(ceiling*2500 + maxTok*10000); s.Cost > top {
				t.Fatalf("booked %d nano-dollars, above the call's ceiling %d", s.Cost, top)
			}
		})
	}
}

func TestRouteCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	strong := &fakeModel{name: "s", priced: "gpt-4o", answer: fixed(`{"decision":"real","confidence":0.9}`)}
	r := newRouter(t, routing.Config{Strong: strong})
	out := r.Route(ctx, noMemoryInput())
	if out.Steps[0].Outcome != openrecall.OutcomeModelError || !strings.Contains(out.Steps[0].EscalationReason, context.Canceled.Error()) || strong.calls.Load() != 0 {
		t.Errorf("steps %+v, calls %d", out.Steps, strong.calls.Load())
	}
}

func TestNew(t *testing.T) {
	strong := local.NewStrong()
	tests := []struct {
		name string
		cfg  routing.Config
		want error
	}{
		{"no strong", routing.Config{Vet: vet}, openrecall.ErrInvalid},
		{"no vet", routing.Config{Strong: strong}, openrecall.ErrInvalid},
		{"unpriced strong", routing.Config{Strong: &fakeModel{name: "mystery"}, Vet: vet}, routing.ErrUnknownModel},
		{"unpriced cheap", routing.Config{Strong: strong, Cheap: &fakeModel{name: "mystery"}, Vet: vet}, routing.ErrUnknownModel},
		{"free strong", routing.Config{Strong: strong, Vet: vet, Prices: routing.Prices{"gpt-4o": {}}}, openrecall.ErrInvalid},
		{"negative price", routing.Config{Strong: strong, Vet: vet, Prices: routing.Prices{"gpt-4o": {InputPerMillion: -1}}}, openrecall.ErrInvalid},
		{"negative tokens", routing.Config{Strong: strong, Vet: vet, StrongMaxTokens: -1}, openrecall.ErrInvalid},
		{"gate above one", routing.Config{Strong: strong, Vet: vet, GateConfidence: 1.5}, openrecall.ErrInvalid},
		{"negative expected completion", routing.Config{Strong: strong, Vet: vet, ExpectedCompletionTokens: -1}, openrecall.ErrInvalid},
		{"ok", routing.Config{Strong: strong, Cheap: local.NewCheap(), Vet: vet}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := routing.New(tt.cfg)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("New: %v, want %v", err, tt.want)
			}
		})
	}
}
