package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/jsonfast"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

type analyzeOptions struct {
	input     string
	output    string
	format    string
	workers   int
	budgetUSD float64
	rules     string
	// senders is a directory of sender mapping files (--senders), laid
	// over the config's senders.dir.
	senders string
	// cpuProfile, when set, names a file for a CPU profile of the run (a
	// hidden flag for make bench-analyze).
	cpuProfile string
	// memProfile, when set, names a file for an allocation profile of the
	// run (hidden, for allocation work); the run's malloc count goes to
	// stderr beside it.
	memProfile string
	// budgetSet is true when --budget-usd was given (0 then means no
	// budget rather than the config's).
	budgetSet bool
	// cacheStats prints the run's cache hit rates on stderr (hidden, for
	// make bench-analyze).
	cacheStats bool
	// noGrouping triages every firing alone (DESIGN §6a).
	noGrouping bool
	// noCache turns the fingerprint and recall caches off (hidden, for
	// make bench-analyze's cache-off rows: the miss path measured on any
	// queue); the recall's existence index stays on.
	noCache bool
}

func newAnalyzeCmd(a *app) *cobra.Command {
	opts := &analyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze [FILE|-]",
		Short: "Triage a queue of alerts (the main job)",
		Long: `Triage every alert of FILE (or standard input) and print one decision per record.

Formats are detected per file and per line (--format forces one). A malformed record is
reported with its position and reason, appears as a rejected result, and the rest of the queue
is processed; the exit status is then 3. Alerts no model could analyse (the --budget-usd cap
reached, or the model unavailable) are escalated to a person without analysis, marked
"escalated_without_analysis" in JSON results and counted in the summary; they save nothing, and
the exit status is then 6 (3 wins when records were also rejected). Results go to stdout; the
summary goes to stderr.`,
		Example: `  openrecall analyze examples/queue.jsonl
  openrecall analyze -o jsonl --workers 4 queue.jsonl > results.jsonl
  openrecall analyze --format alertmanager -o json - < webhook.json
  openrecall analyze --budget-usd 0.50 queue.jsonl`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.workers < 1 {
				return usageErr("--workers %d: want at least 1", opts.workers)
			}
			if opts.budgetUSD < 0 {
				return usageErr("--budget-usd %v: want a non-negative amount", opts.budgetUSD)
			}
			opts.budgetSet = cmd.Flags().Changed("budget-usd")
			return analyzeRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	addOutputFlag(cmd, &opts.output)
	f.StringVar(&opts.format, "format", "auto", "input format: auto, jsonl, json, alertmanager, prometheus, pagerduty, text, or a sender's name (openrecall senders list)")
	f.IntVar(&opts.workers, "workers", 1, "alerts analysed concurrently (results stay in input order)")
	f.Float64Var(&opts.budgetUSD, "budget-usd", 0, "cap on model spend for this run in dollars (0: the config's budget_usd)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML) laid over the embedded rules")
	f.StringVar(&opts.senders, "senders", "", sendersFlagUsage)
	f.BoolVar(&opts.noGrouping, "no-grouping", false, "triage every firing alone: no alert groups (the config's grouping.enabled)")
	a.modelFlags.bind(f)
	f.StringVar(&opts.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	_ = f.MarkHidden("cpuprofile")
	f.StringVar(&opts.memProfile, "memprofile", "", "write an allocation profile of the run to this file and its malloc count to stderr")
	_ = f.MarkHidden("memprofile")
	f.BoolVar(&opts.cacheStats, "cache-stats", false, "print the run's cache hit rates on stderr")
	_ = f.MarkHidden("cache-stats")
	f.BoolVar(&opts.noCache, "no-cache", false, "turn the fingerprint and recall caches off")
	_ = f.MarkHidden("no-cache")
	return cmd
}

// recallCacheEntries bounds the recall cache of one analyze run (two
// generations of this many keys, each a few incidents).
const recallCacheEntries = 4096

// recallRecheck is how often an analyze run asks SQLite whether another
// process changed the memory (PRAGMA data_version).
const recallRecheck = 5 * time.Millisecond

// startCPUProfile starts a CPU profile written to path and returns the
// function that stops it and closes the file.
func startCPUProfile(path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close() // the start error says what went wrong
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

// startMemProfile records every allocation from here on, notes the process's
// malloc count and returns the function
// that writes the allocation profile to path and prints the mallocs and bytes
// allocated since the start on w.
func startMemProfile(path string, w io.Writer) func() error {
	runtime.MemProfileRate = 1 // every allocation: counts are exact, not sampled
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	return func() error {
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		fmt.Fprintf(w, "memprofile: %d mallocs, %d bytes allocated\n",
			after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc)
		// The profile is published at the end of a garbage collection: without
		// one here it would miss what the run allocated since the last.
		runtime.GC()
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			_ = f.Close() // the write error says what went wrong
			return fmt.Errorf("--memprofile: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		return nil
	}
}

// openInput opens FILE, or standard input for "" and "-".
func (a *app) openInput(name string) (io.ReadCloser, string, error) {
	if name == "" || name == "-" {
		return io.NopCloser(a.in), "-", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, "", err
	}
	return f, name, nil
}

func analyzeRun(ctx context.Context, a *app, opts *analyzeOptions) (err error) {
	if opts.cpuProfile != "" {
		stop, err := startCPUProfile(opts.cpuProfile)
		if err != nil {
			return err
		}
		defer func() {
			if serr := stop(); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	if opts.memProfile != "" {
		stop := startMemProfile(opts.memProfile, a.errOut)
		defer func() {
			if serr := stop(); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	senders, err := a.senders(cfg, opts.senders)
	if err != nil {
		return err
	}
	format, err := intake.ParseFormatIn(opts.format, senders)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	if opts.budgetSet {
		cfg.BudgetUSD = opts.budgetUSD
	}
	if opts.noGrouping {
		cfg.Grouping.Enabled = false
	}
	route, routeName, err := pagesRoute(cfg)
	if err != nil {
		return err
	}
	in, source, err := a.openInput(opts.input)
	if err != nil {
		return err
	}
	defer a.closeLogged("input", in)

	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	// The run's recalls repeat (a queue re-sends and re-fires the same
	// rules): cache them for this run; any retain, here or (seen within
	// recallRecheck) by another process, empties the cache. The existence
	// index, which answers a recall that would find nothing without its
	// query, stays on under --no-cache: it keeps no answers, and the miss
	// path is the one it serves.
	if opts.noCache {
		a.noFingerprintCache = true
		st.EnableRecallIndex(recallRecheck)
	} else {
		st.EnableRecallCache(recallCacheEntries, recallRecheck)
	}
	defer batchGC()()

	var budget *routing.Budget
	if b := cfg.Budget(); b > 0 {
		budget = routing.NewBudget(b)
	}
	// Each result's document is encoded once: the sink stores it and the
	// writer prints it (AnalyzeQueue emits a batch after persisting it).
	docs := new(jsonfast.Docs)
	wf, err := a.newWorkflow(ctx, cfg, st, opts.rules, budget, true, docs)
	if err != nil {
		return err
	}

	w := newResultWriter(opts.output, a.out, wf, docs)
	if err := w.begin(); err != nil {
		return err
	}
	prog := newProgress(a.rawErrOut, a.stderrTTY, a.now)
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			prog.total = fi.Size()
		}
	}
	rejects := &rejectReporter{w: a.errOut, limit: 20}
	// Results come in input order: a webhook's firings one after another.
	pages := notify.NewPageCounter(route)
	emit := func(r openrecall.Result) error {
		rejects.report(r)
		pages.Add(r)
		return w.write(r)
	}
	// The queue is read here, with the run's senders, into records.
	records := workflow.Records(intake.NewReader(&countingReader{r: in, n: &prog.read},
		intake.Options{Format: format, Source: source, Senders: senders}))
	sum, runErr := usecase.Analyze(ctx, wf, usecase.AnalyzeRequest{
		Queue:   usecase.Queue{Source: records},
		Options: workflow.QueueOptions{Workers: opts.workers, Progress: prog.update, BatchDone: w.flush},
	}, emit)
	rejects.finish()
	prog.clear()
	if err := w.end(sum, pages.Pages()); err != nil && runErr == nil {
		runErr = err
	}
	if opts.cacheStats {
		defer fmt.Fprintf(a.errOut, "cache stats: %s\n", wf.CacheStats())
	}
	if runErr != nil {
		printSummary(a.errOut, sum, budget, pages.Pages(), routeName)
		return runErr
	}
	if sum.Records == 0 {
		return noAlerts(source)
	}
	printSummary(a.errOut, sum, budget, pages.Pages(), routeName)
	if sum.Rejected > 0 {
		return &exitError{code: exitPartial}
	}
	if sum.Unanalysed > 0 {
		return &exitError{code: exitUnanalysed}
	}
	return nil
}

// noAlerts is the error of a command whose input held no alert at all
// (an empty file, or only blank and comment lines): exit status 3.
func noAlerts(source string) error {
	if source == "-" {
		source = "standard input"
	}
	return &exitError{code: exitPartial, err: fmt.Errorf("no alerts in %s", source)}
}

// resultWriter streams results to stdout in one of the output formats.
// Results are buffered and flushed after each persisted batch (flush), so
// a batch costs one write, and at the end. A result's JSON is read from
// docs, the documents of the batch the sink persisted last.
type resultWriter struct {
	format string
	w      *bufio.Writer
	buf    []byte // one result's encoding, reused
	n      int
	mode   openrecall.Mode
	docs   *jsonfast.Docs
}

func newResultWriter(format string, w io.Writer, wf *workflow.Workflow, docs *jsonfast.Docs) *resultWriter {
	return &resultWriter{format: format, w: bufio.NewWriterSize(w, 64<<10), mode: wf.Mode(), docs: docs}
}

// flush writes out the buffered results.
func (rw *resultWriter) flush() error { return rw.w.Flush() }

func (rw *resultWriter) begin() error {
	if rw.format != outputJSON {
		return nil
	}
	_, err := fmt.Fprintf(rw.w, "{\"mode\":%s,\"results\":[\n", mustJSON(rw.mode))
	return err
}

func (rw *resultWriter) write(r openrecall.Result) error {
	defer func() { rw.n++ }()
	switch rw.format {
	case outputJSONL:
		// What an Encoder without HTML escaping writes, newline included.
		b, err := rw.docs.Append(rw.buf[:0], &r, r.Audit, false)
		if err != nil {
			return err
		}
		rw.buf = append(b, '\n')
		_, err = rw.w.Write(rw.buf)
		return err
	case outputJSON:
		// What json.Marshal writes, after the separator.
		b := rw.buf[:0]
		if rw.n > 0 {
			b = append(b, ",\n"...)
		}
		b, err := rw.docs.Append(b, &r, r.Audit, true)
		if err != nil {
			return err
		}
		rw.buf = b
		_, err = rw.w.Write(b)
		return err
	}
	// The table's header waits for the first result: no alerts, no table.
	if rw.n == 0 {
		if _, err := fmt.Fprintf(rw.w, "%-16s %-24s %-14s %-13s %-10s %-10s %-12s %s\n",
			"POSITION", "ALERT", "DECISION", "ROUTE", "COST", "BASELINE", "FINGERPRINT", "SUMMARY"); err != nil {
			return err
		}
	}
	pos := r.Position
	pos.Source = ""
	decision, summary := string(r.Decision), r.Alert.Title
	fpID := r.FingerprintID
	switch r.Outcome {
	case openrecall.ResultRejected:
		decision, summary, fpID = "-", "rejected: "+r.Error, "-"
	case openrecall.ResultResolved:
		decision, summary = "-", "resolved: recorded, not triaged"
	}
	if summary == "" {
		summary = r.Alert.Text
	}
	_, err := fmt.Fprintf(rw.w, "%-16s %-24s %-14s %-13s %-10s %-10s %-12s %s\n",
		clip(pos.String(), 16), clip(r.Alert.ID, 24), decision, routeName(r),
		r.Cost, r.Baseline, fpID, clip(oneLine(summary), 80))
	return err
}

// end closes the JSON document with the run's summary and its pages.
func (rw *resultWriter) end(sum workflow.Summary, pages notify.Pages) error {
	if rw.format == outputJSON {
		if _, err := fmt.Fprintf(rw.w, "\n],\"summary\":%s,\"pages\":%s}\n", mustJSON(sum), mustJSON(pages)); err != nil {
			return err
		}
	}
	return rw.flush()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// routeName names the path a result took, for the table.
func routeName(r openrecall.Result) string {
	switch r.Outcome {
	case openrecall.ResultRejected:
		return "rejected"
	case openrecall.ResultResolved:
		return "recorded"
	}
	if r.Bypassed {
		return "memory-bypass"
	}
	if r.Grouped() {
		return "grouped"
	}
	if r.Excepted() {
		return "exception"
	}
	var tiers []string
	for _, s := range r.Steps {
		if s.Step != openrecall.StepAnalysis {
			continue
		}
		if s.Outcome == openrecall.OutcomeBudgetExceeded {
			tiers = append(tiers, "budget")
			continue
		}
		tiers = append(tiers, string(s.Tier))
	}
	if len(tiers) == 0 {
		return "-"
	}
	return strings.Join(tiers, ">")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// printSummary prints the run's summary for people: pages are those the
// firings made without openrecall and with it, over the route named
// route.
func printSummary(w io.Writer, s workflow.Summary, budget *routing.Budget, pages notify.Pages, route string) {
	live := "no live model calls"
	if s.LiveCalls > 0 {
		live = fmt.Sprintf("%d live model calls", s.LiveCalls)
	}
	fmt.Fprintf(w, "\nopenrecall analyze  %s (%s)  batch %s\n", s.Mode, live, s.Batch)
	fmt.Fprintf(w, "  records   %d: %d triaged, %d resolved (recorded), %d rejected\n", s.Records, s.Triaged, s.Resolved, s.Rejected)
	if s.Dropped > 0 {
		fmt.Fprintf(w, "  dropped   %d alerts left out by their senders (truncatedAlerts): never received, never triaged\n", s.Dropped)
	}
	fmt.Fprintf(w, "  decisions %s\n", countList(s.Decisions))
	calls := make(map[string]int, len(s.ModelCalls))
	for k, v := range s.ModelCalls {
		calls[k] = v
	}
	fmt.Fprintf(w, "  bypasses  %d memory bypasses (no model call); model calls: %s\n", s.Bypassed, countList(calls))
	if s.Groups > 0 || s.Grouped > 0 {
		fmt.Fprintf(w, "  groups    %d alert groups opened; %d firings grouped under their head (no model call, the head's decision), saving %s\n",
			s.Groups, s.Grouped, s.GroupedSaved)
	}
	if s.Excepted > 0 || s.Proposals > 0 {
		fmt.Fprintf(w, "  exceptions %d alerts closed by an exception a person approved (no model call), saving %s; %d proposed exceptions ('openrecall exception proposals')\n",
			s.Excepted, s.ExceptedSaved, s.Proposals)
	}
	fmt.Fprintf(w, "  cost      %s; baseline %s (the strong model on every analysed alert, at its expected completion)\n", s.Cost, s.Baseline)
	fmt.Fprintf(w, "  savings   %s = %.1f%% of the baseline of the %d analysed alerts (bypasses, group members, exception matches and passing cheap answers only)\n",
		s.Savings(), s.SavingsPercent(), s.Triaged-s.Unanalysed)
	fmt.Fprintf(w, "  pages     %s; %d firings: one page each, or one per Alertmanager notification, without openrecall; with it, %d notifications by %s\n",
		pages, pages.Firings, pages.Notifications, route)
	if s.Unanalysed > 0 {
		fmt.Fprintf(w, "  escalated without analysis  %d alerts (no model answered: budget spent or model unavailable); not counted as savings\n", s.Unanalysed)
	}
	if budget != nil {
		bs := budget.State()
		fmt.Fprintf(w, "  budget    %s spent of %s\n", bs.Spent, bs.Limit)
	}
}

func countList[K ~string](m map[K]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[K(k)]))
	}
	return strings.Join(parts, ", ")
}

// progress shows a one-line progress bar on stderr for long queues, only
// when stderr is a terminal: a bar over the bytes read when the input is a
// regular file of known size, a counter otherwise.
type progress struct {
	w       io.Writer
	on      bool
	now     func() time.Time
	start   time.Time
	last    time.Time
	printed bool
	total   int64        // input size in bytes, 0 when unknown
	read    atomic.Int64 // bytes read so far, updated by countingReader
}

func newProgress(w io.Writer, tty bool, now func() time.Time) *progress {
	t := now()
	return &progress{w: w, on: tty, now: now, start: t, last: t}
}

func (p *progress) update(done int) {
	if !p.on {
		return
	}
	t := p.now()
	if t.Sub(p.start) < time.Second || t.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = t
	fmt.Fprint(p.w, "\r\033[K"+progressLine(done, p.read.Load(), p.total, t.Sub(p.start)))
	p.printed = true
}

// progressLine renders the progress line: a 30-column bar and percentage
// when total is known, then the count and the rate.
func progressLine(done int, read, total int64, elapsed time.Duration) string {
	rate := float64(done) / max(elapsed.Seconds(), 1e-9)
	counter := fmt.Sprintf("%d records (%.0f/s)", done, rate)
	if total <= 0 {
		return "  analysed " + counter
	}
	frac := min(float64(read)/float64(total), 1)
	const width = 30
	filled := int(frac * width)
	return fmt.Sprintf("  [%s%s] %3.0f%%  %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), 100*frac, counter)
}

func (p *progress) clear() {
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// rejectReporter echoes rejected records on stderr, where a person sees them
// whatever the output format, up to a limit so a broken feed does not flood
// the terminal.
type rejectReporter struct {
	w     io.Writer
	limit int
	n     int
}

func (rr *rejectReporter) report(r openrecall.Result) {
	if r.Outcome != openrecall.ResultRejected {
		return
	}
	rr.n++
	if rr.n <= rr.limit {
		fmt.Fprintf(rr.w, "openrecall: rejected %s: %s\n", r.Position, r.Error)
	}
}

func (rr *rejectReporter) finish() {
	if rr.n > rr.limit {
		fmt.Fprintf(rr.w, "openrecall: … and %d more rejected records (see the results)\n", rr.n-rr.limit)
	}
}
