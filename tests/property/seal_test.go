package property

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// sealProperties are the rules of the chain over what is served and what is
// trusted (issue #33, item 6): memories, what waits for a person and the
// results of finished deliveries.
func sealProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P140_any_edit_to_a_served_or_trusted_row_is_caught",
			"Any edit, made in the database, of any column a reader uses of a memory, of a row of what waits for a person or of a finished delivery is reported by the keyed `audit verify`, naming the row; before the edit the trail verifies intact (a forget, a decision and a pruning are chained events, never reported); recall never returns an edited memory and an edited result or waiting row is not served (ErrIntegrity).",
			"SealCaseGen", sealCaseGen(), checkSealEdit, pbt.Expensive(3)),
		pbt.ForAll("P141_deleting_a_bound_row_is_caught",
			"Deleting, in the database, a memory, a row of what waits for a person or a finished delivery that the chain binds is reported by the keyed `audit verify` as a deletion naming the row, and nothing else is reported (a forget, a decision and a pruning are chained events; what an archive forgot is P103's).",
			"SealCaseGen", sealCaseGen(), checkSealDelete, pbt.Expensive(3)),
		pbt.ForAll("P142_concurrent_sealed_writers_verify_clean",
			"Several goroutines retaining, forgetting, recording and deciding what waits for a person and completing deliveries at once leave a trail whose keyed `audit verify` is intact, every row sealed as it reads, and every result served.",
			"SealRaceGen", sealRaceGen(), checkSealRace, pbt.Expensive(3)),
	}
}

// sealCase is a small desk: Memories memories, Waiting items waiting for
// a person and Results finished deliveries, the first memory forgotten and
// the first item decided when Forget and Decide say so, pruned before
// Prune hours when not 0; then one row (Kind, Row) and, for P140, one of
// its columns (Column) is tampered with.
type sealCase struct {
	Memories, Waiting, Results int
	Forget, Decide, Prune      bool
	Kind, Row, Column          int
}

func sealCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(sealCase{}), map[string]gopter.Gen{
		"Memories": gg.IntRange(1, 3),
		"Waiting":  gg.IntRange(1, 3),
		"Results":  gg.IntRange(1, 3),
		"Forget":   gg.Bool(),
		"Decide":   gg.Bool(),
		"Prune":    gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Kind":     gg.IntRange(0, 2),
		"Row":      gg.IntRange(0, 2),
		"Column":   gg.IntRange(0, 20),
	})
}

// tamperedColumns are, per kind of row, the columns its readers use and an
// expression that changes each (a text column grows, a number moves, a
// NULL becomes a value).
var tamperedColumns = map[string][][2]string{
	openrecall.RowMemory: {
		{"decision", "'known_benign' || decision"}, {"note", "note || 'x'"}, {"dead_ends", "dead_ends || ' '"}, {"analyst", "analyst || 'x'"},
		{"impact_minutes", "impact_minutes + 1"}, {"source_alert_id", "source_alert_id || 'x'"}, {"created_at", "created_at + 1"},
		{"rule", "rule || 'x'"}, {"service", "service || 'x'"}, {"severity", "severity || 'x'"},
		{"expires_at", "COALESCE(expires_at, 0) + 1"}, {"forgotten_at", "CASE WHEN forgotten_at IS NULL THEN 1 END"},
		{"entities", "entities || ' '"}, {"error_class", "error_class || 'x'"}, {"service_role", "service_role || 'x'"},
		{"dependency_pattern", "dependency_pattern || 'x'"}, {"signal_shape", "signal_shape || 'x'"},
		{"attack_pattern", "attack_pattern || 'x'"}, {"environment", "environment || 'x'"}, {"dedupe_key", "dedupe_key || 'x'"},
		{"seal", "''"},
	},
	openrecall.RowWaiting: {
		{"batch", "batch || 'x'"}, {"since", "since + 1"}, {"reason", "reason || 'x'"}, {"why", "why || 'x'"},
		{"severity", "severity || 'x'"}, {"rule", "rule || 'x'"}, {"service", "service || 'x'"}, {"title", "title || 'x'"},
		{"alert_id", "alert_id || 'x'"}, {"proposed", "'known_benign' || proposed"}, {"result", "result || ' '"},
		{"decided_at", "COALESCE(decided_at, 0) + 1"}, {"decided_by", "COALESCE(decided_by, '') || 'x'"},
		{"decision", "COALESCE(decision, '') || 'x'"}, {"memory_id", "COALESCE(memory_id, '') || 'x'"}, {"seal", "''"},
	},
	openrecall.RowResult: {
		{"delivery", "delivery || ' '"}, {"done_at", "done_at + 1"}, {"result", "COALESCE(result, '') || ' '"},
		{"pruned_at", "COALESCE(pruned_at, 0) + 1"}, {"endpoint", "endpoint || 'x'"}, {"request_id", "request_id || 'x'"},
		{"received_at", "received_at + 1"}, {"alert_id", "alert_id || 'x'"}, {"done_seq", "done_seq + 1000"}, {"seal", "''"},
	},
}

var sealKinds = []string{openrecall.RowMemory, openrecall.RowWaiting, openrecall.RowResult}

// sealDesk is a desk of a sealCase, built.
type sealDesk struct {
	*hourlyDesk
	memories []openrecall.Incident
	waiting  []string // analysis ids
	results  []string // analysis ids
	rid      openrecall.Identity
	fp       openrecall.Fingerprint
}

func buildSealDesk(ctx context.Context, c sealCase) (*sealDesk, error) {
	h, err := openHourlyDesk(ctx, "seal")
	if err != nil {
		return nil, err
	}
	d := &sealDesk{hourlyDesk: h, rid: openrecall.Identity{Rule: "KubePodCrashLooping", Service: "api"},
		fp: openrecall.Fingerprint{ErrorClass: "crashloopbackoff", ServiceRole: "api_edge", Environment: "prod"}}
	fail := func(err error) (*sealDesk, error) { h.close(); return nil, err }
	for i := range c.Memories {
		inc, _, err := h.st.Retain(ctx, openrecall.Incident{Fingerprint: d.fp, Identity: d.rid, Decision: openrecall.DecisionReal,
			Note: "outage " + strconv.Itoa(i), Analyst: "ana", DeadEnds: []string{"restart"}, Entities: map[string]string{"host": "h" + strconv.Itoa(i)}})
		if err != nil {
			return fail(fmt.Errorf("retain: %v", err))
		}
		d.memories = append(d.memories, inc)
	}
	if c.Forget {
		if _, _, err := h.st.Forget(ctx, d.memories[0].ID); err != nil {
			return fail(fmt.Errorf("forget: %v", err))
		}
	}
	for i := range c.Waiting {
		id := "b-" + strconv.Itoa(i)
		if err := h.st.RecordWaiting(ctx, []openrecall.Waiting{{AnalysisID: id, Batch: "b", Since: h.clock.now(), Reason: "escalated",
			Severity: openrecall.SeverityHigh, AlertID: "w" + strconv.Itoa(i), Title: "pod crash looping",
			Result: &openrecall.Result{AnalysisID: id, Decision: openrecall.DecisionEscalated}}}); err != nil {
			return fail(fmt.Errorf("record waiting: %v", err))
		}
		d.waiting = append(d.waiting, id)
	}
	if c.Decide {
		if _, err := h.st.Decide(ctx, openrecall.Waiting{AnalysisID: d.waiting[0], DecidedBy: "ana", Decision: openrecall.DecisionReal,
			MemoryID: d.memories[0].ID, DecidedAt: h.clock.now()}); err != nil {
			return fail(fmt.Errorf("decide: %v", err))
		}
	}
	for i := range c.Results {
		ds, err := h.st.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alertmanager", Alert: openrecall.Alert{ID: "r" + strconv.Itoa(i),
			Title: "disk full", Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring}}}, 0, func(id int64) string { return fmt.Sprintf("serve-%06d", id) })
		if err != nil {
			return fail(fmt.Errorf("enqueue: %v", err))
		}
		if err := h.st.Complete(ctx, []int64{ds[0].ID}, []openrecall.Result{{AnalysisID: ds[0].AnalysisID, Outcome: openrecall.ResultTriaged,
			Decision: openrecall.DecisionEscalated}}); err != nil {
			return fail(fmt.Errorf("complete: %v", err))
		}
		d.results = append(d.results, ds[0].AnalysisID)
	}
	if c.Prune {
		h.clock.set(h.clock.now().Add(time.Hour))
		if _, err := h.st.PruneInboxAll(ctx, h.clock.now(), 1); err != nil {
			return fail(fmt.Errorf("prune: %v", err))
		}
	}
	return d, nil
}

// target names the row c tampers with: its kind, its key, and the table
// and key column holding it.
func (d *sealDesk) target(c sealCase) (kind, key, table, keyCol string) {
	switch kind = sealKinds[c.Kind%len(sealKinds)]; kind {
	case openrecall.RowMemory:
		return kind, d.memories[c.Row%len(d.memories)].ID, "incidents", "id"
	case openrecall.RowWaiting:
		return kind, d.waiting[c.Row%len(d.waiting)], "waiting", "analysis_id"
	}
	return kind, d.results[c.Row%len(d.results)], "inbox", "analysis_id"
}

// rowProblems returns the verdict's problems of rows, and an error for
// any other problem.
func rowProblems(ctx context.Context, app *usecase.App) ([]usecase.Problem, error) {
	v, err := app.VerifyAudit(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("verify: %v", err)
	}
	var out []usecase.Problem
	for _, p := range v.Problems {
		if p.Chain != "row" {
			return nil, fmt.Errorf("a problem outside the rows: %s", p.Problem)
		}
		out = append(out, p)
	}
	return out, nil
}

func names(ps []usecase.Problem, step, key, kind string) bool {
	for _, p := range ps {
		if p.Step == step && p.AnalysisID == key && (kind == "" || p.Kind == kind) {
			return true
		}
	}
	return false
}

func checkSealEdit(c sealCase) error {
	ctx := context.Background()
	d, err := buildSealDesk(ctx, c)
	if err != nil {
		return err
	}
	defer d.close()
	if ps, err := rowProblems(ctx, d.app); err != nil || len(ps) != 0 {
		return fmt.Errorf("before any edit: %v %v", ps, err)
	}
	kind, key, table, keyCol := d.target(c)
	cols := tamperedColumns[kind]
	col := cols[c.Column%len(cols)]
	if err := rawExec(d.loc, fmt.Sprintf(`UPDATE %s SET %s = %s WHERE %s = '%s'`, table, col[0], col[1], keyCol, key)); err != nil {
		return err
	}
	ps, err := rowProblems(ctx, d.app)
	if err != nil {
		return err
	}
	if !names(ps, kind, key, "") {
		return fmt.Errorf("%s %s: column %s edited (%s), verify reports %v", kind, key, col[0], col[1], ps)
	}
	switch kind {
	case openrecall.RowMemory:
		ms, err := d.st.Recall(ctx, d.rid, d.fp, 10)
		if err != nil {
			return fmt.Errorf("recall: %v", err)
		}
		for _, m := range ms {
			if m.Incident.ID == key {
				return fmt.Errorf("recall returned memory %s with its %s edited", key, col[0])
			}
		}
	case openrecall.RowWaiting:
		if _, err := d.st.WaitingFor(ctx, key); !errors.Is(err, openrecall.ErrIntegrity) {
			return fmt.Errorf("waiting row %s with its %s edited read as %v, want ErrIntegrity", key, col[0], err)
		}
	case openrecall.RowResult:
		if sv, err := d.st.Served(ctx, key); !errors.Is(err, openrecall.ErrIntegrity) || sv.Result != nil {
			return fmt.Errorf("result %s with its %s edited served (%v)", key, col[0], err)
		}
	}
	return nil
}

func checkSealDelete(c sealCase) error {
	ctx := context.Background()
	d, err := buildSealDesk(ctx, c)
	if err != nil {
		return err
	}
	defer d.close()
	if ps, err := rowProblems(ctx, d.app); err != nil || len(ps) != 0 {
		return fmt.Errorf("before any deletion: %v %v", ps, err)
	}
	kind, key, table, keyCol := d.target(c)
	if err := rawExec(d.loc, fmt.Sprintf(`DELETE FROM %s WHERE %s = '%s'`, table, keyCol, key)); err != nil {
		return err
	}
	ps, err := rowProblems(ctx, d.app)
	if err != nil {
		return err
	}
	if !names(ps, kind, key, "deleted") || len(ps) != 1 {
		return fmt.Errorf("%s %s deleted, verify reports %v, want its deletion alone", kind, key, ps)
	}
	return nil
}

// sealRace is P142's load: Writers goroutines each doing Ops rounds of a
// retain, a waiting item (decided when the round's Decide bit says so), a
// finished delivery and, every other round, a forget.
type sealRace struct {
	Writers, Ops int
	Decide       []bool
}

func sealRaceGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(sealRace{}), map[string]gopter.Gen{
		"Writers": gg.IntRange(2, 4),
		"Ops":     gg.IntRange(1, 4),
		"Decide":  gg.SliceOfN(4, gg.Bool()),
	})
}

func checkSealRace(c sealRace) error {
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "sealrace")
	if err != nil {
		return err
	}
	defer h.close()
	var wg sync.WaitGroup
	errs := make(chan error, c.Writers*c.Ops*5)
	var mu sync.Mutex
	var served []string
	for g := range c.Writers {
		wg.Go(func() {
			for i := range c.Ops {
				tag := fmt.Sprintf("g%d-%d", g, i)
				inc, _, err := h.st.Retain(ctx, openrecall.Incident{Fingerprint: openrecall.Fingerprint{ErrorClass: "oom", Environment: "prod"},
					Identity: openrecall.Identity{Rule: "r", Service: "s"}, Decision: openrecall.DecisionReal, Note: tag})
				if err != nil {
					errs <- err
					continue
				}
				if i%2 == 1 {
					if _, _, err := h.st.Forget(ctx, inc.ID); err != nil {
						errs <- err
					}
				}
				if err := h.st.RecordWaiting(ctx, []openrecall.Waiting{{AnalysisID: tag, Batch: "g", Since: h.clock.now(), Reason: "escalated",
					Result: &openrecall.Result{AnalysisID: tag}}}); err != nil {
					errs <- err
				}
				if i < len(c.Decide) && c.Decide[i] {
					if _, err := h.st.Decide(ctx, openrecall.Waiting{AnalysisID: tag, DecidedBy: "ana", Decision: openrecall.DecisionReal, DecidedAt: h.clock.now()}); err != nil {
						errs <- err
					}
				}
				ds, err := h.st.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alertmanager", Alert: openrecall.Alert{ID: tag, Title: "t",
					Status: openrecall.StatusFiring}}}, 0, func(id int64) string { return fmt.Sprintf("serve-%06d", id) })
				if err != nil {
					errs <- err
					continue
				}
				if err := h.st.Complete(ctx, []int64{ds[0].ID}, []openrecall.Result{{AnalysisID: ds[0].AnalysisID, Decision: openrecall.DecisionReal}}); err != nil {
					errs <- err
				}
				mu.Lock()
				served = append(served, ds[0].AnalysisID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return fmt.Errorf("a writer: %v", err)
	}
	ps, err := rowProblems(ctx, h.app)
	if err != nil || len(ps) != 0 {
		return fmt.Errorf("after %d writers × %d rounds: %v %v", c.Writers, c.Ops, ps, err)
	}
	for _, id := range served {
		if sv, err := h.st.Served(ctx, id); err != nil || sv.Result == nil {
			return fmt.Errorf("result %s: %v", id, err)
		}
	}
	return nil
}

// rawExec runs q on the database at loc as someone holding it would,
// outside any Store.
func rawExec(loc, q string) error {
	driver, dsn := "sqlite3", "file:"+loc+"?_busy_timeout=5000"
	if memory.IsPostgres(loc) {
		driver, dsn = "pgx", loc
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}
