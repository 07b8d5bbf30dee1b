package property

import (
	"context"
	"fmt"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// budgetProperties are the laws of serve's daily model budget (DESIGN §7):
// one pipeline for the life of the process, the budget keyed by UTC day
// inside routing.
func budgetProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P146_daily_budget_keyed_by_day",
			"A daily budget is each UTC day's (DESIGN §7): for any life of reservations, settlements and time passing — across midnight, with calls open over it — in this process or in a ledger in the memory database, a call is refused exactly when its worst case would take the day it is made on past the limit (spent plus reserved plus worst, limit 0 never), a call is paid by the day it was reserved on whenever it is settled, a new day starts with nothing spent or reserved, the state reports today's spend and refusals, and the ledger holds each day's spend.",
			"BudgetPlanGen", gen.BudgetPlanGen(), checkDailyBudget,
			pbt.Expensive(2),
			pbt.Classify(func(p gen.BudgetPlan) []string {
				var labels []string
				open, midnight := 0, false
				at := budgetStart
				for _, o := range p.Ops {
					switch o.Kind {
					case gen.BudgetReserve:
						open++
					case gen.BudgetSettle:
						if open > 0 {
							open--
						}
					default:
						next := at.Add(time.Duration(o.Hours) * time.Hour)
						if open > 0 && next.Day() != at.Day() {
							midnight = true
						}
						at = next
					}
				}
				if midnight {
					labels = append(labels, "a call open across midnight")
				}
				if p.Shared {
					labels = append(labels, "shared")
				}
				return labels
			}),
			pbt.Cover("a call open across midnight", 20), pbt.Cover("shared", 30),
		),
		pbt.ForAll("P156_budget_cap_holds_between_processes",
			"Two serve processes reserving from one day's budget in the memory database at once (DESIGN §7, §13) never take it past its limit: after both reserve concurrently, the day holds exactly the amounts granted, spent plus reserved is within the limit, and every refusal is one the day explains (spent plus reserved plus the amount passes the limit; never with no cap); after both settle what they were granted while reserving again, the day holds exactly what was granted since and the settled costs, still within the limit.",
			"BudgetRaceGen", gen.BudgetRaceGen(), checkBudgetRace,
			pbt.Expensive(3),
			pbt.Classify(func(r gen.BudgetRace) []string {
				var sum openrecall.NanoUSD
				for _, list := range r.Burst() {
					for _, a := range list {
						sum += a
					}
				}
				switch {
				case r.Limit == 0:
					return []string{"no cap"}
				case sum > r.Limit:
					return []string{"burst past the limit"}
				}
				return []string{"burst within the limit"}
			}),
			pbt.Cover("burst past the limit", 20),
		),
	}
}

// budgetStart is where a plan's clock starts: two hours before midnight.
var budgetStart = time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)

// budgetDay is the model's account of one day.
type budgetDay struct {
	spent, reserved openrecall.NanoUSD
	refused         bool
}

// checkDailyBudget runs the plan on a daily budget and on a model of it.
func checkDailyBudget(p gen.BudgetPlan) error {
	ctx := context.Background()
	at := budgetStart
	now := func() time.Time { return at }
	var ledger routing.Ledger
	var st *memory.Store
	if p.Shared {
		var done func()
		var err error
		if st, done, err = scratchStore("budget", memory.Options{Now: now}); err != nil {
			return err
		}
		defer done()
		ledger = st
	}
	b := routing.NewDailyBudget(p.Limit, ledger, now)
	days := map[string]*budgetDay{}
	dayOf := func() *budgetDay {
		d := at.Format(time.DateOnly)
		if days[d] == nil {
			days[d] = &budgetDay{}
		}
		return days[d]
	}
	var held []routing.Reservation
	for i, o := range p.Ops {
		switch o.Kind {
		case gen.BudgetReserve:
			d := dayOf()
			want := p.Limit == 0 || d.spent+d.reserved+o.Amount <= p.Limit
			r, ok := b.Reserve(o.Amount)
			if ok != want {
				return fmt.Errorf("op %d: reserve %d on %s (spent %d, reserved %d, limit %d) = %v, want %v",
					i, o.Amount, at.Format(time.DateOnly), d.spent, d.reserved, p.Limit, ok, want)
			}
			if !ok {
				d.refused = true
				continue
			}
			if r.Day != at.Format(time.DateOnly) || r.Amount != o.Amount {
				return fmt.Errorf("op %d: reservation %+v at %s of %d", i, r, at.Format(time.RFC3339), o.Amount)
			}
			d.reserved += o.Amount
			held = append(held, r)
		case gen.BudgetSettle:
			if len(held) == 0 {
				continue
			}
			r := held[0]
			held = held[1:]
			actual := r.Amount * openrecall.NanoUSD(o.Percent) / 100
			b.Settle(r, actual)
			d := days[r.Day]
			d.reserved -= r.Amount
			d.spent += actual
		default:
			at = at.Add(time.Duration(o.Hours) * time.Hour)
		}
		d := dayOf()
		want := openrecall.BudgetState{Limit: p.Limit, Spent: d.spent, Exhausted: p.Limit > 0 && (d.refused || d.spent >= p.Limit)}
		if got := b.State(); got != want {
			return fmt.Errorf("op %d at %s: state %+v, want %+v", i, at.Format(time.RFC3339), got, want)
		}
	}
	for day, d := range days {
		if p.Limit > 0 && d.spent+d.reserved > p.Limit {
			return fmt.Errorf("model: %s holds %d spent and %d reserved over the limit %d", day, d.spent, d.reserved, p.Limit)
		}
		if st == nil {
			continue
		}
		spent, err := st.BudgetSpent(ctx, day)
		if err != nil {
			return err
		}
		if spent != d.spent {
			return fmt.Errorf("the ledger holds %d spent on %s, want %d", spent, day, d.spent)
		}
	}
	return nil
}
