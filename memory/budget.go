package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/openrecall/openrecall"
)

// The daily model budget of serve lives in the database (routing.Ledger),
// so several serve processes, and a restart on the same day, spend from
// one budget. Each call is one short transaction on the day's row; on
// PostgreSQL the conditional update locks that row only.

// ReserveBudget sets worst aside on day's budget and reports true, or
// reports false and sets nothing aside when spent + reserved + worst would
// pass limit (limit 0: no cap). It returns what the day has spent.
func (s *Budget) ReserveBudget(ctx context.Context, day string, limit, worst openrecall.NanoUSD) (bool, openrecall.NanoUSD, error) {
	if worst < 0 {
		return false, 0, fmt.Errorf("reserve budget: negative amount %d: %w", worst, openrecall.ErrInvalid)
	}
	var ok bool
	var spent int64
	err := s.budgetTx(ctx, "reserve budget", day, func(tx *sql.Tx) error {
		q, args := `UPDATE budget_days SET reserved = reserved + $1 WHERE day = $2`, []any{int64(worst), day}
		if limit > 0 {
			q += ` AND spent + reserved + $3 <= $4`
			args = append(args, int64(worst), int64(limit))
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return translate("reserve budget", err)
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return translate("reserve budget: spent", tx.QueryRowContext(ctx, `SELECT spent FROM budget_days WHERE day = $1`, day).Scan(&spent))
	})
	return ok, openrecall.NanoUSD(spent), err
}

// SettleBudget releases a reservation of day's budget and records what
// the call cost (money spent is recorded even past the reservation). It
// returns what the day has spent.
func (s *Budget) SettleBudget(ctx context.Context, day string, reserved, actual openrecall.NanoUSD) (openrecall.NanoUSD, error) {
	var spent int64
	err := s.budgetTx(ctx, "settle budget", day, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE budget_days SET
			reserved = CASE WHEN reserved > $1 THEN reserved - $2 ELSE 0 END, spent = spent + $3 WHERE day = $4`,
			int64(reserved), int64(reserved), max(int64(actual), 0), day); err != nil {
			return translate("settle budget", err)
		}
		return translate("settle budget: spent", tx.QueryRowContext(ctx, `SELECT spent FROM budget_days WHERE day = $1`, day).Scan(&spent))
	})
	return openrecall.NanoUSD(spent), err
}

// BudgetSpent returns what day's budget has spent (0 for a day without
// calls).
func (s *Budget) BudgetSpent(ctx context.Context, day string) (openrecall.NanoUSD, error) {
	var spent int64
	err := s.db.QueryRowContext(ctx, `SELECT spent FROM budget_days WHERE day = $1`, day).Scan(&spent)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return openrecall.NanoUSD(spent), translate("budget spent", err)
}

// budgetTx runs fn in a transaction after making sure day's row exists.
func (s *conn) budgetTx(ctx context.Context, what, day string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(withRowLocks(ctx), nil)
	if err != nil {
		return translate(what+": begin", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO budget_days (day) VALUES ($1) ON CONFLICT (day) DO NOTHING`, day); err != nil {
		return translate(what, err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	return translate(what+": commit", tx.Commit())
}
