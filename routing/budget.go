package routing

import (
	"context"
	"sync"
	"time"

	openrecall "github.com/openrecall/openrecall"
)

// Ledger keeps a budget's reservations and spend where every process that
// shares the budget sees them: serve's daily budget in the memory database
// (memory.Store), shared by all serve processes and across restarts.
type Ledger interface {
	// ReserveBudget sets worst aside on day's budget unless spent +
	// reserved + worst would pass limit, and returns what day has spent.
	ReserveBudget(ctx context.Context, day string, limit, worst openrecall.NanoUSD) (bool, openrecall.NanoUSD, error)
	// SettleBudget releases a reservation, records the actual cost and
	// returns what day has spent.
	SettleBudget(ctx context.Context, day string, reserved, actual openrecall.NanoUSD) (openrecall.NanoUSD, error)
}

// ledgerTimeout bounds one ledger call.
const ledgerTimeout = 10 * time.Second

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
	// ledger, when set, holds the reservations and the spend (day's);
	// spent mirrors what it last said.
	ledger Ledger
	day    string
	// ledgerErr is the last error of the ledger: a call it could not
	// reserve for is refused (no money is spent that cannot be recorded).
	ledgerErr error
}

// NewSharedBudget returns a budget of limit nano-dollars for day whose
// reservations and spend live in ledger, shared with every other process
// that uses the same ledger and day. A ledger that fails refuses the call
// (LedgerErr says why): money that cannot be recorded is not spent.
func NewSharedBudget(limit openrecall.NanoUSD, ledger Ledger, day string) *Budget {
	b := NewBudget(limit)
	b.ledger, b.day = ledger, day
	return b
}

// LedgerErr returns the last error of a shared budget's ledger, nil when
// there was none.
func (b *Budget) LedgerErr() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ledgerErr
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
	if b.ledger != nil {
		return b.reserveShared(worst)
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
	if b.ledger != nil {
		b.settleShared(reserved, actual)
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

func (b *Budget) reserveShared(worst openrecall.NanoUSD) bool {
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	ok, spent, err := b.ledger.ReserveBudget(ctx, b.day, b.limit, worst)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ledgerErr = err
	if err != nil || !ok {
		b.refused = true
		return false
	}
	b.spent = spent
	return true
}

func (b *Budget) settleShared(reserved, actual openrecall.NanoUSD) {
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	spent, err := b.ledger.SettleBudget(ctx, b.day, reserved, actual)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ledgerErr = err
	if err == nil {
		b.spent = spent
	} else if actual > 0 {
		b.spent += actual // what this process knows it spent
	}
}
