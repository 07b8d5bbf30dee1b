package memory

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
)

// Several processes spending one daily budget: two Stores on one database,
// eight writers reserving and settling at once. What they spend never
// passes the limit, a refused reservation sets nothing aside, and once
// every call settled nothing stays reserved.
func TestSharedBudgetNeverPassesTheLimit(t *testing.T) {
	a := openTemp(t)
	b := openAt(t, a.location())
	ctx := context.Background()
	const limit = openrecall.NanoUSD(1_000_000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused, granted := 0, 0
	for w := range 8 {
		st := a
		if w%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range 25 {
				worst := openrecall.NanoUSD(10_000 + rng.IntN(40_000))
				ok, _, err := st.ReserveBudget(ctx, "2026-12-04", limit, worst)
				if err != nil {
					t.Errorf("reserve: %v", err)
					return
				}
				mu.Lock()
				if ok {
					granted++
				} else {
					refused++
				}
				mu.Unlock()
				if !ok {
					continue
				}
				actual := worst * openrecall.NanoUSD(rng.IntN(101)) / 100
				if _, err := st.SettleBudget(ctx, "2026-12-04", worst, actual); err != nil {
					t.Errorf("settle: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	spent, err := a.BudgetSpent(ctx, "2026-12-04")
	if err != nil {
		t.Fatal(err)
	}
	var reserved int64
	if err := a.db.QueryRowContext(ctx, `SELECT reserved FROM budget_days WHERE day = $1`, "2026-12-04").Scan(&reserved); err != nil {
		t.Fatal(err)
	}
	if spent > limit || reserved != 0 {
		t.Errorf("spent %d of limit %d, %d still reserved", spent, limit, reserved)
	}
	if refused == 0 || granted == 0 {
		t.Errorf("granted %d, refused %d: the test must reach the limit", granted, refused)
	}
	if other, _ := a.BudgetSpent(ctx, "2026-12-05"); other != 0 {
		t.Errorf("another day spent %d", other)
	}
	t.Logf("granted %d, refused %d, spent %d of %d", granted, refused, spent, limit)
}
