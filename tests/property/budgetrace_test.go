package property

import (
	"context"
	"fmt"
	"sync"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
)

// raceDay is the day a budget race spends from.
const raceDay = "2026-12-01"

// budgetGrant is one reservation a process asked for, and the answer.
type budgetGrant struct {
	amount openrecall.NanoUSD
	ok     bool
}

// checkBudgetRace plays r on two processes sharing one memory database:
// both reserve at once, then both settle what they were granted while
// reserving again. The day's row must hold exactly what was granted and
// spent, never more than the limit, and a refusal must be one the final
// state explains.
func checkBudgetRace(r gen.BudgetRace) error {
	ctx := context.Background()
	loc, done, err := scratchLocation("budgetrace")
	if err != nil {
		return err
	}
	defer done()
	var procs [2]*memory.Store
	for i, name := range []string{"a", "b"} {
		st, err := memory.Open(ctx, loc, memory.Options{Now: fixedNow, Instance: name})
		if err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		defer func() { _ = st.Close() }()
		procs[i] = st
	}
	raw, err := rawInbox(loc)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = raw.Close() }()
	day := func() (spent, reserved openrecall.NanoUSD, err error) {
		var s, v int64
		err = raw.QueryRowContext(ctx, `SELECT spent, reserved FROM budget_days WHERE day = $1`, raceDay).Scan(&s, &v)
		return openrecall.NanoUSD(s), openrecall.NanoUSD(v), err
	}

	// Both processes at once, each with its own list in order.
	race := func(work func(p int) error) error {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[p] = work(p)
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("setup: %v", err)
			}
		}
		return nil
	}
	reserve := func(p int, amounts []openrecall.NanoUSD, out *[]budgetGrant) error {
		for _, a := range amounts {
			ok, _, err := procs[p].ReserveBudget(ctx, raceDay, r.Limit, a)
			if err != nil {
				return err
			}
			*out = append(*out, budgetGrant{a, ok})
		}
		return nil
	}
	granted := func(gs [2][]budgetGrant) (sum openrecall.NanoUSD) {
		for _, list := range gs {
			for _, g := range list {
				if g.ok {
					sum += g.amount
				}
			}
		}
		return sum
	}

	// The burst: reservations only.
	var burst [2][]budgetGrant
	if err := race(func(p int) error { return reserve(p, r.Burst()[p], &burst[p]) }); err != nil {
		return err
	}
	spent, reserved, err := day()
	if err != nil && len(r.BurstA)+len(r.BurstB) > 0 {
		return fmt.Errorf("setup: %v", err)
	}
	if g := granted(burst); reserved != g || spent != 0 {
		return fmt.Errorf("conservation: after the burst the day holds %d reserved and %d spent, the processes were granted %d (%v)", reserved, spent, g, burst)
	}
	if r.Limit > 0 && spent+reserved > r.Limit {
		return fmt.Errorf("cap: the burst was granted %d of a limit of %d (%v)", reserved, r.Limit, burst)
	}
	for p, list := range burst {
		for _, g := range list {
			// Reservations only grow during the burst: a refusal was made
			// with at most the final reserved amount set aside.
			if !g.ok && (r.Limit == 0 || spent+reserved+g.amount <= r.Limit) {
				return fmt.Errorf("refusal: process %d was refused %d though %d reserved of a limit of %d leaves room (%v)", p, g.amount, reserved, r.Limit, burst)
			}
		}
	}

	// Settle what the burst granted while both reserve again.
	var again [2][]budgetGrant
	var actual [2]openrecall.NanoUSD
	if err := race(func(p int) error {
		var open []openrecall.NanoUSD
		for _, g := range burst[p] {
			if g.ok {
				open = append(open, g.amount)
			}
		}
		next := r.Again()[p]
		for len(open) > 0 || len(next) > 0 {
			if len(open) > 0 {
				cost := open[0] * openrecall.NanoUSD(r.Percent) / 100
				if _, err := procs[p].SettleBudget(ctx, raceDay, open[0], cost); err != nil {
					return err
				}
				actual[p] += cost
				open = open[1:]
			}
			if len(next) > 0 {
				if err := reserve(p, next[:1], &again[p]); err != nil {
					return err
				}
				next = next[1:]
			}
		}
		return nil
	}); err != nil {
		return err
	}
	spent, reserved, err = day()
	if err != nil && len(r.BurstA)+len(r.BurstB)+len(r.AgainA)+len(r.AgainB) > 0 {
		return fmt.Errorf("setup: %v", err)
	}
	if g := granted(again); reserved != g || spent != actual[0]+actual[1] {
		return fmt.Errorf("conservation: after settling the day holds %d reserved and %d spent; granted since %d, settled at a cost of %d (burst %v, again %v)", reserved, spent, g, actual[0]+actual[1], burst, again)
	}
	if r.Limit > 0 && spent+reserved > r.Limit {
		return fmt.Errorf("cap: %d spent and %d reserved pass the limit of %d (burst %v, again %v)", spent, reserved, r.Limit, burst, again)
	}
	return nil
}
