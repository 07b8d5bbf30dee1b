package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
)

type historyOptions struct {
	kind, search, after string
	limit               int
	output              string
}

// newHistoryCmd is `openrecall history`: what was closed without a person,
// and `history wrong`.
func newHistoryCmd(a *app) *cobra.Command {
	opts := &historyOptions{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "What was closed without a person, newest first; say one was wrong",
		Long: `List what openrecall closed without a person (DESIGN §12a, History), newest first: kind (bypass:
memory vouched and the guard let it skip the model; grouped: a firing of a group whose head memory
bypassed; exception: an exception a person approved matched), when, the analysis, the identity,
the decision, the title and the memories that voted (id and analyst) or the exception that
matched. --kind keeps one kind, --search keeps those whose title, rule or service contains the
text (ignoring case); --limit pages (the cursor of the next page is said on stderr: pass it to
--after). -o json prints what GET /api/v1/history answers. The database is opened read-only,
except by 'history wrong'.`,
		Example: `  openrecall history
  openrecall history --kind bypass --search disk
  openrecall history --limit 20 --after 1764579600000000000:serve-000042 -o json
  openrecall history wrong serve-000042 --analyst alice --reason "it was the outage"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.kind != "" && !slices.Contains(openrecall.ClosedKinds, opts.kind) {
				return usageErr("--kind %q: want one of %v", opts.kind, openrecall.ClosedKinds)
			}
			if opts.limit < 0 {
				return usageErr("--limit %d: want 0 (all) or more", opts.limit)
			}
			return historyRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.kind, "kind", "", "only this kind: bypass, grouped or exception")
	f.StringVar(&opts.search, "search", "", "only those whose title, rule or service contains this text (ignoring case)")
	f.StringVar(&opts.after, "after", "", "the page after this cursor (said on stderr after a page)")
	f.IntVar(&opts.limit, "limit", 100, "at most this many (0: all)")
	addOutputFlag(cmd, &opts.output)
	cmd.AddCommand(newHistoryWrongCmd(a))
	return cmd
}

// historyRun prints a page of what was closed without a person.
func historyRun(ctx context.Context, a *app, opts *historyOptions) error {
	cfg, st, err := a.configStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	page, err := a.useCases(cfg, st, nil).History(ctx, openrecall.ClosureFilter{Kind: opts.kind, Search: opts.search, After: opts.after, Limit: opts.limit})
	if err != nil {
		return err
	}
	switch {
	case opts.output == outputJSON:
		return writeJSON(a.out, opts.output, page)
	case opts.output != outputTable:
		if err := writeList(a, opts.output, page.Closures); err != nil {
			return err
		}
	case len(page.Closures) == 0:
		fmt.Fprintln(a.out, "nothing closed without a person matches")
	default:
		tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AT\tKIND\tANALYSIS\tIDENTITY\tDECISION\tVOUCHED BY\tWRONG\tTITLE")
		for _, c := range page.Closures {
			wrong := "-"
			if c.Wrong {
				wrong = c.WrongBy + ": " + clip(oneLine(c.WrongReason), 40)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.At.Format(time.RFC3339), c.Kind, c.AnalysisID, c.Identity, c.Decision,
				vouchers(c), wrong, clip(oneLine(c.Title), 60))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if page.Next != "" {
		fmt.Fprintf(a.errOut, "more: --after %s\n", page.Next)
	}
	return nil
}

// vouchers says who vouched for closure c: its memories (and their
// analysts) or its exception.
func vouchers(c openrecall.Closure) string {
	if c.ExceptionID != "" {
		return "exception " + c.ExceptionID
	}
	var out []string
	for _, v := range c.Voters {
		if v.Analyst != "" {
			out = append(out, v.ID+" ("+v.Analyst+")")
			continue
		}
		out = append(out, v.ID)
	}
	return dash(strings.Join(out, ", "))
}

type historyWrongOptions struct {
	id, analyst, reason, output string
}

func newHistoryWrongCmd(a *app) *cobra.Command {
	opts := &historyWrongOptions{}
	cmd := &cobra.Command{
		Use:   "wrong ANALYSIS-ID",
		Short: "Say memory was wrong to close an analysis: back to the queue, its memories forgotten",
		Long: `Say openrecall was wrong to close an analysis without a person: each memory that vouched for it
is forgotten with the reason (or the exception that matched is revoked), the analysis returns to
the queue for a person's decision, and the audit trail records who said so and why. --analyst and
--reason are required. Saying it again changes nothing. -o json prints what POST
/api/v1/history/{analysis_id}/wrong answers.`,
		Example: `  openrecall history wrong serve-000042 --analyst alice --reason "it was the outage"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.id = args[0]
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if strings.TrimSpace(opts.analyst) == "" {
				return usageErr("--analyst is required: the audit trail records who said it was wrong")
			}
			if strings.TrimSpace(opts.reason) == "" {
				return usageErr("--reason is required: the memories that vouched are forgotten with it")
			}
			return historyWrongRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.analyst, "analyst", "", "who says it was wrong (required)")
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why (required)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func historyWrongRun(ctx context.Context, a *app, opts *historyWrongOptions) error {
	cfg, st, err := a.configStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	out, err := a.useCases(cfg, st, nil).Wrong(ctx, opts.id, opts.reason, opts.analyst)
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, out)
	}
	if !out.Changed {
		_, err := fmt.Fprintf(a.out, "%s: %s said it was wrong already (%s); nothing changed\n", opts.id, out.Closure.WrongBy, out.Closure.WrongReason)
		return err
	}
	fmt.Fprintf(a.out, "%s is back in the queue\n", opts.id)
	for _, id := range out.Forgotten {
		fmt.Fprintf(a.out, "forgot memory %s\n", id)
	}
	if out.Revoked != "" {
		fmt.Fprintf(a.out, "revoked exception %s\n", out.Revoked)
	}
	return nil
}
