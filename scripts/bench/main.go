package main

import (
	"bufio"
	"bytes"
	"cmp"
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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/scripts/bench/benchkit"
	"github.com/openrecall/openrecall/scripts/bench/queuegen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the benchmark's flags.
type options struct {
	bin   string
	queue string // "corpus", "generated" or "misses"
	// memory is "seeded" (queuegen's analyst decisions) or "empty".
	memory string
	// grouping is "on", "off" (analyze --no-grouping) or "both" (a row of
	// each).
	grouping string
	// cache is "on" or "off" (analyze --no-cache: the fingerprint and
	// recall caches off).
	cache   string
	corpus  string // the rule corpus file; "" finds it above the working directory
	profile bool   // write a CPU profile of the first run and print its top entries
	n       int
	seed    int64
	workers []int
	repeat  int
	runs    int
	dir     string
	keep    bool
	timeout time.Duration
}

// row is one line of the result table.
type row struct {
	name     string
	records  int
	elapsed  time.Duration
	rssBytes int64         // peak resident set size; 0 when not measured
	cpu      time.Duration // user + system CPU time; 0 when not measured
	stats    string        // the run's cache statistics line, if it printed one
	// runs, cpuMin and cpuMax say, for a median of several runs, how many
	// and the range of their CPU µs per alert.
	runs           int
	cpuMin, cpuMax float64
}

// cpuPerAlert returns the CPU time per record in microseconds.
func (r row) cpuPerAlert() float64 {
	if r.records == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.records)
}

func (r row) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.records) / r.elapsed.Seconds()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if err := bench(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var opts options
	var workers string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.bin, "bin", "./bin/openrecall", "openrecall binary to time")
	fs.StringVar(&opts.queue, "queue", "corpus", "queue: corpus (the rule corpus rendered as Alertmanager webhooks), generated (queuegen's mixed queue) or misses (free-text alerts that all differ)")
	fs.StringVar(&opts.memory, "memory", "", "memory each run starts from: seeded (queuegen's analyst decisions) or empty (default: empty for -queue misses, else seeded)")
	fs.StringVar(&opts.grouping, "grouping", "", "alert groups: on, off (analyze --no-grouping) or both, a row each (default: both for -queue misses, else on)")
	fs.StringVar(&opts.cache, "cache", "", "analyze's fingerprint and recall caches: on, or off (--no-cache: the miss path on any queue) (default: off for -queue misses, else on)")
	fs.StringVar(&opts.corpus, "corpus", "", "rule corpus file (default: the repository's testdata/prometheus-rules/rules.jsonl, found above the working directory)")
	fs.BoolVar(&opts.profile, "profile", true, "profile one more analyze run of the first --workers value (--cpuprofile) and print the profile's top entries")
	fs.IntVar(&opts.runs, "runs", 3, "timed analyze runs per --workers value (the median CPU counts; the range is shown)")
	fs.IntVar(&opts.n, "n", 20000, "alerts in the queue")
	fs.Int64Var(&opts.seed, "seed", 1, "generator seed (same seed, same queue)")
	fs.StringVar(&workers, "workers", "1,2", "comma-separated --workers values, one timed run each")
	fs.IntVar(&opts.repeat, "repeat", 3, "timed repetitions of each in-process baseline (the fastest counts)")
	fs.StringVar(&opts.dir, "dir", "", "work directory (default: a new temporary directory)")
	fs.BoolVar(&opts.keep, "keep", false, "keep the work directory (queue, seed, databases) and print its path")
	fs.DurationVar(&opts.timeout, "timeout", 30*time.Minute, "limit on each analyze run")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	fail := func(format string, a ...any) (options, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return opts, err
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q", fs.Args())
	}
	if opts.n < 1 {
		return fail("-n %d: want at least 1", opts.n)
	}
	switch opts.queue {
	case "corpus", "generated", "misses":
	default:
		return fail("-queue %q: want corpus, generated or misses", opts.queue)
	}
	// Each of these defaults to its first value, or to its second for the
	// miss-path queue, and must be one of its values.
	for _, c := range []struct {
		flag  string
		value *string
		want  []string
	}{
		{"memory", &opts.memory, []string{"seeded", "empty"}},
		{"cache", &opts.cache, []string{"on", "off"}},
		{"grouping", &opts.grouping, []string{"on", "both", "off"}},
	} {
		if *c.value == "" {
			*c.value = c.want[0]
			if opts.queue == "misses" {
				*c.value = c.want[1]
			}
		}
		if !slices.Contains(c.want, *c.value) {
			return fail("-%s %q: want %s", c.flag, *c.value, strings.Join(c.want, ", "))
		}
	}
	if opts.runs < 1 {
		return fail("-runs %d: want at least 1", opts.runs)
	}
	if opts.repeat < 1 {
		return fail("-repeat %d: want at least 1", opts.repeat)
	}
	for _, f := range strings.Split(workers, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 {
			return fail("-workers %q: want positive integers separated by commas", workers)
		}
		opts.workers = append(opts.workers, w)
	}
	return opts, nil
}

func bench(ctx context.Context, opts options, stdout, stderr io.Writer) error {
	bin, err := filepath.Abs(opts.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("binary: %w (build it with `make build`)", err)
	}
	dir := opts.dir
	if dir == "" {
		dir, err = os.MkdirTemp("", "openrecall-bench-")
		if err != nil {
			return err
		}
		if opts.keep {
			fmt.Fprintf(stderr, "bench: work directory %s\n", dir)
		} else {
			defer func() { _ = os.RemoveAll(dir) }()
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	queue := filepath.Join(dir, "queue.jsonl")
	switch opts.queue {
	case "corpus":
		size, rules, err := benchkit.WriteCorpusQueue(queue, opts.corpus, opts.n)
		if err != nil {
			return fmt.Errorf("corpus queue: %w", err)
		}
		fmt.Fprintf(stderr, "bench: queue %s: %d alerts, %.1f MiB (%d rules of the corpus in turn)\n", queue, opts.n, float64(size)/(1<<20), rules)
	case "misses":
		size, rules, err := benchkit.WriteMissesQueue(queue, opts.corpus, opts.n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: queue %s: %d free-text alerts, each distinct, %.1f MiB (%d rules of the corpus in turn)\n", queue, opts.n, float64(size)/(1<<20), rules)
	default:
		counts, size, err := benchkit.WriteGeneratedQueue(queue, opts.n, opts.seed)
		if err != nil {
			return fmt.Errorf("generate queue: %w", err)
		}
		fmt.Fprintf(stderr, "bench: queue %s: %d alerts, %.1f MiB (%s)\n", queue, opts.n, float64(size)/(1<<20), countsString(counts))
	}

	seedDB := "" // an empty memory: each run starts on a new database
	if opts.memory == "seeded" {
		seedDB = filepath.Join(dir, "seeded.db")
		out, err := benchkit.SeedDatabase(ctx, bin, dir, seedDB, opts.seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: %s", out)
	}
	var extra [][]string // analyze flags of each row kind
	for _, g := range []string{"off", "on"} {
		if opts.grouping != g && opts.grouping != "both" {
			continue
		}
		var flags []string
		if g == "off" {
			flags = append(flags, "--no-grouping")
		}
		if opts.cache == "off" {
			flags = append(flags, "--no-cache")
		}
		extra = append(extra, flags)
	}

	var rows []row
	jsonRow, err := fastest(opts.repeat, "read+json.Unmarshal", func() (int, error) { return decodeJSONLines(queue) })
	if err != nil {
		return err
	}
	intakeRow, err := fastest(opts.repeat, "read+intake.Reader", func() (int, error) { return readIntake(queue) })
	if err != nil {
		return err
	}
	for _, r := range []row{jsonRow, intakeRow} {
		if r.records != opts.n {
			return fmt.Errorf("%s read %d records, want %d", r.name, r.records, opts.n)
		}
	}
	rows = append(rows, jsonRow, intakeRow)

	// Each --workers value is timed opts.runs times on a fresh copy of the
	// seeded database, without the profiler; the row is the run of median
	// CPU, and the range is printed beside it. The profile comes from a run
	// of its own.
	for _, flags := range extra {
		for _, w := range opts.workers {
			var runs []row
			for range opts.runs {
				r, err := analyzeFresh(ctx, bin, seedDB, dir, queue, w, opts.timeout, "", flags)
				if err != nil {
					return err
				}
				if r.records != opts.n {
					return fmt.Errorf("%s analysed %d records, want %d", r.name, r.records, opts.n)
				}
				fmt.Fprintf(stderr, "bench: %s: %.1fs, %.1f µs CPU per alert\n", r.name, r.elapsed.Seconds(), r.cpuPerAlert())
				runs = append(runs, r)
			}
			rows = append(rows, medianRun(runs))
		}
	}
	profile := ""
	if opts.profile {
		profile = filepath.Join(dir, "analyze.cpu.pprof")
		if _, err := analyzeFresh(ctx, bin, seedDB, dir, queue, opts.workers[0], opts.timeout, profile, extra[0]); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "openrecall analyze throughput: %d alerts (%s queue, %s memory), seed %d, %s/%s, GOMAXPROCS %d\n",
		opts.n, opts.queue, opts.memory, opts.seed, runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	if err := printTable(stdout, rows, jsonRow, intakeRow); err != nil {
		return err
	}
	for _, r := range rows {
		if r.stats != "" {
			fmt.Fprintf(stdout, "%s: %s\n", r.name, r.stats)
		}
	}
	if profile != "" {
		top, err := profileTop(ctx, bin, profile)
		if err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		fmt.Fprintf(stdout, "\nCPU profile of a further %s run (%s), top entries:\n%s\n", rows[2].name, profile, top)
	}
	return nil
}

// profileTop returns the top entries of a CPU profile, flat and cumulative,
// as go tool pprof prints them.
func profileTop(ctx context.Context, bin, profile string) (string, error) {
	var out strings.Builder
	for _, args := range [][]string{{"-top", "-nodecount=25"}, {"-top", "-cum", "-nodecount=25"}} {
		cmd := exec.CommandContext(ctx, "go", append(append([]string{"tool", "pprof"}, args...), bin, profile)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go tool pprof: %w: %s", err, benchkit.Tail(string(b), 400))
		}
		out.Write(b)
	}
	return out.String(), nil
}

func countsString(c queuegen.Counts) string {
	kinds := []queuegen.Kind{queuegen.KindRepeat, queuegen.KindThin, queuegen.KindNovel, queuegen.KindAttack,
		queuegen.KindDisguised, queuegen.KindResent, queuegen.KindResolved}
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// timeAnalyze runs analyze once with stdout discarded and returns its wall
// time, peak RSS and CPU time. The record count comes from the summary the
// command prints on stderr.
//
// analyzeFresh times analyze on a fresh copy of the seeded database, or on a
// new one when seedDB is "".
func analyzeFresh(ctx context.Context, bin, seedDB, dir, queue string, workers int, timeout time.Duration, profile string, flags []string) (row, error) {
	db := filepath.Join(dir, fmt.Sprintf("run-workers-%d.db", workers))
	if seedDB == "" {
		if err := benchkit.RemoveDatabase(db); err != nil {
			return row{}, err
		}
	} else if err := benchkit.CopyDatabase(seedDB, db); err != nil {
		return row{}, err
	}
	return timeAnalyze(ctx, bin, db, queue, workers, timeout, profile, flags)
}

// medianRun returns the run of median CPU time, with the CPU range of all
// the runs.
func medianRun(runs []row) row {
	slices.SortFunc(runs, func(a, b row) int { return cmp.Compare(a.cpu, b.cpu) })
	m := runs[len(runs)/2]
	m.cpuMin, m.cpuMax, m.runs = runs[0].cpuPerAlert(), runs[len(runs)-1].cpuPerAlert(), len(runs)
	return m
}

// With profile set, the run also writes a CPU profile there and prints its
// cache statistics, which the row keeps.
func timeAnalyze(ctx context.Context, bin, db, queue string, workers int, timeout time.Duration, profile string, flags []string) (row, error) {
	name := strings.Join(append([]string{fmt.Sprintf("analyze --workers %d", workers)}, flags...), " ")
	args := append([]string{"--workers", strconv.Itoa(workers), "--cache-stats"}, flags...)
	if profile != "" {
		args = append(args, "--cpuprofile", profile)
	}
	run, err := benchkit.Analyze(ctx, bin, db, queue, args, nil, nil, timeout)
	if err != nil {
		return row{}, fmt.Errorf("%s: %w", name, err)
	}
	r := row{name: name, records: run.Records, elapsed: run.Elapsed, rssBytes: run.RSSBytes, cpu: run.CPU}
	if m := statsLine.FindStringSubmatch(run.Stderr); m != nil {
		r.stats = m[1]
	}
	return r, nil
}

var statsLine = regexp.MustCompile(`(?m)^cache stats: (.*)$`)

// fastest runs f once to warm the page cache, then repeat times, and
// returns the fastest run with its CPU time.
func fastest(repeat int, name string, f func() (int, error)) (row, error) {
	if _, err := f(); err != nil {
		return row{}, fmt.Errorf("%s: %w", name, err)
	}
	best := row{name: name}
	for i := range repeat {
		cpu0 := processCPU()
		start := time.Now()
		n, err := f()
		elapsed := time.Since(start)
		if err != nil {
			return row{}, fmt.Errorf("%s: %w", name, err)
		}
		if i == 0 || elapsed < best.elapsed {
			best.records, best.elapsed, best.cpu = n, elapsed, processCPU()-cpu0
		}
	}
	return best, nil
}

// processCPU returns this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// decodeJSONLines reads the file line by line and decodes every non-empty
// line into a generic value (map[string]any for objects; some lines of the
// queue are bare JSON strings).
func decodeJSONLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), 4<<20)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return n, fmt.Errorf("line %d: %w", n+1, err)
		}
		n++
	}
	return n, sc.Err()
}

// readIntake parses and normalises the file with openrecall's intake reader
// and counts the alerts (rejected records would count too; the generated
// queue has none).
func readIntake(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	rd := intake.NewReader(bufio.NewReaderSize(f, 256<<10), intake.Options{Source: path})
	n := 0
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if rec.Err != nil {
			return n, fmt.Errorf("record %d rejected: %s", n+1, rec.Err.Reason)
		}
		n++
	}
}

func printTable(w io.Writer, rows []row, jsonRow, intakeRow row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\trecords\tseconds\talerts/s\tpeak RSS MiB\tCPU s\tCPU µs/alert\tµs range (runs)\tx json\tx json CPU\tx intake\t")
	for _, r := range rows {
		rss := "-"
		if r.rssBytes > 0 {
			rss = fmt.Sprintf("%.1f", float64(r.rssBytes)/(1<<20))
		}
		spread := "-"
		if r.runs > 0 {
			spread = fmt.Sprintf("%.1f–%.1f (%d)", r.cpuMin, r.cpuMax, r.runs)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%s\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t\n", r.name, r.records, r.elapsed.Seconds(), r.perSecond(),
			rss, r.cpu.Seconds(), r.cpuPerAlert(), spread, ratio(r, jsonRow), cpuRatio(r, jsonRow), ratio(r, intakeRow))
	}
	return tw.Flush()
}

// cpuRatio returns how many times more CPU r used than base.
func cpuRatio(r, base row) string {
	if base.cpu <= 0 || r.cpu <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r.cpu.Seconds()/base.cpu.Seconds())
}

// ratio returns how many times longer r took than base.
func ratio(r, base row) string {
	if base.elapsed <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r.elapsed.Seconds()/base.elapsed.Seconds())
}
