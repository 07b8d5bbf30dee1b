package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/internal/jsonfast"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// Exit codes: one table for every command (DESIGN §11), documented in
// README.md and in the root command's help.
const (
	exitOK          = 0 // success
	exitFailure     = 1 // nothing, or not everything, could be done
	exitUsage       = 2 // bad flags, arguments or command
	exitPartial     = 3 // some input records were rejected, or the input held no alerts
	exitTampered    = 4 // audit verify found an edited or deleted entry
	exitUnsafeEval  = 5 // eval found alerts whose truth is real or an attack bypassed
	exitUnanalysed  = 6 // some alerts were escalated without analysis (budget spent, model unavailable)
	exitInterrupted = 130
)

// exitTable lists the exit codes in precedence order: when several apply,
// the first one listed is the status. Help text and README are written
// from it.
var exitTable = []struct {
	code    int
	short   string // a few words, for every command's help footer
	meaning string
}{
	{exitUsage, "usage", "usage error: unknown command, bad flags or arguments"},
	{exitFailure, "failure", "failure: nothing, or not everything, could be done"},
	{exitTampered, "tampered", "audit trail tampered (audit verify)"},
	{exitUnsafeEval, "unsafe eval", "eval found an unsafe bypass"},
	{exitPartial, "rejected input or no alerts", "some input records were rejected, or the input held no alerts"},
	{exitUnanalysed, "escalated without analysis", "some alerts were escalated without analysis (budget spent or model unavailable)"},
	{exitOK, "success", "success"},
	{exitInterrupted, "interrupted", "interrupted (SIGINT or SIGTERM)"},
}

// firstExit returns, of the codes that apply, the one the exit table lists
// first; exitOK when none is given.
func firstExit(codes ...int) int {
	for _, row := range exitTable {
		for _, c := range codes {
			if c == row.code {
				return c
			}
		}
	}
	return exitOK
}

// exitTableText renders the exit table for help output.
func exitTableText(indent string) string {
	var b strings.Builder
	for _, row := range exitTable {
		fmt.Fprintf(&b, "%s%-4d %s\n", indent, row.code, row.meaning)
	}
	return b.String()
}

// exitError carries an exit code; a nil err means nothing more to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// streams are the command's standard streams; tests use buffers.
type streams struct {
	in        io.Reader
	out       io.Writer
	errOut    io.Writer
	stderrTTY bool
	// rawErrOut is errOut before sanitizing, for the progress line.
	rawErrOut io.Writer
}

func newStreams(in *os.File, out, errOut *os.File) streams {
	return streams{in: in, out: out, errOut: errOut, stderrTTY: term.IsTerminal(int(errOut.Fd()))}
}

// app holds the global options and builds the dependencies commands need.
type app struct {
	streams
	dbPath     string
	configPath string
	logLevel   string
	logFormat  string
	log        *zap.Logger
	now        func() time.Time
	// auditKeyFile overrides where the audit key file is (tests); empty
	// means $OPENRECALL_AUDIT_KEY_FILE or the user's config directory.
	auditKeyFile string
	// newBatch names a run; nil means the time plus a random suffix, so two
	// runs started in the same microsecond still get their own cost curves.
	newBatch func() string
	// modelFlags are the provider flags of analyze, eval and serve.
	modelFlags modelFlags
	// noFingerprintCache builds extractors without their cache (analyze's
	// hidden --no-cache).
	noFingerprintCache bool
	// cheapCircuit and strongCircuit, when set, watch every call of the
	// tiers the routers make (serve's /readyz and metrics).
	cheapCircuit, strongCircuit *routing.Circuit
}

func (a *app) batchName() string {
	if a.newBatch != nil {
		return a.newBatch()
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "run-" + a.now().UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(b[:])
}

func (a *app) setupLogger() error {
	lvl, err := zapcore.ParseLevel(a.logLevel)
	if err != nil {
		return usageErr("--log-level %q: want debug, info, warn or error", a.logLevel)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch a.logFormat {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return usageErr("--log-format %q: want console or json", a.logFormat)
	}
	a.log = zap.New(zapcore.NewCore(enc, zapcore.AddSync(a.errOut), lvl))
	return nil
}

// closeLogged closes c, a store or an input file, when a command ends.
// Every write was committed or flushed before, so a failure loses nothing:
// it is logged, not made the command's error.
func (a *app) closeLogged(what string, c io.Closer) {
	if err := c.Close(); err != nil && a.log != nil {
		a.log.Warn("close "+what, zap.Error(err))
	}
}

func (a *app) syncLogger() {
	if a.log != nil {
		// Terminals and pipes answer Sync with EINVAL; nothing to report.
		_ = a.log.Sync()
	}
}

func (a *app) config() (config.Config, error) {
	cfg, err := config.Load(a.configPath)
	if err != nil {
		return config.Config{}, err
	}
	if err := a.modelFlags.apply(&cfg); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// senders returns the senders a command reads alerts with (DESIGN §3,
// "Senders as data"): the built-in ones, with the mapping files of dir
// (--senders), else of the configuration's senders.dir, merged over them.
// No directory: the built-ins alone. A directory that does not exist and a
// bad mapping file are errors at start that name them (exit 1, as any bad
// configuration).
func (a *app) senders(cfg config.Config, dir string) (sender.Set, error) {
	set, _, err := a.loadSenders(cfg, dir)
	return set, err
}

// loadSenders is senders, with the file each added sender came from, by
// name.
func (a *app) loadSenders(cfg config.Config, dir string) (sender.Set, map[string]string, error) {
	sc, key := cfg.Senders, "senders.dir"
	if dir != "" {
		sc, key = config.Senders{Dir: dir}, "--senders"
	}
	if sc.Dir == "" {
		return sender.Set{}, nil, nil
	}
	if err := sc.ValidateAs(key); err != nil {
		return sender.Set{}, nil, err
	}
	extra, err := sender.LoadMappings(sc.Path())
	if err != nil {
		return sender.Set{}, nil, fmt.Errorf("%s %s: %w", key, sc.Dir, err)
	}
	set, err := sender.Merge(sender.All(), extra)
	if err != nil {
		return sender.Set{}, nil, fmt.Errorf("%s %s: %w", key, sc.Dir, err)
	}
	if a.log != nil {
		a.log.Debug("senders loaded", zap.String("dir", sc.Dir), zap.Int("mappings", len(extra)))
	}
	return set, mappingFiles(sc.Dir, extra), nil
}

// mappingFiles names the file each sender of extra came from: LoadMappings
// reads one sender from each mapping file of dir, in name order. When the
// files do not pair with the senders, each is named by dir alone.
func mappingFiles(dir string, extra []sender.Sender) map[string]string {
	out := make(map[string]string, len(extra))
	var files []string
	if entries, err := os.ReadDir(expandHome(dir)); err == nil {
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	for i, s := range extra {
		out[s.Name] = dir
		if len(files) == len(extra) {
			out[s.Name] = files[i]
		}
	}
	return out
}

// configSenders loads the configuration and returns its senders.
func (a *app) configSenders() (sender.Set, error) {
	cfg, err := a.config()
	if err != nil {
		return sender.Set{}, err
	}
	return a.senders(cfg, "")
}

// resolveDB picks the database path: --db, then OPENRECALL_DB, then the
// config file, then the user's data directory.
func (a *app) resolveDB(cfg config.Config) (string, error) {
	switch {
	case a.dbPath != "":
		return a.dbPath, nil
	case os.Getenv("OPENRECALL_DB") != "":
		return os.Getenv("OPENRECALL_DB"), nil
	case cfg.DB != "":
		return expandHome(cfg.DB), nil
	}
	return config.DefaultDBPath()
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}

// openStore opens the memory database for writing, creating it when
// missing. memory.Open's errors already name the file.
func (a *app) openStore(ctx context.Context, cfg config.Config) (*memory.Store, error) {
	return a.openDB(ctx, cfg, false)
}

// openReadStore opens an existing memory database read-only: no file or
// directory is created, nothing is migrated, no write lock is taken.
func (a *app) openReadStore(ctx context.Context, cfg config.Config) (*memory.Store, error) {
	return a.openDB(ctx, cfg, true)
}

func (a *app) openDB(ctx context.Context, cfg config.Config, readOnly bool) (*memory.Store, error) {
	path, err := a.resolveDB(cfg)
	if err != nil {
		return nil, err
	}
	st, err := memory.Open(ctx, path, memory.Options{Logger: a.log, Now: a.now, ReadOnly: readOnly})
	if err != nil || readOnly {
		return st, err
	}
	return a.sealRows(ctx, st)
}

// sealRows makes a writing store seal its memories, waiting rows and
// results and bind them to the audit chain under the trail's key (DESIGN
// §9), adopting the rows stored before; it closes st on failure.
func (a *app) sealRows(ctx context.Context, st *memory.Store) (*memory.Store, error) {
	sealer, err := a.sealer(ctx, st)
	if err == nil {
		err = st.SealRows(ctx, memory.RowSealer{KeyID: sealer.KeyID(), Seal: sealer.Seal, Row: sealer.RowSeal, Sealing: sealer.SealingMAC})
	}
	if err != nil {
		_ = st.Close() // the sealing error is the one to report
		return nil, err
	}
	return st, nil
}

// openServeStore opens the memory database for serve: its inbox claims are
// made as instance and last lease.
func (a *app) openServeStore(ctx context.Context, cfg config.Config, instance string, lease time.Duration) (*memory.Store, error) {
	path, err := a.resolveDB(cfg)
	if err != nil {
		return nil, err
	}
	st, err := memory.Open(ctx, path, memory.Options{Logger: a.log, Now: a.now, Instance: instance, Lease: lease})
	if err != nil {
		return nil, err
	}
	return a.sealRows(ctx, st)
}

// store loads the configuration and opens the memory database it names
// for writing.
func (a *app) store(ctx context.Context) (*memory.Store, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	return a.openStore(ctx, cfg)
}

// readStore loads the configuration and opens the memory database it
// names read-only.
func (a *app) readStore(ctx context.Context) (*memory.Store, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	return a.openReadStore(ctx, cfg)
}

// configStore loads the configuration and opens the memory database it
// names (read-only when readOnly), returning both.
func (a *app) configStore(ctx context.Context, readOnly bool) (config.Config, *memory.Store, error) {
	cfg, err := a.config()
	if err != nil {
		return config.Config{}, nil, err
	}
	st, err := a.openDB(ctx, cfg, readOnly)
	return cfg, st, err
}

func (a *app) extractor(cfg config.Config, rulesFlag string) (*fingerprint.Extractor, error) {
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		return nil, err
	}
	for _, path := range []string{cfg.Rules, rulesFlag} {
		if path == "" {
			continue
		}
		f, err := os.Open(expandHome(path))
		if err != nil {
			return nil, fmt.Errorf("rules: %w", err)
		}
		extra, err := fingerprint.LoadRules(f, path)
		_ = f.Close() // read to the end already; closing a read-only file loses nothing
		if err != nil {
			return nil, err
		}
		rules = rules.Merge(extra)
	}
	ex, err := fingerprint.New(rules)
	if err == nil && a.noFingerprintCache {
		ex.DisableCache()
	}
	return ex, err
}

// router builds the model cascade of the configured provider: the
// deterministic local analyst, or models on an OpenAI-compatible server.
func (a *app) router(cfg config.Config, budget *routing.Budget) (*routing.Router, openrecall.Mode, error) {
	cheap, strong, mode, err := a.models(cfg)
	if err != nil {
		return nil, mode, err
	}
	if a.cheapCircuit != nil && a.strongCircuit != nil {
		cheap, strong = a.cheapCircuit.Wrap(cheap), a.strongCircuit.Wrap(strong)
	}
	return newRouter(cfg, cheap, strong, budget, a.now, mode)
}

// newRouter builds a router over two tiers with the configuration's prices,
// token limits and gate.
func newRouter(cfg config.Config, cheap, strong routing.Model, budget *routing.Budget, now func() time.Time, mode openrecall.Mode) (*routing.Router, openrecall.Mode, error) {
	r, err := routing.New(routerConfig(cfg, cheap, strong, budget, now, nil))
	if err != nil {
		return nil, mode, err
	}
	return r, mode, nil
}

// routerConfig is the routing configuration of cfg over two tiers.
func routerConfig(cfg config.Config, cheap, strong routing.Model, budget *routing.Budget, now func() time.Time,
	completions func() (int, bool, error)) routing.Config {
	return routing.Config{
		Cheap:                    cheap,
		Strong:                   strong,
		Prices:                   cfg.PriceTable(),
		CheapMaxTokens:           cfg.Models.CheapMaxTokens,
		StrongMaxTokens:          cfg.Models.StrongMaxTokens,
		ExpectedCompletionTokens: cfg.Models.StrongExpectedCompletionTokens,
		Completions:              completions,
		GateConfidence:           cfg.Triage.GateConfidence,
		Vet:                      triage.Vet,
		Budget:                   budget,
		Now:                      now,
	}
}

// pricedRouter builds the model cascade for a run over st. The strong
// model's expected completion is the running mean of the strong
// completions this memory has recorded, frozen now for the whole run (so
// --workers N prices as a sequential run does); the configured default
// holds until there is one.
func (a *app) pricedRouter(ctx context.Context, cfg config.Config, st *memory.Store, budget *routing.Budget) (*routing.Router, openrecall.Mode, error) {
	r, mode, err := a.router(cfg, budget)
	mode.Memory = st.Backend() // the mode names the memory the run really has
	if err != nil {
		return nil, mode, err
	}
	seen, err := st.StrongCompletions(ctx, r.StrongPricedAs())
	if err != nil {
		return nil, mode, err
	}
	if mean, ok := seen.Mean(); ok && mean != cfg.Models.StrongExpectedCompletionTokens {
		cfg.Models.StrongExpectedCompletionTokens = mean
		r, _, err = a.router(cfg, budget)
	}
	return r, mode, err
}

// dailyRouter builds serve's model cascade over st: one router for the life
// of the process whose strong model is priced, each UTC day, at the mean
// of the strong completions this memory has recorded by then
// (routing.Config.Completions); the configured default holds until there
// is one.
func (a *app) dailyRouter(ctx context.Context, cfg config.Config, st *memory.Store, budget *routing.Budget) (*routing.Router, openrecall.Mode, error) {
	cheap, strong, mode, err := a.models(cfg)
	mode.Memory = st.Backend() // the mode names the memory the run really has
	if err != nil {
		return nil, mode, err
	}
	if a.cheapCircuit != nil && a.strongCircuit != nil {
		cheap, strong = a.cheapCircuit.Wrap(cheap), a.strongCircuit.Wrap(strong)
	}
	var priced string
	completions := func() (int, bool, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		seen, err := st.StrongCompletions(rctx, priced)
		if err != nil {
			a.log.Warn("read the strong completions; the strong model keeps its last price", zap.Error(err))
			return 0, false, err
		}
		n, ok := seen.Mean()
		return n, ok, nil
	}
	r, err := routing.New(routerConfig(cfg, cheap, strong, budget, a.now, completions))
	if err != nil {
		return nil, mode, err
	}
	priced = r.StrongPricedAs()
	return r, mode, nil
}

// newWorkflow wires the whole pipeline over an open store; with persist,
// its sink leaves each batch's result documents in docs (when not nil) for
// the caller that prints the batch.
func (a *app) newWorkflow(ctx context.Context, cfg config.Config, st *memory.Store, rulesFlag string, budget *routing.Budget, persist bool, docs *jsonfast.Docs) (*workflow.Workflow, error) {
	ex, err := a.extractor(cfg, rulesFlag)
	if err != nil {
		return nil, err
	}
	r, mode, err := a.pricedRouter(ctx, cfg, st, budget)
	if err != nil {
		return nil, err
	}
	root := a.root(cfg, st, ex, compose.Batch(a.batchName()), compose.OrderedRouting(budget != nil))
	var sink workflow.Sink
	if persist {
		s, err := root.Sink(ctx)
		if err != nil {
			return nil, err
		}
		// A writing command records the exception expiries due first
		// (actor system; DESIGN §6b).
		if err := root.UseCases.RecordExpiries(ctx); err != nil {
			return nil, err
		}
		s.Docs = docs
		sink = s
	}
	return root.Pipeline(r, mode, sink)
}

// root is the composition root over st as the command wires it: the
// trail sealed with the user's audit key, found only when something is
// written, fingerprinting with ex (nil when no alert is fingerprinted).
func (a *app) root(cfg config.Config, st *memory.Store, ex *fingerprint.Extractor, opts ...compose.Option) *compose.Root {
	base := []compose.Option{
		compose.Sealer(func(ctx context.Context) (audit.Sealer, error) { return a.sealer(ctx, st) }),
		compose.Keys(trailKeys{a: a, db: st.Path()}),
	}
	if ex != nil {
		base = append(base, compose.Fingerprinter(ex))
	}
	return compose.Open(cfg, st, a.now, a.log, append(base, opts...)...)
}

// useCases is the application layer over st: retain, supersede, forget,
// recall and the audit trail's verification and head, fingerprinting with
// ex (nil when no alert is fingerprinted). A decision taken back is
// audited with the trail's key.
func (a *app) useCases(cfg config.Config, st *memory.Store, ex *fingerprint.Extractor) *usecase.App {
	return a.root(cfg, st, ex).UseCases
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, s streams) int {
	a := &app{streams: s, now: func() time.Time { return time.Now().UTC() }}
	return a.execute(ctx, args)
}

func (a *app) execute(ctx context.Context, args []string) int {
	// Everything printed passes through the one sanitizer, so stored or
	// input text cannot steer the terminal; the progress line alone writes
	// its own control sequences, to the raw stream. Standard output also
	// remembers its first write failure (a full disk is exit 1, not 0).
	stdout := &stickyWriter{w: a.out}
	a.rawErrOut = a.errOut
	out, errOut := &safeWriter{w: stdout}, &safeWriter{w: a.errOut}
	a.out, a.errOut = out, errOut
	defer func() { _ = out.Flush(); _ = errOut.Flush() }()
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	cmd, err := root.ExecuteContextC(ctx)
	defer a.syncLogger()
	code := a.exitCode(ctx, cmd, err)
	if stdout.err != nil && !errors.Is(err, stdout.err) {
		fmt.Fprintf(a.errOut, "openrecall: write standard output: %v\n", stdout.err)
		code = firstExit(code, exitFailure)
	}
	return code
}

// exitCode reports err once on stderr and maps it to the exit table.
func (a *app) exitCode(ctx context.Context, cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	code := exitFailure
	switch {
	case errors.As(err, &ee):
		code = ee.code
		if ee.err == nil {
			return code
		}
	case ctx.Err() != nil:
		code = exitInterrupted
	}
	fmt.Fprintf(a.errOut, "openrecall: %v\n", err)
	if code == exitUsage {
		path := "openrecall"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(a.errOut, "Run '%s --help' for usage.\n", path)
	}
	return code
}
