package routing

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"

	openrecall "github.com/openrecall/openrecall"
)

// ErrUnknownModel is returned by Prices.Cost for a model the table lacks.
var ErrUnknownModel = errors.New("unknown model")

// MaxPricePerMillion is the largest accepted price per million tokens
// (one million dollars): with it, no realistic usage overflows NanoUSD.
const MaxPricePerMillion openrecall.NanoUSD = 1_000_000 * openrecall.NanoPerDollar

// Price is the list price of one model in nano-dollars per million tokens.
type Price struct {
	InputPerMillion  openrecall.NanoUSD `json:"input_per_million_nano_usd" yaml:"input_per_million_nano_usd"`
	OutputPerMillion openrecall.NanoUSD `json:"output_per_million_nano_usd" yaml:"output_per_million_nano_usd"`
}

// Validate reports a negative price or one above MaxPricePerMillion.
func (p Price) Validate() error {
	for _, v := range []openrecall.NanoUSD{p.InputPerMillion, p.OutputPerMillion} {
		if v < 0 || v > MaxPricePerMillion {
			return fmt.Errorf("price %d nano-dollars per million tokens is outside [0, %d]: %w", v, MaxPricePerMillion, openrecall.ErrInvalid)
		}
	}
	return nil
}

// Prices maps a model name to its price.
type Prices map[string]Price

func usd(d float64) openrecall.NanoUSD { return openrecall.DollarsToNano(d) }

// DefaultPrices returns the built-in price table: public list prices per
// million tokens in US dollars, standard (non-batch, non-cached) tier, as
// published on the vendors' pricing pages (openai.com/api/pricing,
// anthropic.com/pricing, groq.com/pricing) and checked in June 2025.
// Configuration overrides or extends it. Each call returns a fresh map.
func DefaultPrices() Prices {
	return Prices{
		// OpenAI
		"gpt-4o-mini":   {usd(0.15), usd(0.60)},
		"gpt-4o":        {usd(2.50), usd(10.00)},
		"gpt-4.1":       {usd(2.00), usd(8.00)},
		"gpt-4.1-mini":  {usd(0.40), usd(1.60)},
		"gpt-4.1-nano":  {usd(0.10), usd(0.40)},
		"o4-mini":       {usd(1.10), usd(4.40)},
		"o3":            {usd(2.00), usd(8.00)},
		"o3-mini":       {usd(1.10), usd(4.40)},
		"gpt-3.5-turbo": {usd(0.50), usd(1.50)},
		// Anthropic
		"claude-3-5-haiku":  {usd(0.80), usd(4.00)},
		"claude-3-5-sonnet": {usd(3.00), usd(15.00)},
		"claude-sonnet-4":   {usd(3.00), usd(15.00)},
		"claude-opus-4":     {usd(15.00), usd(75.00)},
		// Groq
		"llama-3.1-8b-instant":    {usd(0.05), usd(0.08)},
		"llama-3.3-70b-versatile": {usd(0.59), usd(0.79)},
	}
}

// Validate reports the first invalid entry, in name order.
func (p Prices) Validate() error {
	names := make([]string, 0, len(p))
	for name := range p {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" {
			return fmt.Errorf("price table: empty model name: %w", openrecall.ErrInvalid)
		}
		if err := p[name].Validate(); err != nil {
			return fmt.Errorf("price of %s: %w", name, err)
		}
	}
	return nil
}

// Lookup returns the price of model: the exact name, else the longest name in
// the table that model extends with a dated snapshot suffix
// ("gpt-4o-2024-08-06" is priced as "gpt-4o", "gpt-4o-mini-2024-07-18" as
// "gpt-4o-mini"), else false.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for name := range p {
		rest, ok := strings.CutPrefix(model, name+"-")
		if !ok || rest == "" || rest[0] < '0' || rest[0] > '9' {
			continue
		}
		if len(name) > len(best) {
			best, found = name, true
		}
	}
	if !found {
		return Price{}, false
	}
	return p[best], true
}

// Cost returns the price of one call in nano-dollars:
// (promptTokens·input + completionTokens·output) / 1e6, computed in exact
// integer arithmetic and rounded up to the next nano-dollar. An unknown
// model, negative token counts, an invalid price or a result beyond NanoUSD
// is an error.
func (p Prices) Cost(model string, promptTokens, completionTokens int) (openrecall.NanoUSD, error) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, fmt.Errorf("price %s: %w", model, ErrUnknownModel)
	}
	if err := pr.Validate(); err != nil {
		return 0, fmt.Errorf("price %s: %w", model, err)
	}
	if promptTokens < 0 || completionTokens < 0 {
		return 0, fmt.Errorf("price %s: negative token count (%d prompt, %d completion): %w", model, promptTokens, completionTokens, openrecall.ErrInvalid)
	}
	hi1, lo1 := bits.Mul64(uint64(promptTokens), uint64(pr.InputPerMillion))
	hi2, lo2 := bits.Mul64(uint64(completionTokens), uint64(pr.OutputPerMillion))
	lo, carry := bits.Add64(lo1, lo2, 0)
	hi, over := bits.Add64(hi1, hi2, carry)
	// Round up: add 999_999 before dividing by one million.
	lo, carry = bits.Add64(lo, 999_999, 0)
	hi, over2 := bits.Add64(hi, 0, carry)
	const million = 1_000_000
	if over != 0 || over2 != 0 || hi >= million {
		return 0, fmt.Errorf("price %s: cost of %d prompt and %d completion tokens overflows: %w", model, promptTokens, completionTokens, openrecall.ErrInvalid)
	}
	q, _ := bits.Div64(hi, lo, million)
	if q > math.MaxInt64 {
		return 0, fmt.Errorf("price %s: cost of %d prompt and %d completion tokens overflows: %w", model, promptTokens, completionTokens, openrecall.ErrInvalid)
	}
	return openrecall.NanoUSD(q), nil
}
