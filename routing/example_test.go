package routing_test

import (
	"context"
	"fmt"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
)

// A critical crash loop that memory calls known_benign: the guard did not
// bypass, the cheap model defers on critical severity, and the strong model
// confirms the memory decision, all under the always-strong baseline.
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
	fmt.Println("within baseline:", out.Cost <= out.Baseline+r.FingerprintBaseline(in.Alert))
	// Output:
	// analysis cheap gate-failed live=false proposed=escalated cost=$0.000205
	// analysis strong accepted live=false proposed=known_benign cost=$0.003425
	// decision: known_benign
	// within baseline: true
}
