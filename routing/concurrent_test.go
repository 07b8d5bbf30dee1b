package routing_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
)

// TestRouteConcurrentSharedBudget routes many alerts at once through one
// router and one budget: the run never spends past the limit, what the steps
// report is exactly what the budget recorded, and the alerts that did not
// fit were escalated. Run with -race.
func TestRouteConcurrentSharedBudget(t *testing.T) {
	in := noMemoryInput()
	one := worst(t, in, "gpt-4o", routing.DefaultStrongMaxTokens)
	limit := 10*one + one/2
	b := routing.NewBudget(limit)
	r := newRouter(t, routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap(), Budget: b})
	const alerts = 40
	outs := make([]routing.Output, alerts)
	var wg sync.WaitGroup
	for i := range alerts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.Route(context.Background(), in)
		}()
	}
	wg.Wait()
	var total openrecall.NanoUSD
	accepted, exceeded := 0, 0
	for _, out := range outs {
		total += out.Cost
		switch out.Steps[0].Outcome {
		case openrecall.OutcomeAccepted:
			accepted++
		case openrecall.OutcomeBudgetExceeded:
			exceeded++
			if out.Decision != openrecall.DecisionEscalated {
				t.Errorf("budget-exceeded alert decided %s", out.Decision)
			}
		}
	}
	st := b.State()
	if total != st.Spent || st.Spent > limit {
		t.Errorf("steps cost %d, budget spent %d, limit %d", total, st.Spent, limit)
	}
	if accepted < 10 || accepted+exceeded != alerts || !st.Exhausted {
		t.Errorf("accepted %d, exceeded %d, state %+v: want at least 10 calls and the rest escalated", accepted, exceeded, st)
	}
}

// TestRouteDoesNotModifyInput routes inputs of every shape and checks they
// are unchanged afterwards.
func TestRouteDoesNotModifyInput(t *testing.T) {
	r := newRouter(t, routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap()})
	for _, in := range []routing.Input{bypassInput(), benignInput(openrecall.SeverityLow), benignInput(openrecall.SeverityCritical), attackInput(), noMemoryInput()} {
		before := cloneInput(in)
		r.Route(context.Background(), in)
		if diff := cmp.Diff(before, in); diff != "" {
			t.Errorf("Route modified its input (-before +after):\n%s", diff)
		}
	}
}

func cloneInput(in routing.Input) routing.Input {
	out := in
	out.Matches = nil
	for _, m := range in.Matches {
		m.Incident.DeadEnds = append([]string(nil), m.Incident.DeadEnds...)
		out.Matches = append(out.Matches, m)
	}
	out.Triage.Supporting = append([]string(nil), in.Triage.Supporting...)
	return out
}
