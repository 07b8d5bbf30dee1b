package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/memory"
)

// A released schema comes back as a newly migrated one: what a store wrote
// on it is gone, the chain heads and the keyed boundary are new, and
// inboxes number from 1 again.
func TestResetSchemaIsNew(t *testing.T) {
	t.Setenv(EnvBackend, "postgres")
	pgtest.Server(t)
	ctx := context.Background()
	loc, release, err := Fresh("")
	if err != nil {
		t.Fatal(err)
	}
	st, err := memory.Open(ctx, loc, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fp := openrecall.Fingerprint{ErrorClass: "timeout", ServiceRole: "api", Environment: "prod"}
	if _, _, err := st.Retain(ctx, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionFalsePositive, Analyst: "ana"}); err != nil {
		t.Fatal(err)
	}
	seal := func(prev string, next int64, es []openrecall.AuditEntry) []openrecall.AuditEntry {
		for i := range es {
			es[i].Sequence, es[i].PrevHash, es[i].Hash = next+int64(i), prev, "h"
		}
		return es
	}
	if _, err := st.AppendAudit(ctx, []openrecall.AuditEntry{{AnalysisID: "a", Step: "intake"}}, seal); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "e", Alert: openrecall.Alert{ID: "x", Status: openrecall.StatusFiring}}}, 0,
		func(id int64) string { return "a" }); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	release()
	again, release2, err := Fresh("")
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if again != loc {
		t.Fatalf("the released schema was not reused: %s, then %s", loc, again)
	}
	sameAsPristine(t, schemaOf(again))
	st, err = memory.Open(ctx, again, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	stats, err := st.Stats(ctx)
	if err != nil || stats.Incidents != 0 {
		t.Fatalf("memories after the reset: %+v, %v", stats, err)
	}
	if seq, hash, err := st.AuditHead(ctx); err != nil || seq != 0 || hash != "" {
		t.Fatalf("audit head after the reset: %d %q %v", seq, hash, err)
	}
	out, err := st.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "e", Alert: openrecall.Alert{ID: "x", Status: openrecall.StatusFiring}}}, 0,
		func(id int64) string { return "b" })
	if err != nil || out[0].Duplicate || out[0].ID != 1 {
		t.Fatalf("enqueue after the reset: %+v, %v; want a new delivery with id 1", out, err)
	}
}

// sameAsPristine fails t unless every table of schema holds pristine's
// rows and every sequence of it stands where pristine's does
// (schema_migrations, which a reset keeps, holds the same versions
// applied at another time).
func sameAsPristine(t *testing.T, schema string) {
	t.Helper()
	for _, tbl := range pool.tables {
		var n int
		q := fmt.Sprintf(`SELECT COUNT(*) FROM ((SELECT * FROM %[1]s.%[3]s EXCEPT ALL SELECT * FROM %[2]s.%[3]s)
			UNION ALL (SELECT * FROM %[2]s.%[3]s EXCEPT ALL SELECT * FROM %[1]s.%[3]s)) AS d`, schema, pool.pristine, tbl)
		if err := pool.db.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("table %s after the reset: %d rows differ from pristine's (%v)", tbl, n, err)
		}
	}
	seqs := func(schema string) string {
		var s string
		if err := pool.db.QueryRow(`SELECT COALESCE(string_agg(sequencename || '=' || COALESCE(last_value::text, 'unused'), ',' ORDER BY sequencename), '')
			FROM pg_sequences WHERE schemaname = $1`, schema).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got, want := seqs(schema), seqs(pool.pristine); got != want {
		t.Errorf("sequences after the reset: %s; pristine's: %s", got, want)
	}
}

// schemaOf returns the schema a location of Fresh names.
func schemaOf(loc string) string {
	schema := loc[strings.Index(loc, "search_path=")+len("search_path="):]
	schema, _, _ = strings.Cut(schema, "&")
	return schema
}

// A schema whose definition its test changed (here a trigger dropped, as
// a tamperer would) is not handed out again.
func TestChangedSchemaIsNotReused(t *testing.T) {
	t.Setenv(EnvBackend, "postgres")
	pgtest.Server(t)
	loc, release, err := Fresh("")
	if err != nil {
		t.Fatal(err)
	}
	schema := schemaOf(loc)
	if _, err := pool.db.Exec("DROP TRIGGER audit_entries_no_delete ON " + schema + ".audit_entries"); err != nil {
		t.Fatal(err)
	}
	release()
	again, release2, err := Fresh("")
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if again == loc {
		t.Fatalf("a schema without its trigger was handed out again: %s", again)
	}
	var n int
	if err := pool.db.QueryRow(`SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = $1`, schema).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the changed schema %s: %d left (%v); want it dropped", schema, n, err)
	}
}

// BenchmarkFreshCycle measures what a property case that opens a store
// pays on PostgreSQL: a schema taken, a store opened on it, one memory
// written, the store closed and the schema released (reset).
func BenchmarkFreshCycle(b *testing.B) {
	b.Setenv(EnvBackend, "postgres")
	pgtest.Server(b)
	ctx := context.Background()
	fp := openrecall.Fingerprint{ErrorClass: "timeout", ServiceRole: "api", Environment: "prod"}
	for b.Loop() {
		loc, release, err := Fresh("")
		if err != nil {
			b.Fatal(err)
		}
		st, err := memory.Open(ctx, loc, memory.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := st.Retain(ctx, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionFalsePositive, Analyst: "ana"}); err != nil {
			b.Fatal(err)
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		release()
	}
}
