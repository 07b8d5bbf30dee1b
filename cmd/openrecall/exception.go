package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

func newExceptionCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exception",
		Short: "Exceptions: memory proposes, a person approves (DESIGN §6b)",
		Long: `An exception is a narrow, expiring rule a person approved: an alert of its identity (rule and
service), its critical Alert DNA (error class, service role, attack pattern, environment) and its
match fields (the sender's entity fields, such as user or process), not more severe than its
ceiling, takes its benign decision without a model call while it is active: one 'exception' route
step, cost 0, its baseline saved and counted apart. Memory alone never creates one: when memory
vouches unanimously for a security detection that the guard must still refuse, the result carries
a proposal, which 'exception approve' turns into an exception. Every approval, creation,
revocation, expiry and match is in the audit trail.`,
		Example: `  openrecall exception proposals
  openrecall exception approve prop_3f2a9c0d1e2b4a5c --analyst alice --note "nightly admin job"
  openrecall exception list --state active`,
	}
	cmd.AddCommand(newExceptionApproveCmd(a), newExceptionAddCmd(a), newExceptionListCmd(a),
		newExceptionProposalsCmd(a), newExceptionRevokeCmd(a))
	return cmd
}

type exceptionApproveOptions struct {
	id, analyst, expires, note, output string
}

func newExceptionApproveCmd(a *app) *cobra.Command {
	opts := &exceptionApproveOptions{}
	cmd := &cobra.Command{
		Use:   "approve PROPOSAL-ID",
		Short: "Approve a proposed exception",
		Long: `Approve a proposal (see 'openrecall exception proposals') as an exception: its identity,
critical Alert DNA, match fields, decision and severity ceiling, approved by --analyst, expiring
after --expires (the proposal's 30 days by default, at most exceptions.max_expiry).`,
		Example: `  openrecall exception approve prop_3f2a9c0d1e2b4a5c --analyst alice --note "nightly admin job"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.id = args[0]
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if strings.TrimSpace(opts.analyst) == "" {
				return usageErr("--analyst is required: a person approves an exception")
			}
			return exceptionApproveRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.analyst, "analyst", "", "who approves (required)")
	f.StringVar(&opts.expires, "expires", "", "expiry: a date, an RFC 3339 time or a duration (720h, 30d); default the proposal's")
	f.StringVar(&opts.note, "note", "", "why the exception holds")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// expiryFlag reads --expires as a duration from now; 0 when empty.
func (a *app) expiryFlag(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	now := a.now()
	t, err := parseExpiry(s, now)
	if err != nil {
		return 0, err
	}
	if !t.After(now) {
		return 0, usageErr("--expires %q is not in the future", s)
	}
	return t.Sub(now), nil
}

// exceptionApp opens the database for writing and returns the use cases
// with the configuration's exception rules.
func (a *app) exceptionApp(ctx context.Context, readOnly bool) (*usecase.App, func(), error) {
	cfg, err := a.config()
	if err != nil {
		return nil, nil, err
	}
	open := a.openStore
	if readOnly {
		open = a.openReadStore
	}
	st, err := open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	uc := a.useCases(cfg, st, nil)
	return uc, func() { a.closeLogged("memory", st) }, nil
}

func exceptionApproveRun(ctx context.Context, a *app, opts *exceptionApproveOptions) error {
	expiry, err := a.expiryFlag(opts.expires)
	if err != nil {
		return err
	}
	uc, done, err := a.exceptionApp(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	ch, err := uc.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: opts.id, Analyst: opts.analyst, Expiry: expiry, Note: opts.note})
	if err != nil {
		return err
	}
	return a.printExceptionChange(opts.output, "approved", ch)
}

func (a *app) printExceptionChange(output, verb string, ch usecase.ExceptionChange) error {
	if output != outputTable {
		return writeJSON(a.out, output, ch)
	}
	e := ch.Exception
	if !ch.Changed {
		verb = "unchanged (" + ch.State + ")"
	}
	_, err := fmt.Fprintf(a.out, "%s %s: %s for %s, match %s, ceiling %s, expires %s, by %s\n", verb, e.ID, e.Decision, e.Identity,
		dash(openrecall.MatchString(e.Match)), e.MaxSeverity, e.ExpiresAt.Format(time.RFC3339), e.Analyst)
	return err
}

type exceptionAddOptions struct {
	rule, service, maxSeverity, decision, expires, analyst, note, output string
	errorClass, serviceRole, attackPattern, environment                  string
	match                                                                []string
}

func newExceptionAddCmd(a *app) *cobra.Command {
	opts := &exceptionAddOptions{}
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Write an exception directly (a silence, a maintenance window)",
		Long: `Write an exception directly: --rule and --service name the alert (an empty service is not a
wildcard), --max-severity its ceiling, --expires its end (at most exceptions.max_expiry, 90 days by
default), --decision a benign decision (false_positive, duplicate or known_benign), --analyst who
writes it. The critical Alert DNA it covers is given field by field (--error-class,
--service-role, --attack-pattern, --environment; empty when not given), and an exception for an
attack pattern (a security detection) needs at least one --match name=value.`,
		Example: `  openrecall exception add --rule KubePodCrashLooping --service checkout --max-severity high \
    --decision known_benign --expires 4h --analyst alice --note "maintenance window"
  openrecall exception add --rule "Terminal shell in container" --service ci --attack-pattern security_detection \
    --match user=runner --match process=bash --max-severity medium --decision known_benign \
    --expires 30d --analyst alice --note "CI runner shells"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return exceptionAddRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.rule, "rule", "", "the rule (check) that fires (required)")
	f.StringVar(&opts.service, "service", "", "the service it fires for (required; empty is not a wildcard)")
	f.StringArrayVar(&opts.match, "match", nil, "an entity field the alert must carry, name=value (repeatable)")
	f.StringVar(&opts.maxSeverity, "max-severity", "", "severity ceiling: critical, high, medium, low or info (required)")
	f.StringVar(&opts.decision, "decision", "", "false_positive, duplicate or known_benign (required)")
	f.StringVar(&opts.expires, "expires", "", "expiry: a date, an RFC 3339 time or a duration (4h, 30d) (required)")
	f.StringVar(&opts.analyst, "analyst", "", "who writes it (required)")
	f.StringVar(&opts.note, "note", "", "why")
	f.StringVar(&opts.errorClass, "error-class", "", "the Alert DNA's error class")
	f.StringVar(&opts.serviceRole, "service-role", "", "the Alert DNA's service role")
	f.StringVar(&opts.attackPattern, "attack-pattern", "", "the Alert DNA's attack pattern (security_detection for a detection)")
	f.StringVar(&opts.environment, "environment", "", "the Alert DNA's environment (prod, staging, dev)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func exceptionAddRun(ctx context.Context, a *app, opts *exceptionAddOptions) error {
	for _, req := range []struct{ flag, v string }{{"--rule", opts.rule}, {"--service", opts.service}, {"--max-severity", opts.maxSeverity},
		{"--decision", opts.decision}, {"--expires", opts.expires}, {"--analyst", opts.analyst}} {
		if strings.TrimSpace(req.v) == "" {
			return usageErr("%s is required", req.flag)
		}
	}
	sev, err := parseSeverity(opts.maxSeverity)
	if err != nil {
		return err
	}
	d := openrecall.Decision(opts.decision)
	if !d.Benign() {
		return usageErr("--decision %q: an exception closes alerts, so only false_positive, duplicate or known_benign", opts.decision)
	}
	match := map[string]string{}
	for _, m := range opts.match {
		k, v, ok := strings.Cut(m, "=")
		if !ok || strings.TrimSpace(k) == "" || v == "" {
			return usageErr("--match %q: want name=value", m)
		}
		match[strings.TrimSpace(k)] = v
	}
	expiry, err := a.expiryFlag(opts.expires)
	if err != nil {
		return err
	}
	dna := openrecall.Fingerprint{ErrorClass: opts.errorClass, ServiceRole: opts.serviceRole, AttackPattern: opts.attackPattern, Environment: opts.environment}
	uc, done, err := a.exceptionApp(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	ch, err := uc.AddException(ctx, usecase.AddRequest{
		Identity: openrecall.Identity{Rule: opts.rule, Service: opts.service}, DNA: dna, Match: match,
		MaxSeverity: sev, Decision: d, Expiry: expiry, Analyst: opts.analyst, Note: opts.note,
	})
	if errors.Is(err, openrecall.ErrInvalid) {
		// Every rule AddException enforces is about a flag given here.
		return usageErr("%v", err)
	}
	if err != nil {
		return err
	}
	return a.printExceptionChange(opts.output, "added", ch)
}

type exceptionListOptions struct {
	state, output string
}

func newExceptionListCmd(a *app) *cobra.Command {
	opts := &exceptionListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List exceptions: active, expired and revoked",
		Long: `List every exception, oldest first, with its state (active, expired or revoked), who approved
it and when it expires; --state keeps one state. The database is opened read-only.`,
		Example: `  openrecall exception list
  openrecall exception list --state active -o json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return exceptionListRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.state, "state", "", "only exceptions in this state: active, expired or revoked")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func exceptionListRun(ctx context.Context, a *app, opts *exceptionListOptions) error {
	uc, done, err := a.exceptionApp(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	list, err := uc.ListExceptions(ctx, opts.state)
	if err != nil {
		return err
	}
	return printList(a, opts.output, list, "no exceptions", "EXCEPTION\tSTATE\tIDENTITY\tMATCH\tCEILING\tDECISION\tAPPROVED BY\tEXPIRES",
		func(e usecase.ListedException) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", e.ID, e.State, clip(e.Identity.String(), 48),
				clip(dash(openrecall.MatchString(e.Match)), 48), e.MaxSeverity, e.Decision, e.Analyst, e.ExpiresAt.Format(time.RFC3339))
		})
}

// printList writes a list as a table (header, then one row per item, or
// empty when there is none), one JSON array (-o json) or one line per item
// (-o jsonl).
func printList[T any](a *app, output string, list []T, empty, header string, row func(T) string) error {
	if output != outputTable {
		return writeList(a, output, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(a.out, empty)
		return err
	}
	tw := tabwriter.NewWriter(a.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, x := range list {
		fmt.Fprintln(tw, row(x))
	}
	return tw.Flush()
}

type exceptionProposalsOptions struct {
	all    bool
	output string
}

func newExceptionProposalsCmd(a *app) *cobra.Command {
	opts := &exceptionProposalsOptions{}
	cmd := &cobra.Command{
		Use:   "proposals",
		Short: "List the exceptions memory proposes, waiting for a person",
		Long: `List the proposed exceptions no person approved yet, oldest first: memory vouched unanimously
for a security detection the guard refused only because it is an attack. Each names the identity,
the critical Alert DNA, the match fields every supporting memory shared, the decision and the
severity ceiling. --all lists approved ones too. The database is opened read-only.`,
		Example: `  openrecall exception proposals
  openrecall exception approve prop_3f2a9c0d1e2b4a5c --analyst alice`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return exceptionProposalsRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "list approved proposals too")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func exceptionProposalsRun(ctx context.Context, a *app, opts *exceptionProposalsOptions) error {
	uc, done, err := a.exceptionApp(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	list, err := uc.ListProposals(ctx, !opts.all)
	if err != nil {
		return err
	}
	return printList(a, opts.output, list, "no proposed exceptions", "PROPOSAL\tIDENTITY\tMATCH\tCEILING\tDECISION\tMEMORIES\tAPPROVED AS",
		func(p openrecall.Proposal) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%s", p.ID, clip(p.Identity.String(), 48), clip(openrecall.MatchString(p.Match), 48),
				p.MaxSeverity, p.Decision, len(p.Supporting), dash(p.ApprovedAs))
		})
}

type exceptionRevokeOptions struct {
	id, analyst, reason, output string
}

func newExceptionRevokeCmd(a *app) *cobra.Command {
	opts := &exceptionRevokeOptions{}
	cmd := &cobra.Command{
		Use:   "revoke EXCEPTION-ID",
		Short: "Revoke an exception",
		Long: `Revoke an exception: it matches no alert from the next run on; the audit trail records who
(--analyst) and why (--reason), both required.`,
		Example: `  openrecall exception revoke exc_3f2a9c0d1e2b4a5c --analyst alice --reason "the job was retired"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.id = args[0]
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if strings.TrimSpace(opts.analyst) == "" {
				return usageErr("--analyst is required")
			}
			if strings.TrimSpace(opts.reason) == "" {
				return usageErr("--reason is required: the audit trail records why an exception ended")
			}
			return exceptionRevokeRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.analyst, "analyst", "", "who revokes (required)")
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why it ends (required)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func exceptionRevokeRun(ctx context.Context, a *app, opts *exceptionRevokeOptions) error {
	uc, done, err := a.exceptionApp(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	ch, err := uc.RevokeException(ctx, opts.id, opts.analyst, opts.reason)
	if err != nil {
		return err
	}
	return a.printExceptionChange(opts.output, "revoked", ch)
}
