package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/costcurve"
)

func newCostCmd(a *app) *cobra.Command {
	var batch, svg, output string
	var width, height int
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Show a run's cost against the always-strong baseline, with its curve",
		Long: `Show the cost curve of a run (the latest one unless --batch names another): totals,
savings, counts per tier, and the cumulative cost and baseline drawn in the terminal.
--svg FILE also writes the curve as an SVG image with the savings band shaded.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOf("output", output, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			if batch == "" {
				batch, err = st.LatestBatch(ctx)
				if errors.Is(err, openrecall.ErrNotFound) {
					return fmt.Errorf("no runs recorded in %s yet: run 'openrecall analyze' first", st.Path())
				}
				if err != nil {
					return err
				}
			}
			points, err := st.CostPoints(ctx, batch)
			if err != nil {
				return err
			}
			if len(points) == 0 {
				return fmt.Errorf("batch %q has no cost points: %w", batch, openrecall.ErrNotFound)
			}
			if err := costcurve.Validate(points); err != nil {
				fmt.Fprintf(a.errOut, "openrecall: warning: %v\n", err)
			}
			sum := costcurve.Summarize(points)
			if svg != "" {
				f, err := os.Create(svg)
				if err != nil {
					return err
				}
				if err := costcurve.RenderSVG(f, points, "openrecall cost curve — "+batch); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
				fmt.Fprintf(a.errOut, "wrote %s\n", svg)
			}
			if output == "json" {
				return json.NewEncoder(a.out).Encode(sum)
			}
			fmt.Fprintf(a.out, "batch      %s\n", sum.Batch)
			fmt.Fprintf(a.out, "alerts     %d analysed, %d bypassed by memory\n", sum.Alerts, sum.Bypassed)
			fmt.Fprintf(a.out, "per tier   %s\n", countList(sum.PerTier))
			fmt.Fprintf(a.out, "cost       %s\nbaseline   %s (the strong model on every step that could use a model)\nsavings    %s (%.1f%%)\n\n",
				sum.Cost, sum.Baseline, sum.Savings, sum.SavingsPercent)
			return costcurve.RenderTerminal(a.out, points, width, height)
		},
	}
	f := cmd.Flags()
	f.StringVar(&batch, "batch", "", "run to show (default: the latest)")
	f.StringVar(&svg, "svg", "", "also write the curve as an SVG file")
	f.IntVar(&width, "width", 72, "terminal chart width in columns")
	f.IntVar(&height, "height", 16, "terminal chart height in rows")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

func newAuditCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show and verify the hash-chained audit trail",
	}
	var output string
	show := &cobra.Command{
		Use:   "show ANALYSIS_ID",
		Short: "Show the audit entries of one analysis (one per route step)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("output", output, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			entries, err := st.AuditByAnalysis(ctx, args[0])
			if err != nil {
				return err
			}
			if len(entries) == 0 {
				return fmt.Errorf("no audit entries for analysis %q: %w", args[0], openrecall.ErrNotFound)
			}
			if output == "json" {
				enc := json.NewEncoder(a.out)
				for _, e := range entries {
					if err := enc.Encode(e); err != nil {
						return err
					}
				}
				return nil
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
		},
	}
	show.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check the hash chain: find any edited or deleted entry",
		Long: `Recompute every audit entry's hash and follow the chain from the first entry to the
head record. Exit status 0: intact. Exit status 4: an entry was edited, deleted or reordered;
each problem names the entry.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := verifyAudit(ctx, st)
			if err != nil {
				return err
			}
			if rep.Intact {
				fmt.Fprintf(a.out, "audit trail intact: %d entries, head %d %s\n", rep.Entries, rep.HeadSeq, rep.HeadHash)
				return nil
			}
			for _, p := range rep.Problems {
				fmt.Fprintf(a.out, "TAMPERED: %s\n", p)
			}
			fmt.Fprintf(a.errOut, "openrecall: audit verify found %d problem(s) in %d entries\n", len(rep.Problems), rep.Entries)
			return &exitError{code: exitTampered}
		},
	}
	cmd.AddCommand(show, verify)
	return cmd
}

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Show the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "defaults",
		Short: "Print the embedded default configuration (a commented starting point for --config)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := a.out.Write(config.DefaultYAML())
			return err
		},
	}, &cobra.Command{
		Use:   "check",
		Short: "Load --config over the defaults and report the first problem, if any",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			db, err := a.resolveDB(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "configuration ok; memory database %s\n", db)
			return nil
		},
	})
	return cmd
}
