package memory

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/pgtest"
)

// The PostgreSQL benchmarks need a server: OPENRECALL_PG_DSN, or a
// throwaway cluster scripts/pgcluster.sh starts (fsync off there, so its
// write figures flatter PostgreSQL); without either they are skipped, and
// the skip says why.

// envPGBenchSizes names the variable that picks BenchmarkRecallPG's sizes:
// a comma-separated list of 1k, 100k and 1M (default 1k,100k; 1M takes
// minutes to seed the first time).
const envPGBenchSizes = "OPENRECALL_BENCH_PG_SIZES"

// BenchmarkAuditAppend8Writers appends audit entries from 8 goroutines at
// once, each appending batches of 16 through Store.AppendAudit (one write
// transaction per batch, chained on the head it reads), on SQLite and on
// PostgreSQL; appends/s counts entries.
func BenchmarkAuditAppend8Writers(b *testing.B) {
	const writers, batch = 8, 16
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			var s *Store
			if backend == "postgres" {
				s = openAt(b, pgtest.DSN(b))
			} else {
				s = openAt(b, filepath.Join(b.TempDir(), "memory.db"))
			}
			seal := audit.NewSealer(testKey).Seal
			ctx := context.Background()
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			b.ResetTimer()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					entries := make([]openrecall.AuditEntry, batch)
					for next.Add(1) <= int64(b.N) {
						for i := range entries {
							entries[i] = openrecall.AuditEntry{AnalysisID: fmt.Sprintf("an-%d-%d", w, i), Batch: "bench",
								AlertID: fmt.Sprintf("alert-%d", w), StepIndex: i, Step: "recall", Reason: "benchmark",
								Outcome: openrecall.OutcomeOK, Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
						}
						if _, err := s.AppendAudit(ctx, entries, seal); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			select {
			case err := <-errs:
				b.Fatal(err)
			default:
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

// BenchmarkRecallPG is BenchmarkRecall on PostgreSQL: the same incidents,
// recalled with the cache off, p50 and p99 reported. The seeded schemas
// are kept in the server's database (named openrecall_bench_recall_…) for
// the next run, as BenchmarkRecall keeps its files; the sizes come from
// OPENRECALL_BENCH_PG_SIZES.
func BenchmarkRecallPG(b *testing.B) {
	sizes, err := pgBenchSizes(os.Getenv(envPGBenchSizes))
	if err != nil {
		b.Fatalf("%s: %v", envPGBenchSizes, err)
	}
	for _, size := range sizes {
		b.Run(size.name, func(b *testing.B) {
			s, err := Open(context.Background(), pgBenchDSN(b, size.n), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			benchRecall(b, s)
		})
	}
}

type benchSize struct {
	name string
	n    int
}

// pgBenchSizes parses a comma-separated list of 1k, 100k and 1M; empty is
// 1k,100k.
func pgBenchSizes(v string) ([]benchSize, error) {
	if strings.TrimSpace(v) == "" {
		v = "1k,100k"
	}
	known := map[string]int{"1k": 1_000, "100k": 100_000, "1M": 1_000_000}
	var out []benchSize
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		n, ok := known[f]
		if !ok {
			return nil, fmt.Errorf("size %q: want 1k, 100k or 1M", f)
		}
		out = append(out, benchSize{f, n})
	}
	return out, nil
}

// pgBenchDSN returns the URL of a schema on the test server holding
// bulkInsert's n incidents, seeding it (and analysing its tables, as
// autovacuum would after such a load) when it does not exist yet.
func pgBenchDSN(b *testing.B, n int) string {
	b.Helper()
	server := pgtest.Server(b)
	schema := fmt.Sprintf("openrecall_bench_recall_s%d_g1_%d", SchemaVersion(), n)
	db, err := sql.Open("pgx", server)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }() // this function's pool
	ctx := context.Background()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if exists {
		return pgtest.WithSchema(server, schema)
	}
	tmp := schema + "_building"
	start := time.Now()
	for _, q := range []string{"DROP SCHEMA IF EXISTS " + tmp + " CASCADE", "CREATE SCHEMA " + tmp} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	s, err := Open(ctx, pgtest.WithSchema(server, tmp), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := bulkInsert(s, n); err != nil {
		_ = s.Close()
		b.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE incidents"); err != nil {
		_ = s.Close()
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ALTER SCHEMA "+tmp+" RENAME TO "+schema); err != nil {
		b.Fatal(err)
	}
	b.Logf("built schema %s with %d incidents in %s (kept; DROP SCHEMA %s CASCADE to rebuild)", schema, n,
		time.Since(start).Round(time.Millisecond), schema)
	return pgtest.WithSchema(server, schema)
}

// TestPGBenchSizes: the sizes variable takes the three sizes in any
// order and refuses anything else.
func TestPGBenchSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "", want: "1k=1000 100k=100000"},
		{in: "1M", want: "1M=1000000"},
		{in: " 100k, 1k ,1M", want: "100k=100000 1k=1000 1M=1000000"},
		{in: "10k", wantErr: true},
	}
	for _, tt := range tests {
		got, err := pgBenchSizes(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("pgBenchSizes(%q): error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		var parts []string
		for _, s := range got {
			parts = append(parts, s.name+"="+strconv.Itoa(s.n))
		}
		if g := strings.Join(parts, " "); g != tt.want {
			t.Errorf("pgBenchSizes(%q) = %q, want %q", tt.in, g, tt.want)
		}
	}
}
