package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
)

type groupsOptions struct {
	all    bool
	limit  int
	output string
}

func newGroupsCmd(a *app) *cobra.Command {
	opts := &groupsOptions{}
	cmd := &cobra.Command{
		Use:   "groups",
		Short: "List alert groups (storms) waiting for a person's decision",
		Long: `List the alert groups no person has decided yet, newest first: the firings of one alert
(same identity, Alert DNA and status, not more severe than the first, within grouping.window of
each other) grouped under their first, the head, which alone was triaged; the others took its
decision without a model call. For each: its id, size, identity, head, age and whether a decision
is pending. 'openrecall retain --group ID' decides a group once, as one memory. --all lists the
decided groups too. The database is opened read-only.`,
		Example: `  openrecall groups
  openrecall groups --all -o json
  openrecall retain --group g-serve-000040 --decision known_benign --note "deploy storm"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.limit < 1 {
				return usageErr("--limit %d: want at least 1", opts.limit)
			}
			return groupsRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.all, "all", false, "list decided groups too")
	f.IntVar(&opts.limit, "limit", 50, "groups to list at most")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// groupsRun lists the groups opts asks for, as GET /api/v1/groups answers
// them with -o json.
func groupsRun(ctx context.Context, a *app, opts *groupsOptions) error {
	cfg, st, err := a.configStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	gs, err := a.useCases(cfg, st, nil).ListGroups(ctx, !opts.all, opts.limit)
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeList(a, opts.output, gs)
	}
	if len(gs) == 0 {
		_, err := fmt.Fprintln(a.out, "no alert groups waiting for a decision")
		return err
	}
	tw := tabwriter.NewWriter(a.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSIZE\tIDENTITY\tHEAD\tDECISION\tAGE\tDECIDED")
	now := a.now()
	for _, g := range gs {
		decided := "pending"
		if g.Decided {
			decided = fmt.Sprintf("%s by %s", g.Decision, dash(g.Analyst))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Size, clip(g.Key.Identity.String(), 48), g.Head.AnalysisID,
			headDecision(g.Head), age(now, g.FirstAt), decided)
	}
	return tw.Flush()
}

// headDecision is what the group's head concluded, as its members took it.
func headDecision(h openrecall.GroupHead) string {
	switch {
	case h.Unanalysed:
		return "escalated (no analysis)"
	case h.Bypassed:
		return string(h.Decision) + " (memory)"
	}
	return string(h.Decision)
}
