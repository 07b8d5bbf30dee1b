package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/workflow"
)

// Exit codes, documented in README.md.
const (
	exitOK          = 0 // success
	exitFailure     = 1 // the command failed (I/O, database, configuration)
	exitUsage       = 2 // bad flags or arguments
	exitPartial     = 3 // finished, but some input records were rejected
	exitTampered    = 4 // audit verify found an edited or deleted entry
	exitInterrupted = 130
)

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
	// newBatch names a run; nil means the time plus a random suffix, so two
	// runs started in the same microsecond still get their own cost curves.
	newBatch func() string
	// modelFlags are the provider flags of analyze and eval.
	modelFlags modelFlags
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

func (a *app) openStore(ctx context.Context, cfg config.Config) (*memory.Store, error) {
	path, err := a.resolveDB(cfg)
	if err != nil {
		return nil, err
	}
	st, err := memory.Open(ctx, path, memory.Options{Logger: a.log, Now: a.now})
	if err != nil {
		return nil, fmt.Errorf("open memory %s: %w", path, err)
	}
	return st, nil
}

// store loads the configuration and opens the memory database it names.
func (a *app) store(ctx context.Context) (*memory.Store, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	return a.openStore(ctx, cfg)
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
		f.Close()
		if err != nil {
			return nil, err
		}
		rules = rules.Merge(extra)
	}
	return fingerprint.New(rules)
}

// router builds the model cascade of the configured provider: the
// deterministic local analyst, or models on an OpenAI-compatible server.
func (a *app) router(cfg config.Config, budget *routing.Budget) (*routing.Router, openrecall.Mode, error) {
	cheap, strong, mode, err := a.models(cfg)
	if err != nil {
		return nil, mode, err
	}
	return newRouter(cfg, cheap, strong, budget, a.now, mode)
}

// newRouter builds a router over two tiers with the configuration's prices,
// token limits and gate.
func newRouter(cfg config.Config, cheap, strong routing.Model, budget *routing.Budget, now func() time.Time, mode openrecall.Mode) (*routing.Router, openrecall.Mode, error) {
	r, err := routing.New(routing.Config{
		Cheap:                cheap,
		Strong:               strong,
		Prices:               cfg.PriceTable(),
		CheapMaxTokens:       cfg.Models.CheapMaxTokens,
		StrongMaxTokens:      cfg.Models.StrongMaxTokens,
		FingerprintMaxTokens: cfg.Models.FingerprintMaxTokens,
		GateConfidence:       cfg.Triage.GateConfidence,
		Vet:                  triage.Vet,
		Budget:               budget,
		Now:                  now,
	})
	if err != nil {
		return nil, mode, err
	}
	return r, mode, nil
}

// newWorkflow wires the whole pipeline over an open store.
func (a *app) newWorkflow(cfg config.Config, st *memory.Store, rulesFlag string, budget *routing.Budget, persist bool) (*workflow.Workflow, error) {
	ex, err := a.extractor(cfg, rulesFlag)
	if err != nil {
		return nil, err
	}
	r, mode, err := a.router(cfg, budget)
	if err != nil {
		return nil, err
	}
	wc := workflow.Config{
		Fingerprinter:  ex,
		Memory:         st,
		Router:         r,
		Triage:         cfg.TriageConfig(),
		Mode:           mode,
		Batch:          a.batchName(),
		OrderedRouting: budget != nil,
		Now:            a.now,
		Logger:         a.log,
	}
	if persist {
		wc.Sink = memory.Sink{Store: st, Seal: audit.Seal}
	}
	return workflow.New(wc)
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, s streams) int {
	a := &app{streams: s, now: func() time.Time { return time.Now().UTC() }}
	return a.execute(ctx, args)
}

func (a *app) execute(ctx context.Context, args []string) int {
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	err := root.ExecuteContext(ctx)
	defer a.syncLogger()
	return a.exitCode(ctx, err)
}

func (a *app) exitCode(ctx context.Context, err error) int {
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
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"),
		strings.HasPrefix(err.Error(), "unknown shorthand flag"):
		code = exitUsage
	}
	fmt.Fprintf(a.errOut, "openrecall: %v\n", err)
	if code == exitUsage {
		fmt.Fprintln(a.errOut, "Run 'openrecall --help' for usage.")
	}
	return code
}
