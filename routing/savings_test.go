package routing_test

import (
	"context"
	"testing"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

// The savings rules of DESIGN §7, each against an oracle computed by hand:
// a price table of round numbers and live fakes that report their usage,
// so every expected amount below is a literal product, not the production
// price function.
//
//	strong-x: 1000 nano-dollars per prompt token, 4000 per completion token
//	cheap-x:   100 nano-dollars per prompt token,  400 per completion token
func savingsRouter(t *testing.T, cheap, strong func(routing.Request) (routing.Response, error), budget *routing.Budget) (*routing.Router, *fakeModel, *fakeModel) {
	t.Helper()
	prices := routing.Prices{
		"strong-x": {InputPerMillion: 1000 * 1_000_000, OutputPerMillion: 4000 * 1_000_000},
		"cheap-x":  {InputPerMillion: 100 * 1_000_000, OutputPerMillion: 400 * 1_000_000},
	}
	s := &fakeModel{name: "s", priced: "strong-x", answer: strong}
	c := &fakeModel{name: "c", priced: "cheap-x", answer: cheap}
	r := newRouter(t, routing.Config{Strong: s, Cheap: c, Prices: prices, ExpectedCompletionTokens: 300, Budget: budget})
	return r, c, s
}

func live(text string, prompt, completion int) func(routing.Request) (routing.Response, error) {
	return func(routing.Request) (routing.Response, error) {
		return routing.Response{Text: text, PromptTokens: prompt, CompletionTokens: completion, Live: true}, nil
	}
}

const (
	benignAnswer = `{"decision":"known_benign","confidence":0.9,"cited_memory_ids":["inc_a"]}`
	realAnswer   = `{"decision":"real","confidence":0.9}`
	unsureAnswer = `{"decision":"known_benign","confidence":0.2}`
)

func TestSavingsStrongOnlySavesExactlyZero(t *testing.T) {
	r, _, s := savingsRouter(t, live(benignAnswer, 1, 1), live(realAnswer, 1000, 200), nil)
	out := r.Route(context.Background(), noMemoryInput())
	// 1000·1000 + 200·4000
	if out.Cost != 1_800_000 || out.Baseline != 1_800_000 || s.calls.Load() != 1 {
		t.Errorf("cost %d, baseline %d, strong calls %d: want 1800000, 1800000, 1", out.Cost, out.Baseline, s.calls.Load())
	}
}

func TestSavingsBypassSavesItsBaseline(t *testing.T) {
	r, c, s := savingsRouter(t, live(benignAnswer, 1, 1), live(realAnswer, 1, 1), nil)
	in := bypassInput()
	out := r.Route(context.Background(), in)
	p := routing.EstimatePromptTokens(routing.BuildPrompt(in))
	// p prompt tokens at 1000, the expected 300 completion tokens at 4000.
	want := openrecall.NanoUSD(p*1000 + 300*4000)
	if !out.Bypassed || out.Cost != 0 || out.Baseline != want || c.calls.Load()+s.calls.Load() != 0 {
		t.Errorf("bypassed %v cost %d baseline %d calls %d: want a free bypass saving %d", out.Bypassed, out.Cost, out.Baseline, c.calls.Load()+s.calls.Load(), want)
	}
}

func TestSavingsCheapPassSavesTheDifference(t *testing.T) {
	r, c, s := savingsRouter(t, live(benignAnswer, 1000, 100), live(realAnswer, 1, 1), nil)
	in := benignInput(openrecall.SeverityLow)
	out := r.Route(context.Background(), in)
	p := routing.EstimatePromptTokens(routing.BuildPrompt(in))
	wantBase := openrecall.NanoUSD(p*1000 + 300*4000)
	// 1000·100 + 100·400
	if out.Cost != 140_000 || out.Baseline != wantBase || out.Decision != openrecall.DecisionKnownBenign {
		t.Errorf("cost %d baseline %d decision %s: want 140000, %d, known_benign", out.Cost, out.Baseline, out.Decision, wantBase)
	}
	if saved := out.Baseline - out.Cost; saved != wantBase-140_000 || c.calls.Load() != 1 || s.calls.Load() != 0 {
		t.Errorf("saved %d with %d cheap and %d strong calls, want %d, 1, 0", saved, c.calls.Load(), s.calls.Load(), wantBase-140_000)
	}
}

func TestSavingsCheapFailEscalatesWithoutStrongCall(t *testing.T) {
	r, c, s := savingsRouter(t, live(unsureAnswer, 1000, 100), live(benignAnswer, 1, 1), nil)
	out := r.Route(context.Background(), benignInput(openrecall.SeverityLow))
	if s.calls.Load() != 0 || c.calls.Load() != 1 {
		t.Fatalf("cheap calls %d, strong calls %d: the strong model must not follow a failed cheap answer", c.calls.Load(), s.calls.Load())
	}
	if out.Decision != openrecall.DecisionEscalated || out.Unanalysed || out.Cost != 140_000 || out.Baseline != 140_000 {
		t.Errorf("decision %s unanalysed %v cost %d baseline %d: want escalated with the cheap answer, 140000 both", out.Decision, out.Unanalysed, out.Cost, out.Baseline)
	}
	if out.Analysis == nil || out.Analysis.Model != "c" || out.Analysis.Decision != openrecall.DecisionEscalated {
		t.Errorf("analysis %+v: want the cheap answer attached for the person", out.Analysis)
	}
	if last := out.Steps[len(out.Steps)-1]; last.EscalationReason == "" || last.Outcome != openrecall.OutcomeGateFailed {
		t.Errorf("step %+v: want the gate's reason", last)
	}
}

func TestSavingsBudgetSkippedNeverSaves(t *testing.T) {
	// A budget of one nano-dollar refuses every call.
	for name, in := range map[string]routing.Input{"cheap tier": benignInput(openrecall.SeverityLow), "strong tier": noMemoryInput()} {
		t.Run(name, func(t *testing.T) {
			r, c, s := savingsRouter(t, live(benignAnswer, 1, 1), live(realAnswer, 1, 1), routing.NewBudget(1))
			out := r.Route(context.Background(), in)
			if !out.Unanalysed || out.Cost != 0 || out.Baseline != 0 || c.calls.Load()+s.calls.Load() != 0 {
				t.Errorf("unanalysed %v cost %d baseline %d calls %d: want escalated without analysis, saving nothing", out.Unanalysed, out.Cost, out.Baseline, c.calls.Load()+s.calls.Load())
			}
			if out.Steps[0].Outcome != openrecall.OutcomeBudgetExceeded || out.Decision != openrecall.DecisionEscalated {
				t.Errorf("steps %+v decision %s", out.Steps, out.Decision)
			}
		})
	}
}

func TestSavingsCheapNotTriedAboveBaseline(t *testing.T) {
	// A cheap model dearer per prompt token than the strong one, and an
	// expected completion of 1 token: the cheap worst case (p·2000 +
	// 400·400) passes the baseline (p·1000 + 4000) for any prompt p.
	prices := routing.Prices{
		"strong-x": {InputPerMillion: 1000 * 1_000_000, OutputPerMillion: 4000 * 1_000_000},
		"cheap-x":  {InputPerMillion: 2000 * 1_000_000, OutputPerMillion: 400 * 1_000_000},
	}
	s := &fakeModel{name: "s", priced: "strong-x", answer: live(benignAnswer, 10, 10)}
	c := &fakeModel{name: "c", priced: "cheap-x", answer: live(benignAnswer, 10, 10)}
	r := newRouter(t, routing.Config{Strong: s, Cheap: c, Prices: prices, ExpectedCompletionTokens: 1})
	out := r.Route(context.Background(), benignInput(openrecall.SeverityLow))
	if c.calls.Load() != 0 || s.calls.Load() != 1 || out.Baseline != out.Cost {
		t.Errorf("cheap calls %d strong %d, cost %d baseline %d: the cheap model whose worst case passes the baseline must not be tried", c.calls.Load(), s.calls.Load(), out.Cost, out.Baseline)
	}
}
