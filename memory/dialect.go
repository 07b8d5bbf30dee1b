package memory

import (
	"strconv"
	"strings"
)

// dialect names what SQLite and PostgreSQL spell differently in this
// package's statements. A Store chooses one when it opens (Store.d) and
// every statement that differs between the two databases calls its
// methods where the difference is, so the SQLite text and the PostgreSQL
// text of a statement are read side by side at the query site. Nothing
// rewrites a statement after it is built: the text a query site writes is
// the text the database is given.
//
// A statement written only with what both databases share (numbered
// placeholders, standard joins, ON CONFLICT … DO NOTHING/UPDATE,
// RETURNING, COALESCE, CASE) needs no dialect call. Its placeholders are
// written $1, $2, …: PostgreSQL's own, and on SQLite named parameters,
// which SQLite numbers in the order each name first appears in the text
// (the driver binds arguments by that number). So a statement reads the
// same on both if, and only if, its placeholders first appear in order
// $1, $2, $3, … without a gap; a later use of an earlier $k takes the same
// argument again. A statement whose placeholders vary in number
// (multi-row inserts, IN lists, optional filters) numbers them with params.
// The schema keeps SQLite's integer flags on both backends, so a Go bool
// is passed as boolInt(b) at the call site (pgx does not encode a bool
// into an integer column).
//
// The zero value is SQLite's. A dialect is a value, safe for concurrent
// use.
type dialect struct {
	pg bool
}

// The two dialects.
var (
	sqliteDialect = dialect{}
	pgDialect     = dialect{pg: true}
)

// like is the LIKE operator, spaced, that ignores ASCII case: SQLite's
// LIKE does, PostgreSQL's ILIKE does.
func (d dialect) like() string {
	if d.pg {
		return " ILIKE "
	}
	return " LIKE "
}

// least is the smaller of two values: SQLite's two-argument MIN,
// PostgreSQL's LEAST.
func (d dialect) least(a, b string) string {
	if d.pg {
		return "LEAST(" + a + ", " + b + ")"
	}
	return "MIN(" + a + ", " + b + ")"
}

// greatest is the larger of two values: SQLite's two-argument MAX,
// PostgreSQL's GREATEST.
func (d dialect) greatest(a, b string) string {
	if d.pg {
		return "GREATEST(" + a + ", " + b + ")"
	}
	return "MAX(" + a + ", " + b + ")"
}

// insertOrIgnore starts an insert that skips a row whose key is stored
// already; the statement ends with onConflictIgnore (before a RETURNING).
// SQLite spells it INSERT OR IGNORE INTO, PostgreSQL INSERT INTO … ON
// CONFLICT DO NOTHING.
func (d dialect) insertOrIgnore() string {
	if d.pg {
		return "INSERT INTO"
	}
	return "INSERT OR IGNORE INTO"
}

// onConflictIgnore ends a statement begun with insertOrIgnore.
func (d dialect) onConflictIgnore() string {
	if d.pg {
		return " ON CONFLICT DO NOTHING"
	}
	return ""
}

// indexedBy pins a SELECT's table to index (SQLite's INDEXED BY, which
// keeps its planner from a worse plan); PostgreSQL's planner has no hints
// and needs none.
func (d dialect) indexedBy(index string) string {
	if d.pg {
		return ""
	}
	return " INDEXED BY " + index
}

// jsonText is the text of the member at path of the JSON document in col
// (NULL when absent): SQLite's json_extract, PostgreSQL's #>> on jsonb.
// Both give the text of a string member, so it compares with a text
// parameter alike.
func (d dialect) jsonText(col string, path ...string) string {
	if d.pg {
		return "(" + col + "::jsonb #>> '{" + strings.Join(path, ",") + "}')"
	}
	return "json_extract(" + col + ", '$." + strings.Join(path, ".") + "')"
}

// jsonNotTrue holds when the boolean member key of the JSON document in col
// is absent or false: SQLite's json_extract gives a JSON true as 1,
// PostgreSQL's ->> gives 'true', cast to boolean.
func (d dialect) jsonNotTrue(col, key string) string {
	if d.pg {
		return "COALESCE((" + col + "::jsonb->>'" + key + "')::boolean, false) = false"
	}
	return "COALESCE(json_extract(" + col + ", '$." + key + "'), 0) = 0"
}

// beginSnapshot begins, on a dedicated connection, a read transaction
// whose reads all see one snapshot: on SQLite a deferred transaction (in
// WAL mode its first read fixes the snapshot, and it takes no lock); on
// PostgreSQL a REPEATABLE READ READ ONLY one.
func (d dialect) beginSnapshot() string {
	if d.pg {
		return "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	}
	return "BEGIN DEFERRED"
}

// forUpdate is the row lock a read-then-write of a chain's head row takes
// on PostgreSQL (" FOR UPDATE"); SQLite's immediate transaction already
// holds the database.
func (d dialect) forUpdate() string {
	if d.pg {
		return " FOR UPDATE"
	}
	return ""
}

// noRule is the argument that stands for the rule of an alert without
// identity in recall's related tiers: a rule no stored memory has. SQLite
// takes the NUL byte; PostgreSQL's text cannot hold it, so there it is a
// string no alert names.
func (d dialect) noRule() string {
	if d.pg {
		return pgNoRule
	}
	return noRule
}

// noRule stands for the rule of an alert without identity on SQLite (see
// dialect.noRule).
const noRule = "\x00"

// pgNoRule stands for noRule on PostgreSQL (see dialect.noRule).
const pgNoRule = "\uffff openrecall: no rule \uffff"

// boolInt is a flag as the schema stores it (SQLite's integer flags, kept
// on PostgreSQL): 1 or 0.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// numbered writes numbered parameters for a statement that is built once
// per dialect and names some of its arguments more than once (recall).
// SQLite takes them as +?N, N the argument's number: the unary plus keeps
// SQLite from re-preparing the statement on every binding (see the recall
// query). PostgreSQL takes $M, and refuses a parameter no clause uses (it
// cannot tell its type), so there the parameters are numbered in the order
// the statement first uses them, and pick records which arguments, in that
// order, the statement is given.
type numbered struct {
	d    dialect
	pick []int       // PostgreSQL: argument numbers, by parameter number - 1
	num  map[int]int // PostgreSQL: argument number → parameter number
}

// p returns the parameter for argument n (from 1).
func (b *numbered) p(n int) string {
	if !b.d.pg {
		return "+?" + strconv.Itoa(n)
	}
	m, ok := b.num[n]
	if !ok {
		if b.num == nil {
			b.num = map[int]int{}
		}
		b.pick = append(b.pick, n)
		m = len(b.pick)
		b.num[n] = m
	}
	return "$" + strconv.Itoa(m)
}

// params numbers the placeholders of a statement whose text is built piece
// by piece (multi-row inserts, IN lists, optional filters): each one it
// writes is the next of $1, $2, …, so they appear in the order both
// databases number them (see dialect). Start it at the zero value, or
// after the n placeholders the fixed text before it writes itself
// (params{n: n}); the pieces must be written to the statement in the
// order they are taken from it.
type params struct {
	n int // placeholders written so far
}

// next returns the next placeholder.
func (p *params) next() string {
	p.n++
	return "$" + strconv.Itoa(p.n)
}

// list returns the next k placeholders, comma separated ("$4, $5, $6").
func (p *params) list(k int) string {
	var b strings.Builder
	for i := range k {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.next())
	}
	return b.String()
}

// statements are this package's statements whose text differs between the
// dialects, each built by a function beside its query site that names the
// difference (dialect's methods). They are built once per dialect
// (sqliteStatements, pgStatements) and a Store uses its dialect's
// (Store.sql), so no statement is built per call. They must not be
// modified.
type statements struct {
	strongCompletions string
	addProposal       string
	addException      string
	openGroup         string
	joinGroup         string
	growGroup         string
	pending           string
	prunable          string
	servedSince       string
	closedBetween     string
	withoutIdentity   string
	identities        string
	topIdentities     string
	awaitingProposal  string
	// groupWaits is a condition (WHERE) on alert_groups AS g.
	groupWaits   string
	forgettables []forgettable
	recall       recallStatements
}

func newStatements(d dialect) *statements {
	return &statements{
		strongCompletions: strongCompletionsSQL(d),
		addProposal:       addProposalSQL(d),
		addException:      addExceptionSQL(d),
		openGroup:         openGroupSQL(d),
		joinGroup:         joinGroupSQL(d),
		growGroup:         growGroupSQL(d),
		pending:           pendingSQL(d),
		prunable:          prunableSQL(d),
		servedSince:       servedSinceSQL(d),
		closedBetween:     closedBetweenSQL(d),
		withoutIdentity:   withoutIdentitySQL(d),
		identities:        identitiesSQL(d),
		topIdentities:     topIdentitiesSQL(d),
		awaitingProposal:  awaitingProposalSQL(d),
		groupWaits:        groupWaitsCond(d),
		forgettables:      forgettables(d),
		recall:            newRecallStatements(d),
	}
}

// The statements of each dialect.
var (
	sqliteStatements = newStatements(sqliteDialect)
	pgStatements     = newStatements(pgDialect)
)

// statementsOf returns the statements of dialect d.
func statementsOf(d dialect) *statements {
	if d.pg {
		return pgStatements
	}
	return sqliteStatements
}
