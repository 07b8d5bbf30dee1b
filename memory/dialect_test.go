package memory

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The fragments each dialect spells.
func TestDialectFragments(t *testing.T) {
	tests := []struct {
		name       string
		f          func(d dialect) string
		sqlite, pg string
	}{
		{"like", func(d dialect) string { return "a" + d.like() + "$1" }, "a LIKE $1", "a ILIKE $1"},
		{"least", func(d dialect) string { return d.least("a", "$1") }, "MIN(a, $1)", "LEAST(a, $1)"},
		{"greatest", func(d dialect) string { return d.greatest("a", "$1") }, "MAX(a, $1)", "GREATEST(a, $1)"},
		{"insert or ignore", func(d dialect) string { return d.insertOrIgnore() + " t (a) VALUES ($1)" + d.onConflictIgnore() },
			"INSERT OR IGNORE INTO t (a) VALUES ($1)", "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING"},
		{"indexed by", func(d dialect) string { return "SELECT a FROM t" + d.indexedBy("t_b") + " WHERE b = $1" },
			"SELECT a FROM t INDEXED BY t_b WHERE b = $1", "SELECT a FROM t WHERE b = $1"},
		{"json text", func(d dialect) string { return d.jsonText("result", "proposal", "id") },
			"json_extract(result, '$.proposal.id')", "(result::jsonb #>> '{proposal,id}')"},
		{"json not true", func(d dialect) string { return d.jsonNotTrue("g.head", "bypassed") },
			"COALESCE(json_extract(g.head, '$.bypassed'), 0) = 0", "COALESCE((g.head::jsonb->>'bypassed')::boolean, false) = false"},
		{"snapshot", func(d dialect) string { return d.beginSnapshot() }, "BEGIN DEFERRED", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"},
		{"for update", func(d dialect) string { return "SELECT 1" + d.forUpdate() }, "SELECT 1", "SELECT 1 FOR UPDATE"},
		{"no rule", func(d dialect) string { return d.noRule() }, "\x00", pgNoRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f(sqliteDialect); got != tt.sqlite {
				t.Errorf("sqlite: %q, want %q", got, tt.sqlite)
			}
			if got := tt.f(pgDialect); got != tt.pg {
				t.Errorf("postgres: %q, want %q", got, tt.pg)
			}
		})
	}
}

// statementTexts returns every text of st, by field name.
func statementTexts(st *statements) map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(st).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String {
			out[v.Type().Field(i).Name] = f.String()
		}
	}
	for _, f := range st.forgettables {
		out["forgettables["+f.name+"]"] = f.pick
	}
	for i, r := range st.recall.all() {
		out["recall"+strconv.Itoa(i)] = r.text
	}
	return out
}

// Each dialect's statements carry only its own spellings: no SQLite-only
// spelling reaches PostgreSQL (nothing rewrites it on the way), and
// SQLite's keep theirs.
func TestStatementsSpellTheirDialect(t *testing.T) {
	sqliteOnly := []string{"INDEXED BY", "INSERT OR IGNORE", "json_extract", "MIN(", "MAX(", " LIKE ", "BEGIN DEFERRED", "+?"}
	pgOnly := []string{"ILIKE", "LEAST(", "GREATEST(", "ON CONFLICT DO NOTHING", "::jsonb"}
	for name, q := range statementTexts(pgStatements) {
		for _, s := range sqliteOnly {
			if strings.Contains(q, s) {
				t.Errorf("postgres statement %s has SQLite's %q: %s", name, s, q)
			}
		}
	}
	for name, q := range statementTexts(sqliteStatements) {
		for _, s := range pgOnly {
			if strings.Contains(q, s) {
				t.Errorf("sqlite statement %s has PostgreSQL's %q: %s", name, s, q)
			}
		}
	}
}

// A PostgreSQL recall statement takes the arguments its parameters number,
// each once, and no other: PostgreSQL refuses a parameter no clause uses.
func TestRecallPick(t *testing.T) {
	for i, st := range pgStatements.recall.all() {
		seen := map[int]bool{}
		for m, n := range st.pick {
			if seen[n] {
				t.Errorf("recall %d picks argument %d twice", i, n)
			}
			seen[n] = true
			if !strings.Contains(st.text, "$"+strconv.Itoa(m+1)) {
				t.Errorf("recall %d has no parameter $%d", i, m+1)
			}
		}
		if strings.Contains(st.text, "$"+strconv.Itoa(len(st.pick)+1)) {
			t.Errorf("recall %d has a parameter past its %d arguments", i, len(st.pick))
		}
	}
	if got := pgStatements.recall.strongOnly.pick; slices.Contains(got, argFP) || slices.Contains(got, argK4) {
		t.Errorf("the strong-only recall takes the DNA keys: %v", got)
	}
	if sqliteStatements.recall.strongOnly.pick != nil {
		t.Errorf("a SQLite recall picks its arguments; it takes them all, numbered")
	}
}
