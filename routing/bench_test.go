package routing_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
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
			if held, ok := bud.Reserve(100); ok {
				bud.Settle(held, 90)
			}
		}
	})
}

// corpusInputs returns routing inputs of the alerts rendered from the rule
// corpus (testdata/prometheus-rules), through intake.
func corpusInputs(b *testing.B) []routing.Input {
	rules, err := rulecorpus.LoadNear(".")
	if errors.Is(err, rulecorpus.ErrAbsent) {
		testenv.Missing(b, err)
	}
	if err != nil {
		b.Fatal(err)
	}
	var ins []routing.Input
	for i, r := range rules {
		doc, err := rulecorpus.Webhook(rulecorpus.Alert(r, rulecorpus.Firing{N: i}))
		if err != nil {
			b.Fatal(err)
		}
		rd := intake.NewReader(bytes.NewReader(doc), intake.Options{})
		for {
			rec, err := rd.Next()
			if err != nil {
				break
			}
			if rec.Err == nil {
				ins = append(ins, routing.Input{Alert: rec.Alert})
			}
		}
	}
	return ins
}

// BenchmarkBuildPromptCorpus builds the prompt of each alert of the rule
// corpus in turn: redaction, clipping and the case file's encoding.
func BenchmarkBuildPromptCorpus(b *testing.B) {
	ins := corpusInputs(b)
	for i := 0; b.Loop(); i++ {
		routing.BuildPrompt(ins[i%len(ins)])
	}
}

// BenchmarkRedactCorpus redacts every field of each alert of the rule
// corpus the case file carries, with the prefilters and without.
func BenchmarkRedactCorpus(b *testing.B) {
	ins := corpusInputs(b)
	for _, bc := range []struct {
		name   string
		redact func(string) string
		field  func(string, string) string
	}{{"prefilter", routing.Redact, routing.RedactField}, {"every", routing.RedactEvery, routing.RedactFieldEvery}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				a := ins[i%len(ins)].Alert
				for _, s := range []string{a.Title, a.Text, a.ID, a.Service, a.Environment, a.Source} {
					bc.redact(s)
				}
				for k, v := range a.Labels {
					bc.field(k, v)
				}
				for k, v := range a.Annotations {
					bc.field(k, v)
				}
			}
		})
	}
}

// BenchmarkRouteCorpus routes each alert of the rule corpus in turn without
// memory, as most of the corpus queue goes: prompt, the strong local model,
// the quality gate.
func BenchmarkRouteCorpus(b *testing.B) {
	ins := corpusInputs(b)
	r, err := routing.New(routing.Config{Strong: local.NewStrong(), Cheap: local.NewCheap(), Vet: vet, Budget: routing.NewBudget(0)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		r.Route(ctx, ins[i%len(ins)])
	}
}
