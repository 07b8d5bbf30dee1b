package memory

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Every statement is given to the database as written (dialect.go): its
// placeholders are $1, $2, …, which PostgreSQL takes natively and SQLite
// takes as named parameters numbered by first appearance. A statement is
// right on both only if its placeholders first appear in order $1, $2, $3,
// … without a gap, and it is given as many arguments as it numbers (SQLite
// ignores an argument past the last number; PostgreSQL refuses it).
//
// TestMain installs placeholderGuard through wrapConnector, so every
// statement text this package's tests run is checked on the backend under
// test, SQLite or PostgreSQL, at the connection: the Store's own
// statements, multi-row inserts of each width, filters of each shape, the
// recall queries, the migrations. A statement that breaks the rule still
// runs (the tests see what they would have seen); the guard records it,
// and TestMain fails the run after m.Run, printing each such statement.

// placeholderViolation is one statement that breaks the rule.
type placeholderViolation struct {
	backend, problem, text string
}

// placeholderGuard holds the violations recorded, each statement and
// problem once, in the order first seen.
var placeholderGuard struct {
	mu   sync.Mutex
	seen map[placeholderViolation]bool
	list []placeholderViolation
}

// recordPlaceholders checks q, run with args arguments (args < 0: not yet
// known, as at a prepare), on SQLite or PostgreSQL (pg), and records it
// when it breaks the rule.
func recordPlaceholders(pg bool, q string, args int) {
	n, err := checkPlaceholders(q, pg)
	if err == nil && args >= 0 && n >= 0 && args != n {
		err = fmt.Errorf("numbers %d placeholders and is given %d arguments", n, args)
	}
	if err == nil {
		return
	}
	v := placeholderViolation{backend: "sqlite", problem: err.Error(), text: q}
	if pg {
		v.backend = "postgres"
	}
	placeholderGuard.mu.Lock()
	defer placeholderGuard.mu.Unlock()
	if placeholderGuard.seen == nil {
		placeholderGuard.seen = map[placeholderViolation]bool{}
	}
	if !placeholderGuard.seen[v] {
		placeholderGuard.seen[v] = true
		placeholderGuard.list = append(placeholderGuard.list, v)
	}
}

// reportPlaceholders prints the violations recorded to stderr and says
// whether there were any.
func reportPlaceholders() bool {
	placeholderGuard.mu.Lock()
	defer placeholderGuard.mu.Unlock()
	for _, v := range placeholderGuard.list {
		fmt.Fprintf(os.Stderr, "FAIL: placeholder guard: a %s statement %s:\n\t%s\n", v.backend, v.problem, v.text)
	}
	if len(placeholderGuard.list) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: placeholder guard: %d statement(s) break the rule: write $1, $2, … first appearing in order, without a gap, and give each statement as many arguments (dialect.go)\n",
			len(placeholderGuard.list))
		return true
	}
	return false
}

// checkPlaceholders returns how many placeholders q numbers (the highest
// $n; -1 for SQLite's recall form, whose arguments are numbered +?N), or
// an error when q breaks the rule: a ? placeholder (but for the recall
// form +?N on SQLite), a named parameter, or a $n that first appears
// before $1…$(n-1) have. Quoted text, quoted identifiers, comments and
// PostgreSQL's dollar-quoted bodies are skipped.
func checkPlaceholders(q string, pg bool) (int, error) {
	high, recall := 0, false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(q[i+1:], c)
			if end < 0 {
				return 0, fmt.Errorf("has an unterminated quote at byte %d", i)
			}
			i += end + 1
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				return high, nil
			}
			i += end
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return 0, fmt.Errorf("has an unterminated comment at byte %d", i)
			}
			i += end + 3
		case c == '?':
			j := digitsEnd(q, i+1)
			if pg || i == 0 || q[i-1] != '+' || j == i+1 {
				return 0, fmt.Errorf("has a ? placeholder at byte %d (%q)", i, around(q, i))
			}
			recall = true
			i = j - 1
		case c == '$':
			if i > 0 && isIdentByte(q[i-1]) {
				continue // part of an identifier
			}
			j := digitsEnd(q, i+1)
			if j == i+1 {
				// $tag$ … $tag$: PostgreSQL's dollar quoting.
				k := i + 1
				for k < len(q) && isIdentByte(q[k]) {
					k++
				}
				if k < len(q) && q[k] == '$' {
					tag := q[i : k+1]
					end := strings.Index(q[k+1:], tag)
					if end < 0 {
						return 0, fmt.Errorf("has an unterminated %s body at byte %d", tag, i)
					}
					i = k + 1 + end + len(tag) - 1
					continue
				}
				return 0, fmt.Errorf("has a named parameter at byte %d (%q)", i, around(q, i))
			}
			n, err := strconv.Atoi(q[i+1 : j])
			if err != nil || n < 1 {
				return 0, fmt.Errorf("has a bad placeholder %q", q[i:j])
			}
			if n > high+1 {
				return 0, fmt.Errorf("has $%d first appear after $1…$%d, not $%d (%q)", n, high, high+1, around(q, i))
			}
			high = max(high, n)
			i = j - 1
		}
	}
	if recall {
		if high > 0 {
			return 0, fmt.Errorf("mixes +?N and $n placeholders")
		}
		return -1, nil
	}
	return high, nil
}

func digitsEnd(q string, i int) int {
	for i < len(q) && q[i] >= '0' && q[i] <= '9' {
		i++
	}
	return i
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// around is the text of q around byte i, for a message.
func around(q string, i int) string {
	return strings.Join(strings.Fields(q[max(0, i-40):min(len(q), i+20)]), " ")
}

// guardPlaceholders wraps a Store's connector (wrapConnector) so that each
// statement its connections run is checked; pgConnector's are PostgreSQL's.
func guardPlaceholders(c driver.Connector) driver.Connector {
	_, pg := c.(pgConnector)
	return guardConnector{inner: c, pg: pg}
}

type guardConnector struct {
	inner driver.Connector
	pg    bool
}

func (c guardConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: conn, pg: c.pg}, nil
}

func (c guardConnector) Driver() driver.Driver { return c.inner.Driver() }

// guardConn checks the statements of one connection and passes everything
// on to the driver's connection, the interfaces database/sql looks for
// included.
type guardConn struct {
	driver.Conn
	pg bool
}

func (c *guardConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, errors.New("placeholder guard: the driver's connection has no BeginTx")
}

func (c *guardConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	recordPlaceholders(c.pg, query, -1)
	var st driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return guardStmt{Stmt: st, pg: c.pg, query: query}, nil
}

func (c *guardConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *guardConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip // database/sql prepares it instead
	}
	recordPlaceholders(c.pg, query, len(args))
	return e.ExecContext(ctx, query, args)
}

func (c *guardConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	recordPlaceholders(c.pg, query, len(args))
	return q.QueryContext(ctx, query, args)
}

func (c *guardConn) CheckNamedValue(v *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func (c *guardConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *guardConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *guardConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// guardStmt checks that a prepared statement is given as many arguments
// as it numbers.
type guardStmt struct {
	driver.Stmt
	pg    bool
	query string
}

func (s guardStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	recordPlaceholders(s.pg, s.query, len(args))
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return nil, errors.New("placeholder guard: the driver's statement has no ExecContext")
}

func (s guardStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	recordPlaceholders(s.pg, s.query, len(args))
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return nil, errors.New("placeholder guard: the driver's statement has no QueryContext")
}

// The rule the guard checks, on texts of each kind.
func TestCheckPlaceholders(t *testing.T) {
	tests := []struct {
		q    string
		pg   bool
		n    int
		fail string // a part of the error, "" for none
	}{
		{q: `SELECT 1`},
		{q: `SELECT a FROM t WHERE b = $1 AND c = $2`, n: 2},
		{q: `SELECT $1, $2, $1`, n: 2},
		{q: `UPDATE t SET a = $1 WHERE b = $2 AND c <> $1 LIMIT $3`, pg: true, n: 3},
		{q: `SELECT '?', "$9", json_extract(r, '$.a.b') FROM t -- why?
			WHERE b = $1 /* $7 ? */`, n: 1},
		{q: `CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no? $3'; END $$`, pg: true},
		{q: `SELECT a FROM t WHERE b = +?1 AND c = +?3 LIMIT +?13`, n: -1},
		{q: `SELECT $2, $1`, fail: "$2 first appear after $1…$0"},
		{q: `SELECT $1, $3`, fail: "$3 first appear after $1…$1"},
		{q: `SELECT a FROM t WHERE b = ?`, fail: "? placeholder"},
		{q: `SELECT a FROM t WHERE b = ?1`, fail: "? placeholder"},
		{q: `SELECT a FROM t WHERE b = +?1`, pg: true, fail: "? placeholder"},
		{q: `SELECT a FROM t WHERE b = +?1 AND c = $1`, fail: "mixes"},
		{q: `SELECT a FROM t WHERE b = $name`, fail: "named parameter"},
		{q: `SELECT 'open`, fail: "unterminated"},
	}
	for _, tt := range tests {
		n, err := checkPlaceholders(tt.q, tt.pg)
		switch {
		case tt.fail == "" && err != nil:
			t.Errorf("%q: %v", tt.q, err)
		case tt.fail == "" && n != tt.n:
			t.Errorf("%q: %d placeholders, want %d", tt.q, n, tt.n)
		case tt.fail != "" && (err == nil || !strings.Contains(err.Error(), tt.fail)):
			t.Errorf("%q: error %v, want one saying %q", tt.q, err, tt.fail)
		}
	}
}
