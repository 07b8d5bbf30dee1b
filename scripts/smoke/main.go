package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/memory"
)

// exitOK is openrecall's exit status of success; its other exit codes are
// the CLI contract, checked by cmd/openrecall/testdata/script.
const exitOK = 0

// Exit codes of the smoke test itself.
const (
	smokeFailed  = 1 // an assertion failed
	smokeBroken  = 2 // the smoke test could not run
	cmdTimeout   = 3 * time.Minute
	buildTimeout = 10 * time.Minute
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the smoke test's flags.
type options struct {
	bin     string
	repo    string
	keep    bool
	verbose bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var opts options
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.bin, "bin", "", "openrecall binary to drive (default: build ./cmd/openrecall into a temporary directory)")
	fs.StringVar(&opts.repo, "repo", "", "repository root (default: the directory above the working directory that holds go.mod)")
	fs.BoolVar(&opts.keep, "keep", false, "keep the temporary directory (database, outputs) and print its path")
	fs.BoolVar(&opts.verbose, "v", false, "print every command and its exit status")
	if err := fs.Parse(args); err != nil {
		return smokeBroken
	}
	s, err := newSmoke(ctx, opts, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "smoke: %v\n", err)
		return smokeBroken
	}
	defer s.cleanup(stderr)
	figs, err := s.all(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "smoke: %v\n", err)
		s.report(stderr)
		return smokeBroken
	}
	if len(s.fails) > 0 {
		s.report(stderr)
		return smokeFailed
	}
	fmt.Fprintln(stdout, figs)
	return exitOK
}

// smoke holds one run's state: where things are and what failed.
type smoke struct {
	opts  options
	repo  string
	bin   string
	dir   string
	db    string
	log   io.Writer
	fails []string
}

func newSmoke(ctx context.Context, opts options, log io.Writer) (*smoke, error) {
	repo := opts.repo
	if repo == "" {
		var err error
		if repo, err = findRepo(); err != nil {
			return nil, err
		}
	}
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "openrecall-smoke-")
	if err != nil {
		return nil, err
	}
	s := &smoke{opts: opts, repo: repo, dir: dir, db: filepath.Join(dir, "memory.db"), log: log}
	if opts.bin != "" {
		if s.bin, err = filepath.Abs(opts.bin); err != nil {
			return nil, err
		}
		if _, err := os.Stat(s.bin); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("binary: %w (run `make build` first, or leave -bin empty to build one)", err)
		}
		return s, nil
	}
	s.bin = filepath.Join(dir, "openrecall")
	bctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(bctx, "go", "build", "-o", s.bin, "./cmd/openrecall")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("go build ./cmd/openrecall: %v\n%s", err, out)
	}
	return s, nil
}

// findRepo walks up from the working directory to the directory with go.mod.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: pass -repo")
		}
		dir = parent
	}
}

func (s *smoke) cleanup(w io.Writer) {
	if s.opts.keep {
		fmt.Fprintf(w, "smoke: kept %s\n", s.dir)
		return
	}
	_ = os.RemoveAll(s.dir)
}

func (s *smoke) failf(format string, a ...any) { s.fails = append(s.fails, fmt.Sprintf(format, a...)) }

func (s *smoke) report(w io.Writer) {
	if len(s.fails) == 0 {
		return
	}
	fmt.Fprintf(w, "smoke: FAILED, %d assertion(s):\n", len(s.fails))
	for _, f := range s.fails {
		fmt.Fprintf(w, "  - %s\n", f)
	}
}

func (s *smoke) path(rel string) string { return filepath.Join(s.repo, filepath.FromSlash(rel)) }

// outcome is what one command did.
type outcome struct {
	args   []string
	code   int
	stdout []byte
	stderr []byte
}

func (o outcome) String() string {
	return fmt.Sprintf("`openrecall %s` (exit %d): %s", strings.Join(o.args, " "), o.code, tail(o.stderr))
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return strings.ReplaceAll(s, "\n", " | ")
}

// openrecall runs the binary on the smoke database with stdin. Only a
// failure to start it (or a timeout) is an error; an exit status is data.
func (s *smoke) openrecall(ctx context.Context, stdin []byte, args ...string) (outcome, error) {
	full := append([]string{"--db", s.db}, args...)
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, full...)
	cmd.Dir = s.repo
	// A private data directory and no inherited database or config, so the
	// run never touches the user's memory.
	cmd.Env = append(filterEnv(os.Environ(), "OPENRECALL_"), "XDG_DATA_HOME="+filepath.Join(s.dir, "xdg"), "XDG_CONFIG_HOME="+filepath.Join(s.dir, "xdg-config"), "HOME="+s.dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	o := outcome{args: args, stdout: out.Bytes(), stderr: errOut.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		o.code = ee.ExitCode()
	default:
		return o, fmt.Errorf("openrecall %s: %w", strings.Join(args, " "), err)
	}
	if s.opts.verbose {
		fmt.Fprintf(s.log, "smoke: openrecall %s -> exit %d\n", strings.Join(args, " "), o.code)
	}
	return o, nil
}

func filterEnv(env []string, prefix string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// expect records a failure when the command's exit status is not want.
func (s *smoke) expect(o outcome, want int) bool {
	if o.code != want {
		s.failf("%s: want exit status %d", o, want)
		return false
	}
	return true
}

// all runs every check in order. It returns an error only when the smoke
// test cannot go on; failed assertions are collected in s.fails.
func (s *smoke) all(ctx context.Context) (figures, error) {
	truth, err := loadTruth(s.path("examples/truth.json"))
	if err != nil {
		return figures{}, err
	}
	if err := s.seed(ctx); err != nil {
		return figures{}, err
	}
	results, err := s.analyzeQueue(ctx)
	if err != nil {
		return figures{}, err
	}
	figs, fails := checkResults(truth, results)
	s.fails = append(s.fails, fails...)
	s.fails = append(s.fails, checkExampleTargets(figs)...)
	if err := s.cost(ctx, results, figs); err != nil {
		return figs, err
	}
	if err := s.auditShow(ctx, results); err != nil {
		return figs, err
	}
	if err := s.rerun(ctx, results); err != nil {
		return figs, err
	}
	return figs, nil
}

var seededRE = regexp.MustCompile(`seeded (\d+) memories from .*: (\d+) new, (\d+) already known, (\d+) rejected`)

// seed retains the example's analyst decisions: every one is new. (Seeding
// twice stores nothing new: cmd/openrecall/testdata/script/seed_twice.txtar.)
func (s *smoke) seed(ctx context.Context) error {
	file := s.path("examples/seed.jsonl")
	lines, err := seedLines(file)
	if err != nil {
		return err
	}
	o, err := s.openrecall(ctx, nil, "memory", "seed", file)
	if err != nil {
		return err
	}
	if !s.expect(o, exitOK) {
		return nil
	}
	m := seededRE.FindStringSubmatch(string(o.stdout))
	if m == nil {
		s.failf("%s: no `seeded N memories` line in %q", o, tail(o.stdout))
		return nil
	}
	total, _ := strconv.Atoi(m[1])
	created, _ := strconv.Atoi(m[2])
	if total != lines || created != lines {
		s.failf("memory seed: %s; want %d memories, all new", strings.TrimSpace(m[0]), lines)
	}
	return nil
}

// seedLines counts a seed file's records and checks each carries dead ends.
func seedLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	n := 0
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var rec struct {
			DeadEnds []string `json:"dead_ends"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			return 0, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if len(rec.DeadEnds) == 0 {
			return 0, fmt.Errorf("%s: line %d: a seeded decision needs its dead ends", path, line)
		}
		n++
	}
	return n, sc.Err()
}

// analyzeQueue analyses the bundled queue and parses its JSON Lines results.
func (s *smoke) analyzeQueue(ctx context.Context) ([]openrecall.Result, error) {
	o, err := s.openrecall(ctx, nil, "analyze", "--output", "jsonl", s.path("examples/queue.jsonl"))
	if err != nil {
		return nil, err
	}
	s.expect(o, exitOK)
	results, err := parseResults(o.stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	if !bytes.Contains(o.stderr, []byte("bypasses")) {
		s.failf("%s: no summary on stderr", o)
	}
	return results, nil
}

func parseResults(b []byte) ([]openrecall.Result, error) {
	var out []openrecall.Result
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r openrecall.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("output line %d is not a result: %w", n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// cost compares `cost --output json` and the persisted curve with the results.
func (s *smoke) cost(ctx context.Context, results []openrecall.Result, figs figures) error {
	o, err := s.openrecall(ctx, nil, "cost", "--output", "json")
	if err != nil {
		return err
	}
	if !s.expect(o, exitOK) {
		return nil
	}
	var sum costcurve.Summary
	if err := json.Unmarshal(o.stdout, &sum); err != nil {
		s.failf("%s: output is not a cost summary: %v", o, err)
		return nil
	}
	bypassed := 0
	for _, r := range results {
		if r.Bypassed {
			bypassed++
		}
	}
	batch := ""
	if len(results) > 0 {
		batch = results[0].Batch
	}
	switch {
	case sum.Batch != batch:
		s.failf("cost: latest batch %q, want the analysed batch %q", sum.Batch, batch)
	case sum.Alerts != figs.Triaged:
		s.failf("cost: %d alerts on the curve, want the %d triaged", sum.Alerts, figs.Triaged)
	case sum.Bypassed != bypassed:
		s.failf("cost: %d bypassed, results say %d", sum.Bypassed, bypassed)
	case sum.Cost != figs.Cost || sum.Baseline != figs.Baseline:
		s.failf("cost: %s against %s, results total %s against %s", exact(sum.Cost), exact(sum.Baseline), exact(figs.Cost), exact(figs.Baseline))
	case sum.Savings <= 0 || sum.Cost > sum.Baseline:
		s.failf("cost: savings %s (cost %s, baseline %s), want > 0", exact(sum.Savings), exact(sum.Cost), exact(sum.Baseline))
	}

	st, err := memory.Open(ctx, s.db, memory.Options{})
	if err != nil {
		return fmt.Errorf("open %s: %w", s.db, err)
	}
	defer func() { _ = st.Close() }()
	points, err := st.CostPoints(ctx, batch)
	if err != nil {
		return fmt.Errorf("cost points of %s: %w", batch, err)
	}
	s.fails = append(s.fails, checkCostPoints(points, figs.Triaged, figs.Cost, figs.Baseline)...)
	return nil
}

// auditShow checks that `audit show` prints one entry per route step for a
// bypassed and for a model-analysed alert.
func (s *smoke) auditShow(ctx context.Context, results []openrecall.Result) error {
	var picks []openrecall.Result
	for _, want := range []func(openrecall.Result) bool{
		func(r openrecall.Result) bool { return r.Bypassed },
		func(r openrecall.Result) bool { return r.Analysis != nil && !r.Bypassed },
	} {
		for _, r := range results {
			if want(r) {
				picks = append(picks, r)
				break
			}
		}
	}
	if len(picks) == 0 {
		s.failf("audit show: no bypassed or analysed result to show")
	}
	for _, r := range picks {
		o, err := s.openrecall(ctx, nil, "audit", "show", "--output", "jsonl", r.AnalysisID)
		if err != nil {
			return err
		}
		if !s.expect(o, exitOK) {
			continue
		}
		var entries []openrecall.AuditEntry
		dec := json.NewDecoder(bytes.NewReader(o.stdout))
		for dec.More() {
			var e openrecall.AuditEntry
			if err := dec.Decode(&e); err != nil {
				s.failf("%s: not audit entries: %v", o, err)
				break
			}
			entries = append(entries, e)
		}
		if len(entries) != len(r.Steps) {
			s.failf("audit show %s: %d entries, the result has %d route steps", r.AnalysisID, len(entries), len(r.Steps))
			continue
		}
		for i, e := range entries {
			if e.Step != r.Steps[i].Step || e.Hash == "" || e.Hash != r.Audit[i].Hash {
				s.failf("audit show %s: entry %d is %q hash %q, the result's is %q hash %q", r.AnalysisID, i, e.Step, e.Hash, r.Steps[i].Step, r.Audit[i].Hash)
			}
		}
		table, err := s.openrecall(ctx, nil, "audit", "show", r.AnalysisID)
		if err != nil {
			return err
		}
		if s.expect(table, exitOK) && r.Bypassed && !bytes.Contains(table.stdout, []byte(openrecall.StepMemoryBypass)) {
			s.failf("%s: the table does not show the memory-bypass step", table)
		}
	}
	return nil
}

// rerun checks that analysing never teaches memory anything (it grows only
// by retain: the agent cannot reinforce itself) and that a concurrent run of
// the same queue on the same seeded memory is equivalent, result by result,
// to the sequential one.
func (s *smoke) rerun(ctx context.Context, results []openrecall.Result) error {
	seeded, err := seedLines(s.path("examples/seed.jsonl"))
	if err != nil {
		return err
	}
	o, err := s.openrecall(ctx, nil, "memory", "stats", "--output", "json")
	if err != nil {
		return err
	}
	if s.expect(o, exitOK) {
		var st memory.Stats
		if err := json.Unmarshal(o.stdout, &st); err != nil {
			s.failf("%s: not memory stats: %v", o, err)
		} else if st.Incidents != seeded {
			s.failf("memory holds %d incidents after analysing, want the %d seeded: analysis must never retain", st.Incidents, seeded)
		}
	}
	// The concurrent run starts from the memory the sequential run started
	// from: a run records its strong completions, whose mean prices the
	// next run's baselines. The later --db wins over the smoke's own.
	twin := filepath.Join(s.dir, "workers.db")
	o, err = s.openrecall(ctx, nil, "--db", twin, "memory", "seed", s.path("examples/seed.jsonl"))
	if err != nil {
		return err
	}
	if !s.expect(o, exitOK) {
		return nil
	}
	o, err = s.openrecall(ctx, nil, "--db", twin, "analyze", "--workers", "4", "--output", "jsonl", s.path("examples/queue.jsonl"))
	if err != nil {
		return err
	}
	if !s.expect(o, exitOK) {
		return nil
	}
	again, err := parseResults(o.stdout)
	if err != nil {
		s.failf("%s: %v", o, err)
		return nil
	}
	if err := openrecall.EquivalentRuns(results, again); err != nil {
		s.failf("analyze --workers 4 is not equivalent to the sequential run: %v", err)
	}
	return nil
}
