package reliability

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
)

// The multi-process test's shape (issue [postgres], item 4). The alert count
// and the seed can be set for a quicker or a replayed run.
const (
	mpProcs   = 3
	mpWorkers = 4
	mpLease   = 5 * time.Second
	mpSenders = 8
	// mpPostTimeout bounds one post: a sender gives up on a process that
	// does not answer (stopped) and retries, as Alertmanager does.
	mpPostTimeout = 2 * time.Second
)

// TestMultiProcessServe runs three `openrecall serve` processes of four
// workers each on one PostgreSQL schema and posts them 5,000 Alertmanager
// notifications (one alert each, rendered from the rule corpus with labels
// of their own), each notification twice, to two different processes, the
// second post at a random later moment (some at once, racing the first).
// Meanwhile each process is killed with SIGKILL once at a random moment and
// restarted under the same server.instance after a random delay, and one
// process is stopped (SIGSTOP) for longer than its lease and then resumed:
// the others take over its claims, and what it finished meanwhile must be
// fenced out. A post that fails because its target is down is retried to
// the same process until it is answered, as a real sender does. Once the
// inbox is empty it checks: every notification answered 202, both posts of
// an alert name one analysis, exactly 5,000 analyses, each alert analysed
// once, each result stored once with exactly one audit entry per route
// step (the chain's length is the sum of the steps), one cost point per
// triaged alert, no delivery pending, and `openrecall audit verify` passes.
//
// OPENRECALL_MP_ALERTS changes the number of alerts, OPENRECALL_MP_SEED
// replays a run's schedule (the seed is printed). It needs PostgreSQL
// (internal/pgtest: skipped without one, failed under CI=true).
func TestMultiProcessServe(t *testing.T) {
	needBinary(t)
	alerts := envInt(t, "OPENRECALL_MP_ALERTS", 5000)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("OPENRECALL_MP_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("OPENRECALL_MP_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("seed %d (replay the schedule with OPENRECALL_MP_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6d756c7469))

	dsn := pgtest.DSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // the test's own pool
	db.SetMaxOpenConns(2)

	rules, err := rulecorpus.LoadNear(".")
	if err != nil {
		t.Fatal(err)
	}
	bodies := make([][]byte, alerts)
	for i := range bodies {
		if bodies[i], err = rulecorpus.Webhook(rulecorpus.Alert(rules[i%len(rules)], rulecorpus.Firing{N: i})); err != nil {
			t.Fatal(err)
		}
	}

	env := []string{"OPENRECALL_AUDIT_KEY=" + strings.Repeat("6b", 32)}
	// The schema is migrated once before the processes start together (they
	// would take turns under the migration lock anyway).
	if r := runBinEnv(t, env, nil, "--db", dsn, "memory", "migrate"); r.code != 0 {
		t.Fatalf("memory migrate: exit %d\n%s", r.code, r.stderr)
	}
	procs := newProcs(t, dsn, env, "p", mpProcs, func(name string) string {
		return fmt.Sprintf("server:\n  instance: %s\n  lease: %s\n  workers: %d\n", name, mpLease, mpWorkers)
	})
	for _, p := range procs {
		if err := p.start(t); err != nil {
			t.Fatal(err)
		}
	}

	plan := planPosts(rng, alerts)
	s := &mpSender{procs: procs, bodies: bodies, plan: plan,
		answers: make([][2]string, alerts), dupAnswer: make([][2]bool, alerts),
		client: &http.Client{Timeout: mpPostTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: mpSenders}}}
	start := time.Now()
	var wg sync.WaitGroup
	for range mpSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(t)
		}()
	}

	// The chaos: each process killed once, and one stopped past its lease,
	// at moments drawn as fractions of the posts answered.
	type event struct {
		at   float64
		proc int
		stop bool
		// pause: how long a stop lasts, a little past the lease, so
		// the others reclaim its claims and may still hold them when it
		// comes back with results.
		pause time.Duration
	}
	var events []event
	for _, k := range rng.Perm(mpProcs) {
		events = append(events, event{at: 0.05 + 0.9*rng.Float64(), proc: k})
	}
	events = append(events, event{at: 0.2 + 0.6*rng.Float64(), proc: rng.IntN(mpProcs), stop: true,
		pause: mpLease + time.Duration(100+rng.IntN(1900))*time.Millisecond})
	slices.SortFunc(events, func(a, b event) int { return cmpFloat(a.at, b.at) })
	var chaos []string
	for _, e := range events {
		want := int64(e.at * float64(len(plan)))
		if !testenv.Poll(t, 5*time.Millisecond, func() bool { return s.answered.Load() >= want || s.failed.Load() }) {
			t.Fatalf("only %d of %d posts answered before the deadline", s.answered.Load(), len(plan))
		}
		p := procs[e.proc]
		pending := pendingCount(t, db)
		if e.stop {
			// A process that stops answering (a long pause) and comes
			// back: its leases pass and the others reclaim its work.
			if err := p.signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(e.pause)
			if err := p.signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			chaos = append(chaos, fmt.Sprintf("stopped %s for %s at post %d (%d pending)", p.name, e.pause, want, pending))
			continue
		}
		if err := p.kill(); err != nil {
			t.Fatal(err)
		}
		down := time.Duration(100+rng.IntN(1400)) * time.Millisecond
		time.Sleep(down)
		if err := p.start(t); err != nil {
			t.Fatal(err)
		}
		chaos = append(chaos, fmt.Sprintf("killed %s at post %d (%d pending), restarted after %s", p.name, want, pending, down))
	}
	wg.Wait()
	posted := time.Since(start)
	if s.failed.Load() {
		t.FailNow() // the sender reported why
	}

	var pending int
	if !testenv.Poll(t, 100*time.Millisecond, func() bool {
		pending = pendingCount(t, db)
		return pending == 0 || !allRunning(procs)
	}) || pending > 0 {
		t.Fatalf("%d deliveries still pending (processes running: %v)", pending, allRunning(procs))
	}
	drained := time.Since(start)
	for _, p := range procs {
		if p.exitedOnItsOwn() {
			t.Errorf("%s exited on its own", p.name)
		}
	}

	results := readResults(t, procs[0].addr)
	lost := 0
	for _, p := range procs {
		lost += p.leasesLost(t)
	}
	for _, p := range procs {
		if code := p.terminate(t); code != 0 {
			t.Errorf("%s: exit %d after SIGTERM", p.name, code)
		}
	}

	// What the senders were told.
	ids := map[string]bool{}
	dups := 0
	for i, a := range s.answers {
		if a[0] == "" || a[0] != a[1] {
			t.Errorf("alert %d: its two posts were answered with analyses %q and %q", i, a[0], a[1])
		}
		ids[a[0]] = true
		for _, d := range s.dupAnswer[i] {
			if d {
				dups++
			}
		}
	}
	if len(ids) != alerts {
		t.Errorf("%d distinct analyses named in the answers, want %d", len(ids), alerts)
	}

	// The results, as the API lists them.
	byID := map[string]openrecall.Result{}
	alertSeen := map[string]int{}
	steps, triaged := 0, 0
	for _, sv := range results {
		if !sv.Done || sv.Result == nil {
			t.Errorf("%s listed without a result", sv.AnalysisID)
			continue
		}
		if _, twice := byID[sv.AnalysisID]; twice {
			t.Errorf("%s listed twice", sv.AnalysisID)
		}
		byID[sv.AnalysisID] = *sv.Result
		alertSeen[sv.Result.Alert.ID]++
		steps += len(sv.Result.Steps)
		if sv.Result.Outcome == openrecall.ResultTriaged {
			triaged++
		}
		if len(sv.Result.Audit) != len(sv.Result.Steps) || len(sv.Result.Steps) == 0 {
			t.Errorf("%s: %d route steps, %d audit entries in its result", sv.AnalysisID, len(sv.Result.Steps), len(sv.Result.Audit))
		}
		if !ids[sv.AnalysisID] {
			t.Errorf("%s has a result but no post was answered with it", sv.AnalysisID)
		}
	}
	if len(byID) != alerts || triaged != alerts {
		t.Errorf("%d analyses with results (%d triaged), want exactly %d", len(byID), triaged, alerts)
	}
	for id, n := range alertSeen {
		if n != 1 {
			t.Errorf("alert %s analysed %d times", id, n)
		}
	}

	// What the database holds.
	var rows, distinctAlerts, notDone int
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT alert_id), count(*) FILTER (WHERE done_seq IS NULL) FROM inbox`).
		Scan(&rows, &distinctAlerts, &notDone); err != nil {
		t.Fatal(err)
	}
	if rows != alerts || distinctAlerts != alerts || notDone != 0 {
		t.Errorf("inbox: %d rows, %d distinct alerts, %d pending; want %d, %d, 0", rows, distinctAlerts, notDone, alerts, alerts)
	}
	entries := map[string]int{}
	var total, distinctSteps int
	// The seals of rows (batch "seals": a result, a waiting row, a memory
	// bound to the chain) are not route steps.
	r, err := db.Query(`SELECT analysis_id, count(*), count(DISTINCT step_index) FROM audit_entries WHERE batch <> $1 GROUP BY analysis_id`, openrecall.SealBatch)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id string
		var n, distinct int
		if err := r.Scan(&id, &n, &distinct); err != nil {
			t.Fatal(err)
		}
		entries[id] = n
		total += n
		distinctSteps += distinct
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	for id, res := range byID {
		if entries[id] != len(res.Steps) {
			t.Errorf("%s: %d audit entries stored for %d route steps", id, entries[id], len(res.Steps))
		}
	}
	for id := range entries {
		if _, ok := byID[id]; !ok {
			t.Errorf("audit entries of %s, which has no result", id)
		}
	}
	if total != steps || distinctSteps != total {
		t.Errorf("the audit chain holds %d entries (%d distinct steps), the results %d route steps", total, distinctSteps, steps)
	}
	var points, pointAlerts int
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT alert_id) FROM cost_points`).Scan(&points, &pointAlerts); err != nil {
		t.Fatal(err)
	}
	if points != triaged || pointAlerts != points {
		t.Errorf("%d cost points for %d alerts, want one per triaged alert (%d)", points, pointAlerts, triaged)
	}
	if v := runBinEnv(t, env, nil, "--db", dsn, "audit", "verify"); v.code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}

	for _, c := range chaos {
		t.Log(c)
	}
	t.Logf("%d alerts × 2 posts to %d processes × %d workers: posted in %s (%.0f posts/s answered), drained in %s (%.0f triaged/s)",
		alerts, mpProcs, mpWorkers, posted.Round(time.Millisecond), float64(len(plan))/posted.Seconds(),
		drained.Round(time.Millisecond), float64(alerts)/drained.Seconds())
	t.Logf("%d retries of posts whose process was down or did not answer; %d answers recognised a duplicate; %d audit entries; %d leases lost (logged by the processes: %d)",
		s.retries.Load(), dups, total, lost, loggedLost(procs))
}

// newProcs returns n serve processes on dsn named prefix0, prefix1, …,
// each with the configuration config(name) written to a file, stopped when
// t ends (with the tail of their logs when it failed). They are not
// started.
func newProcs(t *testing.T, dsn string, env []string, prefix string, n int, config func(name string) string) []*mpProc {
	dir := t.TempDir()
	procs := make([]*mpProc, n)
	for i := range procs {
		p := &mpProc{name: fmt.Sprintf("%s%d", prefix, i), dsn: dsn, env: env, addr: freeAddr(t)}
		p.config = filepath.Join(dir, p.name+".yaml")
		p.log = filepath.Join(dir, p.name+".log")
		if err := os.WriteFile(p.config, []byte(config(p.name)), 0o644); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.stop()
		}
		if t.Failed() {
			for _, p := range procs {
				b, _ := os.ReadFile(p.log)
				t.Logf("%s's log (last 3000 bytes):\n%s", p.name, tail(b, 3000))
			}
		}
	})
	return procs
}

// mpProc is one serve process of the test, started again after a kill
// under the same instance name, address and configuration.
type mpProc struct {
	name, dsn, addr, config, log string
	env                          []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd exits
	killed bool          // the test killed or stopped it
}

// start starts the process and waits until it answers /healthz.
func (p *mpProc) start(t *testing.T) error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }() // the child holds its own descriptor
	cmd := exec.Command(bin, "--db", p.dsn, "--config", p.config, "serve", "--listen", p.addr)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited, p.killed = cmd, exited, false
	p.mu.Unlock()
	up := testenv.Poll(t, 20*time.Millisecond, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case <-exited:
		return fmt.Errorf("%s exited at its start: %s (see %s)", p.name, cmd.ProcessState, p.log)
	default:
	}
	if !up {
		return fmt.Errorf("%s did not answer /healthz before the deadline", p.name)
	}
	return nil
}

func (p *mpProc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Signal(sig)
}

// kill kills the process with SIGKILL and waits for it to be gone.
func (p *mpProc) kill() error {
	p.mu.Lock()
	p.killed = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-exited
	return nil
}

// terminate stops the process with SIGTERM and returns its exit code.
func (p *mpProc) terminate(t *testing.T) int {
	p.mu.Lock()
	p.killed = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("%s: SIGTERM: %v", p.name, err)
	}
	select {
	case <-exited:
	case <-testenv.Expiry(t):
		t.Errorf("%s did not stop after SIGTERM", p.name)
		return -1
	}
	return cmd.ProcessState.ExitCode()
}

// stop kills what is left of the process at the end of the test.
func (p *mpProc) stop() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.killed = true
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
	default:
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
	}
}

func (p *mpProc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		return p.killed // between a kill and its restart
	default:
		return true
	}
}

func (p *mpProc) exitedOnItsOwn() bool { return !p.running() }

// leasesLost scrapes openrecall_inbox_leases_lost_total from the
// process's /metrics (its count since its last start).
func (p *mpProc) leasesLost(t *testing.T) int {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		t.Errorf("%s /metrics: %v", p.name, err)
		return 0
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s /metrics: %v", p.name, err)
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "openrecall_inbox_leases_lost_total "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f)
		}
	}
	return 0
}

// loggedLost sums the leases lost that the processes logged over all
// their starts.
func loggedLost(procs []*mpProc) int {
	n := 0
	for _, p := range procs {
		b, _ := os.ReadFile(p.log)
		for _, line := range strings.Split(string(b), "\n") {
			var l struct {
				Msg  string `json:"msg"`
				Lost int    `json:"lost"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && strings.Contains(l.Msg, "reclaimed by another server") {
				n += l.Lost
			}
		}
	}
	return n
}

func allRunning(procs []*mpProc) bool {
	for _, p := range procs {
		if !p.running() {
			return false
		}
	}
	return true
}

// mpPost is one post of the plan: alert's notification, to process target;
// second is its redelivery.
type mpPost struct {
	alert, target int
	second        bool
}

// planPosts orders the two posts of each alert: the first in alert order,
// the second to another process a random number of posts later (three in
// ten within a few posts, so the two race).
func planPosts(rng *rand.Rand, alerts int) []mpPost {
	type keyed struct {
		key float64
		p   mpPost
	}
	ks := make([]keyed, 0, 2*alerts)
	for i := range alerts {
		a := rng.IntN(mpProcs)
		b := (a + 1 + rng.IntN(mpProcs-1)) % mpProcs
		later := 8 + rng.Float64()*1500
		if rng.IntN(10) < 3 {
			later = rng.Float64() * 8
		}
		ks = append(ks, keyed{float64(i), mpPost{alert: i, target: a}}, keyed{float64(i) + later, mpPost{alert: i, target: b, second: true}})
	}
	slices.SortStableFunc(ks, func(x, y keyed) int { return cmpFloat(x.key, y.key) })
	out := make([]mpPost, len(ks))
	for i, k := range ks {
		out[i] = k.p
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mpSender posts the plan from several goroutines, in plan order as they
// take it.
type mpSender struct {
	procs  []*mpProc
	bodies [][]byte
	plan   []mpPost
	client *http.Client

	next, answered, retries atomic.Int64
	failed                  atomic.Bool
	// answers[alert][second]: the analysis id each post was answered with;
	// dupAnswer: whether that answer said duplicate. Each element is
	// written by the one goroutine that posted it.
	answers   [][2]string
	dupAnswer [][2]bool
}

func (s *mpSender) run(t *testing.T) {
	deadline, bounded := testenv.Deadline(t)
	for {
		i := int(s.next.Add(1)) - 1
		if i >= len(s.plan) || s.failed.Load() {
			return
		}
		p := s.plan[i]
		k := 0
		if p.second {
			k = 1
		}
		for delay := 20 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
			a, retry, err := s.post(p)
			if err == nil {
				s.answers[p.alert][k], s.dupAnswer[p.alert][k] = a.AnalysisID, a.Duplicate
				s.answered.Add(1)
				break
			}
			if !retry || (bounded && time.Now().After(deadline)) {
				t.Errorf("post %d (alert %d to %s): %v", i, p.alert, s.procs[p.target].name, err)
				s.failed.Store(true)
				return
			}
			s.retries.Add(1)
			time.Sleep(delay) // a sender's backoff, not a wait for a result
		}
	}
}

// post posts one notification; retry says whether a sender would retry
// the failure (no answer, or a 5xx).
func (s *mpSender) post(p mpPost) (mpAnswer, bool, error) {
	url := "http://" + s.procs[p.target].addr + "/api/v1/alerts/alertmanager"
	resp, err := s.client.Post(url, "application/json", bytes.NewReader(s.bodies[p.alert]))
	if err != nil {
		return mpAnswer{}, true, err
	}
	defer func() { _ = resp.Body.Close() }() // decoded below
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return mpAnswer{}, true, err
	}
	if resp.StatusCode != http.StatusAccepted {
		return mpAnswer{}, resp.StatusCode >= 500, fmt.Errorf("%s: %.300s", resp.Status, b)
	}
	var ack struct {
		Analyses []mpAnswer `json:"analyses"`
	}
	if err := json.Unmarshal(b, &ack); err != nil || len(ack.Analyses) != 1 || ack.Analyses[0].AnalysisID == "" {
		return mpAnswer{}, false, fmt.Errorf("answer %.300s: %v", b, err)
	}
	return ack.Analyses[0], false, nil
}

// mpAnswer is what a 202 says of the notification's one alert.
type mpAnswer struct {
	AnalysisID string `json:"analysis_id"`
	Duplicate  bool   `json:"duplicate"`
}

// readResults lists every finished analysis through the API.
func readResults(t *testing.T, addr string) []openrecall.Served {
	var out []openrecall.Served
	since := int64(0)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s/api/v1/results?since=%d&limit=1000", addr, since))
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Results []openrecall.Served `json:"results"`
			Next    int64               `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("results since %d: %s %v", since, resp.Status, err)
		}
		if len(page.Results) == 0 {
			return out
		}
		out = append(out, page.Results...)
		since = page.Next
	}
}

func pendingCount(t *testing.T, db *sql.DB) int {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM inbox WHERE done_seq IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// freeAddr returns a loopback address nothing listens on now; a process
// restarted after a kill listens there again.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
