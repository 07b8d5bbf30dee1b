package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall/scripts/bench/benchkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the harness's flags.
type options struct {
	base    string
	n       int
	rounds  int
	workers int
	queues  []string
	python  string
	corpus  string
	seed    int64
	dir     string
	keep    bool
	timeout time.Duration
}

// queue is one kind of run: the queue file, the memory it starts from and
// analyze's flags.
type queue struct {
	name   string
	label  string
	file   string // "misses" or "corpus"
	memory string // "empty" or "seeded"
	flags  []string
}

// queues are the kinds of run issue 41 asks for, in table order.
var queues = []queue{
	{name: "misses", label: "misses: free text, empty memory, caches off", file: "misses", memory: "empty", flags: []string{"--no-cache"}},
	{name: "corpus-nocache", label: "corpus: seeded memory, caches off", file: "corpus", memory: "seeded", flags: []string{"--no-cache"}},
	{name: "corpus", label: "corpus: seeded memory, caches on", file: "corpus", memory: "seeded"},
	{name: "webhooks", label: "webhooks: corpus queue, empty memory, caches on", file: "corpus", memory: "empty"},
}

func queueNames() []string {
	names := make([]string, len(queues))
	for i, q := range queues {
		names[i] = q.name
	}
	return names
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if err := compare(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "benchcompare: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var opts options
	var names string
	fs := flag.NewFlagSet("benchcompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.base, "base", "", "the revision A is built from (B is the working tree); required")
	fs.IntVar(&opts.n, "n", 5000, "alerts in each queue")
	fs.IntVar(&opts.rounds, "rounds", 5, "rounds; round r runs every queue on A then B when r is even, B then A when odd")
	fs.IntVar(&opts.workers, "workers", 1, "analyze --workers")
	fs.StringVar(&names, "queues", strings.Join(queueNames(), ","), "comma-separated kinds of run: "+strings.Join(queueNames(), ", "))
	fs.StringVar(&opts.python, "python", "python3", "the Python that times json.loads of each queue file; \"\" skips it")
	fs.StringVar(&opts.corpus, "corpus", "", "rule corpus file (default: the repository's testdata/prometheus-rules/rules.jsonl)")
	fs.Int64Var(&opts.seed, "seed", 1, "seed of the seeded memory (queuegen's analyst decisions)")
	fs.StringVar(&opts.dir, "dir", "", "work directory (default: a new temporary directory)")
	fs.BoolVar(&opts.keep, "keep", false, "keep the work directory (binaries, queues, databases) and print its path")
	fs.DurationVar(&opts.timeout, "timeout", 10*time.Minute, "limit on each analyze run")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	fail := func(format string, a ...any) (options, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "benchcompare: %v\n", err)
		return opts, err
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected arguments %q", fs.Args())
	case opts.base == "":
		return fail("-base: want the revision to compare the working tree with (make bench-compare BASE=<rev>)")
	case opts.n < 2:
		return fail("-n %d: want at least 2 (one alert is the start-up run)", opts.n)
	case opts.rounds < 1:
		return fail("-rounds %d: want at least 1", opts.rounds)
	case opts.workers < 1:
		return fail("-workers %d: want at least 1", opts.workers)
	}
	for _, f := range strings.Split(names, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(queueNames(), f) {
			return fail("-queues %q: %q is not one of %s", names, f, strings.Join(queueNames(), ", "))
		}
		if !slices.Contains(opts.queues, f) {
			opts.queues = append(opts.queues, f)
		}
	}
	return opts, nil
}

// buildSide is one of the two builds.
type buildSide struct {
	label string // "A" or "B"
	rev   string // what it was built from, for the header
	bin   string
	seed  string // its seeded database ("" until seeded)
}

func compare(ctx context.Context, opts options, stdout, stderr io.Writer) error {
	root, err := git(ctx, ".", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	base, err := git(ctx, root, "rev-parse", "--short", opts.base+"^{commit}")
	if err != nil {
		return fmt.Errorf("-base %q: %w", opts.base, err)
	}
	head, err := git(ctx, root, "describe", "--always", "--dirty")
	if err != nil {
		return err
	}
	// --dirty overlooks new files, which the build of B includes.
	if status, err := git(ctx, root, "status", "--porcelain"); err == nil && strings.Contains("\n"+status, "\n??") {
		head += "+untracked"
	}
	dir := opts.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "openrecall-benchcompare-"); err != nil {
			return err
		}
		if opts.keep {
			fmt.Fprintf(stderr, "benchcompare: work directory %s\n", dir)
		} else {
			defer func() { _ = os.RemoveAll(dir) }()
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	load := loadAverage()

	sides := []*buildSide{
		{label: "A", rev: base + " (BASE)", bin: filepath.Join(dir, "A", "openrecall")},
		{label: "B", rev: head + " (working tree)", bin: filepath.Join(dir, "B", "openrecall")},
	}
	fmt.Fprintf(stderr, "benchcompare: building A from %s in a temporary worktree\n", base)
	tree := filepath.Join(dir, "base-tree")
	remove, err := checkout(ctx, root, base, tree)
	if err != nil {
		return err
	}
	err = build(ctx, tree, sides[0].bin, filepath.Join(dir, "A", "overlay"), "A")
	if rerr := remove(); err == nil && rerr != nil {
		err = fmt.Errorf("remove the worktree of %s: %w", base, rerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "benchcompare: building B from the working tree %s\n", head)
	if err := build(ctx, root, sides[1].bin, filepath.Join(dir, "B", "overlay"), "B"); err != nil {
		return err
	}

	var chosen []queue
	files := map[string]string{} // queue file kind → path
	seeded := false
	for _, q := range queues {
		if !slices.Contains(opts.queues, q.name) {
			continue
		}
		chosen = append(chosen, q)
		seeded = seeded || q.memory == "seeded"
		if _, ok := files[q.file]; ok {
			continue
		}
		path := filepath.Join(dir, q.file+".jsonl")
		var size int64
		var err error
		if q.file == "misses" {
			size, _, err = benchkit.WriteMissesQueue(path, opts.corpus, opts.n)
		} else {
			size, _, err = benchkit.WriteCorpusQueue(path, opts.corpus, opts.n)
		}
		if err != nil {
			return fmt.Errorf("%s queue: %w", q.file, err)
		}
		fmt.Fprintf(stderr, "benchcompare: %s queue: %d alerts, %.1f MiB\n", q.file, opts.n, float64(size)/(1<<20))
		files[q.file] = path
		if files[q.file+"-1"], err = firstLine(path); err != nil {
			return err
		}
	}
	// Each build seeds its own database (its own schema version), from the
	// same seed file.
	if seeded {
		for _, s := range sides {
			s.seed = filepath.Join(dir, s.label, "seeded.db")
			if _, err := benchkit.SeedDatabase(ctx, s.bin, filepath.Join(dir, s.label), s.seed, opts.seed); err != nil {
				return fmt.Errorf("seed %s: %w", s.label, err)
			}
		}
	}
	python := opts.python
	if python != "" {
		if _, err := exec.LookPath(python); err != nil {
			fmt.Fprintf(stderr, "benchcompare: no %s (%v): json.loads is not measured\n", python, err)
			python = ""
		}
	}

	// One uncounted run of each build warms the page cache and the binary.
	for _, s := range sides {
		if _, err := measure(ctx, opts, dir, s, chosen[0], files[chosen[0].file], opts.n); err != nil {
			return err
		}
	}
	results := map[string]map[string][]pair{} // queue name → build label → rounds
	loads := map[string][]float64{}           // queue file kind → json.loads µs per line
	for _, q := range chosen {
		results[q.name] = map[string][]pair{}
	}
	for r := range opts.rounds {
		order := sides
		if r%2 == 1 {
			order = []*buildSide{sides[1], sides[0]}
		}
		for _, q := range chosen {
			for _, s := range order {
				full, err := measure(ctx, opts, dir, s, q, files[q.file], opts.n)
				if err != nil {
					return err
				}
				startup, err := measure(ctx, opts, dir, s, q, files[q.file+"-1"], 1)
				if err != nil {
					return err
				}
				p := pair{full: full, startup: startup}
				results[q.name][s.label] = append(results[q.name][s.label], p)
				fmt.Fprintf(stderr, "benchcompare: round %d %s %s: %.1f µs CPU, %.0f allocs per alert (start-up off)\n",
					r+1, q.name, s.label, measures[1].get(p), measures[4].get(p))
			}
		}
		if python == "" {
			continue
		}
		for _, kind := range []string{"misses", "corpus"} {
			if path, ok := files[kind]; ok {
				us, err := jsonLoads(ctx, python, path, opts.n)
				if err != nil {
					return err
				}
				loads[kind] = append(loads[kind], us)
			}
		}
	}

	fmt.Fprintf(stdout, "bench-compare: A = %s, B = %s; %d alerts per queue, %d rounds (A,B then B,A), analyze --workers %d, %s/%s, %d CPUs, load average %s at the start, %s at the end\n",
		sides[0].rev, sides[1].rev, opts.n, opts.rounds, opts.workers, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), load, loadAverage())
	fmt.Fprintln(stdout)
	if err := printTable(stdout, chosen, results); err != nil {
		return err
	}
	if python != "" {
		fmt.Fprintln(stdout)
		return printLoads(stdout, chosen, results, loads)
	}
	return nil
}

// sample is one analyze run's totals.
type sample struct {
	records int
	cpu     float64 // CPU µs (rusage user + system)
	allocs  float64 // heap allocations (objects, tiny ones included)
	allocKB float64 // KiB allocated on the heap
	db      float64 // bytes the main database file grew by
	wal     float64 // bytes of -wal file left after the run
	written float64 // bytes written to files (wchar less stdout and stderr)
	rssMiB  float64 // peak RSS, MiB
}

// pair is one round's runs of one build on one queue: the whole queue and
// its first alert alone (the start-up).
type pair struct{ full, startup sample }

// perAlert returns the full run's total per alert.
func perAlert(get func(sample) float64) func(pair) float64 {
	return func(p pair) float64 { return get(p.full) / float64(p.full.records) }
}

// marginal returns the full run's total less the start-up run's, per
// further alert: the cost of one more alert.
func marginal(get func(sample) float64) func(pair) float64 {
	return func(p pair) float64 {
		return (get(p.full) - get(p.startup)) / float64(p.full.records-p.startup.records)
	}
}

// measures are the table's rows of each queue, in order.
var measures = []struct {
	name string
	get  func(pair) float64
	prec int
}{
	{"CPU µs/alert", perAlert(func(s sample) float64 { return s.cpu }), 1},
	{"CPU µs/alert less start-up", marginal(func(s sample) float64 { return s.cpu }), 1},
	{"start-up CPU ms", func(p pair) float64 { return p.startup.cpu / 1e3 }, 0},
	{"allocs/alert", perAlert(func(s sample) float64 { return s.allocs }), 0},
	{"allocs/alert less start-up", marginal(func(s sample) float64 { return s.allocs }), 0},
	{"start-up allocs", func(p pair) float64 { return p.startup.allocs }, 0},
	{"alloc KiB/alert less start-up", marginal(func(s sample) float64 { return s.allocKB }), 1},
	{"DB bytes/alert less start-up", marginal(func(s sample) float64 { return s.db }), 0},
	{"WAL bytes/alert less start-up", marginal(func(s sample) float64 { return s.wal }), 0},
	{"written bytes/alert less start-up", marginal(func(s sample) float64 { return s.written }), 0},
	{"peak RSS MiB", func(p pair) float64 { return p.full.rssMiB }, 1},
}

// measure runs build s on queue q's file once, on a fresh copy of its
// seeded database or a new one, and returns the run's totals; the file
// must hold want alerts.
func measure(ctx context.Context, opts options, dir string, s *buildSide, q queue, file string, want int) (sample, error) {
	db := filepath.Join(dir, s.label, "run.db")
	hook := filepath.Join(dir, s.label, "hook.txt")
	if err := os.Remove(hook); err != nil && !errors.Is(err, os.ErrNotExist) {
		return sample{}, err
	}
	var before, walBefore int64
	if q.memory == "seeded" {
		if err := benchkit.CopyDatabase(s.seed, db); err != nil {
			return sample{}, err
		}
		before, walBefore = size(db), size(db+"-wal")
	} else if err := benchkit.RemoveDatabase(db); err != nil {
		return sample{}, err
	}
	var out countWriter
	args := append([]string{"--workers", strconv.Itoa(opts.workers)}, q.flags...)
	r, err := benchkit.Analyze(ctx, s.bin, db, file, args, []string{hookEnv + "=" + hook}, &out, opts.timeout)
	if err != nil {
		return sample{}, fmt.Errorf("%s on %s: %w", s.label, q.name, err)
	}
	if r.Records != want {
		return sample{}, fmt.Errorf("%s on %s analysed %d records, want %d", s.label, q.name, r.Records, want)
	}
	counts, err := readHook(hook)
	if err != nil {
		return sample{}, fmt.Errorf("%s on %s: %w", s.label, q.name, err)
	}
	m := sample{
		records: r.Records,
		cpu:     float64(r.CPU.Nanoseconds()) / 1e3,
		allocs:  float64(counts["/gc/heap/allocs:objects"] + counts["/gc/heap/tiny/allocs:objects"]),
		allocKB: float64(counts["/gc/heap/allocs:bytes"]) / 1024,
		db:      float64(size(db) - before),
		wal:     float64(size(db+"-wal") - walBefore),
		rssMiB:  float64(r.RSSBytes) / (1 << 20),
	}
	if w, ok := counts["wchar"]; ok {
		m.written = float64(w - out.n - int64(len(r.Stderr)))
	}
	return m, nil
}

// firstLine writes the first line of the queue file beside it, the queue
// of the start-up runs, and returns its path.
func firstLine(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	one := strings.TrimSuffix(path, ".jsonl") + "-1.jsonl"
	return one, os.WriteFile(one, []byte(line+"\n"), 0o644)
}

// readHook reads the counts the exit hook wrote: "name: value" lines.
func readHook(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the exit hook wrote no counts: %w", err)
	}
	defer func() { _ = f.Close() }()
	counts := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("exit hook: %q: %w", sc.Text(), err)
		}
		counts[name] = v
	}
	if _, ok := counts["/gc/heap/allocs:objects"]; !ok {
		return nil, fmt.Errorf("exit hook: no allocation count in %s", path)
	}
	return counts, sc.Err()
}

// countWriter counts and discards what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// size returns the file's size, 0 when it does not exist.
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// loadAverage returns the 1-minute load average, or "?" off Linux.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
