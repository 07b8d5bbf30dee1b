package memory

import (
	"context"
	"database/sql/driver"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The PostgreSQL backend runs the same SQL as the SQLite one: the package
// writes its statements once, in the SQL both databases share, and
// pgConnector rewrites the few SQLite spellings PostgreSQL does not take
// (pgRewrite) before they reach pgx. Everything else the two backends do
// differently (schema, locks, errors, sizes) is in postgres.go.

// pgConnector wraps pgx's database/sql connector: every statement is
// rewritten for PostgreSQL, bool arguments are passed as integers (the
// schema keeps SQLite's integer flags), and a write transaction takes the
// store's write lock unless its context says it locks rows itself.
type pgConnector struct {
	inner driver.Connector
	// writeLock is the advisory lock key every write transaction takes
	// (see withRowLocks); 0 takes none.
	writeLock int64
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn, writeLock: c.writeLock}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgConn is one connection of pgConnector.
type pgConn struct {
	driver.Conn
	writeLock int64
}

// The interfaces database/sql looks for, which pgx's connection has.
var (
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
	_ driver.Validator          = (*pgConn)(nil)
)

// rowLocks marks a context whose write transaction takes row locks of its
// own instead of the store's write lock: the inbox's enqueue, claim and
// lease renewal, which many processes run at once, and the budget's
// single-row updates.
type rowLocks struct{}

// withRowLocks returns ctx marked so that a transaction begun with it on
// PostgreSQL does not take the store's write lock.
func withRowLocks(ctx context.Context) context.Context {
	return context.WithValue(ctx, rowLocks{}, true)
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if !opts.ReadOnly && c.writeLock != 0 && ctx.Value(rowLocks{}) == nil {
		// Every write transaction is serialised by one transaction-level
		// advisory lock, as SQLite's immediate transactions serialise
		// writers: the read-then-write steps of the store stay atomic
		// across processes. The inbox's hot paths lock rows instead.
		if _, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)",
			[]driver.NamedValue{{Ordinal: 1, Value: c.writeLock}}); err != nil {
			_ = tx.Rollback() // the lock failed; that error is the one to report
			return nil, err
		}
	}
	return tx, nil
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	r := pgRewrite(query)
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, r.text)
	if err != nil {
		return nil, err
	}
	return pgStmt{Stmt: st, pick: r.pick}, nil
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r := pgRewrite(query)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, r.text, pgArgs(args, r.pick))
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r := pgRewrite(query)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, r.text, pgArgs(args, r.pick))
}

func (c *pgConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *pgConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *pgConn) CheckNamedValue(*driver.NamedValue) error { return nil }

func (c *pgConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// pgStmt is a prepared statement of pgConn: its arguments get pgArgs.
type pgStmt struct {
	driver.Stmt
	pick []int
}

func (s pgStmt) NumInput() int { return -1 }

func (s pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, pgArgs(args, s.pick))
}

func (s pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, pgArgs(args, s.pick))
}

func (s pgStmt) CheckNamedValue(*driver.NamedValue) error { return nil }

// pgArgs passes the arguments a rewritten statement uses (pick, for one
// with numbered parameters: the ?N it uses, in their new order), bools as
// 1 and 0 (the schema keeps SQLite's integer flags, and pgx does not
// encode a bool into a bigint parameter), and noRule as pgNoRule.
func pgArgs(args []driver.NamedValue, pick []int) []driver.NamedValue {
	if pick != nil {
		picked := make([]driver.NamedValue, 0, len(pick))
		for i, n := range pick {
			if n-1 < len(args) {
				a := args[n-1]
				a.Ordinal = i + 1
				picked = append(picked, a)
			}
		}
		args = picked
	}
	for i, a := range args {
		if a.Value != noRule {
			if _, ok := a.Value.(bool); !ok {
				continue
			}
		}
		out := make([]driver.NamedValue, len(args))
		copy(out, args)
		for j := i; j < len(out); j++ {
			if b, ok := out[j].Value.(bool); ok {
				out[j].Value = boolInt(b)
			} else if out[j].Value == noRule {
				out[j].Value = pgNoRule
			}
		}
		return out
	}
	return args
}

// pgNoRule stands for noRule on PostgreSQL, whose text cannot hold the
// NUL byte noRule is: a rule no alert names.
const pgNoRule = "\uffff openrecall: no rule \uffff"

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rewritten caches pgRewrite by statement text: the package's statements
// are a few hundred constant texts (multi-row inserts of a few widths).
var rewritten sync.Map

// pgRewrites are the SQLite spellings of this package's statements that
// PostgreSQL spells otherwise, replaced as whole texts.
var pgRewrites = strings.NewReplacer(
	// A snapshot read of the trail: one REPEATABLE READ snapshot.
	"BEGIN DEFERRED", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	// SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE does.
	" LIKE ", " ILIKE ",
	// SQLite's two-argument MIN and MAX are PostgreSQL's LEAST and GREATEST.
	"MIN(first_at, ", "LEAST(first_at, ",
	"MAX(last_at, ", "GREATEST(last_at, ",
	"MAX(touched_at, ", "GREATEST(touched_at, ",
	// json_extract: the text of a JSON member, then compared as such.
	"COALESCE(json_extract(g.head, '$.bypassed'), 0) = 0", "COALESCE((g.head::jsonb->>'bypassed')::boolean, false) = false",
	"json_extract(result, '$.proposal.id')", "(result::jsonb #>> '{proposal,id}')",
)

// indexedBy matches SQLite's index hints, which PostgreSQL's planner does
// without.
var indexedBy = regexp.MustCompile(`\s+INDEXED BY \w+`)

// insertOrIgnore matches SQLite's INSERT OR IGNORE, which is PostgreSQL's
// INSERT … ON CONFLICT DO NOTHING.
var insertOrIgnore = regexp.MustCompile(`^(\s*)INSERT OR IGNORE INTO`)

// pgStatement is a statement rewritten for PostgreSQL: its text, and for
// one with numbered parameters (?N) the numbers it uses, in the order of
// their new numbers: PostgreSQL refuses a parameter no clause uses (it
// cannot tell its type), where SQLite binds it and ignores it.
type pgStatement struct {
	text string
	pick []int
}

// pgRewrite rewrites one statement of this package for PostgreSQL: SQLite's
// ? placeholders become $1, $2, …, and the spellings above are replaced.
func pgRewrite(q string) pgStatement {
	if v, ok := rewritten.Load(q); ok {
		return v.(pgStatement)
	}
	out := indexedBy.ReplaceAllString(q, "")
	if insertOrIgnore.MatchString(out) {
		out = insertOrIgnore.ReplaceAllString(out, "${1}INSERT INTO")
		if i := strings.LastIndex(out, " RETURNING "); i >= 0 {
			out = out[:i] + " ON CONFLICT DO NOTHING" + out[i:]
		} else {
			out += " ON CONFLICT DO NOTHING"
		}
	}
	text, pick := numberPlaceholders(pgRewrites.Replace(out))
	st := pgStatement{text: text, pick: pick}
	rewritten.Store(q, st)
	return st
}

// numberPlaceholders turns each ? outside quotes into $n, counting from 1,
// and each numbered ?N into $N; the unary plus before a parameter (+?N,
// which keeps SQLite's prepared plan) goes, since PostgreSQL has no unary
// plus on text.
func numberPlaceholders(q string) (string, []int) {
	if !strings.Contains(q, "?") {
		return q, nil
	}
	renumber := map[int]int{} // ?N → its new number
	var pick []int
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			if b.Len() > 0 && b.String()[b.Len()-1] == '+' {
				trimmed := b.String()[:b.Len()-1]
				b.Reset()
				b.WriteString(trimmed)
			}
			b.WriteByte('$')
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				num, _ := strconv.Atoi(q[i+1 : j])
				m, ok := renumber[num]
				if !ok {
					pick = append(pick, num)
					m = len(pick)
					renumber[num] = m
				}
				b.WriteString(strconv.Itoa(m))
				i = j - 1
				continue
			}
			n++
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), pick
}
