package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/intake"
)

type retainOptions struct {
	input       string
	fingerprint string
	alertID     string
	decision    string
	note        string
	deadEnds    []string
	analyst     string
	impact      int
	rules       string
	output      string
}

func newRetainCmd(a *app) *cobra.Command {
	opts := &retainOptions{}
	cmd := &cobra.Command{
		Use:   "retain [FILE|-] --decision DECISION",
		Short: "Record an analyst decision for an alert or a fingerprint",
		Long: `Record what an analyst decided, so that similar alerts recall it.

Give the alert (the first record of FILE or standard input, in any intake format: its
fingerprint and id are taken from it) or a canonical fingerprint with --fingerprint. Retaining
the same decision, note and alert again is harmless: it reports "already known" and stores
nothing new. Decisions on two different alerts of one family are two memories; that is how
evidence accumulates until memory can vouch for the family.`,
		Example: `  openrecall retain alert.json --decision known_benign --note "nightly batch restart" \
      --dead-end "restarting the pod" --analyst alice
  openrecall retain --fingerprint 'error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod' \
      --decision real --note "leak in v2.3"`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.decision == "" {
				return usageErr("--decision is required: false_positive, duplicate, known_benign or real")
			}
			if opts.fingerprint != "" && len(args) == 1 {
				return usageErr("give an alert or --fingerprint, not both")
			}
			if opts.impact < 0 {
				return usageErr("--impact-minutes %d: want 0 or more", opts.impact)
			}
			return retainRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.fingerprint, "fingerprint", "", "canonical fingerprint (instead of an alert)")
	f.StringVar(&opts.alertID, "alert-id", "", "source alert id the decision is about (with --fingerprint)")
	f.StringVar(&opts.decision, "decision", "", "false_positive, duplicate, known_benign or real")
	f.StringVar(&opts.note, "note", "", "what the analyst found")
	f.StringArrayVar(&opts.deadEnds, "dead-end", nil, "something tried that did not help (repeatable)")
	f.StringVar(&opts.analyst, "analyst", "", "who decided")
	f.IntVar(&opts.impact, "impact-minutes", 0, "business impact in minutes")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func retainRun(ctx context.Context, a *app, opts *retainOptions) error {
	d, err := openrecall.ParseDecision(opts.decision)
	if err != nil || !d.Retainable() {
		return usageErr("--decision %q: want false_positive, duplicate, known_benign or real", opts.decision)
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	inc := openrecall.Incident{
		Decision:      d,
		Note:          opts.note,
		DeadEnds:      opts.deadEnds,
		Analyst:       opts.analyst,
		ImpactMinutes: opts.impact,
		SourceAlertID: opts.alertID,
	}
	if opts.fingerprint != "" {
		fp, err := openrecall.ParseFingerprint(opts.fingerprint)
		if err != nil {
			return usageErr("--fingerprint: %v", err)
		}
		inc.Fingerprint = fp
	} else {
		alert, err := a.firstAlert(opts.input)
		if err != nil {
			return err
		}
		ex, err := a.extractor(cfg, opts.rules)
		if err != nil {
			return err
		}
		inc.Fingerprint = ex.Extract(alert)
		if inc.SourceAlertID == "" {
			inc.SourceAlertID = alert.ID
		}
	}
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	stored, created, err := st.Retain(ctx, inc)
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, struct {
			Created  bool                `json:"created"`
			Incident openrecall.Incident `json:"incident"`
		}{created, stored})
	}
	state := "retained"
	if !created {
		state = "already known"
	}
	fmt.Fprintf(a.out, "%s %s: %s for %s\n", state, stored.ID, stored.Decision, stored.Fingerprint)
	return nil
}

// firstAlert reads the first alert of FILE or standard input.
func (a *app) firstAlert(name string) (openrecall.Alert, error) {
	in, source, err := a.openInput(name)
	if err != nil {
		return openrecall.Alert{}, err
	}
	defer a.closeLogged("input", in)
	rec, err := intake.NewReader(in, intake.Options{Source: source}).Next()
	switch {
	case errors.Is(err, io.EOF):
		return openrecall.Alert{}, usageErr("no alert in %s: give an alert or --fingerprint", source)
	case err != nil:
		return openrecall.Alert{}, err
	case rec.Err != nil:
		return openrecall.Alert{}, fmt.Errorf("%s: %w", rec.Err.Error(), openrecall.ErrInvalid)
	}
	return rec.Alert, nil
}

type recallOptions struct {
	input       string
	fingerprint string
	limit       int
	rules       string
	output      string
}

func newRecallCmd(a *app) *cobra.Command {
	opts := &recallOptions{}
	cmd := &cobra.Command{
		Use:   "recall [FILE|-]",
		Short: "Show what memory holds for an alert or a fingerprint",
		Long: `Show the memories recalled for the first alert of FILE (or standard input), or for
--fingerprint, with their scores, decisions, notes and dead ends, best first. Only memories
that agree on error class, service role, environment and attack pattern are recalled.`,
		Example: `  openrecall recall alert.json
  openrecall recall -o json --limit 3 alert.json
  openrecall recall --fingerprint 'error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod'`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.fingerprint != "" && len(args) == 1 {
				return usageErr("give an alert or --fingerprint, not both")
			}
			return recallRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.fingerprint, "fingerprint", "", "canonical fingerprint (instead of an alert)")
	f.IntVar(&opts.limit, "limit", 0, "memories to show (default: the config's recall_limit)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func recallRun(ctx context.Context, a *app, opts *recallOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	fp, err := a.fingerprintFrom(cfg, opts.fingerprint, opts.input, opts.rules)
	if err != nil {
		return err
	}
	limit := opts.limit
	if limit <= 0 {
		limit = cfg.Triage.RecallLimit
	}
	st, err := a.openReadStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	matches, err := st.Recall(ctx, fp, limit)
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, struct {
			Fingerprint openrecall.Fingerprint `json:"fingerprint"`
			Matches     []openrecall.Match     `json:"matches"`
		}{fp, matches})
	}
	fmt.Fprintf(a.out, "fingerprint %s  %s\n", fp.ID(), fp)
	if len(matches) == 0 {
		fmt.Fprintln(a.out, "no memories agree on error class, service role, environment and attack pattern")
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORE\tDECISION\tINCIDENT\tAGE\tANALYST\tNOTE\tDEAD ENDS")
	for _, m := range matches {
		fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Score, m.Incident.Decision, m.Incident.ID,
			age(a.now(), m.Incident.CreatedAt), dash(m.Incident.Analyst), dash(clip(oneLine(m.Incident.Note), 50)),
			dash(strings.Join(m.Incident.DeadEnds, "; ")))
	}
	return tw.Flush()
}

func (a *app) fingerprintFrom(cfg config.Config, canonical, input, rules string) (openrecall.Fingerprint, error) {
	if canonical != "" {
		fp, err := openrecall.ParseFingerprint(canonical)
		if err != nil {
			return fp, usageErr("--fingerprint: %v", err)
		}
		return fp, nil
	}
	alert, err := a.firstAlert(input)
	if err != nil {
		return openrecall.Fingerprint{}, err
	}
	ex, err := a.extractor(cfg, rules)
	if err != nil {
		return openrecall.Fingerprint{}, err
	}
	return ex.Extract(alert), nil
}

func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
