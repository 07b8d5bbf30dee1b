package routing

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
)

// billing is what one answered call is booked as: the priced-as model, the
// token counts and the cost, with the reason the reported usage was not
// believed as sent (empty when it was).
type billing struct {
	model              string
	prompt, completion int
	cost               openrecall.NanoUSD
	anomaly            string
}

// billed prices an answered call of the model priced as priced (DESIGN §7,
// "usage bounded by what was asked"). A live answer's usage wins while it
// is within what the call could honestly use: a prompt of at most
// PromptTokenCeiling(req) tokens and a completion of at most maxTokens. A
// count outside those bounds is clamped to them, a negative one replaced by
// the estimate, and a reported model priced above the requested one is not
// believed (the call is booked at the requested model's price); each of
// these is named in the anomaly. So no call is ever booked above its
// ceiling: PromptTokenCeiling(req) and maxTokens at priced's price. A deterministic answer is priced on the
// estimates, its completion capped at maxTokens as a provider would stop it
// there. worst is the call's reserved worst case, charged when the usage
// cannot be priced at all (never zero).
func (r *Router) billed(priced string, req Request, resp Response, estPrompt, maxTokens int, worst openrecall.NanoUSD) billing {
	b := billing{model: priced, prompt: estPrompt, completion: min(EstimateTokens(resp.Text), maxTokens)}
	if !resp.Live || (resp.PromptTokens == 0 && resp.CompletionTokens == 0) {
		b.cost = r.costOr(b.model, b.prompt, b.completion, worst)
		return b
	}
	var why []string
	promptCeiling := PromptTokenCeiling(req)
	switch p := resp.PromptTokens; {
	case p < 0:
		why = append(why, fmt.Sprintf("negative prompt tokens %d (estimate %d used)", p, b.prompt))
	case p > promptCeiling:
		why = append(why, fmt.Sprintf("prompt tokens %d above the prompt's ceiling %d", p, promptCeiling))
		b.prompt = promptCeiling
	default:
		b.prompt = p
	}
	switch c := resp.CompletionTokens; {
	case c < 0:
		why = append(why, fmt.Sprintf("negative completion tokens %d (estimate %d used)", c, b.completion))
	case maxTokens > 0 && c > maxTokens:
		why = append(why, fmt.Sprintf("completion tokens %d above max_tokens %d", c, maxTokens))
		b.completion = maxTokens
	default:
		b.completion = c
	}
	b.cost = r.costOr(b.model, b.prompt, b.completion, worst)
	if resp.Model != "" && resp.Model != priced {
		// A dated snapshot of the model asked for prices as it does; a
		// reported model priced above the one asked is not believed.
		if _, ok := r.cfg.Prices.Lookup(resp.Model); ok {
			c, err := r.cfg.Prices.Cost(resp.Model, b.prompt, b.completion)
			switch {
			case err != nil:
			case c <= b.cost:
				b.model, b.cost = resp.Model, c
			default:
				why = append(why, fmt.Sprintf("reported model %s priced above %s, which was asked", resp.Model, priced))
			}
		}
	}
	ceiling, ceilErr := r.cfg.Prices.Cost(priced, promptCeiling, maxTokens)
	if ceilErr == nil && b.cost > ceiling {
		// Unreachable with the clamps above at the requested model's price;
		// kept so that no future pricing path books past the ceiling.
		why = append(why, fmt.Sprintf("cost %s above the call's ceiling %s", b.cost, ceiling))
		b.cost = ceiling
	}
	b.anomaly = strings.Join(why, "; ")
	return b
}

// costOr prices the tokens at model, or returns fallback when they cannot
// be priced.
func (r *Router) costOr(model string, prompt, completion int, fallback openrecall.NanoUSD) openrecall.NanoUSD {
	c, err := r.cfg.Prices.Cost(model, prompt, completion)
	if err != nil {
		return fallback
	}
	return c
}
