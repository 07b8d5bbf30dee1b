package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the benchmark's flags.
type options struct {
	bin      string
	db       string // "sqlite", "postgres" or a PostgreSQL URL
	procs    []int  // serve processes sharing the database, one run each
	workers  []int
	clients  int
	n        int           // bound on the deliveries of one phase
	duration time.Duration // bound on the time of the maximum-rate phase
	phase    time.Duration // bound on the time of each constant-rate phase
	rates    []int         // constant-rate phases, percent of the maximum
	warmup   int
	// senderEvery makes every senderEvery-th delivery a sender fixture (0:
	// Alertmanager webhooks only).
	senderEvery  int
	soak         time.Duration
	soakRate     int // percent of the measured triage throughput
	soakSample   time.Duration
	drain        time.Duration // limit on waiting for the inbox to drain
	corpus       string
	senders      string
	logLevel     string
	inboxLimit   int           // server.inbox_limit of every process; 0 keeps serve's default
	retention    time.Duration // server.retention of every process; 0 keeps serve's default
	lease        time.Duration // server.lease of every process; 0 keeps serve's default
	heapProfiles bool          // save serve's heap profile early in the soak and near its end
	archive      bool          // server.archive_dir: the run's archive/ (needs a retention)
	dir          string
	keep         bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if err := bench(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "benchserve: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var opts options
	var workers, rates, procs string
	fs := flag.NewFlagSet("benchserve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.bin, "bin", "./bin/openrecall", "openrecall binary to serve (make build)")
	fs.StringVar(&workers, "workers", "1,4", "comma-separated serve --workers values, one serve run each")
	fs.StringVar(&opts.db, "db", "sqlite", "the database: sqlite (a file in the work directory), postgres (a fresh schema per run on $OPENRECALL_PG_DSN, or on a throwaway cluster scripts/pgcluster.sh starts) or a postgres:// URL on loopback (a fresh schema per run on that server)")
	fs.StringVar(&procs, "procs", "1", "comma-separated numbers of serve processes sharing one database (distinct server.instance and ports), one run each; the posts are spread over them")
	fs.IntVar(&opts.clients, "clients", 8, "concurrent HTTP clients")
	fs.IntVar(&opts.n, "n", 20000, "at most this many deliveries per phase")
	fs.DurationVar(&opts.duration, "duration", 15*time.Second, "at most this long posting as fast as the clients can (the maximum-rate phase)")
	fs.DurationVar(&opts.phase, "phase", 15*time.Second, "at most this long for each constant-rate phase")
	fs.StringVar(&rates, "rates", "50,80,100", "constant-rate phases, in percent of the measured maximum 202 rate (\"\" for none)")
	fs.IntVar(&opts.warmup, "warmup", 200, "deliveries posted and drained before the measured phases")
	fs.IntVar(&opts.senderEvery, "sender-every", 5, "every Nth delivery is a captured sender payload (intake/testdata/senders), the rest Alertmanager webhooks from the rule corpus; 0 for webhooks only")
	fs.DurationVar(&opts.soak, "soak", 0, "after the phases, post at -soak-rate for this long, sampling serve's RSS (0: no soak)")
	fs.IntVar(&opts.soakRate, "soak-rate", 50, "the soak's rate, in percent of the measured triage throughput")
	fs.DurationVar(&opts.soakSample, "soak-sample", 5*time.Second, "RSS sampling interval during the soak")
	fs.DurationVar(&opts.drain, "drain", 10*time.Minute, "limit on waiting for the workers to finish what was accepted")
	fs.StringVar(&opts.corpus, "corpus", "", "rule corpus file (default: the repository's testdata/prometheus-rules/rules.jsonl, found above the working directory)")
	fs.StringVar(&opts.senders, "senders", "", "sender fixtures directory (default: intake/testdata/senders found above the working directory)")
	fs.StringVar(&opts.logLevel, "log-level", "info", "serve --log-level (info writes one access line per request, as deployed)")
	fs.IntVar(&opts.inboxLimit, "inbox-limit", 0, "serve's server.inbox_limit (pending deliveries past which receivers answer 503 with Retry-After); 0 keeps serve's default (10000)")
	fs.DurationVar(&opts.retention, "retention", 0, "serve's server.retention, for every process (how long finished deliveries keep their documents; pruned every quarter of it, at most once a minute); 0 keeps serve's default (720h)")
	fs.DurationVar(&opts.lease, "lease", 0, "serve's server.lease, for every process (how long a claim of an inbox delivery lasts unless renewed, renewed every third of it; at least 3s); 0 keeps serve's default (1m)")
	fs.BoolVar(&opts.archive, "archive", false, "with -retention: serve's server.archive_dir, the run's archive/ directory: each pruning pass archives the audit trail older than the retention there and forgets the rows only those analyses needed, so the database stays the size of a retention's worth of alerts")
	fs.BoolVar(&opts.heapProfiles, "heap-profiles", false, "with -soak: start serve with --debug-listen on loopback and save its live heap profile a minute into the soak (a third of it when shorter) and 10s before its end, in the run's directory (the work directory is then kept), for go tool pprof -diff_base")
	fs.StringVar(&opts.dir, "dir", "", "work directory (default: a new temporary directory)")
	fs.BoolVar(&opts.keep, "keep", false, "keep the work directory (databases, serve logs) and print its path")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	fail := func(format string, a ...any) (options, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "benchserve: %v\n", err)
		return opts, err
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected arguments %q", fs.Args())
	case opts.clients < 1:
		return fail("-clients %d: want at least 1", opts.clients)
	case opts.n < 1:
		return fail("-n %d: want at least 1", opts.n)
	case opts.duration <= 0 || opts.phase <= 0:
		return fail("-duration and -phase: want positive durations")
	case opts.warmup < 0 || opts.senderEvery < 0 || opts.inboxLimit < 0 || opts.retention < 0:
		return fail("-warmup, -sender-every, -inbox-limit and -retention: want 0 or more")
	case opts.soak < 0:
		return fail("-soak %s: want 0 or more", opts.soak)
	case opts.soakRate < 1 || opts.soakRate > 1000:
		return fail("-soak-rate %d: want 1 to 1000 (percent)", opts.soakRate)
	case opts.soakSample <= 0 || opts.drain <= 0:
		return fail("-soak-sample and -drain: want positive durations")
	case opts.lease != 0 && opts.lease < 3*time.Second:
		return fail("-lease %s: want 0 (serve's default) or at least 3s", opts.lease)
	case opts.db != "sqlite" && !isPostgres(opts.db):
		return fail("-db %q: want sqlite, postgres or a postgres:// URL", opts.db)
	}
	var err error
	if opts.workers, err = intList(workers, 1, 1<<10); err != nil || len(opts.workers) == 0 {
		return fail("-workers %q: want positive integers separated by commas", workers)
	}
	if opts.procs, err = intList(procs, 1, 16); err != nil || len(opts.procs) == 0 {
		return fail("-procs %q: want numbers of processes (1 to 16) separated by commas", procs)
	}
	if opts.archive && opts.retention == 0 {
		return fail("-archive archives what is older than the retention: want -retention")
	}
	if opts.heapProfiles && opts.soak == 0 {
		return fail("-heap-profiles profiles the soak: want -soak")
	}
	if opts.soak > 0 && slices.Max(opts.procs) > 1 {
		return fail("-soak (and -heap-profiles) sample one process: want -procs 1")
	}
	if strings.TrimSpace(rates) != "" {
		if opts.rates, err = intList(rates, 1, 1000); err != nil {
			return fail("-rates %q: want percentages (1 to 1000) separated by commas", rates)
		}
	}
	return opts, nil
}

// intList parses comma-separated integers in [lo, hi].
func intList(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if v < lo || v > hi {
			return nil, fmt.Errorf("%d: out of range", v)
		}
		out = append(out, v)
	}
	return out, nil
}

// phaseRow is one measured phase of one serve run: a row of the table.
type phaseRow struct {
	procs    int
	workers  int
	name     string
	target   float64 // requests per second asked for; 0 for as fast as possible
	sent     int
	accepted int // 202 answers
	alerts   int // new deliveries (inbox rows) the 202 answers accepted
	refused  int // 503 answers (inbox full)
	errors   int // any other answer, or no answer
	elapsed  time.Duration
	latency  []time.Duration // of the 202 answers
	triaged  int             // analyses finished from the phase's start to its drain
	drained  time.Duration   // from the phase's start until the inbox was empty
}

func (r phaseRow) acceptRate() float64 { return perSecond(r.accepted, r.elapsed) }
func (r phaseRow) triageRate() float64 { return perSecond(r.triaged, r.drained) }

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// serveRun is what the serve processes of one run did.
type serveRun struct {
	procs   int
	workers int
	phases  []phaseRow
	peakRSS int64 // the largest of the processes'
	dbBytes int64
	// archiveFiles and archiveBytes are what -archive left in archive/.
	archiveFiles int
	archiveBytes int64
	triaged      int
	soak         []rssSample
	soakEvery    time.Duration
	soakPhase    *phaseRow
	check        string // the exactly-once verdict
}

func bench(ctx context.Context, opts options, stdout, stderr io.Writer) error {
	bin, err := filepath.Abs(opts.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("binary: %w (build it with `make build`)", err)
	}
	rules, err := loadRules(opts.corpus)
	if err != nil {
		return fmt.Errorf("rule corpus: %w", err)
	}
	pl := &payloads{rules: rules, senderEvery: opts.senderEvery}
	if opts.senderEvery > 0 {
		dir := opts.senders
		if dir == "" {
			if dir, err = sendersNear("."); err != nil {
				return err
			}
		}
		var left []string
		if pl.fixtures, left, err = loadFixtures(dir); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "benchserve: %d sender fixtures of %d senders; %d left out (no alert id that a suffix on an id-like field changes) of %s\n",
			len(pl.fixtures), len(senderNames(pl.fixtures)), len(left), strings.Join(senderNames(leftFixtures(left)), ", "))
	}
	dir := opts.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "openrecall-benchserve-"); err != nil {
			return err
		}
		if opts.keep || opts.heapProfiles {
			fmt.Fprintf(stderr, "benchserve: work directory %s (kept)\n", dir)
		} else {
			defer func() { _ = os.RemoveAll(dir) }()
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	server := "" // SQLite
	if isPostgres(opts.db) {
		if server, err = pgServer(opts.db); err != nil {
			return err
		}
	}
	backend, err := describe(ctx, server)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "benchserve: %s\n", backend)
	var runs []serveRun
	var failed error
runs:
	for _, n := range opts.procs {
		for _, w := range opts.workers {
			r, err := benchServe(ctx, opts, bin, filepath.Join(dir, fmt.Sprintf("procs-%d-workers-%d", n, w)), server, n, w, pl, stderr)
			if r != nil {
				runs = append(runs, *r)
			}
			if err != nil {
				failed = fmt.Errorf("%d processes, --workers %d: %w", n, w, err)
				break runs
			}
		}
	}
	senders := "Alertmanager webhooks only"
	if opts.senderEvery > 0 {
		senders = fmt.Sprintf("every %dth a sender payload (%d fixtures)", opts.senderEvery, len(pl.fixtures))
	}
	fmt.Fprintf(stdout, "openrecall serve under load: %d rules of the corpus as one-alert Alertmanager webhooks, %s; %d clients on loopback spread over the processes; %s/%s, %d CPUs\n",
		len(rules), senders, opts.clients, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(stdout, "database: %s\n", backend)
	if err := printTable(stdout, runs); err != nil {
		return err
	}
	return failed
}

// tracker counts what the server accepted and what it finished, by
// analysis id. Safe for concurrent use.
type tracker struct {
	mu         sync.Mutex
	accepted   map[string]int // new analyses of 202 answers
	duplicates int            // analyses a 202 answered as redeliveries
	seen       map[string]int // finished analyses read from /api/v1/results
	finished   int
	cursor     int64
}

func newTracker() *tracker {
	return &tracker{accepted: map[string]int{}, seen: map[string]int{}}
}

func (t *tracker) accept(as []analysis) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range as {
		if a.Duplicate {
			t.duplicates++
			continue
		}
		t.accepted[a.AnalysisID]++
	}
}

func (t *tracker) counts() (accepted, finished int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.accepted {
		n += c
	}
	return n, t.finished
}

// poll reads the results finished since the last poll.
func (t *tracker) poll(ctx context.Context, client *http.Client, base string) error {
	t.mu.Lock()
	since := t.cursor
	t.mu.Unlock()
	rs, next, err := results(ctx, client, base, since)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range rs {
		if r.Done {
			t.seen[r.AnalysisID]++
			t.finished++
		}
	}
	t.cursor = max(t.cursor, next)
	return err
}

// verify says whether every accepted analysis was finished exactly once and
// nothing else was, allowing unanswered requests (errors) that the server
// may have accepted.
func (t *tracker) verify(unanswered int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var missing, twice, unknown int
	var example string
	for id, n := range t.accepted {
		if n > 1 {
			twice++
			example = id + " accepted as new more than once"
		}
		switch s := t.seen[id]; {
		case s == 0:
			missing++
			example = id + " never finished"
		case s > 1:
			twice++
			example = id + " finished " + strconv.Itoa(s) + " times"
		}
	}
	for id, s := range t.seen {
		if _, ok := t.accepted[id]; !ok {
			unknown++
			if s > 1 {
				twice++
			}
		}
	}
	if missing > 0 || twice > 0 || unknown > unanswered {
		return fmt.Errorf("exactly once: %d accepted, %d finished: %d never finished, %d twice, %d not accepted (%d unanswered requests); e.g. %s",
			len(t.accepted), t.finished, missing, twice, unknown, unanswered, example)
	}
	return nil
}

// analysis is the part of a 202 answer's analyses the bench reads.
type analysis struct {
	AnalysisID string `json:"analysis_id"`
	Duplicate  bool   `json:"duplicate"`
}

// loader posts deliveries to the serve processes of a run, delivery n to
// process n mod their number, and reads the results (of all of them: they
// share the database) from the first.
type loader struct {
	bases  []string
	base   string // the first of bases
	client *http.Client
	pl     *payloads
	tr     *tracker
	seq    atomic.Int64 // next delivery number
}

// post sends delivery n and returns the answer's status (0 for none).
func (l *loader) post(ctx context.Context, n int) (int, error) {
	path, body, err := l.pl.body(n)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.bases[n%len(l.bases)]+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return 0, err
	}
	if resp.StatusCode == http.StatusAccepted {
		var acc struct {
			Analyses []analysis `json:"analyses"`
		}
		if err := json.Unmarshal(b, &acc); err != nil {
			return resp.StatusCode, fmt.Errorf("202 answer: %w", err)
		}
		l.tr.accept(acc.Analyses)
		return resp.StatusCode, nil
	}
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, fmt.Errorf("%s: %s", resp.Status, tail(string(b), 200))
}

// phase posts at most n deliveries within d: as fast as the clients can
// when rate is 0, else at rate per second, open loop (a delivery's latency
// counts from the moment it was due, so a server that falls behind shows
// it). It returns the phase's row without its drain.
func (l *loader) phase(ctx context.Context, name string, clients, n int, d time.Duration, rate float64, stderr io.Writer) phaseRow {
	row := phaseRow{name: name, target: rate}
	type job struct{ due time.Time }
	jobs := make(chan job, clients)
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	deadline := start.Add(d)
	go func() {
		defer close(jobs)
		for i := 0; i < n; i++ {
			due := time.Now()
			if rate > 0 {
				due = start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if due.After(deadline) {
					return
				}
				if w := time.Until(due); w > 0 {
					select {
					case <-time.After(w):
					case <-ctx.Done():
						return
					}
				}
			} else if !time.Now().Before(deadline) {
				return
			}
			select {
			case jobs <- job{due: due}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			var sent, ok, refused, errs int
			for j := range jobs {
				due := j.due
				if rate == 0 {
					due = time.Now()
				}
				status, err := l.post(ctx, int(l.seq.Add(1)-1))
				sent++
				switch {
				case err != nil:
					errs++
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				case status == http.StatusAccepted:
					ok++
					lat = append(lat, time.Since(due))
				default:
					refused++
				}
			}
			mu.Lock()
			row.sent += sent
			row.accepted += ok
			row.refused += refused
			row.errors += errs
			row.latency = append(row.latency, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	row.elapsed = time.Since(start)
	if firstErr != nil {
		fmt.Fprintf(stderr, "benchserve: %s: %d errors, the first: %v\n", name, row.errors, firstErr)
	}
	return row
}

// drain waits until every accepted delivery is finished, polling the
// results, and returns when that happened.
func (l *loader) drain(ctx context.Context, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		err := l.tr.poll(ctx, l.client, l.base)
		acc, fin := l.tr.counts()
		if err == nil && fin >= acc {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Now(), fmt.Errorf("drain: %d of %d accepted deliveries finished after %s (%v)", fin, acc, limit, err)
		}
		select {
		case <-ctx.Done():
			return time.Now(), ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readAlong polls the results every interval until the function it
// returns is called, which returns once the last poll ended (polls must
// not overlap: each reads from the cursor the one before left). A failed
// poll is tried again at the next tick; drain reports what stays missing.
func (l *loader) readAlong(ctx context.Context, interval time.Duration) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = l.tr.poll(ctx, l.client, l.base) // drain's poll reports a lasting failure
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// measured runs one phase and its drain and fills in the triage figures.
func (l *loader) measured(ctx context.Context, opts options, name string, n int, d time.Duration, rate float64, stderr io.Writer) (phaseRow, error) {
	accBefore, before := l.tr.counts()
	start := time.Now()
	stopReading := func() {}
	if opts.archive {
		// serve forgets finished deliveries a retention after they
		// finished: read them as the phase goes, not only at its end.
		stopReading = l.readAlong(ctx, time.Second)
	}
	row := l.phase(ctx, name, opts.clients, n, d, rate, stderr)
	stopReading()
	end, err := l.drain(ctx, opts.drain)
	accAfter, after := l.tr.counts()
	row.alerts, row.triaged, row.drained = accAfter-accBefore, after-before, end.Sub(start)
	fmt.Fprintf(stderr, "benchserve: %s: %d sent, %d 202 (%.0f/s, %d deliveries), %d 503, %d errors; %d triaged in %.1fs (%.0f/s)\n",
		name, row.sent, row.accepted, row.acceptRate(), row.alerts, row.refused, row.errors, row.triaged, row.drained.Seconds(), row.triageRate())
	return row, err
}

// heapProfiles saves serve's live heap profile a minute into a soak of
// length soak (a third of it when shorter) and 10s before its end, to dir,
// and says how to compare them.
func heapProfiles(ctx context.Context, p *serveProc, client *http.Client, dir string, soak time.Duration, stderr io.Writer) {
	early, late := min(time.Minute, soak/3), max(soak-10*time.Second, 2*soak/3)
	paths := []string{filepath.Join(dir, "heap-soak-early.pb.gz"), filepath.Join(dir, "heap-soak-late.pb.gz")}
	start := time.Now()
	for i, at := range []time.Duration{early, late} {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(at))):
		}
		if err := p.saveHeap(ctx, client, paths[i]); err != nil {
			fmt.Fprintf(stderr, "benchserve: heap profile at %s: %v\n", at, err)
			return
		}
	}
	fmt.Fprintf(stderr, "benchserve: heap profiles at %s and %s of the soak; what grew: go tool pprof -sample_index=inuse_space -top -diff_base %s %s\n",
		early.Round(time.Second), late.Round(time.Second), paths[0], paths[1])
}

// benchServe runs the phases against procs serve processes with workers
// workers each, sharing one new database (on server, "" for SQLite), and
// stops them.
func benchServe(ctx context.Context, opts options, bin, dir, server string, procs, workers int, pl *payloads, stderr io.Writer) (_ *serveRun, err error) {
	db, err := newDatabase(server, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.close(opts.keep); cerr != nil && err == nil {
			err = cerr
		}
		if opts.keep && db.pg != nil {
			fmt.Fprintf(stderr, "benchserve: PostgreSQL schema kept: %s\n", db.schema())
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// One after the other: the first migrates the database and makes the
	// audit key the others then read.
	var ps []*serveProc
	stopAll := func() error {
		var first error
		for _, p := range ps {
			if err := p.stop(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	archiveDir := ""
	if opts.archive {
		archiveDir = filepath.Join(dir, "archive") // every process's: one trail
	}
	for i := range procs {
		p, err := startServe(ctx, bin, filepath.Join(dir, fmt.Sprintf("serve-%d", i+1)), db, filepath.Join(dir, "audit.key"),
			workers, opts.logLevel, serverSettings{instance: fmt.Sprintf("bench-%d", i+1), inboxLimit: opts.inboxLimit, retention: opts.retention,
				lease: opts.lease, archiveDir: archiveDir, profiles: opts.heapProfiles && i == 0}) // -heap-profiles wants -procs 1
		if err == nil && !loopback(p.url) {
			ps = append(ps, p)
			err = fmt.Errorf("serve at %s: the load goes to 127.0.0.1 only", p.url)
		}
		if err != nil {
			_ = stopAll() // the start failed; that error is the one to report
			return nil, err
		}
		ps = append(ps, p)
		fmt.Fprintf(stderr, "benchserve: serve %d of %d, --workers %d, on %s (pid %d)\n", i+1, procs, workers, p.url, p.cmd.Process.Pid)
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	for _, p := range ps {
		go p.sampleRSS(sampleCtx, 500*time.Millisecond, false)
	}
	out := &serveRun{procs: procs, workers: workers}
	defer func() {
		stopSampling()
		for _, p := range ps {
			out.peakRSS = max(out.peakRSS, p.peakRSS())
		}
		out.dbBytes = db.bytes()
		if archiveDir != "" {
			out.archiveFiles, out.archiveBytes = dirSize(archiveDir)
		}
		if serr := stopAll(); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			for i, p := range ps {
				fmt.Fprintf(stderr, "benchserve: serve %d log tail:\n%s\n", i+1, tail(p.log(), 1500))
			}
		}
	}()
	p := ps[0]
	var bases []string
	for _, p := range ps {
		bases = append(bases, p.url)
	}
	tr := newTracker()
	l := &loader{bases: bases, base: bases[0], pl: pl, tr: tr, client: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 2 * opts.clients, MaxIdleConnsPerHost: 2 * opts.clients, DisableCompression: true},
	}}
	fail := func(row phaseRow, err error) (*serveRun, error) {
		row.procs, row.workers = procs, workers
		out.phases = append(out.phases, row)
		if err == nil && row.errors > 0 {
			err = fmt.Errorf("%s: %d requests failed", row.name, row.errors)
		}
		return out, err
	}
	if opts.warmup > 0 {
		row := l.phase(ctx, "warm-up", opts.clients, opts.warmup, time.Minute, 0, stderr)
		if _, err := l.drain(ctx, opts.drain); err != nil || row.errors > 0 {
			return fail(row, err)
		}
	}
	maxRow, err := l.measured(ctx, opts, "max", opts.n, opts.duration, 0, stderr)
	if err != nil || maxRow.errors > 0 {
		return fail(maxRow, err)
	}
	maxRow.procs, maxRow.workers = procs, workers
	out.phases = append(out.phases, maxRow)
	peak := maxRow.acceptRate()
	for _, pct := range opts.rates {
		row, err := l.measured(ctx, opts, fmt.Sprintf("%d%%", pct), opts.n, opts.phase, peak*float64(pct)/100, stderr)
		if err != nil || row.errors > 0 {
			return fail(row, err)
		}
		row.procs, row.workers = procs, workers
		out.phases = append(out.phases, row)
	}
	if opts.soak > 0 {
		rate := maxRow.triageRate() * float64(opts.soakRate) / 100
		p.depth = func() int { return inboxDepth(ctx, l.client, l.base) }
		soakCtx, stopSoak := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { p.sampleRSS(soakCtx, opts.soakSample, true); close(done) }()
		profiled := make(chan struct{})
		go func() {
			if opts.heapProfiles {
				heapProfiles(soakCtx, p, l.client, dir, opts.soak, stderr)
			}
			close(profiled)
		}()
		row, err := l.measured(ctx, opts, fmt.Sprintf("soak %s at %d%% of triaged/s", opts.soak, opts.soakRate), 1<<30, opts.soak, rate, stderr)
		stopSoak()
		<-done
		<-profiled
		p.mu.Lock()
		out.soak, out.soakEvery = slices.Clone(p.samples), opts.soakSample
		p.mu.Unlock()
		row.procs, row.workers = procs, workers
		out.soakPhase = &row
		if err != nil || row.errors > 0 {
			return fail(row, err)
		}
	}
	// Everything accepted is finished (each phase drained): a last read of
	// the results, then each accepted analysis must have finished once.
	if err := tr.poll(ctx, l.client, l.base); err != nil {
		return out, err
	}
	acc, fin := tr.counts()
	out.triaged = fin
	if err := tr.verify(0); err != nil {
		out.check = "FAILED: " + err.Error()
		return out, err
	}
	out.check = fmt.Sprintf("exactly once: %d accepted deliveries, %d finished, each once (%d answered as redeliveries)", acc, fin, tr.duplicates)
	return out, nil
}

// percentile returns the p-th percentile (0-100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)
}

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }

func printTable(w io.Writer, runs []serveRun) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "procs\tworkers\tphase\ttarget/s\tsent\t202\t202/s\tdeliveries\tp50 ms\tp99 ms\t503\terrors\ttriaged\ttriaged/s\t")
	for _, r := range runs {
		rows := r.phases
		if r.soakPhase != nil {
			rows = append(slices.Clone(rows), *r.soakPhase)
		}
		for _, p := range rows {
			target := "max"
			if p.target > 0 {
				target = strconv.FormatFloat(p.target, 'f', 0, 64)
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%d\t%.0f\t%d\t%s\t%s\t%d\t%d\t%d\t%.0f\t\n", p.procs, p.workers, p.name, target, p.sent, p.accepted,
				p.acceptRate(), p.alerts, ms(percentile(p.latency, 50)), ms(percentile(p.latency, 99)), p.refused, p.errors, p.triaged, p.triageRate())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range runs {
		perAlert := "-"
		if r.triaged > 0 {
			perAlert = strconv.FormatInt(r.dbBytes/int64(r.triaged), 10)
		}
		fmt.Fprintf(w, "procs %d workers %d: peak RSS %s MiB (VmHWM, the largest process); database %s MiB, %s bytes per finished delivery; %s\n",
			r.procs, r.workers, mib(r.peakRSS), mib(r.dbBytes), perAlert, cmp.Or(r.check, "not checked"))
		if r.archiveFiles > 0 {
			fmt.Fprintf(w, "procs %d workers %d: archive %d files, %s MiB (outside the database)\n", r.procs, r.workers, r.archiveFiles, mib(r.archiveBytes))
		}
		if len(r.soak) > 0 {
			first, last := r.soak[0], r.soak[len(r.soak)-1]
			peak := first
			for _, s := range r.soak {
				if s.rss > peak.rss {
					peak = s
				}
			}
			fmt.Fprintf(w, "workers %d soak: RSS first %s MiB, last %s MiB (at %s), max %s MiB (at %s), %d samples every %s; database %s MiB to %s MiB\n",
				r.workers, mib(first.rss), mib(last.rss), last.at.Round(time.Second), mib(peak.rss), peak.at.Round(time.Second), len(r.soak),
				r.soakEvery, mib(first.db), mib(last.db))
			fmt.Fprintf(w, "workers %d soak by minute (RSS MiB / inbox depth / database MiB):%s\n", r.workers, byMinute(r.soak))
		}
	}
	return nil
}

// dirSize returns the number of files in dir and their bytes (0, 0 when it
// cannot be read).
func dirSize(dir string) (files int, bytes int64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			files, bytes = files+1, bytes+fi.Size()
		}
	}
	return files, bytes
}

// byMinute returns the first sample of each minute as RSS/depth/database,
// " 0m 121.8/0/10.2 1m 125.0/12/14.9 …".
func byMinute(ss []rssSample) string {
	var b strings.Builder
	next := time.Duration(0)
	for _, s := range ss {
		if s.at < next {
			continue
		}
		fmt.Fprintf(&b, " %dm %s/%d/%s", int(s.at/time.Minute), mib(s.rss), s.depth, mib(s.db))
		next = (s.at/time.Minute + 1) * time.Minute
	}
	return b.String()
}
