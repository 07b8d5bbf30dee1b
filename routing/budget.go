package routing

import (
	"sync"

	openrecall "github.com/openrecall/openrecall"
)

// Budget is an optional cap on what one run spends on model calls. A call
// reserves its worst case before it is made and settles its actual cost
// after. A limit of 0 means unlimited. A nil *Budget is unlimited too. Budget
// is safe for concurrent use.
type Budget struct {
	mu       sync.Mutex
	limit    openrecall.NanoUSD
	spent    openrecall.NanoUSD
	reserved openrecall.NanoUSD
	refused  bool
}

// NewBudget returns a budget capped at limit nano-dollars; 0 (or a negative
// limit) means unlimited.
func NewBudget(limit openrecall.NanoUSD) *Budget {
	if limit < 0 {
		limit = 0
	}
	return &Budget{limit: limit}
}

// Reserve sets worst aside for a call and reports true, or reports false and
// sets nothing aside when spent + reserved + worst would pass the limit. A
// negative worst is refused.
func (b *Budget) Reserve(worst openrecall.NanoUSD) bool {
	if worst < 0 {
		return false
	}
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && (worst > b.limit || b.spent+b.reserved > b.limit-worst) {
		b.refused = true
		return false
	}
	b.reserved += worst
	return true
}

// Settle releases a reservation and records what the call really cost.
// actual should not exceed reserved; when a live provider reports more, the
// real amount is recorded anyway, because money spent is spent.
func (b *Budget) Settle(reserved, actual openrecall.NanoUSD) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved -= reserved
	if b.reserved < 0 {
		b.reserved = 0
	}
	if actual > 0 {
		b.spent += actual
	}
}

// State returns the limit and what has been spent. Exhausted is true once
// the spend has reached the limit or a reservation has been refused.
func (b *Budget) State() openrecall.BudgetState {
	if b == nil {
		return openrecall.BudgetState{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return openrecall.BudgetState{
		Limit:     b.limit,
		Spent:     b.spent,
		Exhausted: b.limit > 0 && (b.refused || b.spent >= b.limit),
	}
}
