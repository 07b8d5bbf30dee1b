package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/usecase"
)

type retainOptions struct {
	input       string
	fingerprint string
	alertID     string
	analysisID  string
	group       string
	rule        string
	service     string
	severity    string
	decision    string
	note        string
	deadEnds    []string
	analyst     string
	impact      int
	expires     string
	supersedes  string
	rules       string
	output      string
}

func newRetainCmd(a *app) *cobra.Command {
	opts := &retainOptions{}
	cmd := &cobra.Command{
		Use:   "retain [FILE|-] --decision DECISION",
		Short: "Record an analyst decision for alerts or a fingerprint",
		Long: `Record what an analyst decided, so that the same alert recalls it.

Give the alerts (every record of FILE or standard input, in any intake format: each alert's
fingerprint, identity (rule and service), severity and id are taken from it, and each is retained)
or a canonical fingerprint with --fingerprint, and then its identity with --rule and --service
and its severity with --severity. Only memories of the same identity vote for a bypass: a memory
without a rule is related knowledge only, and retain warns about it. Retaining the same decision,
note and alert again is harmless: it reports "already known" and stores nothing new. Decisions on
two different alerts of one rule are two memories; that is how evidence accumulates until memory
can vouch for the rule.

--group ID decides an alert group (a storm: the firings of one alert grouped under its first,
see 'openrecall groups') once: one memory about the group's head (a storm is one vote, never one
per firing), the decision recorded on every firing and in the audit trail, and the group closed,
so later firings start a new one. --analysis-id of a firing of an open group decides its group.

--expires makes the memory stop voting after a time (a date, an RFC 3339 time, or a duration such
as 720h or 30d from now). --supersedes ID takes the decision of memory ID back and stores this one
in its place (one alert only); 'memory forget ID' takes one back without a replacement.`,
		Example: `  openrecall retain alert.json --decision known_benign --note "nightly batch restart" \
      --dead-end "restarting the pod" --analyst alice
  openrecall retain --fingerprint 'error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod' \
      --rule KubePodOOMKilled --service reports --severity high --decision real --note "leak in v2.3"
  openrecall retain --analysis-id serve-000042 --decision false_positive --analyst bob
  openrecall retain --group g-serve-000040 --decision known_benign --note "deploy storm" --analyst bob`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.decision == "" {
				return usageErr("--decision is required: %s", usecase.Decisions())
			}
			if opts.fingerprint != "" && len(args) == 1 {
				return usageErr("give an alert or --fingerprint, not both")
			}
			if opts.analysisID != "" && (opts.fingerprint != "" || len(args) == 1) {
				return usageErr("give --analysis-id alone, without an alert or --fingerprint")
			}
			if opts.group != "" && (opts.fingerprint != "" || opts.analysisID != "" || opts.supersedes != "" || opts.alertID != "" || len(args) == 1) {
				return usageErr("give --group alone: a group's memory is about its head's alert")
			}
			if opts.fingerprint == "" && (opts.rule != "" || opts.service != "" || opts.severity != "") {
				return usageErr("--rule, --service and --severity go with --fingerprint; an alert carries its own")
			}
			if opts.rule == "" && opts.service != "" {
				return usageErr("--service %q needs --rule: an identity is a rule, with its service", opts.service)
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
	f.StringVar(&opts.analysisID, "analysis-id", "", "an analysis of 'openrecall serve' (serve-NNNNNN) or one that waits for a person (openrecall queue): retain about the alert it analysed, settling it; a firing of an open alert group decides the group")
	f.StringVar(&opts.group, "group", "", "an alert group (see 'openrecall groups'): decide the whole storm once, as one memory about its head")
	f.StringVar(&opts.rule, "rule", "", "rule (alertname) of the alert the decision is about (with --fingerprint)")
	f.StringVar(&opts.service, "service", "", "service of the alert the decision is about (with --fingerprint)")
	f.StringVar(&opts.severity, "severity", "", "severity of the alert: critical, high, medium, low, info (with --fingerprint; default unknown)")
	f.StringVar(&opts.decision, "decision", "", usecase.Decisions())
	f.StringVar(&opts.note, "note", "", "what the analyst found")
	f.StringArrayVar(&opts.deadEnds, "dead-end", nil, "something tried that did not help (repeatable)")
	f.StringVar(&opts.analyst, "analyst", "", "who decided")
	f.IntVar(&opts.impact, "impact-minutes", 0, "business impact in minutes")
	f.StringVar(&opts.expires, "expires", "", "stop voting after this date, time or duration (2026-12-31, 720h, 30d)")
	f.StringVar(&opts.supersedes, "supersedes", "", "id of a memory this decision replaces (it is taken back)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML)")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// parseExpiry reads --expires: a date (midnight UTC), an RFC 3339 time, or a
// duration from now (Go syntax, or whole days such as 30d).
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return now.Add(time.Duration(n) * 24 * time.Hour).UTC(), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d).UTC(), nil
	}
	return time.Time{}, usageErr("--expires %q: want a date (2026-12-31), an RFC 3339 time or a positive duration (720h, 30d)", s)
}

// parseSeverity reads --severity: a normalized severity, or warning (as
// Alertmanager rules name it) for medium.
func parseSeverity(s string) (openrecall.Severity, error) {
	sev := openrecall.Severity(strings.ToLower(strings.TrimSpace(s)))
	switch {
	case sev == "warning" || sev == "warn":
		return openrecall.SeverityMedium, nil
	case sev.Valid():
		return sev, nil
	}
	return "", usageErr("--severity %q: want critical, high, medium (or warning), low, info or unknown", s)
}

func retainRun(ctx context.Context, a *app, opts *retainOptions) error {
	d, err := usecase.ParseDecision(opts.decision)
	if err != nil {
		return usageErr("--decision %q: want %s", opts.decision, usecase.Decisions())
	}
	expires, err := parseExpiry(opts.expires, a.now())
	if err != nil {
		return err
	}
	if opts.group != "" {
		return a.decideGroup(ctx, opts, usecase.Decision{Decision: d, Note: opts.note, DeadEnds: opts.deadEnds,
			Analyst: opts.analyst, ImpactMinutes: opts.impact, ExpiresAt: expires})
	}
	about, rejected, err := a.retainSubject(opts)
	if err != nil {
		return err
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	ex, err := a.extractor(cfg, opts.rules)
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	results, err := a.useCases(cfg, st, ex).Retain(ctx, usecase.RetainRequest{
		Decision: usecase.Decision{Decision: d, Note: opts.note, DeadEnds: opts.deadEnds, Analyst: opts.analyst,
			ImpactMinutes: opts.impact, AlertID: opts.alertID, ExpiresAt: expires},
		Subject:      about,
		Supersedes:   opts.supersedes,
		IdentityHint: "no alertname, class or title; give --rule with --fingerprint",
	})
	if pe := (*openrecall.PrunedError)(nil); errors.As(err, &pe) && pe.Retention == 0 {
		pe.Retention = cfg.Server.Retention
	}
	if errors.Is(err, openrecall.ErrNotFound) && opts.analysisID != "" {
		return fmt.Errorf("analysis %q is neither an analysis 'openrecall serve' stored in %s nor one that waits for a person (openrecall queue lists those; for other analyses, retain the alert file): %w", opts.analysisID, st.Path(), err)
	}
	if err != nil {
		return err
	}
	if err := a.printRetained(opts.output, results); err != nil {
		return err
	}
	if rejected > 0 {
		return &exitError{code: exitPartial}
	}
	return nil
}

// retainSubject is what retain's flags and input name: an analysis, a
// fingerprint with its identity and severity, or the alerts of the input
// (with the number of its records rejected).
func (a *app) retainSubject(opts *retainOptions) (usecase.Subject, int, error) {
	switch {
	case opts.analysisID != "":
		return usecase.Subject{AnalysisID: opts.analysisID}, 0, nil
	case opts.fingerprint != "":
		fp, err := openrecall.ParseFingerprint(opts.fingerprint)
		if err != nil {
			return usecase.Subject{}, 0, usageErr("--fingerprint: %v", err)
		}
		s := usecase.Subject{Fingerprint: &fp, Identity: openrecall.Identity{Rule: strings.TrimSpace(opts.rule), Service: strings.ToLower(strings.TrimSpace(opts.service))}}
		if opts.severity != "" {
			if s.Severity, err = parseSeverity(opts.severity); err != nil {
				return usecase.Subject{}, 0, err
			}
		}
		return s, 0, nil
	}
	senders, err := a.configSenders()
	if err != nil {
		return usecase.Subject{}, 0, err
	}
	alerts, rejected, err := a.readAlerts(opts.input, senders)
	if err != nil {
		return usecase.Subject{}, rejected, err
	}
	if opts.supersedes != "" && len(alerts) != 1 {
		return usecase.Subject{}, rejected, usageErr("--supersedes replaces one memory: give one alert, not %d", len(alerts))
	}
	if opts.alertID != "" && len(alerts) != 1 {
		return usecase.Subject{}, rejected, usageErr("--alert-id names one alert: the input holds %d (each alert's own id is used without it)", len(alerts))
	}
	return usecase.Subject{Alerts: alerts}, rejected, nil
}

// printRetained writes retain's outcomes: warnings on standard error, and
// with -o json one document (the outcome when one alert was retained, an
// array of them when the file held several).
func (a *app) printRetained(output string, results []usecase.Retained) error {
	for _, r := range results {
		if r.Warning != "" {
			fmt.Fprintf(a.errOut, "openrecall: warning: %s: %s\n", r.Incident.ID, r.Warning)
		}
		switch output {
		case outputJSON:
			continue
		case outputJSONL:
			if err := writeJSON(a.out, outputJSONL, r); err != nil {
				return err
			}
			continue
		}
		state := "retained"
		if !r.Created {
			state = "already known"
		}
		fmt.Fprintf(a.out, "%s %s: %s for %s  %s\n", state, r.Incident.ID, r.Incident.Decision, r.Incident.Identity, r.Incident.Fingerprint)
		if r.Group != nil {
			fmt.Fprintf(a.out, "decided group %s: %d firings (head %s, alert %s), closed\n", r.Group.ID, r.Group.Size, r.Group.Head.AnalysisID, r.Group.Head.AlertID)
		}
		if r.Superseded != nil {
			fmt.Fprintf(a.out, "took back %s: %s for %s\n", r.Superseded.ID, r.Superseded.Decision, r.Superseded.Identity)
		}
	}
	if output == outputJSON && len(results) > 0 {
		var doc any = results
		if len(results) == 1 {
			doc = results[0]
		}
		return writeJSON(a.out, outputJSON, doc)
	}
	return nil
}

// readAlerts reads every alert of FILE or standard input. Rejected records
// are reported on standard error with their position and counted; no alert
// at all is a usage error. senders read the payloads.
func (a *app) readAlerts(name string, senders sender.Set) ([]openrecall.Alert, int, error) {
	in, source, err := a.openInput(name)
	if err != nil {
		return nil, 0, err
	}
	defer a.closeLogged("input", in)
	r := intake.NewReader(in, intake.Options{Source: source, Senders: senders})
	var alerts []openrecall.Alert
	bad := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad, err
		}
		if rec.Err != nil {
			bad++
			fmt.Fprintf(a.errOut, "openrecall: %s\n", rec.Err.Error())
			continue
		}
		alerts = append(alerts, rec.Alert)
	}
	if len(alerts) == 0 {
		if bad > 0 {
			return nil, bad, fmt.Errorf("no valid alert in %s (%d rejected): %w", source, bad, openrecall.ErrInvalid)
		}
		return nil, 0, usageErr("no alert in %s: give an alert or --fingerprint", source)
	}
	return alerts, bad, nil
}

// firstAlert reads the first alert of FILE or standard input with
// senders.
func (a *app) firstAlert(name string, senders sender.Set) (openrecall.Alert, error) {
	in, source, err := a.openInput(name)
	if err != nil {
		return openrecall.Alert{}, err
	}
	defer a.closeLogged("input", in)
	rec, err := intake.NewReader(in, intake.Options{Source: source, Senders: senders}).Next()
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
	rule        string
	service     string
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
--fingerprint (with --rule and --service for its identity), with their identities, scores,
decisions, notes and dead ends, best first. Only memories that agree on error class, service
role, environment and attack pattern are recalled. Memories of the same identity may vote for a
bypass; memories of other rules (or without an identity, or expired) are marked "related": they
are shown for their notes and dead ends and never vote.`,
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
			if opts.fingerprint == "" && (opts.rule != "" || opts.service != "") {
				return usageErr("--rule and --service go with --fingerprint; an alert carries its own")
			}
			return recallRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.fingerprint, "fingerprint", "", "canonical fingerprint (instead of an alert)")
	f.StringVar(&opts.rule, "rule", "", "rule of the alert (with --fingerprint)")
	f.StringVar(&opts.service, "service", "", "service of the alert (with --fingerprint)")
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
	var about usecase.Subject
	if opts.fingerprint != "" {
		fp, err := openrecall.ParseFingerprint(opts.fingerprint)
		if err != nil {
			return usageErr("--fingerprint: %v", err)
		}
		about = usecase.Subject{Fingerprint: &fp, Identity: openrecall.Identity{Rule: strings.TrimSpace(opts.rule), Service: strings.ToLower(strings.TrimSpace(opts.service))}}
	} else {
		senders, err := a.senders(cfg, "")
		if err != nil {
			return err
		}
		alert, err := a.firstAlert(opts.input, senders)
		if err != nil {
			return err
		}
		about = usecase.Subject{Alerts: []openrecall.Alert{alert}}
	}
	ex, err := a.extractor(cfg, opts.rules)
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
	rc, err := a.useCases(cfg, st, ex).Recall(ctx, about, limit)
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, rc)
	}
	return printRecalled(a.out, a.now(), rc)
}

// printRecalled writes recall's table.
func printRecalled(w io.Writer, now time.Time, rc usecase.Recalled) error {
	id, fp, matches := rc.Identity, rc.Fingerprint, rc.Matches
	fmt.Fprintf(w, "identity    %s\nfingerprint %s  %s\n", id, fp.ID(), fp)
	if id.IsZero() {
		fmt.Fprintln(w, "the alert has no identity: memory can show related knowledge but never vouch for it")
	}
	if len(matches) == 0 {
		fmt.Fprintln(w, "no memories of this alert, and none of another agreeing on error class, service role, environment and attack pattern")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORE\tMATCH\tIDENTITY\tSEVERITY\tDECISION\tINCIDENT\tAGE\tANALYST\tNOTE\tDEAD ENDS")
	for _, m := range matches {
		kind := "same alert"
		if m.Related {
			kind = "related"
		}
		fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Score, kind, clip(m.Incident.Identity.String(), 40),
			dash(string(m.Incident.Severity)), m.Incident.Decision, m.Incident.ID,
			age(now, m.Incident.CreatedAt), dash(m.Incident.Analyst), dash(clip(oneLine(m.Incident.Note), 50)),
			dash(strings.Join(m.Incident.DeadEnds, "; ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range rc.Proposals {
		state := "waiting for a person: openrecall exception approve " + p.ID + " --analyst NAME"
		if p.ApprovedAs != "" {
			state = "approved as " + p.ApprovedAs
		}
		fmt.Fprintf(w, "proposed exception %s: %s, match %s, ceiling %s (%s)\n", p.ID, p.Decision, openrecall.MatchString(p.Match), p.MaxSeverity, state)
	}
	return nil
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

// decideGroup decides the alert group opts.group (retain --group).
func (a *app) decideGroup(ctx context.Context, opts *retainOptions, d usecase.Decision) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	dg, err := a.useCases(cfg, st, nil).DecideGroup(ctx, opts.group, d)
	if errors.Is(err, openrecall.ErrNotFound) {
		return fmt.Errorf("group %q is not among the groups stored in %s (see 'openrecall groups'): %w", opts.group, st.Path(), err)
	}
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, dg)
	}
	state := "retained"
	if !dg.Created {
		state = "already known"
	}
	fmt.Fprintf(a.out, "%s %s: %s for %s  %s\n", state, dg.Incident.ID, dg.Incident.Decision, dg.Incident.Identity, dg.Incident.Fingerprint)
	fmt.Fprintf(a.out, "decided group %s: %d firings (head %s, alert %s), closed\n", dg.Group.ID, len(dg.Members), dg.Group.Head.AnalysisID, dg.Group.Head.AlertID)
	return nil
}
