package gen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// Budget operation kinds (BudgetOp.Kind).
const (
	// BudgetReserve reserves Amount for a call.
	BudgetReserve = iota
	// BudgetSettle settles the oldest open reservation at Percent of it.
	BudgetSettle
	// BudgetAdvance moves the clock Hours forward.
	BudgetAdvance
	budgetKinds
)

// BudgetOp is one step of a daily budget's life: a call reserved, a call
// settled, or time passing (across midnight often: the clock starts at
// 22:00 UTC and moves 1 to 30 hours).
type BudgetOp struct {
	Kind    int
	Amount  openrecall.NanoUSD
	Percent int // of the reservation a settled call cost, 0–100
	Hours   int // 1–30
}

// BudgetPlan is a daily budget's limit (0: no cap), whether a ledger in a
// memory database keeps it, and its operations.
type BudgetPlan struct {
	Limit  openrecall.NanoUSD
	Shared bool
	Ops    []BudgetOp
}

// String lists the plan as it runs.
func (p BudgetPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "limit %d shared %v:", p.Limit, p.Shared)
	for _, o := range p.Ops {
		switch o.Kind {
		case BudgetReserve:
			fmt.Fprintf(&b, " reserve %d;", o.Amount)
		case BudgetSettle:
			fmt.Fprintf(&b, " settle %d%%;", o.Percent)
		default:
			fmt.Fprintf(&b, " +%dh;", o.Hours)
		}
	}
	return b.String()
}

// budgetLimits are the limits drawn often: no cap, one nano-dollar, a few
// calls' worth, a cent.
func budgetLimits() []openrecall.NanoUSD {
	return []openrecall.NanoUSD{0, 1, 2_500, 100_000, 10_000_000}
}

// BudgetPlanGen generates a daily budget's life: up to 40 operations,
// reservations drawn near the limit so that refusals, fits exactly and
// calls open across midnight all occur.
func BudgetPlanGen() gopter.Gen {
	op := gg.Struct(reflect.TypeOf(BudgetOp{}), map[string]gopter.Gen{
		"Kind":    gg.IntRange(0, budgetKinds-1),
		"Amount":  Of([]openrecall.NanoUSD{0, 1, 1_000, 2_500, 40_000, 60_000, 3_000_000, 12_000_000}, 0),
		"Percent": gg.OneConstOf(0, 50, 100, 37),
		"Hours":   gg.IntRange(1, 30),
	})
	return gg.Struct(reflect.TypeOf(BudgetPlan{}), map[string]gopter.Gen{
		"Limit":  Of(budgetLimits(), 0),
		"Shared": gg.Bool(),
		"Ops":    SliceUpTo(40, op, reflect.TypeOf(BudgetOp{})),
	})
}

// ValidBudgetPlan reports whether p is a plan BudgetPlanGen may produce.
func ValidBudgetPlan(p BudgetPlan) error {
	if p.Limit < 0 {
		return fmt.Errorf("negative limit %d", p.Limit)
	}
	for i, o := range p.Ops {
		switch {
		case o.Kind < 0 || o.Kind >= budgetKinds:
			return fmt.Errorf("op %d: kind %d", i, o.Kind)
		case o.Amount < 0:
			return fmt.Errorf("op %d: negative amount", i)
		case o.Percent < 0 || o.Percent > 100:
			return fmt.Errorf("op %d: percent %d", i, o.Percent)
		case o.Hours < 1 || o.Hours > 30:
			return fmt.Errorf("op %d: %d hours", i, o.Hours)
		}
	}
	return nil
}

// BudgetRace is two serve processes reserving from one day's budget at
// once: each process's amounts (A for the first, B for the second),
// reserved in order while the other reserves too (Burst), then settled at
// Percent of each while both reserve again (Again).
type BudgetRace struct {
	Limit          openrecall.NanoUSD
	BurstA, BurstB []openrecall.NanoUSD
	AgainA, AgainB []openrecall.NanoUSD
	Percent        int
}

// Burst returns each process's first amounts.
func (r BudgetRace) Burst() [2][]openrecall.NanoUSD {
	return [2][]openrecall.NanoUSD{r.BurstA, r.BurstB}
}

// Again returns each process's second amounts.
func (r BudgetRace) Again() [2][]openrecall.NanoUSD {
	return [2][]openrecall.NanoUSD{r.AgainA, r.AgainB}
}

// BudgetRaceGen generates races over small whole amounts near a small
// limit, so that exact fits, refusals and no cap all occur.
func BudgetRaceGen() gopter.Gen {
	amounts := func() gopter.Gen {
		return SliceUpTo(8, Of([]openrecall.NanoUSD{0, 1, 3, 5, 7, 10, 25}, 0), reflect.TypeOf(openrecall.NanoUSD(0)))
	}
	return gg.Struct(reflect.TypeOf(BudgetRace{}), map[string]gopter.Gen{
		"Limit":   Of([]openrecall.NanoUSD{0, 1, 10, 20, 30, 50}, 0),
		"BurstA":  amounts(),
		"BurstB":  amounts(),
		"AgainA":  amounts(),
		"AgainB":  amounts(),
		"Percent": gg.OneConstOf(0, 50, 100, 37),
	})
}

// ValidBudgetRace reports whether r is a race BudgetRaceGen may produce.
func ValidBudgetRace(r BudgetRace) error {
	if r.Limit < 0 || r.Percent < 0 || r.Percent > 100 {
		return fmt.Errorf("limit %d, percent %d", r.Limit, r.Percent)
	}
	for _, list := range [][]openrecall.NanoUSD{r.BurstA, r.BurstB, r.AgainA, r.AgainB} {
		for _, a := range list {
			if a < 0 {
				return fmt.Errorf("negative amount %d", a)
			}
		}
	}
	return nil
}
