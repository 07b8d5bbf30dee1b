package memory

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// A served result is stored in one transaction (DESIGN §13): the sink's
// batch writes the audit entries, cost points and waiting rows of its
// results and completes their deliveries together. The test below kills a
// process that persists a batch of claimed deliveries before each
// statement of that batch in turn (SIGKILL: no deferred call, no
// rollback, the connection simply gone), then opens the memory again and
// finds every delivery either untouched (pending, nothing of its analysis
// in the trail, no cost point, no notification intent) or complete (its
// result carrying the entries the trail holds, a cost point each, and the
// intents its Notify hook gives it, one per receiver), the whole batch
// alike, and the audit chain intact. It runs on the backend under test: SQLite, or
// PostgreSQL in make test's conformance run.

// The child's environment: the memory it persists into, and the number of
// the statement it is killed before.
const (
	envCrashLocation = "OPENRECALL_CRASH_LOCATION"
	envCrashAt       = "OPENRECALL_CRASH_AT"
	crashDone        = "CRASH-CHILD-PERSISTED"
	crashBatch       = "crash"
	crashDeliveries  = 3
)

func TestServedBatchSurvivesAKillBeforeEveryStatement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per statement of a batch")
	}
	killed := 0
	for at := 1; ; at++ {
		if at > 400 {
			t.Fatalf("the batch still had statements to run after %d kills", killed)
		}
		loc := sharedLocation(t)
		st := openWith(t, loc, Options{Instance: "receiver"})
		if _, err := st.BindAuditKey(context.Background(), testKey.ID(), testSign); err != nil {
			t.Fatal(err)
		}
		if err := st.SealRows(context.Background(), testRowSealer()); err != nil {
			t.Fatal(err)
		}
		var ds []openrecall.Delivery
		for i := range crashDeliveries {
			ds = append(ds, firing(fmt.Sprintf("crash-%d", i), openrecall.SeverityHigh))
		}
		if _, err := st.Enqueue(context.Background(), ds, 0, inboxName); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envCrashLocation+"="+loc, envCrashAt+"="+strconv.Itoa(at))
		out, err := cmd.CombinedOutput()
		persisted := strings.Contains(string(out), crashDone)
		if persisted && err != nil {
			// Such as TestMain's placeholder guard failing the child.
			t.Fatalf("the child persisted the batch and then failed (%v):\n%s", err, out)
		}
		if !persisted {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("kill before statement %d: the child was not killed (%v):\n%s", at, err, out)
			}
			killed++
		}
		checkCrashed(t, st, at, persisted)
		if persisted {
			break
		}
	}
	if killed < 5 {
		t.Fatalf("the batch ran %d statements, each killed before: too few to be the batch", killed)
	}
	t.Logf("killed before each of the batch's %d statements (its begin and commit among them): every delivery untouched or complete", killed)
}

// checkCrashed checks the memory a child persisted into, killed before
// statement at or not at all (persisted).
func checkCrashed(t *testing.T, st *Store, at int, persisted bool) {
	t.Helper()
	ctx := context.Background()
	done := 0
	for id := int64(1); id <= crashDeliveries; id++ {
		sv, err := st.Served(ctx, inboxName(id))
		if err != nil {
			t.Fatalf("kill before statement %d: delivery %d: %v", at, id, err)
		}
		trail, err := st.AuditByAnalysis(ctx, sv.AnalysisID)
		if err != nil {
			t.Fatal(err)
		}
		intents := intentsOf(t, st, sv.AnalysisID)
		want := []string{"pager/trigger/" + sv.Alert.ID + "/pending", "chat/trigger/" + sv.Alert.ID + "/pending"}
		switch {
		case !sv.Done && (sv.Result != nil || len(trail) > 0 || len(intents) > 0):
			t.Fatalf("kill before statement %d: delivery %d pending with a result (%v), %d audit entries or intents %v", at, id, sv.Result != nil, len(trail), intents)
		case sv.Done && !slices.Equal(intents, want):
			t.Fatalf("kill before statement %d: delivery %d done with intents %v, want %v", at, id, intents, want)
		case sv.Done && (sv.Result == nil || sv.Integrity == "failed" || len(trail) == 0 || !sameEntries(sv.Result.Audit, trail)):
			t.Fatalf("kill before statement %d: delivery %d done, its result %+v against the trail's %d entries", at, id, sv.Result, len(trail))
		case sv.Done:
			done++
		}
	}
	points, err := st.CostPoints(ctx, crashBatch)
	if err != nil && !errors.Is(err, openrecall.ErrNotFound) {
		t.Fatal(err)
	}
	if (done != 0 && done != crashDeliveries) || len(points) != done {
		t.Fatalf("kill before statement %d: %d of %d deliveries complete and %d cost points: a batch is stored whole or not at all", at, done, crashDeliveries, len(points))
	}
	if persisted != (done == crashDeliveries) {
		t.Fatalf("kill before statement %d: the child persisted: %v, deliveries complete: %d", at, persisted, done)
	}
	if rep, err := verifyStore(t, st, testKey, nil); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("kill before statement %d: the audit chain: %v %+v", at, err, rep.Problems)
	}
}

func sameEntries(a, b []openrecall.AuditEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Sequence != b[i].Sequence || a[i].Hash != b[i].Hash {
			return false
		}
	}
	return true
}

// TestCrashChild is the process the test above kills: it claims the
// deliveries, then persists one batch of their results through the sink,
// its statements counted from the first of the batch.
func TestCrashChild(t *testing.T) {
	loc := os.Getenv(envCrashLocation)
	if loc == "" {
		t.Skip("the child of TestServedBatchSurvivesAKillBeforeEveryStatement")
	}
	at, err := strconv.ParseInt(os.Getenv(envCrashAt), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	k := &killer{at: at}
	inner := wrapConnector // TestMain's placeholder guard, kept under the killer
	wrapConnector = func(c driver.Connector) driver.Connector {
		if inner != nil {
			c = inner(c)
		}
		return killConnector{inner: c, k: k}
	}
	t.Cleanup(func() { wrapConnector = inner })
	ctx := context.Background()
	st := openWith(t, loc, Options{Instance: "worker", Lease: time.Hour})
	if err := st.SealRows(ctx, testRowSealer()); err != nil {
		t.Fatal(err)
	}
	ds, err := st.Claim(ctx, 10)
	if err != nil || len(ds) != crashDeliveries {
		t.Fatalf("claim: %d deliveries, %v", len(ds), err)
	}
	results := make([]openrecall.Result, len(ds))
	points := make([]*openrecall.CostPoint, len(ds))
	for i, d := range ds {
		results[i] = sinkResult(d.AnalysisID, 2)
		results[i].Alert, results[i].Batch = d.Alert, crashBatch
		results[i].Decision = openrecall.DecisionReal
		points[i] = &openrecall.CostPoint{Index: i, Batch: crashBatch, AlertID: d.Alert.ID, Cost: 1, Baseline: 5,
			CumulativeCost: openrecall.NanoUSD(i + 1), CumulativeBaseline: openrecall.NanoUSD(5 * (i + 1))}
	}
	sealer := audit.NewSealer(testKey)
	sink := Sink{Store: st, Seal: sealer.Seal, SealCosts: sealer.SealCosts, Notify: notifyBoth}
	k.armed.Store(true)
	if _, err := sink.PersistBatch(ctx, results, points); err != nil {
		t.Fatal(err)
	}
	k.armed.Store(false)
	fmt.Println(crashDone, k.n.Load())
}

// killer counts the statements run through the connections it wraps once
// armed, and kills the process before the one numbered at (a transaction's
// begin and commit count as statements).
type killer struct {
	armed atomic.Bool
	n     atomic.Int64
	at    int64
}

func (k *killer) step() {
	if k.armed.Load() && k.n.Add(1) == k.at {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

type killConnector struct {
	inner driver.Connector
	k     *killer
}

func (c killConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &killConn{Conn: conn, k: c.k}, nil
}

func (c killConnector) Driver() driver.Driver { return c.inner.Driver() }

// killConn counts the statements of one connection; the interfaces
// database/sql looks for are passed on to the driver's connection.
type killConn struct {
	driver.Conn
	k *killer
}

func (c *killConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.k.step()
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return killTx{Tx: tx, k: c.k}, nil
}

func (c *killConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return killStmt{Stmt: st, k: c.k}, nil
}

func (c *killConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.k.step()
	return e.ExecContext(ctx, query, args)
}

func (c *killConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.k.step()
	return q.QueryContext(ctx, query, args)
}

func (c *killConn) CheckNamedValue(v *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func (c *killConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

type killTx struct {
	driver.Tx
	k *killer
}

func (t killTx) Commit() error {
	t.k.step()
	return t.Tx.Commit()
}

type killStmt struct {
	driver.Stmt
	k *killer
}

func (s killStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.k.step()
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s killStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.k.step()
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
