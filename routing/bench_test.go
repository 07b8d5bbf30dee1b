package routing_test

import (
	"context"
	"testing"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
)

func BenchmarkRoute(b *testing.B) {
	r, err := routing.New(routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap(), Vet: vet, Budget: routing.NewBudget(0)})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		in   routing.Input
	}{
		{"bypass", bypassInput()},
		{"cheap", benignInput(openrecall.SeverityLow)},
		{"cheap_then_strong", benignInput(openrecall.SeverityCritical)},
		{"strong_attack", attackInput()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				r.Route(ctx, bc.in)
			}
		})
	}
}

func BenchmarkBuildPrompt(b *testing.B) {
	in := benignInput(openrecall.SeverityLow)
	for b.Loop() {
		routing.BuildPrompt(in)
	}
}

func BenchmarkPricesCost(b *testing.B) {
	p := routing.DefaultPrices()
	for b.Loop() {
		if _, err := p.Cost("gpt-4o-2024-08-06", 1234, 567); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBudgetParallel(b *testing.B) {
	bud := routing.NewBudget(0)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if bud.Reserve(100) {
				bud.Settle(100, 90)
			}
		}
	})
}
