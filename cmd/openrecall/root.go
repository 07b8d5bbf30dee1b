package main

import (
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
is benign. Every routing step is audited and costed against an always-strong baseline.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setupLogger()
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&a.dbPath, "db", "", "memory database file (default: $OPENRECALL_DB, the config's db, or the user's data directory)")
	pf.StringVar(&a.configPath, "config", "", "YAML configuration file laid over the embedded defaults")
	pf.StringVar(&a.logLevel, "log-level", "warn", "diagnostics level: debug, info, warn, error")
	pf.StringVar(&a.logFormat, "log-format", "console", "diagnostics format on stderr: console or json")

	root.AddCommand(
		newAnalyzeCmd(a),
		newRetainCmd(a),
		newRecallCmd(a),
		newFingerprintCmd(a),
		newMemoryCmd(a),
		newCostCmd(a),
		newAuditCmd(a),
		newConfigCmd(a),
		newEvalCmd(a),
		newServeCmd(a),
	)
	return root
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
