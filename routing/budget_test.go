package routing_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

func TestBudget(t *testing.T) {
	type op struct {
		reserve, settle openrecall.NanoUSD
		want            bool
	}
	tests := []struct {
		name  string
		limit openrecall.NanoUSD
		ops   []op
		want  openrecall.BudgetState
	}{
		{"unlimited", 0, []op{{1 << 40, 1 << 40, true}, {1 << 40, 5, true}}, openrecall.BudgetState{Spent: 1<<40 + 5}},
		{"fits exactly", 100, []op{{60, 60, true}, {40, 40, true}}, openrecall.BudgetState{Limit: 100, Spent: 100, Exhausted: true}},
		{"worst case refused, actual would fit", 100, []op{{60, 10, true}, {91, 0, false}, {90, 90, true}}, openrecall.BudgetState{Limit: 100, Spent: 100, Exhausted: true}},
		{"settling below the reservation frees the rest", 100, []op{{80, 20, true}, {80, 30, true}}, openrecall.BudgetState{Limit: 100, Spent: 50}},
		{"refusal marks it exhausted", 100, []op{{101, 0, false}}, openrecall.BudgetState{Limit: 100, Exhausted: true}},
		{"negative worst refused", 100, []op{{-1, 0, false}}, openrecall.BudgetState{Limit: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := routing.NewBudget(tt.limit)
			for i, o := range tt.ops {
				held, got := b.Reserve(o.reserve)
				if got != o.want {
					t.Fatalf("op %d: Reserve(%d) = %v, want %v", i, o.reserve, got, o.want)
				}
				if got {
					b.Settle(held, o.settle)
				}
			}
			if diff := cmp.Diff(tt.want, b.State()); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBudgetNilIsUnlimited(t *testing.T) {
	var b *routing.Budget
	held, ok := b.Reserve(1 << 50)
	if !ok {
		t.Error("nil budget refused")
	}
	b.Settle(held, 1<<50)
	if b.State() != (openrecall.BudgetState{}) {
		t.Errorf("nil budget state %+v", b.State())
	}
}

// TestBudgetConcurrent runs many reservations at once: exactly as many fit as
// the limit allows, and the spend never passes it. Run with -race.
func TestBudgetConcurrent(t *testing.T) {
	const limit, each, workers, tries = 1000, 10, 20, 10
	b := routing.NewBudget(limit)
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < tries; i++ {
				if held, fits := b.Reserve(each); fits {
					if s := b.State(); s.Spent > limit {
						t.Errorf("spent %d passed the limit", s.Spent)
					}
					b.Settle(held, each)
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if ok != limit/each {
		t.Errorf("%d reservations succeeded, want %d", ok, limit/each)
	}
	if diff := cmp.Diff(openrecall.BudgetState{Limit: limit, Spent: limit, Exhausted: true}, b.State()); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}
