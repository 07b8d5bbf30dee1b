package gen

import (
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// CostStep is one analysed alert as the cost curve receives it. Cost and
// Extra are both non-negative and Baseline is their sum, so every value (and
// every shrink of it) keeps cost ≤ baseline.
type CostStep struct {
	Cost     openrecall.NanoUSD
	Extra    openrecall.NanoUSD
	Tier     openrecall.Tier
	Bypassed bool
}

// Baseline returns Cost + Extra.
func (s CostStep) Baseline() openrecall.NanoUSD { return s.Cost + s.Extra }

// Amounts are nano-dollar amounts drawn often: zero, one nano-dollar, typical
// call prices, and a thousand dollars.
func Amounts() []openrecall.NanoUSD {
	return []openrecall.NanoUSD{0, 1, 150, 2_500, 97_500, 1_250_000, 8_000_000, 1_000_000_000_000}
}

// amountGen returns an amount from Amounts or uniform up to 20 million
// nano-dollars (two cents); it shrinks toward 0.
func amountGen() gopter.Gen {
	pool := Amounts()
	n := len(pool)
	return gopter.DeriveGen(
		func(kind int, v int) openrecall.NanoUSD {
			if kind < n {
				return pool[kind]
			}
			return openrecall.NanoUSD(v)
		},
		func(a openrecall.NanoUSD) (int, int) {
			for i, x := range pool {
				if x == a {
					return i, 0
				}
			}
			return n, int(a)
		},
		Index(n+1, 0.15),
		IntUpTo(20_000_000),
	)
}

// Tiers lists the tiers a cost point may carry, none first.
func Tiers() []openrecall.Tier {
	return []openrecall.Tier{openrecall.TierNone, openrecall.TierCheap, openrecall.TierStrong}
}

// CostStepGen generates one analysed alert's cost and baseline.
func CostStepGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(CostStep{}), map[string]gopter.Gen{
		"Cost":     amountGen(),
		"Extra":    amountGen(),
		"Tier":     Of(Tiers(), 0),
		"Bypassed": gg.Bool(),
	})
}

// CostCurveGen generates a run's sequence of analysed alerts (up to 60).
func CostCurveGen() gopter.Gen {
	return SliceUpTo(60, CostStepGen(), reflect.TypeOf(CostStep{}))
}
