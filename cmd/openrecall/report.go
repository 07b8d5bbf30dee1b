package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/usecase"
)

// costOptions are the flags of the cost command.
type costOptions struct {
	batch, svg, output string
	width, height      int
}

func newCostCmd(a *app) *cobra.Command {
	opts := &costOptions{}
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Show a run's cost against the strong-model baseline, with its curve",
		Long: `Show the cost curve of a run (the latest one unless --batch names another): totals,
savings, counts per tier, and the cumulative cost and baseline drawn in the terminal.
--svg FILE also writes the curve as an SVG image with the savings band shaded.`,
		Example: `  openrecall cost
  openrecall cost --batch run-20261130T120000.000000Z-a1b2c3 --svg curve.svg
  openrecall cost -o json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return costRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.batch, "batch", "", "run to show (default: the latest)")
	f.StringVar(&opts.svg, "svg", "", "also write the curve as an SVG file")
	f.IntVar(&opts.width, "width", 72, "terminal chart width in columns")
	f.IntVar(&opts.height, "height", 16, "terminal chart height in rows")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// costRun shows the cost curve of the run opts names (the latest by
// default), as GET /api/v1/cost answers it with -o json.
func costRun(ctx context.Context, a *app, opts *costOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	c, err := usecase.ReadCost(ctx, st, usecase.CostRequest{Batch: opts.batch})
	if opts.batch == "" && errors.Is(err, openrecall.ErrNotFound) && !errors.As(err, new(*usecase.NoCostPointsError)) {
		return fmt.Errorf("no runs recorded in %s yet: run 'openrecall analyze' first", st.Path())
	}
	if err != nil {
		return err
	}
	if c.Invalid != nil {
		fmt.Fprintf(a.errOut, "openrecall: warning: %v\n", c.Invalid)
	}
	sum, points, batch := c.Summary, c.Points, c.Batch
	live, err := st.BatchLive(ctx, batch)
	if err != nil {
		return err
	}
	note := costcurve.EstimatedNote
	if live {
		note = costcurve.BilledNote
	}
	if opts.svg != "" {
		f, err := os.Create(opts.svg)
		if err != nil {
			return err
		}
		if err := costcurve.RenderSVGNote(f, points, "openrecall cost curve — "+batch, note); err != nil {
			_ = f.Close() // the render error is the one to report
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(a.errOut, "wrote %s\n", opts.svg)
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, sum)
	}
	fmt.Fprintf(a.out, "batch      %s\n", sum.Batch)
	fmt.Fprintf(a.out, "alerts     %d triaged: %d bypassed by memory, %d escalated without analysis (no model answered; never savings)\n",
		sum.Alerts, sum.Bypassed, sum.Unanalysed)
	fmt.Fprintf(a.out, "per tier   %s\n", countList(sum.PerTier))
	fmt.Fprintf(a.out, "cost       %s (%s)\nbaseline   %s (the strong model analysing each alert, at its expected completion)\nsavings    %s = %.1f%% of the baseline of the %d analysed alerts (bypasses, group members, exception matches and passing cheap answers only)\nsaved by   %s\n\n",
		sum.Cost, note, sum.Baseline, sum.Savings, sum.SavingsPercent, sum.Alerts-sum.Unanalysed, sum.SavingsSources())
	return costcurve.RenderTerminal(a.out, points, opts.width, opts.height)
}

func newAuditCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show and verify the keyed, hash-chained audit trail",
		Example: `  openrecall audit verify
  openrecall audit show run-20261130T044536.263208Z-89e913-000002`,
	}
	opts := &auditShowOptions{}
	show := &cobra.Command{
		Use:   "show ANALYSIS_ID",
		Short: "Show the audit entries of one analysis (one per route step)",
		Example: `  openrecall audit show run-20261130T044536.263208Z-89e913-000002
  openrecall audit show -o json run-20261130T044536.263208Z-89e913-000002`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			opts.analysisID = args[0]
			return auditShowRun(cmd.Context(), a, opts)
		},
	}
	addOutputFlag(show, &opts.output)
	cmd.AddCommand(show, newAuditVerifyCmd(a), newAuditHeadCmd(a), newAuditArchiveCmd(a))
	return cmd
}

// auditShowOptions are the argument and flags of audit show.
type auditShowOptions struct {
	analysisID string
	output     string
}

func auditShowRun(ctx context.Context, a *app, opts *auditShowOptions) error {
	output := opts.output
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	entries, err := st.AuditByAnalysis(ctx, opts.analysisID)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("no audit entries for analysis %q: %w", opts.analysisID, openrecall.ErrNotFound)
	}
	if output != outputTable {
		return writeList(a, output, entries)
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tSTEP\tMODEL\tLIVE\tSKIPPED\tOUTCOME\tHITS\tPROPOSED\tCOST\tBASELINE\tSAVINGS\tREASON")
	for _, e := range entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%t\t%t\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", e.Sequence, e.Step, dash(e.Model), e.Live, e.Skipped,
			e.Outcome, e.MemoryHits, dash(string(e.ProposedDecision)), e.Cost, e.Baseline, e.Savings, oneLine(e.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	last := entries[len(entries)-1]
	if last.EscalationReason != "" {
		fmt.Fprintf(a.out, "escalation: %s\n", last.EscalationReason)
	}
	fmt.Fprintf(a.out, "analysis %s, alert %s, batch %s; chain hash %s\n", last.AnalysisID, last.AlertID, last.Batch, last.Hash)
	return nil
}

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Show the configuration",
		Example: `  openrecall config defaults > openrecall.yaml
  openrecall --config openrecall.yaml config check`}
	cmd.AddCommand(&cobra.Command{
		Use:     "defaults",
		Short:   "Print the embedded default configuration (a commented starting point for --config)",
		Example: `  openrecall config defaults > openrecall.yaml`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return configDefaultsRun(a)
		},
	}, &cobra.Command{
		Use:   "check [FILE]",
		Short: "Load a configuration (FILE, else --config) over the defaults and report the first problem, if any",
		Long: `Load a configuration (FILE, else --config) over the defaults, with everything it names, as serve
would at start: the rules file, the notify: routes and receivers (their secrets read, never
printed), chat:, and the mapping files of senders.dir. Nothing is started or written; the exit
code is 0 when serve would accept it.`,
		Example: `  openrecall config check /etc/openrecall/config.yaml
  openrecall --config openrecall.yaml config check`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("accepts at most 1 argument (the configuration file), received %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				a.configPath = args[0]
			}
			return configCheckRun(a)
		},
	})
	return cmd
}

// configDefaultsRun is config defaults, which takes no flags.
func configDefaultsRun(a *app) error {
	_, err := a.out.Write(config.DefaultYAML())
	return err
}

// configCheckRun is config check, which takes no flags (--config is
// global).
func configCheckRun(a *app) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	db, err := a.resolveDB(cfg)
	if err != nil {
		return err
	}
	// The mapping files of senders.dir are part of the configuration: a
	// bad one is reported here as at any start.
	senders, err := a.senders(cfg, "")
	if err != nil {
		return err
	}
	// So is chat: (its secrets read, never printed).
	if _, err := chatSettings(cfg); err != nil {
		return err
	}
	// And what serve reads at start besides: the routes and receivers of
	// notify: (their secrets too) and the rules file.
	if _, err := notifySettings(cfg); err != nil {
		return err
	}
	if _, err := a.extractor(cfg, ""); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "configuration ok; memory database %s; %d senders\n", db, len(senders.Names()))
	return nil
}
