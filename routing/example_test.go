package routing_test

import (
	"context"
	"fmt"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
)

// A critical crash loop that memory calls known_benign: the guard did not
// bypass, the cheap model is asked to confirm and defers on critical
// severity, so the alert goes to a person with the cheap answer attached.
// The strong model is not called after it, and nothing is counted as saved.
func ExampleRouter_Route() {
	r, err := routing.New(routing.Config{
		Cheap:  local.NewCheap(),
		Strong: local.NewStrong(),
		Vet:    vet,
		Budget: routing.NewBudget(openrecall.DollarsToNano(0.05)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := benignInput(openrecall.SeverityCritical)
	out := r.Route(context.Background(), in)
	for _, s := range out.Steps {
		fmt.Printf("%s %s %s live=%v proposed=%s cost=%s\n", s.Step, s.Tier, s.Outcome, s.Live, s.Proposed, s.Cost)
	}
	fmt.Println("decision:", out.Decision)
	fmt.Println("saved:", out.Baseline-out.Cost)
	// Output:
	// analysis cheap gate-failed live=false proposed=escalated cost=$0.000205
	// decision: escalated
	// saved: $0.000000
}
