package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

type outboxListOptions struct {
	state, receiver, analysis string
	limit                     int
	output                    string
}

// newOutboxCmd is `openrecall outbox`: it lists the outbox itself (as
// `outbox list` does) and groups retry and counts.
func newOutboxCmd(a *app) *cobra.Command {
	cmd := newOutboxListCmd(a, "outbox")
	cmd.Short = "Notifications to receivers: list them, retry dead letters, count what is not delivered"
	cmd.Long = `The outbox holds every notification openrecall owes a receiver of notify.receivers
(DESIGN §12b): one intent per receiver the routes reach for each stored result (trigger), and the
recovery (resolve) and a person's decision (update) of an alert the receiver heard of. The
dispatcher of 'openrecall serve' delivers them; an intent it gives up on (the receiver refused
it, or it was not delivered within notify.max_age) is a dead letter, kept until a person retries
it. 'outbox' and 'outbox list' list intents newest first: id, state, receiver, kind, key (the
receiver's deduplication key), analysis, tries, when (next try, sent or dead) and the last error.
The database is opened read-only, except by 'outbox retry'.`
	cmd.Example = `  openrecall outbox --state dead
  openrecall outbox list --receiver pager --analysis serve-000042 -o json
  openrecall outbox retry 17 18
  openrecall outbox counts`
	cmd.AddCommand(newOutboxListCmd(a, "list"), newOutboxRetryCmd(a), newOutboxCountsCmd(a))
	return cmd
}

func newOutboxListCmd(a *app, use string) *cobra.Command {
	opts := &outboxListOptions{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "List the outbox's notifications, newest first",
		Long: `List the outbox's notifications (intents), newest first: id, state (pending, sent, dead),
receiver, kind (trigger, resolve, update), key, analysis, tries, when — the next try of a pending
one ("due" when it may go now, "sending" while a dispatcher holds it), when one was sent or made
a dead letter — and the start of the last error. The database is opened read-only.`,
		Example: `  openrecall outbox list --state dead
  openrecall outbox list --analysis serve-000042 -o json`,
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
			if opts.state != "" && !slices.Contains(usecase.IntentStates(), opts.state) {
				return usageErr("--state %q: want one of %v", opts.state, usecase.IntentStates())
			}
			if opts.limit < 0 {
				return usageErr("--limit %d: want 0 (all) or more", opts.limit)
			}
			return outboxListRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.state, "state", "", "only this state: pending, sent or dead")
	f.StringVar(&opts.receiver, "receiver", "", "only this receiver (its name in notify.receivers)")
	f.StringVar(&opts.analysis, "analysis", "", "only the notifications about this analysis id")
	f.IntVar(&opts.limit, "limit", 100, "at most this many (0: all)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// outboxListRun lists the intents opts selects, as GET /api/v1/outbox
// answers them with -o json.
func outboxListRun(ctx context.Context, a *app, opts *outboxListOptions) error {
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	list, err := usecase.ListIntents(ctx, st, openrecall.IntentFilter{State: opts.state, Receiver: opts.receiver,
		AnalysisID: opts.analysis, Limit: opts.limit})
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeList(a, opts.output, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(a.out, "no notifications in the outbox match")
		return err
	}
	tw := tabwriter.NewWriter(a.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tRECEIVER\tKIND\tKEY\tANALYSIS\tTRIES\tWHEN\tLAST ERROR")
	now := a.now()
	for _, in := range list {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", in.ID, in.State, in.Receiver, in.Kind, clip(in.Key, 40), in.AnalysisID,
			in.Attempts, intentWhen(now, in), dash(clip(oneLine(in.LastError), 60)))
	}
	return tw.Flush()
}

// intentWhen says when an intent was or will be tried, for people.
func intentWhen(now time.Time, in openrecall.OutboxIntent) string {
	switch in.State {
	case openrecall.IntentSent:
		return "sent " + ago(now, in.SentAt)
	case openrecall.IntentDead:
		return "dead " + ago(now, in.DeadAt)
	}
	switch {
	case in.LeaseUntil.After(now):
		return "sending"
	case in.NextAt.After(now):
		return "next in " + until(in.NextAt.Sub(now))
	}
	return "due"
}

// until renders a wait for people: "40s", "5m", "2h", "3d".
func until(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()+0.5))
	}
	return age(time.Time{}.Add(d), time.Time{})
}

// ago is age, read as a past time: "5m ago", "just now".
func ago(now, t time.Time) string {
	if s := age(now, t); s != "just now" {
		return s + " ago"
	}
	return "just now"
}

type outboxRetryOptions struct {
	ids     []string
	analyst string
	output  string
}

func newOutboxRetryCmd(a *app) *cobra.Command {
	opts := &outboxRetryOptions{}
	cmd := &cobra.Command{
		Use:   "retry ID...",
		Short: "Put dead letters back to pending, to be tried at once",
		Long: `Put each dead letter named (its id in 'openrecall outbox --state dead') back to pending: its
tries start again, so notify.max_age counts from now, and a running dispatcher takes it at once.
A notification that is not a dead letter, or whose episode went on without it (a later
notification of the same alert to the same receiver was sent or is being sent, and this one would
arrive after it: a trigger after its resolve would open the incident again), is refused and left
as it is; an unknown id is an error. Each retry is an audit entry naming --analyst. Each retried
notification is printed; each refusal is said on stderr, and the exit status is 1 when any was
refused.`,
		Example: `  openrecall outbox retry 17
  openrecall outbox retry 17 18 19 --analyst alice -o json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("give the id of at least one dead letter ('openrecall outbox --state dead' lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ids = args
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return outboxRetryRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.analyst, "analyst", "", "who retries (recorded in the audit trail)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// outboxRetryRun retries each dead letter of opts, as POST
// /api/v1/outbox/{id}/retry does, and prints what it retried.
func outboxRetryRun(ctx context.Context, a *app, opts *outboxRetryOptions) error {
	ids := make([]int64, len(opts.ids))
	for i, s := range opts.ids {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			return usageErr("%q is not a notification id: want the number 'openrecall outbox' lists", s)
		}
		ids[i] = id
	}
	cfg, st, err := a.configStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	uc := a.useCases(cfg, st, nil)
	retried := []openrecall.OutboxIntent{}
	failed := 0
	for _, id := range ids {
		in, err := uc.RetryIntent(ctx, st, id, opts.analyst)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			failed++
			fmt.Fprintf(a.errOut, "openrecall: %v\n", err)
			continue
		}
		retried = append(retried, in)
		if opts.output == outputTable {
			fmt.Fprintf(a.out, "retried %d: %s %s to %s about %s, pending\n", in.ID, in.Kind, dash(in.Key), dash(in.Receiver), dash(in.AnalysisID))
		}
	}
	if opts.output != outputTable {
		if err := writeList(a, opts.output, retried); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("%d of %d not retried", failed, len(ids))}
	}
	return nil
}

type outboxCountsOptions struct {
	output string
}

func newOutboxCountsCmd(a *app) *cobra.Command {
	opts := &outboxCountsOptions{}
	cmd := &cobra.Command{
		Use:   "counts",
		Short: "Count the notifications not delivered, per receiver",
		Long: `Count the pending notifications and the dead letters, per receiver and in all, and say how
long the oldest pending one has waited: what the metrics openrecall_outbox_pending,
openrecall_outbox_dead and openrecall_outbox_oldest_pending_seconds export. The database is
opened read-only.`,
		Example: `  openrecall outbox counts
  openrecall outbox counts -o json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return outboxCountsRun(cmd.Context(), a, opts)
		},
	}
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// outboxCounts is what `outbox counts -o json` prints.
type outboxCounts struct {
	Pending int `json:"pending"`
	Dead    int `json:"dead"`
	// OldestPending is when the oldest pending notification was written,
	// and OldestPendingSeconds its age (0 when none is pending).
	OldestPending        time.Time        `json:"oldest_pending,omitzero"`
	OldestPendingSeconds float64          `json:"oldest_pending_seconds"`
	Receivers            []receiverCounts `json:"receivers"`
}

type receiverCounts struct {
	Receiver string `json:"receiver"`
	Pending  int    `json:"pending"`
	Dead     int    `json:"dead"`
}

func outboxCountsRun(ctx context.Context, a *app, opts *outboxCountsOptions) error {
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	oc, err := st.OutboxCounts(ctx)
	if err != nil {
		return err
	}
	now := a.now()
	out := outboxCounts{Pending: oc.Pending, Dead: oc.Dead, OldestPending: oc.OldestPending, Receivers: []receiverCounts{}}
	if !oc.OldestPending.IsZero() {
		out.OldestPendingSeconds = max(now.Sub(oc.OldestPending).Seconds(), 0)
	}
	for name, rc := range oc.ByReceiver {
		out.Receivers = append(out.Receivers, receiverCounts{Receiver: name, Pending: rc.Pending, Dead: rc.Dead})
	}
	slices.SortFunc(out.Receivers, func(x, y receiverCounts) int { return strings.Compare(x.Receiver, y.Receiver) })
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, out)
	}
	tw := tabwriter.NewWriter(a.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "RECEIVER\tPENDING\tDEAD")
	for _, rc := range out.Receivers {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", rc.Receiver, rc.Pending, rc.Dead)
	}
	fmt.Fprintf(tw, "all\t%d\t%d\n", out.Pending, out.Dead)
	if err := tw.Flush(); err != nil {
		return err
	}
	if out.OldestPending.IsZero() {
		_, err = fmt.Fprintln(a.out, "nothing pending")
		return err
	}
	_, err = fmt.Fprintf(a.out, "oldest pending written %s (%s)\n", ago(now, out.OldestPending), out.OldestPending.Format(time.RFC3339))
	return err
}
