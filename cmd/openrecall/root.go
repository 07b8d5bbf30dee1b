package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "openrecall",
		Short: "Alert triage with memory: recall what analysts decided, skip the model when memory vouches",
		Long: `openrecall reads alerts (JSON Lines, JSON arrays, Alertmanager and Grafana webhooks,
Prometheus alerts, PagerDuty events, plain text), reduces each to a six-field Alert DNA
fingerprint, recalls what analysts decided on similar alerts, proposes a decision, and skips
the language model only when memory strongly and consistently vouches that a non-attack alert
is benign. Every routing step is audited and costed against an always-strong baseline.

Results go to stdout (-o table, json: one JSON document, or jsonl: one object per line);
diagnostics and summaries go to stderr.

Exit status, the same for every command (when several apply, the first listed wins):
` + exitTableText("  "),
		Example: `  openrecall memory seed
  openrecall analyze examples/queue.jsonl
  openrecall analyze -o jsonl - < webhook.json
  openrecall audit verify
  openrecall version`,
		Version:       readVersion().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setupLogger()
		},
	}
	root.SetVersionTemplate("openrecall {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	// Declared here so that cobra does not add a -v shorthand.
	root.Flags().Bool("version", false, "print the version and exit")
	pf := root.PersistentFlags()
	pf.StringVar(&a.dbPath, "db", "", "memory database file (default: $OPENRECALL_DB, the config's db, or the user's data directory)")
	pf.StringVar(&a.configPath, "config", "", "YAML configuration file laid over the embedded defaults")
	pf.StringVar(&a.logLevel, "log-level", "warn", "diagnostics level: debug, info, warn, error")
	pf.StringVar(&a.logFormat, "log-format", "console", "diagnostics format on stderr: console or json")

	root.AddCommand(
		newAnalyzeCmd(a),
		newRetainCmd(a),
		newGroupsCmd(a),
		newExceptionCmd(a),
		newOutboxCmd(a),
		newHistoryCmd(a),
		newRoutesCmd(a),
		newRecallCmd(a),
		newQueueCmd(a),
		newFingerprintCmd(a),
		newSendersCmd(a),
		newMemoryCmd(a),
		newCostCmd(a),
		newAuditCmd(a),
		newConfigCmd(a),
		newEvalCmd(a),
		newServeCmd(a),
		newVersionCmd(a),
	)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	root.SetUsageTemplate(root.UsageTemplate() + exitFooter())
	return root
}

// exitFooter ends every command's help with the exit codes, one line.
func exitFooter() string {
	parts := make([]string, 0, len(exitTable))
	for _, row := range exitTable {
		parts = append(parts, fmt.Sprintf("%d %s", row.code, row.short))
	}
	return "\nExit status (first that applies): " + strings.Join(parts, ", ") + ".\n"
}

// refuseUnknownSubcommands makes every command that only groups others (no
// action of its own) print its help when called bare, and refuse an
// unknown subcommand with a usage error and suggestions. Cobra's default
// prints the help and exits 0, so `memory exprot > backup.jsonl` would
// write the help text into the "backup".
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownCommand(cmd, args[0])
	}
}

// unknownCommand is the usage error for an unknown subcommand of parent,
// with the subcommands whose names are close to name.
func unknownCommand(parent *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, parent.CommandPath())
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2
	}
	if s := parent.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(quoteAll(s), " or ") + "?"
	}
	return &exitError{code: exitUsage, err: errors.New(msg)}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// maxArgs is cobra.MaximumNArgs with a usage exit code.
func maxArgs(n int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErr("accepts at most %d argument(s), received %d", n, len(args))
		}
		return nil
	}
}

// exactArgs is cobra.ExactArgs with a usage exit code.
func exactArgs(n int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("accepts %d argument(s), received %d", n, len(args))
		}
		return nil
	}
}

// oneOf checks a flag's value against its allowed values.
func oneOf(flag, value string, allowed ...string) error {
	for _, v := range allowed {
		if value == v {
			return nil
		}
	}
	return usageErr("--%s %q: want one of %v", flag, value, allowed)
}
