package memory

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// benchTarget is the fingerprint BenchmarkRecall recalls; its family (same
// critical fields) holds benchFamily incidents at every size.
var benchTarget = fpOf("timeout", "api_edge", "database", "spike", "", "prod")

const benchFamily = 300

// benchIdentity is the identity of half the target family's memories (the
// other half belong to other rules and are recalled as related matches).
var benchIdentity = openrecall.Identity{Rule: "SlowDatabaseQueries", Service: "checkout"}

// benchDB returns a database of n incidents, built once and cached under
// os.TempDir() (the name carries the schema version and n).
func benchDB(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("openrecall-bench-recall-s%d-g1-%d.db", SchemaVersion(), n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".building"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(tmp + suffix)
	}
	start := time.Now()
	s, err := Open(context.Background(), tmp, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := bulkInsert(s, n); err != nil {
		_ = s.Close()
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s with %d incidents in %s", path, n, time.Since(start).Round(time.Millisecond))
	return path
}

// bulkInsert stores n incidents in one transaction: benchFamily in the
// target's family with random descriptive fields, the rest spread over many
// other families. On PostgreSQL they go in through multi-row inserts (a
// round trip per row would take minutes at 1M).
func bulkInsert(s *Store, n int) error {
	ctx := context.Background()
	if !s.pg {
		if _, err := s.db.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil {
			return err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.pg {
		head := insertIncident[:strings.Index(insertIncident, "VALUES")] + "VALUES "
		width := strings.Count(head, ",") + 1
		var pending []any
		err = benchIncidents(s, n, func(args []any) error {
			if pending = append(pending, args...); len(pending) >= 4096*width {
				err := insertRows(ctx, tx, head, width, pending)
				pending = pending[:0]
				return err
			}
			return nil
		})
		if err == nil && len(pending) > 0 {
			err = insertRows(ctx, tx, head, width, pending)
		}
	} else {
		var stmt *sql.Stmt
		if stmt, err = tx.PrepareContext(ctx, insertIncident); err != nil {
			return err
		}
		defer stmt.Close()
		err = benchIncidents(s, n, func(args []any) error {
			_, err := stmt.ExecContext(ctx, args...)
			return err
		})
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// benchIncidents calls insert with the insertIncident arguments of each of
// bulkInsert's n incidents, the same for a given n on either backend.
func benchIncidents(s *Store, n int, insert func(args []any) error) error {
	rng := rand.New(rand.NewSource(int64(n)))
	pick := func(vals []string) string { return vals[rng.Intn(len(vals))] }
	attacks := append([]string{"", "", "", ""}, openrecall.AttackPatterns...)
	deps := append([]string{""}, openrecall.DependencyPatterns...)
	shapes := append([]string{""}, openrecall.SignalShapes...)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		var fp openrecall.Fingerprint
		if i%(n/benchFamily) == 0 {
			fp = benchTarget
			fp.DependencyPattern, fp.SignalShape = pick(deps), pick(shapes)
		} else {
			for {
				fp = fpOf(pick(openrecall.ErrorClasses), pick(openrecall.ServiceRoles), pick(deps), pick(shapes),
					pick(attacks), pick(openrecall.Environments))
				if !openrecall.SameCritical(fp, benchTarget) {
					break
				}
			}
		}
		id := openrecall.Identity{Rule: fmt.Sprintf("Rule%d", rng.Intn(2000)), Service: pick([]string{"checkout", "search", "billing"})}
		if fp == benchTarget || openrecall.SameCritical(fp, benchTarget) && rng.Intn(2) == 0 {
			id = benchIdentity
		}
		inc := openrecall.Incident{Fingerprint: fp, Decision: openrecall.MemoryDecisions[rng.Intn(4)],
			Note: fmt.Sprintf("bench note %d", i), SourceAlertID: fmt.Sprintf("alert-%d", i),
			Analyst: "bench", CreatedAt: base.Add(time.Duration(rng.Int63n(int64(365 * 24 * time.Hour)))),
			Identity: id, Severity: openrecall.SeverityMedium}
		_, args, err := s.prepare(inc)
		if err != nil {
			return err
		}
		if err := insert(args); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkRecall recalls one family at 1k, 100k and 1M memories with the
// recall cache off (the Store default; analyze turns it on per run), so every
// iteration runs the recall query.
func BenchmarkRecall(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1k", 1_000}, {"100k", 100_000}, {"1M", 1_000_000}} {
		b.Run(size.name, func(b *testing.B) {
			path := benchDB(b, size.n)
			s, err := Open(context.Background(), path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			benchRecall(b, s)
		})
	}
}

// benchRecall times Recall of the target family on s, which must hold
// bulkInsert's incidents, and reports its p50 and p99.
func benchRecall(b *testing.B, s *Store) {
	ctx := context.Background()
	got, err := s.Recall(ctx, benchIdentity, benchTarget, 10)
	if err != nil || len(got) != 10 {
		b.Fatalf("Recall = %d matches, %v; want 10", len(got), err)
	}
	b.ReportAllocs()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := s.Recall(ctx, benchIdentity, benchTarget, 10); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	// The tail, so flatness from 1k to 1M is shown for the slow recalls
	// too, not only on average.
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func BenchmarkRetain(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	fp := benchTarget
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inc := openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionDuplicate,
			Note: "retained in a benchmark", SourceAlertID: fmt.Sprintf("alert-%d", i)}
		if _, _, err := s.Retain(ctx, inc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStats(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		b.Run(size.name, func(b *testing.B) {
			s, err := Open(context.Background(), benchDB(b, size.n), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st, err := s.Stats(context.Background())
				if err != nil || st.Incidents != size.n {
					b.Fatalf("Stats = %d incidents, %v; want %d", st.Incidents, err, size.n)
				}
			}
		})
	}
}

// BenchmarkPersistBatch persists batches of 64 results (4 audit entries
// and a cost point each, as analyze's queue does) into a fresh store; the
// ns/alert metric is the cost of one result.
func BenchmarkPersistBatch(b *testing.B) {
	ctx := context.Background()
	st := openTemp(b)
	sealer := audit.NewSealer(testKey)
	sink := Sink{Store: st, Seal: sealer.Seal, SealCosts: sealer.SealCosts}
	const perBatch = 64
	results := make([]openrecall.Result, perBatch)
	for j := range results {
		results[j] = sinkResult(fmt.Sprintf("an-%d", j), 4)
	}
	points := make([]*openrecall.CostPoint, perBatch)
	idx := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range results {
			points[j] = &openrecall.CostPoint{Index: idx, Batch: "b1", AlertID: results[j].Alert.ID, Tier: openrecall.TierCheap,
				Cost: 10, Baseline: 50, CumulativeCost: openrecall.NanoUSD(10 * (idx + 1)), CumulativeBaseline: openrecall.NanoUSD(50 * (idx + 1))}
			idx++
		}
		if _, err := sink.PersistBatch(ctx, results, points); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perBatch), "ns/alert")
}

// BenchmarkRecallCached is a recall the cache answers (analyze's usual
// case): the data version is read again every 5ms, as analyze does.
func BenchmarkRecallCached(b *testing.B) {
	s, err := Open(context.Background(), benchDB(b, 1_000), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	s.EnableRecallCache(4096, 5*time.Millisecond)
	ctx := context.Background()
	if _, err := s.Recall(ctx, benchIdentity, benchTarget, 10); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Recall(ctx, benchIdentity, benchTarget, 10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecallMiss is a recall that finds nothing (analyze's miss
// path), plain (the query runs) and with the existence index
// (EnableRecallIndex, the data version read again every 5ms as analyze
// does): on an empty memory, the target family; on 1k memories, an
// identity of its own with a DNA that names neither error class nor
// service role, so only its own tiers are read and no memory has it.
func BenchmarkRecallMiss(b *testing.B) {
	for _, mem := range []struct {
		name string
		open func(b *testing.B) *Store
		id   openrecall.Identity
		fp   openrecall.Fingerprint
	}{
		{"empty", func(b *testing.B) *Store { return openTemp(b) }, benchIdentity, benchTarget},
		{"1k", func(b *testing.B) *Store {
			s, err := Open(context.Background(), benchDB(b, 1_000), Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}, openrecall.Identity{Rule: "NoSuchRule", Service: "checkout"}, fpOf("", "", "database", "spike", "", "prod")},
	} {
		for _, index := range []bool{false, true} {
			name := mem.name + "/plain"
			if index {
				name = mem.name + "/index"
			}
			b.Run(name, func(b *testing.B) {
				s := mem.open(b)
				if index {
					s.EnableRecallIndex(5 * time.Millisecond)
				}
				ctx := context.Background()
				if got, err := s.Recall(ctx, mem.id, mem.fp, 10); err != nil || len(got) != 0 {
					b.Fatalf("Recall = %d matches, %v; want none", len(got), err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := s.Recall(ctx, mem.id, mem.fp, 10); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
