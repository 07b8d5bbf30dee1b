package routing

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openrecall "github.com/openrecall/openrecall"
)

// Defaults of Config.
const (
	DefaultCheapMaxTokens  = 400
	DefaultStrongMaxTokens = 800
	// DefaultExpectedCompletionTokens is the strong model's expected
	// completion before a memory has recorded any: a triage answer of the
	// analysis schema (decision, confidence, summary, hypotheses, commands,
	// next steps) runs to about 200-250 tokens; the local analyst averages
	// 228 on the bundled queue and a gpt-4o-class peer 219. The lower end is
	// taken so that a default never inflates a saving.
	DefaultExpectedCompletionTokens = 220
	DefaultGateConfidence           = 0.60
)

// memoryModel is the Model name of a memory-bypass analysis.
const memoryModel = "memory"

// Config configures a Router.
type Config struct {
	// Cheap is the cheap tier; nil means the router always uses Strong.
	Cheap Model
	// Strong is the strong tier; required.
	Strong Model
	// Prices prices every call; nil means DefaultPrices.
	Prices Prices
	// CheapMaxTokens and StrongMaxTokens cap each call's completion
	// (defaults 400 and 800).
	CheapMaxTokens, StrongMaxTokens int
	// ExpectedCompletionTokens is the strong model's expected completion,
	// which prices the baseline of an alert the strong model does not
	// analyse (DESIGN §7): the running mean of the strong completions a
	// memory has recorded, frozen by the caller at the start of a run, or
	// DefaultExpectedCompletionTokens when it is 0.
	ExpectedCompletionTokens int
	// Completions, when set, gives that mean again for each UTC day of Now
	// (serve: one router for the life of the process; ok is false while
	// memory has recorded none, and ExpectedCompletionTokens holds): read
	// on the day's first route and frozen for the day, so each day prices
	// as a run begun that day does. An error keeps the last value and
	// reads again on the next route.
	Completions func() (tokens int, ok bool, err error)
	// GateConfidence is the quality gate's minimum confidence (default 0.60).
	GateConfidence float64
	// Vet is the guard's check of a proposed decision; required.
	Vet VetFunc
	// Budget is the optional run budget; nil means unlimited.
	Budget *Budget
	// Now is the clock latencies are measured with; nil means time.Now.
	Now func() time.Time
}

// Router routes analysed alerts to the memory bypass or the model tiers. It
// is safe for concurrent use when its models are.
type Router struct {
	cfg          Config
	cheapPriced  string
	strongPriced string
	// expected is the day's expected completion (Config.Completions).
	expected atomic.Pointer[dayTokens]
	reprice  sync.Mutex // one reading of Completions at a time
}

// dayTokens is an expected completion and the UTC day it holds for.
type dayTokens struct {
	day    string
	tokens int
}

// Input is what routing needs about one alert: the results of the earlier
// stages. Route does not modify it.
type Input struct {
	Alert       openrecall.Alert
	Fingerprint openrecall.Fingerprint
	Matches     []openrecall.Match
	Triage      openrecall.TriageResult
	Guard       openrecall.GuardVerdict
}

// Output is what routing concluded: the steps after intake and fingerprint,
// the final decision, the analysis (nil when no usable one exists), whether
// the memory bypass happened, whether the alert was escalated without
// analysis, the cost of the steps and the alert's honest baseline (DESIGN
// §7): what the strong model would cost to analyse it when the bypass or a
// passing cheap answer spared that call, else the cost itself, so that only
// a model call not made counts as a saving.
type Output struct {
	Steps    []openrecall.RouteStep
	Decision openrecall.Decision
	Analysis *openrecall.Analysis
	Bypassed bool
	// Unanalysed is true when no model answered: the run budget or the
	// model was unavailable, and the alert was escalated without analysis.
	Unanalysed bool
	Cost       openrecall.NanoUSD
	Baseline   openrecall.NanoUSD
}

// New returns a Router, or an error wrapping openrecall.ErrInvalid when the
// configuration is unusable: no strong model or Vet, a model the price table
// cannot price, a strong model priced at zero input (the baseline must be
// positive), negative token limits or a gate outside [0, 1].
func New(cfg Config) (*Router, error) {
	if cfg.Strong == nil {
		return nil, fmt.Errorf("routing: strong model is required: %w", openrecall.ErrInvalid)
	}
	if cfg.Vet == nil {
		return nil, fmt.Errorf("routing: vet function is required: %w", openrecall.ErrInvalid)
	}
	if cfg.Prices == nil {
		cfg.Prices = DefaultPrices()
	} else {
		cfg.Prices = maps.Clone(cfg.Prices)
	}
	if err := cfg.Prices.Validate(); err != nil {
		return nil, fmt.Errorf("routing: %w", err)
	}
	for _, v := range []struct {
		name string
		n    *int
		def  int
	}{
		{"cheap max tokens", &cfg.CheapMaxTokens, DefaultCheapMaxTokens},
		{"strong max tokens", &cfg.StrongMaxTokens, DefaultStrongMaxTokens},
		{"expected completion tokens", &cfg.ExpectedCompletionTokens, DefaultExpectedCompletionTokens},
	} {
		switch {
		case *v.n < 0:
			return nil, fmt.Errorf("routing: %s %d is negative: %w", v.name, *v.n, openrecall.ErrInvalid)
		case *v.n == 0:
			*v.n = v.def
		}
	}
	if cfg.GateConfidence == 0 {
		cfg.GateConfidence = DefaultGateConfidence
	}
	if math.IsNaN(cfg.GateConfidence) || cfg.GateConfidence < 0 || cfg.GateConfidence > 1 {
		return nil, fmt.Errorf("routing: gate confidence %v is outside [0, 1]: %w", cfg.GateConfidence, openrecall.ErrInvalid)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Router{cfg: cfg, strongPriced: pricedName(cfg.Strong)}
	sp, ok := cfg.Prices.Lookup(r.strongPriced)
	if !ok {
		return nil, fmt.Errorf("routing: strong model %s priced as %q: %w", cfg.Strong.Name(), r.strongPriced, ErrUnknownModel)
	}
	if sp.InputPerMillion <= 0 {
		return nil, fmt.Errorf("routing: strong model %s has no input price, so the baseline would be zero: %w", r.strongPriced, openrecall.ErrInvalid)
	}
	if cfg.Cheap != nil {
		r.cheapPriced = pricedName(cfg.Cheap)
		if _, ok := cfg.Prices.Lookup(r.cheapPriced); !ok {
			return nil, fmt.Errorf("routing: cheap model %s priced as %q: %w", cfg.Cheap.Name(), r.cheapPriced, ErrUnknownModel)
		}
	}
	return r, nil
}

func pricedName(m Model) string {
	if p, ok := m.(PricedModel); ok && p.PricedAs() != "" {
		return p.PricedAs()
	}
	return m.Name()
}

// StrongPricedAs returns the name the strong model's calls are priced as.
func (r *Router) StrongPricedAs() string { return r.strongPriced }

// ExpectedCompletionTokens returns the strong model's expected completion
// this router prices baselines with (today's, with Config.Completions).
func (r *Router) ExpectedCompletionTokens() int {
	if r.cfg.Completions == nil {
		return r.cfg.ExpectedCompletionTokens
	}
	day := dayOf(r.cfg.Now)
	if e := r.expected.Load(); e != nil && e.day == day {
		return e.tokens
	}
	r.reprice.Lock()
	defer r.reprice.Unlock()
	last := r.expected.Load()
	if last != nil && last.day == day {
		return last.tokens
	}
	n, ok, err := r.cfg.Completions()
	switch {
	case err != nil && last != nil:
		return last.tokens
	case err != nil:
		return r.cfg.ExpectedCompletionTokens
	case !ok || n <= 0:
		n = r.cfg.ExpectedCompletionTokens
	}
	r.expected.Store(&dayTokens{day: day, tokens: n})
	return n
}

// route is the state of one Route call.
type route struct {
	r        *Router
	in       Input
	req      Request
	out      Output
	prompt   int                // estimated prompt tokens of req
	tokens   int                // the strong model's expected completion
	expected openrecall.NanoUSD // the strong analysis at the expected completion
}

// Route runs the routing steps of one alert after intake and fingerprint:
// the memory bypass, the cheap model as confirmer, or the strong model. The
// strong model is never called after the cheap one: a cheap answer that
// fails the gate escalates the alert to a person with that answer attached.
// Route never panics on a model error and never returns an error: every
// failure is a step and an escalation. The last step carries
// Output.Baseline; earlier ones (the retried attempts of a live call) carry
// 0, so no retried attempt looks like a saving.
func (r *Router) Route(ctx context.Context, in Input) Output {
	rt := &route{r: r, in: in, req: BuildPrompt(in)}
	rt.prompt = EstimatePromptTokens(rt.req)
	rt.tokens = r.ExpectedCompletionTokens()
	expected, err := r.cfg.Prices.Cost(r.strongPriced, rt.prompt, rt.tokens)
	if err != nil {
		start := r.cfg.Now()
		rt.stop(openrecall.RouteStep{
			Step: openrecall.StepAnalysis, Model: r.strongPriced, Tier: openrecall.TierStrong, Skipped: true,
			Reason: "pricing the strong analysis failed", Outcome: openrecall.OutcomeModelError,
		}, start, "pricing failed: "+err.Error())
		return rt.out
	}
	rt.expected = expected

	strongReason := ""
	if in.Guard.Bypass {
		why := bypassConflict(in)
		if why == "" {
			rt.bypass()
			return rt.out
		}
		strongReason = "guard verdict says bypass but " + why + ": strong model forced"
	}
	if strongReason == "" {
		var useCheap bool
		useCheap, strongReason = rt.chooseTier()
		if useCheap {
			rt.analyse(ctx, openrecall.TierCheap, strongReason)
			return rt.out
		}
	}
	rt.analyse(ctx, openrecall.TierStrong, strongReason)
	return rt.out
}

// settle sets the alert's baseline once its steps are final: the strong
// analysis at its expected completion when saves (a bypass, a passing cheap
// answer) and that covers the cost, else the cost itself.
func (rt *route) settle(saves bool) {
	rt.out.Baseline = rt.out.Cost
	if saves && rt.expected >= rt.out.Cost {
		rt.out.Baseline = rt.expected
	}
	if n := len(rt.out.Steps); n > 0 {
		rt.out.Steps[n-1].Baseline = rt.out.Baseline
	}
}

// bypassConflict names why a guard verdict that says bypass contradicts the
// rest of the input, or returns "".
func bypassConflict(in Input) string {
	switch {
	case in.Fingerprint.HasAttack():
		return "the alert has attack pattern " + in.Fingerprint.AttackPattern
	case !in.Triage.Decision.Benign():
		return fmt.Sprintf("triage proposes %q, not a benign decision", in.Triage.Decision)
	case in.Triage.StrongCount < 1:
		return "no strong memory match supports it"
	}
	return ""
}

// add appends a step with its latency and budget state, and adds its cost.
// settle sets the last step's baseline.
func (rt *route) add(s openrecall.RouteStep, start time.Time) *openrecall.RouteStep {
	s.MemoryHits = len(rt.in.Matches)
	s.Latency = rt.r.cfg.Now().Sub(start)
	s.Budget = rt.r.cfg.Budget.State()
	rt.out.Steps = append(rt.out.Steps, s)
	rt.out.Cost += s.Cost
	return &rt.out.Steps[len(rt.out.Steps)-1]
}
func (rt *route) bypass() {
	start := rt.r.cfg.Now()
	in := rt.in
	var supporting []openrecall.Match
	for _, m := range in.Matches {
		if contains(in.Triage.Supporting, m.Incident.ID) {
			supporting = append(supporting, m)
		}
	}
	mems := CaseMemories(supporting)
	a := &openrecall.Analysis{
		Decision:   in.Triage.Decision,
		Confidence: in.Triage.Confidence,
		Summary: fmt.Sprintf("Closed from memory without a model call: %d of %d strong matches were decided %s (confidence %.2f).",
			in.Triage.ConsistentCount, in.Triage.StrongCount, in.Triage.Decision, in.Triage.Confidence),
		SkipPaths:   SkipPaths(mems),
		CitedMemory: append([]string(nil), in.Triage.Supporting...),
		Model:       memoryModel,
		Live:        false,
	}
	if len(a.SkipPaths) == 0 {
		a.SkipPaths = nil
	}
	if len(a.CitedMemory) == 0 {
		a.CitedMemory = nil
	}
	reason := "memory vouches for a benign, non-attack alert"
	if in.Guard.Reason != "" {
		reason += ": " + in.Guard.Reason
	}
	rt.add(openrecall.RouteStep{
		Step: openrecall.StepMemoryBypass, Model: memoryModel, Skipped: true,
		Reason: reason, Outcome: openrecall.OutcomeOK, Proposed: in.Triage.Decision,
	}, start)
	rt.out.Decision = in.Triage.Decision
	rt.out.Analysis = a
	rt.out.Bypassed = true
	rt.settle(true)
}

// chooseTier decides whether the cheap model confirms the memory's proposal,
// and why.
func (rt *route) chooseTier() (bool, string) {
	in, r := rt.in, rt.r
	t := in.Triage
	switch {
	case in.Fingerprint.HasAttack():
		return false, "attack pattern " + in.Fingerprint.AttackPattern + ": security case, strong model forced"
	case t.Decision == openrecall.DecisionReal:
		return false, "triage proposes real: strong model forced"
	case t.StrongCount < 1:
		return false, fmt.Sprintf("weak or absent memory (%d matches, best score %.2f): strong model forced", len(in.Matches), t.BestScore)
	case !t.Decision.Benign():
		return false, fmt.Sprintf("inconsistent memory (triage %s, consistency %.2f over %d strong matches): strong model forced", t.Decision, t.Consistency, t.StrongCount)
	case in.Guard.RefusedOnlyBySeverity():
		// DESIGN §7: an alert refused only by the severity clause goes to
		// the strong model and a person approves it, never the cheap tier.
		return false, "refused only by the severity clause (e) (" + in.Guard.Reason + "): strong model forced, a person approves"
	case r.cfg.Cheap == nil:
		return false, "no cheap model configured: strong model"
	}
	cheapWorst, err := r.cfg.Prices.Cost(r.cheapPriced, rt.prompt, r.cfg.CheapMaxTokens)
	if err != nil {
		return false, "pricing the cheap model failed (" + err.Error() + "): strong model"
	}
	if cheapWorst > rt.expected {
		return false, fmt.Sprintf("cheap worst case %s would pass the baseline %s (strong analysis at %d expected completion tokens): strong model",
			cheapWorst, rt.expected, rt.tokens)
	}
	guard := ""
	if in.Guard.Reason != "" {
		guard = " (" + in.Guard.Reason + ")"
	}
	return true, fmt.Sprintf("strong consistent %s memory (%d/%d strong matches, confidence %.2f) the guard did not bypass%s: cheap model confirms, worst case %s within the baseline %s",
		t.Decision, t.ConsistentCount, t.StrongCount, t.Confidence, guard, cheapWorst, rt.expected)
}

// analyse makes the one model call of the given tier, unless the run budget
// forbids it, gates the answer, records the step and settles the baseline.
// Every failure escalates the alert to a person: a call not made (budget,
// pricing) or a model error without analysis, a failed answer with it.
func (rt *route) analyse(ctx context.Context, tier openrecall.Tier, reason string) {
	r := rt.r
	start := r.cfg.Now()
	m, priced, maxTokens := r.cfg.Strong, r.strongPriced, r.cfg.StrongMaxTokens
	if tier == openrecall.TierCheap {
		m, priced, maxTokens = r.cfg.Cheap, r.cheapPriced, r.cfg.CheapMaxTokens
	}
	step := openrecall.RouteStep{Step: openrecall.StepAnalysis, Model: priced, Tier: tier, Reason: reason}
	worst, err := r.cfg.Prices.Cost(priced, rt.prompt, maxTokens)
	if err != nil {
		step.Skipped, step.Outcome = true, openrecall.OutcomeModelError
		rt.stop(step, start, "pricing failed: "+err.Error())
		return
	}
	held, ok := r.cfg.Budget.Reserve(worst)
	if !ok {
		st := r.cfg.Budget.State()
		step.Skipped, step.Outcome = true, openrecall.OutcomeBudgetExceeded
		rt.stop(step, start, fmt.Sprintf("run budget: worst case %s of this call would pass the budget (%s spent of %s); escalated without analysis", worst, st.Spent, st.Limit))
		return
	}
	req := rt.req
	req.MaxTokens = maxTokens
	resp, callErr := completeSafely(ctx, m, req)
	start = rt.attemptSteps(&step, start, resp.Attempts)
	if callErr != nil {
		r.cfg.Budget.Settle(held, 0)
		if errors.Is(callErr, ErrUnavailable) {
			step.Outcome = openrecall.OutcomeUnavailable
			rt.stop(step, start, "escalated to a person: model unavailable: "+callErr.Error())
			return
		}
		step.Outcome = openrecall.OutcomeModelError
		rt.stop(step, start, "model error: "+callErr.Error()+"; escalated without analysis")
		return
	}
	b := r.billed(priced, req, resp, rt.prompt, maxTokens, worst)
	r.cfg.Budget.Settle(held, b.cost)
	step.Model, step.Live = b.model, resp.Live
	step.PromptTokens, step.CompletionTokens, step.Cost = b.prompt, b.completion, b.cost
	step.UsageAnomaly = b.anomaly
	v := r.gate(rt.in, resp.Text)
	step.Outcome, step.Proposed = v.outcome, v.proposed
	if v.outcome != openrecall.OutcomeAccepted {
		rt.fail(m, step, start, v.analysis, v.reason)
		return
	}
	a := *v.analysis
	a.Live, a.Model = resp.Live, m.Name()
	rt.add(step, start)
	rt.out.Decision = a.Decision
	rt.out.Analysis = &a
	rt.settle(tier == openrecall.TierCheap)
}

// completeSafely calls the model and turns a panic into an error, so one bad
// model cannot abort a queue.
func completeSafely(ctx context.Context, m Model, req Request) (resp Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("model %s panicked: %v", m.Name(), p)
		}
	}()
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	return m.Complete(ctx, req)
}

// stop records a step whose model gave no answer (no call made, or the call
// failed) and escalates the alert without analysis.
func (rt *route) stop(step openrecall.RouteStep, start time.Time, why string) {
	step.EscalationReason = why
	rt.add(step, start)
	rt.out.Decision = openrecall.DecisionEscalated
	rt.out.Analysis = nil
	rt.out.Unanalysed = true
	rt.settle(false)
}

// fail records a model answer that failed the gate and escalates the alert
// to a person, keeping the parsed analysis (if any) for them, with its
// decision set to escalated and its citations limited to recalled memories.
// No other model is called after it.
func (rt *route) fail(m Model, step openrecall.RouteStep, start time.Time, parsed *openrecall.Analysis, why string) {
	step.EscalationReason = string(step.Tier) + " answer " + step.Outcome + ": " + why + "; escalated to a person"
	rt.add(step, start)
	rt.out.Decision = openrecall.DecisionEscalated
	rt.out.Analysis = nil
	if parsed != nil {
		a := *parsed
		proposed := a.Decision
		a.Decision = openrecall.DecisionEscalated
		a.Model = m.Name()
		a.Live = step.Live
		a.CitedMemory = knownIDs(a.CitedMemory, rt.in.Matches)
		a.Summary = strings.TrimSpace(fmt.Sprintf("Escalated for a person: the %s model proposed %q but its answer %s (%s). %s", step.Tier, proposed, step.Outcome, why, a.Summary))
		rt.out.Analysis = &a
	}
	rt.settle(false)
}

func knownIDs(ids []string, matches []openrecall.Match) []string {
	var out []string
	for _, id := range ids {
		for _, m := range matches {
			if m.Incident.ID == id {
				out = append(out, id)
				break
			}
		}
	}
	return out
}
