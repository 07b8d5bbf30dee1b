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

// Budget is an optional cap on what model calls spend: a run's (NewBudget)
// or each UTC day's (NewDailyBudget, serve's). A call reserves its worst
// case before it is made and settles its actual cost after, against the
// reservation's own day: a call reserved before midnight is paid by the day
// it began. A limit of 0 means unlimited. A nil *Budget is unlimited too.
// Budget is safe for concurrent use.
type Budget struct {
	mu       sync.Mutex
	limit    openrecall.NanoUSD
	spent    openrecall.NanoUSD
	reserved openrecall.NanoUSD
	refused  bool
	// now, when set, keys the budget by UTC day: day is the day spent,
	// reserved and refused are of, and a reservation on a later day starts
	// them afresh.
	now func() time.Time
	day string
	// ledger, when set, holds the reservations and the spend of each day;
	// spent mirrors what it last said of day.
	ledger Ledger
	// ledgerErr is the last error of the ledger: a call it could not
	// reserve for is refused (no money is spent that cannot be recorded).
	ledgerErr error
}

// Reservation is what Reserve set aside: the amount and the day it was set
// aside on ("" for a run's budget). Settle takes it back.
type Reservation struct {
	Day    string
	Amount openrecall.NanoUSD
}

// NewDailyBudget returns a budget of limit nano-dollars per UTC day of now.
// With a ledger, each day's reservations and spend live in it, shared with
// every other process that uses the same ledger (serve's processes on one
// database, and a restart the same day); a ledger that fails refuses the
// call (LedgerErr says why): money that cannot be recorded is not spent.
// Without one the days are this process's alone.
func NewDailyBudget(limit openrecall.NanoUSD, ledger Ledger, now func() time.Time) *Budget {
	b := NewBudget(limit)
	if now == nil {
		now = time.Now
	}
	b.ledger, b.now = ledger, now
	b.day = dayOf(now)
	return b
}

// dayOf returns the UTC day of now(), "2006-01-02".
func dayOf(now func() time.Time) string { return now().UTC().Format(time.DateOnly) }

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

// NewBudget returns a budget capped at limit nano-dollars for the life of a
// run; 0 (or a negative limit) means unlimited.
func NewBudget(limit openrecall.NanoUSD) *Budget {
	if limit < 0 {
		limit = 0
	}
	return &Budget{limit: limit}
}

// Reserve sets worst aside for a call on today's budget and returns the
// reservation and true, or reports false and sets nothing aside when spent
// + reserved + worst would pass the limit. A negative worst is refused.
func (b *Budget) Reserve(worst openrecall.NanoUSD) (Reservation, bool) {
	if worst < 0 {
		return Reservation{}, false
	}
	if b == nil {
		return Reservation{Amount: worst}, true
	}
	day := b.today()
	if b.ledger != nil {
		return b.reserveShared(day, worst)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.turn(day)
	if b.limit > 0 && (worst > b.limit || b.spent+b.reserved > b.limit-worst) {
		b.refused = true
		return Reservation{}, false
	}
	b.reserved += worst
	return Reservation{Day: day, Amount: worst}, true
}

// Settle releases a reservation and records what the call really cost, on
// the reservation's day. actual should not exceed the reservation; when a
// live provider reports more, the real amount is recorded anyway, because
// money spent is spent. A reservation of a day that has passed changes
// nothing of today's (with a ledger, its day's spend is still recorded).
func (b *Budget) Settle(r Reservation, actual openrecall.NanoUSD) {
	if b == nil {
		return
	}
	if b.ledger != nil {
		b.settleShared(r, actual)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.Day != b.day {
		return
	}
	b.reserved -= r.Amount
	if b.reserved < 0 {
		b.reserved = 0
	}
	if actual > 0 {
		b.spent += actual
	}
}

// State returns the limit and what has been spent (today, for a daily
// budget). Exhausted is true once the spend has reached the limit or a
// reservation has been refused.
func (b *Budget) State() openrecall.BudgetState {
	if b == nil {
		return openrecall.BudgetState{}
	}
	day := b.today()
	b.mu.Lock()
	defer b.mu.Unlock()
	if day != b.day {
		return openrecall.BudgetState{Limit: b.limit} // a new day, nothing reserved yet
	}
	return openrecall.BudgetState{
		Limit:     b.limit,
		Spent:     b.spent,
		Exhausted: b.limit > 0 && (b.refused || b.spent >= b.limit),
	}
}

// today returns the day a reservation now is of: the UTC day for a daily
// budget, "" for a run's.
func (b *Budget) today() string {
	if b.now == nil {
		return ""
	}
	return dayOf(b.now)
}

// turn starts day afresh when it is later than the budget's day. b.mu is
// held. The day only moves forward: a clock read before another
// goroutine's turn never takes the budget back a day.
func (b *Budget) turn(day string) {
	if day > b.day {
		b.day, b.spent, b.reserved, b.refused = day, 0, 0, false
	}
}

func (b *Budget) reserveShared(day string, worst openrecall.NanoUSD) (Reservation, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	ok, spent, err := b.ledger.ReserveBudget(ctx, day, b.limit, worst)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.turn(day)
	b.ledgerErr = err
	if err != nil || !ok {
		if day == b.day {
			b.refused = true
		}
		return Reservation{}, false
	}
	if day == b.day {
		b.spent = spent
	}
	return Reservation{Day: day, Amount: worst}, true
}

func (b *Budget) settleShared(r Reservation, actual openrecall.NanoUSD) {
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	spent, err := b.ledger.SettleBudget(ctx, r.Day, r.Amount, actual)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ledgerErr = err
	if r.Day != b.day {
		return // a past day's call: its day's spend is in the ledger
	}
	if err == nil {
		b.spent = spent
	} else if actual > 0 {
		b.spent += actual // what this process knows it spent
	}
}
