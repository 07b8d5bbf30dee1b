package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
)

type queueOptions struct {
	severity string
	rule     string
	service  string
	search   string
	state    string
	sort     string
	limit    int
	output   string
}

func newQueueCmd(a *app) *cobra.Command {
	opts := &queueOptions{}
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List what waits for a person: escalated alerts, open alert groups and decisions proposed for approval",
		Long: `List what waits for a person (oldest first, or --sort urgency as the cockpit shows it: attacks,
then what still fires, then the most severe, then the newest): alerts the pipeline escalated, alerts memory
proposed a decision for that the guard would not take alone, and open alert groups (storms) whose
firings wait, each group once with its size (ITEM is the group's id). A retain about the analysis
(retain --analysis-id, POST /api/v1/retain, the cockpit's review page) settles it; a group decision
(retain --group ID, POST /api/v1/groups/{id}/decision, the cockpit's group page) settles every
firing of the group; approving a proposed exception settles the analysis that carried it. The
database is opened read-only.`,
		Example: `  openrecall queue
  openrecall queue --severity critical --service checkout
  openrecall queue --sort urgency --search pod=checkout --state firing
  openrecall queue -o json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return queueRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.severity, "severity", "", "only this severity (critical, high, medium, low, info)")
	f.StringVar(&opts.rule, "rule", "", "only identity rules (alertname, class or title template) containing this, ignoring case")
	f.StringVar(&opts.service, "service", "", "only identity services containing this, ignoring case")
	f.StringVar(&opts.search, "search", "", "only items whose title, identity, service or a label (key=value) contains this, ignoring case")
	f.StringVar(&opts.state, "state", "", "only firing or resolved items (resolved: the sender's recovery arrived while it waited)")
	f.StringVar(&opts.sort, "sort", "oldest", "order: oldest, newest or urgency")
	f.IntVar(&opts.limit, "limit", 0, "at most this many (default: all)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// queueRun prints what waits for a person, as the cockpit's queue shows it.
func queueRun(ctx context.Context, a *app, opts *queueOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	if opts.limit < 0 {
		return usageErr("--limit %d: want 0 (all) or more", opts.limit)
	}
	if !slices.Contains([]string{openrecall.QueueOldest, openrecall.QueueNewest, openrecall.QueueUrgency}, opts.sort) {
		return usageErr("--sort %q: want oldest, newest or urgency", opts.sort)
	}
	if !slices.Contains([]string{"", openrecall.QueueFiring, openrecall.QueueResolved}, opts.state) {
		return usageErr("--state %q: want firing or resolved", opts.state)
	}
	cfg, st, err := a.configStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	ws, err := a.useCases(cfg, st, nil).Queue(ctx, openrecall.WaitingFilter{
		Severity: openrecall.Severity(opts.severity), Rule: opts.rule, Service: opts.service, Search: opts.search,
		State: opts.state, Sort: opts.sort, Limit: opts.limit,
	})
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeList(a, opts.output, ws)
	}
	if len(ws) == 0 {
		fmt.Fprintln(a.out, "nothing waits for a person")
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SINCE\tITEM\tSIZE\tSEVERITY\tSTATE\tREASON\tPROPOSED\tIDENTITY\tTITLE")
	for _, w := range ws {
		proposed := string(w.Proposed)
		if proposed == "" {
			proposed = "-"
		}
		item, size := w.AnalysisID, 1
		if w.Group != nil {
			item, size = w.Group.ID, w.Group.Size
		}
		state := openrecall.QueueFiring
		if w.Resolved() {
			state = openrecall.QueueResolved
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", w.Since.Format(time.RFC3339), item, size, w.Severity,
			state, w.Reason, proposed, w.Identity, w.Title)
	}
	return tw.Flush()
}
