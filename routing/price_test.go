package routing_test

import (
	"errors"
	"math"
	"testing"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

func TestPricesCost(t *testing.T) {
	p := routing.DefaultPrices()
	p["one-nano"] = routing.Price{InputPerMillion: 1, OutputPerMillion: 3}
	p["max"] = routing.Price{InputPerMillion: routing.MaxPricePerMillion, OutputPerMillion: routing.MaxPricePerMillion}
	tests := []struct {
		name          string
		model         string
		prompt, compl int
		want          openrecall.NanoUSD
		wantErr       error
	}{
		{"gpt-4o-mini input", "gpt-4o-mini", 1_000_000, 0, 150_000_000, nil},
		{"gpt-4o-mini output", "gpt-4o-mini", 0, 1_000_000, 600_000_000, nil},
		{"gpt-4o one token each", "gpt-4o", 1, 1, 12_500, nil},
		{"gpt-4o typical", "gpt-4o", 1234, 567, 3_085_000 + 5_670_000, nil},
		{"zero tokens cost nothing", "gpt-4o", 0, 0, 0, nil},
		{"a millionth rounds up", "one-nano", 1, 0, 1, nil},
		{"exact million", "one-nano", 1_000_000, 0, 1, nil},
		{"one past a million rounds up", "one-nano", 1_000_001, 0, 2, nil},
		{"input and output summed before rounding", "one-nano", 500_000, 166_667, 2, nil},
		{"sum exactly one", "one-nano", 400_000, 200_000, 1, nil},
		{"dated snapshot", "gpt-4o-2024-08-06", 1_000_000, 0, 2_500_000_000, nil},
		{"dated mini snapshot", "gpt-4o-mini-2024-07-18", 1_000_000, 0, 150_000_000, nil},
		{"unknown model", "gpt-5-ultra", 1, 1, 0, routing.ErrUnknownModel},
		{"suffix that is not a date", "gpt-4o-turbo", 1, 1, 0, routing.ErrUnknownModel},
		{"negative tokens", "gpt-4o", -1, 0, 0, openrecall.ErrInvalid},
		{"overflow", "max", math.MaxInt, math.MaxInt, 0, openrecall.ErrInvalid},
		{"largest that fits", "max", 1_000_000, 1_000_000, 2 * routing.MaxPricePerMillion, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Cost(tt.model, tt.prompt, tt.compl)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Cost error %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Cost = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPricesCostRoundsUpNeverDown(t *testing.T) {
	p := routing.Prices{"m": {InputPerMillion: 7, OutputPerMillion: 13}}
	for tokens := 0; tokens < 3_000_000; tokens += 99_991 {
		got, err := p.Cost("m", tokens, tokens/3)
		if err != nil {
			t.Fatal(err)
		}
		exact := float64(tokens)*7/1e6 + float64(tokens/3)*13/1e6
		if float64(got) < exact || float64(got) >= exact+1 {
			t.Fatalf("Cost(%d, %d) = %d, exact %.6f: want the ceiling", tokens, tokens/3, got, exact)
		}
	}
}

func TestDefaultPrices(t *testing.T) {
	p := routing.DefaultPrices()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o4-mini", "claude-3-5-haiku", "claude-sonnet-4", "llama-3.1-8b-instant", "llama-3.3-70b-versatile"} {
		pr, ok := p[name]
		if !ok || pr.InputPerMillion <= 0 || pr.OutputPerMillion < pr.InputPerMillion {
			t.Errorf("%s: price %+v missing or implausible", name, pr)
		}
	}
	mini, _ := p.Cost("gpt-4o-mini", 1000, 400)
	full, _ := p.Cost("gpt-4o", 1000, 400)
	if mini >= full {
		t.Errorf("the cheap tier (%d) must be cheaper than the strong tier (%d)", mini, full)
	}
	p["gpt-4o"] = routing.Price{}
	if routing.DefaultPrices()["gpt-4o"].InputPerMillion == 0 {
		t.Error("DefaultPrices must return a fresh map")
	}
}
