package reliability

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/figures"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
)

// mpStormRules is how many rules of the corpus TestMultiProcessStorm's
// storm fires by default.
const mpStormRules = 120

// TestMultiProcessStorm delivers the storm of TestCorpusStorm (every rule
// of the corpus firing 30 times within 30 minutes, one firing of every
// tenth non-critical rule at critical) round-robin to 1 and to 3 `openrecall
// serve` processes on one PostgreSQL schema each, and checks that the
// processes behave as one (DESIGN §13, "Shared state is shared"): no two
// groups share a group key and a head severity (one group per identity,
// and one more for a severity rise), no group mixes identities, Alert DNA
// or status, every firing is analysed once, and the 3 processes make no
// more model calls than the one process. It reports the compression of
// both runs. It takes the first mpStormRules rules of the corpus, or
// OPENRECALL_MP_STORM_RULES of them ("all": the whole corpus, as make
// e2e-multiprocess runs it). It needs PostgreSQL (internal/pgtest).
func TestMultiProcessStorm(t *testing.T) {
	needBinary(t)
	rules, err := rulecorpus.LoadNear(".")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("OPENRECALL_MP_STORM_RULES") != "all" {
		// The whole storm is make e2e-multiprocess's: 19,350 posts per
		// run would take minutes of every make test.
		rules = rules[:min(len(rules), envInt(t, "OPENRECALL_MP_STORM_RULES", mpStormRules))]
	}
	opts := rulecorpus.StormOptions{Firings: 30, Span: 30 * time.Minute, RiseEvery: 10, Seed: 21}
	storm := rulecorpus.Storm(rules, opts)
	bodies := make([][]byte, len(storm))
	for i, f := range storm {
		if bodies[i], err = rulecorpus.Webhook(rulecorpus.Alert(rules[f.Rule], f.Firing)); err != nil {
			t.Fatal(err)
		}
	}
	var calls [2]int
	for k, procs := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d_processes", procs), func(t *testing.T) {
			calls[k] = runStorm(t, procs, bodies)
		})
	}
	if t.Failed() {
		return
	}
	if calls[1] > calls[0] {
		t.Errorf("3 processes made %d model calls for the storm, one process %d: compression fell as processes were added", calls[1], calls[0])
	}
	n := float64(len(storm))
	figures.Report(t, "multi-process storm: %d firings of %d rules posted round-robin: 1 process %d model calls (compression %.1f%%), 3 processes %d (compression %.1f%%)",
		len(storm), len(rules), calls[0], 100*(1-float64(calls[0])/n), calls[1], 100*(1-float64(calls[1])/n))
}

// runStorm posts bodies in order, body i to process i mod procs, on a
// schema of its own, waits until every delivery is done, checks the
// groups and returns the model calls made.
func runStorm(t *testing.T, procs int, bodies [][]byte) int {
	dsn := pgtest.DSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // the test's own pool
	env := []string{"OPENRECALL_AUDIT_KEY=" + strings.Repeat("6b", 32)}
	if r := runBinEnv(t, env, nil, "--db", dsn, "memory", "migrate"); r.code != 0 {
		t.Fatalf("memory migrate: exit %d\n%s", r.code, r.stderr)
	}
	ps := newProcs(t, dsn, env, "s", procs, func(name string) string {
		return fmt.Sprintf("server:\n  instance: %s\n  workers: %d\n", name, mpWorkers)
	})
	for _, p := range ps {
		if err := p.start(t); err != nil {
			t.Fatal(err)
		}
	}
	// Each body once, to process i mod procs (a plan of first posts only).
	plan := make([]mpPost, len(bodies))
	for i := range plan {
		plan[i] = mpPost{alert: i, target: i % procs}
	}
	s := &mpSender{procs: ps, bodies: bodies, plan: plan,
		answers: make([][2]string, len(bodies)), dupAnswer: make([][2]bool, len(bodies)),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: mpSenders}}}
	start := time.Now()
	var wg sync.WaitGroup
	for range mpSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(t)
		}()
	}
	wg.Wait()
	if s.failed.Load() {
		t.FailNow() // the sender reported why
	}
	posted := time.Since(start)
	if !testenv.Poll(t, 100*time.Millisecond, func() bool { return pendingCount(t, db) == 0 }) {
		t.Fatalf("%d deliveries still pending", pendingCount(t, db))
	}
	drained := time.Since(start)
	results := readResults(t, ps[0].addr)
	for _, p := range ps {
		if code := p.terminate(t); code != 0 {
			t.Errorf("%s: exit %d after SIGTERM", p.name, code)
		}
	}

	byID := map[string]openrecall.Result{}
	for _, sv := range results {
		if sv.Result != nil {
			byID[sv.AnalysisID] = *sv.Result
		}
	}
	if len(byID) != len(bodies) {
		t.Fatalf("%d results for %d firings", len(byID), len(bodies))
	}
	calls, grouped, mixed := 0, 0, 0
	type slot struct {
		key openrecall.GroupKey
		sev openrecall.Severity
	}
	groupOf := map[slot]string{}
	for _, r := range byID {
		for _, st := range r.Steps {
			if st.Step == openrecall.StepAnalysis && !st.Skipped {
				calls++
			}
		}
		if r.Group == nil {
			continue
		}
		head, ok := byID[r.Group.HeadAnalysisID]
		if !ok {
			t.Errorf("%s: its group's head %s has no result", r.AnalysisID, r.Group.HeadAnalysisID)
			continue
		}
		hk, _ := openrecall.GroupKeyOf(head.Alert, head.Identity, head.Fingerprint)
		if k, _ := openrecall.GroupKeyOf(r.Alert, r.Identity, r.Fingerprint); k != hk {
			mixed++
			t.Errorf("mixed group %s: member %s (%s, %s) under head %s (%s, %s)", r.Group.ID, r.AnalysisID, r.Identity, r.Fingerprint, head.AnalysisID, head.Identity, head.Fingerprint)
		}
		if r.Grouped() {
			grouped++
			continue
		}
		sl := slot{hk, head.Alert.Severity}
		if other, twice := groupOf[sl]; twice {
			t.Errorf("two groups of one key and head severity %s: %s and %s (%s)", sl.sev, other, r.Group.ID, head.Identity)
		}
		groupOf[sl] = r.Group.ID
	}
	t.Logf("%d processes: %d firings posted in %s (%.0f/s accepted), drained in %s; %d groups, %d grouped, %d groups mixing identities, %d model calls (compression %.1f%%)",
		procs, len(bodies), posted.Round(time.Millisecond), float64(len(bodies))/posted.Seconds(), drained.Round(time.Millisecond),
		len(groupOf), grouped, mixed, calls, 100*(1-float64(calls)/float64(len(bodies))))
	return calls
}
