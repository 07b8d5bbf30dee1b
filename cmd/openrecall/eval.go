package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/eval"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// Defaults of `openrecall eval`, the figures `make eval` reports.
const (
	evalDefaultSeed = 20260101
	evalDefaultSize = 2400
)

type evalOptions struct {
	corpus string
	seed   uint64
	size   int
	output string
	modes  bool
	rules  string
	// noGrouping replays every firing alone (no alert groups).
	noGrouping bool
	// wire, when not nil, adjusts each mode's workflow configuration
	// before the workflow is built. Only tests set it, to prove that an
	// unsafe guard is caught.
	wire func(*workflow.Config)
}

func newEvalCmd(a *app) *cobra.Command { return newEvalCmdWith(a, &evalOptions{}) }

func newEvalCmdWith(a *app, opts *evalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Replay a labelled corpus and report safety, bypass recall, accuracy and savings",
		Long: `Replay a labelled corpus through the pipeline on a fresh, temporary memory, with a simulated
analyst who retains the ground-truth decision after every alert that was not bypassed (as a
person would with 'openrecall retain'), decides each alert group once (as 'openrecall retain
--group' does), and approves the exceptions memory proposes for alerts whose truth is benign
(as 'openrecall exception approve' does). Report false closures
(alerts bypassed, closed by an exception or through a group whose truth is real or an attack: the
safety figure), the model calls exceptions saved, bypass recall (share of benign repeats bypassed once their
family had its first analyst decisions), decision accuracy, escalation rate, cost against the
always-strong baseline, model calls per tier and alerts per second, overall, per kind and per
family.

Without --corpus it generates the corpus from --seed and --size; --corpus DIR replays
DIR/alerts.jsonl with DIR/truth.jsonl (format in eval/README.md). Your memory database is
never read or written. --modes runs every memory × model mode and says why one that is not
available cannot run.

Exit status: 0 when no alert was falsely bypassed, 5 when some were (the report is printed
first), 1 on a bad corpus or another failure, 2 on bad flags.`,
		Example: `  openrecall eval
  openrecall eval --seed 7 --size 3000 --output json
  openrecall eval gen --seed 7 --size 500 --out ./my-corpus
  openrecall eval --corpus ./my-corpus --modes`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.corpus != "" && (cmd.Flags().Changed("seed") || cmd.Flags().Changed("size")) {
				return usageErr("--corpus replays an existing corpus: --seed and --size only apply to a generated one")
			}
			if opts.corpus == "" && (opts.size < eval.MinSize || opts.size > eval.MaxSize) {
				return usageErr("--size %d: want %d to %d alerts", opts.size, eval.MinSize, eval.MaxSize)
			}
			return evalRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.corpus, "corpus", "", "replay the labelled corpus in this directory instead of generating one")
	f.Uint64Var(&opts.seed, "seed", evalDefaultSeed, "seed of the generated corpus")
	f.IntVar(&opts.size, "size", evalDefaultSize, "alerts in the generated corpus")
	addOutputFlag(cmd, &opts.output)
	f.BoolVar(&opts.modes, "modes", false, "run every memory backend × model mode and print one row per mode")
	f.BoolVar(&opts.noGrouping, "no-grouping", false, "replay every firing alone: no alert groups (the config's grouping.enabled)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML) laid over the embedded rules")
	a.modelFlags.bind(f)
	cmd.AddCommand(newEvalGenCmd(a))
	return cmd
}

func evalRun(ctx context.Context, a *app, opts *evalOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	var corpus eval.Corpus
	if opts.corpus != "" {
		corpus, err = eval.ReadDir(opts.corpus)
	} else {
		corpus, err = eval.Generate(opts.seed, opts.size)
	}
	if err != nil {
		return err
	}
	rc := eval.Config{
		LearnAfter: eval.DecisionsToVouch(cfg.Triage.BypassConfidence),
		Now:        a.now,
	}
	// Pages are counted over the configured notify route, else (nil) the
	// default paging route.
	if rc.Route, err = notifyRoute(cfg); err != nil {
		return err
	}
	specs := a.evalModes(cfg, opts)
	if !opts.modes {
		specs = specs[:1]
	}
	rows, err := eval.RunModes(ctx, corpus, specs, rc)
	if err != nil {
		return err
	}
	if len(rows) == 0 || rows[0].Report == nil {
		return errors.New("eval: the embedded mode did not run")
	}
	out := eval.Output{Report: *rows[0].Report}
	if opts.modes {
		out.Modes = rows
	}
	switch opts.output {
	case outputJSON:
		err = eval.WriteJSON(a.out, out)
	case outputJSONL:
		err = writeJSON(a.out, outputJSONL, out)
	default:
		err = eval.WriteTable(a.out, out)
	}
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.Report != nil && !row.Report.Safe() {
			return &exitError{code: exitUnsafeEval, err: row.Report.Err()}
		}
	}
	return nil
}

// evalModes returns the mode matrix, the configured provider's mode first.
// The fake row runs the openai provider against the in-process fake server
// and is labelled fake, never live (§10: the mode never lies). The live row
// runs only on a server the user named with --provider openai: eval never
// spends money on its own. A quadrant that does not exist yet says why.
func (a *app) evalModes(cfg config.Config, opts *evalOptions) []eval.ModeSpec {
	sqlite := func(ctx context.Context) (string, func() error, error) {
		dir, err := os.MkdirTemp("", "openrecall-eval-")
		if err != nil {
			return "", nil, err
		}
		return filepath.Join(dir, "memory.db"), func() error { return os.RemoveAll(dir) }, nil
	}
	det := eval.ModeSpec{
		Mode: openrecall.Mode{Memory: "sqlite", Model: "deterministic"},
		Open: func(ctx context.Context) (eval.Pipeline, error) {
			local := cfg
			local.Models = defaultModels(cfg.Models)
			return a.evalPipeline(ctx, local, opts, noRelease(a.router), sqlite)
		},
	}
	fakeRow := eval.ModeSpec{
		Mode: openrecall.Mode{Memory: "sqlite", Model: "fake"},
		Open: func(ctx context.Context) (eval.Pipeline, error) {
			return a.evalPipeline(ctx, cfg, opts, fakeRouter(a.now), sqlite)
		},
	}
	live := eval.ModeSpec{
		Mode:        openrecall.Mode{Memory: "sqlite", Model: "live"},
		Unavailable: "no live server named: eval calls one only with --provider openai (and --base-url, --cheap-model, --strong-model or the config's models keys)",
	}
	specs := []eval.ModeSpec{det, fakeRow, live}
	if cfg.Models.Provider == config.ProviderOpenAI {
		live = eval.ModeSpec{
			Mode: liveMode(cfg.Models.BaseURL),
			Open: func(ctx context.Context) (eval.Pipeline, error) {
				return a.evalPipeline(ctx, cfg, opts, noRelease(a.router), sqlite)
			},
		}
		specs = []eval.ModeSpec{live, det, fakeRow}
	}
	// The shared backend: a scratch schema of eval's own in the PostgreSQL
	// database --db, OPENRECALL_DB or the config names, or OPENRECALL_PG_DSN,
	// dropped when the row ends.
	pgRows := []eval.ModeSpec{
		{Mode: openrecall.Mode{Memory: "postgres", Model: "deterministic"}},
		{Mode: openrecall.Mode{Memory: "postgres", Model: "live"}},
	}
	if pg := a.evalPostgres(cfg); pg == "" {
		for i := range pgRows {
			pgRows[i].Unavailable = "no PostgreSQL named: give --db postgres://… (or OPENRECALL_DB, or OPENRECALL_PG_DSN); eval makes a schema of its own there and drops it"
		}
	} else {
		scratch := func(ctx context.Context) (string, func() error, error) {
			return memory.ScratchSchema(ctx, pg, "openrecall_eval_")
		}
		pgRows[0].Open = func(ctx context.Context) (eval.Pipeline, error) {
			local := cfg
			local.Models = defaultModels(cfg.Models)
			return a.evalPipeline(ctx, local, opts, noRelease(a.router), scratch)
		}
		if cfg.Models.Provider == config.ProviderOpenAI {
			pgRows[1].Open = func(ctx context.Context) (eval.Pipeline, error) {
				return a.evalPipeline(ctx, cfg, opts, noRelease(a.router), scratch)
			}
		} else {
			pgRows[1].Unavailable = live.Unavailable
		}
	}
	return append(specs, pgRows...)
}

// evalPostgres returns the PostgreSQL URL eval's shared-backend rows use:
// the database the command would open when it is PostgreSQL, else
// OPENRECALL_PG_DSN; empty when there is none.
func (a *app) evalPostgres(cfg config.Config) string {
	if loc, err := a.resolveDB(cfg); err == nil && memory.IsPostgres(loc) {
		return loc
	}
	if dsn := os.Getenv("OPENRECALL_PG_DSN"); memory.IsPostgres(dsn) {
		return dsn
	}
	return ""
}

// routerMaker builds a mode's router and a function that releases what it
// started (nil when nothing).
type routerMaker func(cfg config.Config, budget *routing.Budget) (*routing.Router, openrecall.Mode, func(), error)

// noRelease adapts a router builder that starts nothing.
func noRelease(f func(config.Config, *routing.Budget) (*routing.Router, openrecall.Mode, error)) routerMaker {
	return func(cfg config.Config, b *routing.Budget) (*routing.Router, openrecall.Mode, func(), error) {
		r, m, err := f(cfg, b)
		return r, m, nil, err
	}
}

// evalPipeline wires the embedded pipeline over a fresh memory that where
// makes (a SQLite file in a temporary directory, or a scratch PostgreSQL
// schema), removed on Close. The replay stores each result as a run does
// (audit entries, cost point, alert group, proposal, what waits for a
// person) and the simulated analyst decides through the use cases: its
// retains, its group decisions and the exceptions it approves, audited in
// the temporary trail, sealed with a key made for it.
func (a *app) evalPipeline(ctx context.Context, cfg config.Config, opts *evalOptions, mk routerMaker,
	where func(context.Context) (string, func() error, error)) (eval.Pipeline, error) {
	ex, err := a.extractor(cfg, opts.rules)
	if err != nil {
		return eval.Pipeline{}, err
	}
	r, mode, release, err := mk(cfg, nil)
	if err != nil {
		return eval.Pipeline{}, err
	}
	if release == nil {
		release = func() {}
	}
	loc, remove, err := where(ctx)
	if err != nil {
		release()
		return eval.Pipeline{}, fmt.Errorf("eval memory: %w", err)
	}
	st, err := memory.Open(ctx, loc, memory.Options{Logger: a.log, Now: a.now})
	if err != nil {
		release()
		return eval.Pipeline{}, fmt.Errorf("eval memory: %w", errors.Join(err, remove()))
	}
	closeAll := func() error { release(); return errors.Join(st.Close(), remove()) }
	sealer, err := a.evalSealer(ctx, st)
	if err != nil {
		return eval.Pipeline{}, errors.Join(err, closeAll())
	}
	// GroupScope: the session continues the groups the sink stores under
	// the run's batch and takes their closure from the store, as serve
	// does, once the analyst decides them through the use case.
	root := compose.Open(cfg, st, a.now, a.log, compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(sealer)),
		compose.Batch("eval-"+a.batchName()), compose.GroupScope(), compose.NoGrouping(opts.noGrouping), compose.Wire(opts.wire))
	sink, err := root.Sink(ctx)
	if err != nil {
		return eval.Pipeline{}, errors.Join(err, closeAll())
	}
	wf, err := root.Pipeline(r, mode, sink)
	if err != nil {
		return eval.Pipeline{}, errors.Join(err, closeAll())
	}
	// The replay runs one alert at a time, keeping the run's alert groups
	// between alerts (the simulated analyst decides each group once) and
	// storing each result through the sink.
	session, err := wf.NewSession(ctx)
	if err != nil {
		return eval.Pipeline{}, errors.Join(err, closeAll())
	}
	// The simulated analyst retains and decides groups through the use
	// cases, as 'openrecall retain' and 'retain --group' do.
	return eval.Pipeline{Analyzer: session, Memory: root.UseCases, Groups: root.UseCases, Identifier: ex,
		Exceptions: evalDesk{uc: root.UseCases}, Close: closeAll}, nil
}

// evalSealer seals the trail of the temporary memory st for the simulated
// analyst's desk: a random key bound to the temporary trail (the user's
// audit key is never read or created).
func (a *app) evalSealer(ctx context.Context, st *memory.Store) (audit.Sealer, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return audit.Sealer{}, fmt.Errorf("eval audit key: %w", err)
	}
	k, err := audit.NewKey(b)
	if err != nil {
		return audit.Sealer{}, fmt.Errorf("eval audit key: %w", err)
	}
	sign := func(legacyThrough, legacyCosts int64) string { return audit.BoundaryMAC(k, legacyThrough, legacyCosts) }
	if _, err := st.BindAuditKey(ctx, k.ID(), sign); err != nil {
		return audit.Sealer{}, fmt.Errorf("eval audit key: %w", err)
	}
	return audit.NewSealer(k), nil
}

// evalDesk approves proposals as 'openrecall exception approve' does,
// through usecase.App.ApproveProposal: the session stored the proposal
// with its result, as a run does.
type evalDesk struct {
	uc *usecase.App
}

// Approve approves the proposal res carries as analyst.
func (d evalDesk) Approve(ctx context.Context, res openrecall.Result, analyst string) (openrecall.Exception, error) {
	if res.Proposal == nil {
		return openrecall.Exception{}, fmt.Errorf("analysis %s carries no proposal: %w", res.AnalysisID, openrecall.ErrInvalid)
	}
	ch, err := d.uc.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: res.Proposal.ID, Analyst: analyst,
		Note: "approved by the simulated analyst of openrecall eval"})
	if err != nil {
		return openrecall.Exception{}, err
	}
	return ch.Exception, nil
}

type evalGenOptions struct {
	seed uint64
	size int
	out  string
}

func newEvalGenCmd(a *app) *cobra.Command {
	opts := &evalGenOptions{}
	cmd := &cobra.Command{
		Use:   "gen --out DIR",
		Short: "Write a generated labelled corpus (alerts.jsonl and truth.jsonl) into DIR",
		Long: `Write the labelled corpus that 'openrecall eval' would generate from --seed and --size into
DIR/alerts.jsonl and DIR/truth.jsonl, to read, edit or replay with 'openrecall eval --corpus DIR'.
The same seed and size always write the same bytes.`,
		Example: `  openrecall eval gen --out ./corpus
  openrecall eval gen --seed 7 --size 500 --out ./corpus && openrecall eval --corpus ./corpus`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.out == "" {
				return usageErr("--out DIR is required")
			}
			if opts.size < eval.MinSize || opts.size > eval.MaxSize {
				return usageErr("--size %d: want %d to %d alerts", opts.size, eval.MinSize, eval.MaxSize)
			}
			return evalGenRun(a, opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.seed, "seed", evalDefaultSeed, "seed of the generated corpus")
	f.IntVar(&opts.size, "size", evalDefaultSize, "alerts in the corpus")
	f.StringVar(&opts.out, "out", "", "directory to write alerts.jsonl and truth.jsonl into")
	return cmd
}

func evalGenRun(a *app, opts *evalGenOptions) error {
	c, err := eval.Generate(opts.seed, opts.size)
	if err != nil {
		return err
	}
	if err := c.WriteDir(opts.out); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "wrote %d alerts (%s) to %s\n", len(c.Truth), c.Name, opts.out)
	return nil
}
