package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/usecase"
)

func newRoutesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "routes",
		Short: "The notify route tree: which receivers hear of a result, and why",
		Long: `The route tree of notify.route (DESIGN §12b) chooses the receivers of notify.receivers
that hear of each stored result, as Alertmanager's route tree does. 'routes test' shows what it
chooses for a stored analysis or for the alerts of a file.`,
		Example: `  openrecall routes test --analysis serve-000042
  openrecall routes test --decision escalated --route cheap alert.json`,
	}
	cmd.AddCommand(newRoutesTestCmd(a))
	return cmd
}

type routesTestOptions struct {
	input    string
	analysis string
	decision string
	route    string
	format   string
	rules    string
	senders  string
	output   string
}

// triagedRoutes are the values of --route: how triage may decide.
var triagedRoutes = []string{notify.RouteBypass, notify.RouteException, notify.RouteGroup, notify.RouteCheap,
	notify.RouteStrong, notify.RouteUnanalysed}

func newRoutesTestCmd(a *app) *cobra.Command {
	opts := &routesTestOptions{}
	cmd := &cobra.Command{
		Use:   "test [FILE|-]",
		Short: "Show which receivers a result would reach, and why",
		Long: `Show, for a stored analysis (--analysis ID, as serve stored it) or for each alert of a file
(read as analyze reads it; standard input when no file is named), which receivers the configured
route tree reaches and why: the route that matched and its matchers, as each notification the
outbox would hold. An alert of a file stands for a result triaged with --decision (default
escalated) by --route (default strong: how it was decided, which matchers on route read); a
recovery (status resolved) is not routed: it resolves its episode at each receiver that heard of
its trigger; an acknowledgement or a notice notifies no one. "no receiver" says why none is
reached. Receivers are built as serve builds them; when they cannot be (a secret of env:NAME
unset, say) the route tree is read alone and a warning says why. Nothing is written or sent; the
database is opened read-only, and only for --analysis. Exit 3 when records were rejected or the
input held no alerts, else 0, whatever is reached.`,
		Example: `  openrecall routes test --analysis serve-000042
  openrecall routes test --decision real --route cheap alert.json
  openrecall routes test -o json < webhook.json`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			if opts.analysis != "" && (opts.input != "" || cmd.Flags().Changed("decision") || cmd.Flags().Changed("route")) {
				return usageErr("--analysis reads a stored result: it takes no FILE, --decision or --route")
			}
			if d := openrecall.Decision(opts.decision); !d.Valid() {
				return usageErr("--decision %q: want one of %v", opts.decision, openrecall.Decisions)
			}
			if !slices.Contains(triagedRoutes, opts.route) {
				return usageErr("--route %q: want one of %v", opts.route, triagedRoutes)
			}
			return routesTestRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.analysis, "analysis", "", "a stored analysis id (serve-NNNNNN) to route, instead of alerts")
	f.StringVar(&opts.decision, "decision", string(openrecall.DecisionEscalated), "the decision the alerts of FILE stand for")
	f.StringVar(&opts.route, "route", notify.RouteStrong, "how the alerts of FILE were decided: "+strings.Join(triagedRoutes, ", "))
	f.StringVar(&opts.format, "format", "auto", "input format (see analyze --format)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML)")
	f.StringVar(&opts.senders, "senders", "", sendersFlagUsage)
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// routeTest is what `routes test` says of one result.
type routeTest struct {
	Position   *openrecall.Position `json:"position,omitempty"`
	AnalysisID string               `json:"analysis_id,omitempty"`
	AlertID    string               `json:"alert_id,omitempty"`
	// Error is why intake rejected the record.
	Error string `json:"error,omitempty"`
	// Fields are what the matchers read besides the alert's labels.
	Fields map[string]string `json:"fields,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// Receivers are those reached, in the order the walk reached them.
	Receivers []routeReached `json:"receivers"`
	// None says why no receiver is reached.
	None string `json:"none,omitempty"`
}

// routeReached is one receiver a result reaches.
type routeReached struct {
	Receiver string `json:"receiver"`
	Kind     string `json:"kind"`
	// Route is the path of the route that reached it ("" for the root,
	// the default) and Why its explanation (notify.Route.Explain).
	Route string `json:"route"`
	Why   string `json:"why"`
}

// reach says which receivers r reaches through the route tree root (nil
// when no receiver is configured), the notify section's rule
// (notify.Intents): a triaged result triggers those its routes reach, read
// through s (r's subject, its route standing for what triage would
// decide); a sender's recovery resolves its episode at those that heard of
// the alert; nothing else is notified.
func reach(root *notify.Route, r openrecall.Result, s notify.Subject) ([]routeReached, string) {
	switch {
	case r.Outcome == openrecall.ResultRejected:
		return []routeReached{}, "the record was rejected"
	case root == nil:
		return []routeReached{}, "no receiver is configured (notify.receivers)"
	case r.Outcome == openrecall.ResultResolved && r.Alert.Status == openrecall.StatusResolved:
		return []routeReached{}, "a recovery is not routed: it resolves its episode at each receiver that heard of the alert's trigger"
	case r.Outcome != openrecall.ResultTriaged:
		return []routeReached{}, fmt.Sprintf("a %s notification is recorded, not triaged, and notifies no one", dash(r.Alert.Status))
	}
	matches, lines := root.Receivers(s), root.Explain(s)
	if len(matches) == 0 {
		return []routeReached{}, `the route that matched sends to no one (receiver: "")`
	}
	out := make([]routeReached, len(matches))
	for i, m := range matches {
		out[i] = routeReached{Receiver: m.Receiver, Kind: openrecall.IntentTrigger, Route: m.Path, Why: lines[i]}
	}
	return out, ""
}

// routeTree reads the configuration's route tree as serve does
// (notifySettings: the receivers built, their secrets read). A dry run must
// not need the secrets: when the receivers cannot be built, the tree is
// read alone (notify.ReadRoute, over the receivers' names) and warn says
// why. An error in the tree itself is err.
func routeTree(cfg config.Config) (root *notify.Route, warn, err error) {
	s, serr := notifySettings(cfg)
	if serr == nil {
		return s.Route, nil, nil
	}
	root, err = notify.ReadRoute(&cfg.Notify)
	if err != nil {
		return nil, nil, fmt.Errorf("config: notify: %w", err)
	}
	return root, serr, nil
}

func routesTestRun(ctx context.Context, a *app, opts *routesTestOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	root, warn, err := routeTree(cfg)
	if err != nil {
		return err
	}
	if warn != nil {
		fmt.Fprintf(a.errOut, "openrecall: warning: the receivers cannot be built (%v); the route tree is read alone\n", warn)
	}
	if opts.analysis != "" {
		return routeAnalysis(ctx, a, cfg, root, opts)
	}
	return routeAlerts(a, cfg, root, opts)
}

// routeAnalysis routes the stored result of opts.analysis.
func routeAnalysis(ctx context.Context, a *app, cfg config.Config, root *notify.Route, opts *routesTestOptions) error {
	st, err := a.openReadStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	sv, err := usecase.ReadResult(ctx, st, opts.analysis, cfg.Server.Retention)
	if err != nil {
		return err
	}
	switch {
	case !sv.Done:
		return fmt.Errorf("analysis %s waits in the inbox: it has no result yet: %w", opts.analysis, openrecall.ErrNotFound)
	case sv.Result == nil:
		return fmt.Errorf("analysis %s: its stored result is withheld (integrity %s; audit verify names it): %w", opts.analysis, dash(sv.Integrity), openrecall.ErrIntegrity)
	}
	r := *sv.Result
	s := notify.SubjectOf(r)
	t := routeTest{AnalysisID: r.AnalysisID, AlertID: r.Alert.ID, Fields: s.Fields.NonEmpty(), Labels: s.Labels}
	t.Receivers, t.None = reach(root, r, s)
	doc := &jsonArray{w: a.out}
	if err := printRouteTest(a.out, opts.output, doc, t); err != nil {
		return err
	}
	if opts.output == outputJSON {
		return doc.close()
	}
	return nil
}

// routeAlerts routes each alert of opts.input as a result triaged with
// opts.decision by opts.route.
func routeAlerts(a *app, cfg config.Config, root *notify.Route, opts *routesTestOptions) error {
	rd, err := a.alertReader(cfg, opts.senders, opts.format, opts.rules, opts.input)
	if err != nil {
		return err
	}
	defer a.closeLogged("input", rd.in)
	ex := rd.ex
	doc := &jsonArray{w: a.out}
	records, rejected := 0, 0
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		records++
		var t routeTest
		if rec.Err != nil {
			rejected++
			pos := rec.Err.Position
			t = routeTest{Position: &pos, Error: rec.Err.Reason}
			t.Receivers, t.None = reach(root, openrecall.Result{Outcome: openrecall.ResultRejected}, notify.Subject{})
		} else {
			al := rec.Alert
			r := openrecall.Result{Outcome: openrecall.ResultResolved, Alert: al, Fingerprint: ex.Extract(al), Identity: ex.Identify(al)}
			if openrecall.Triaged(al.Status) {
				r.Outcome, r.Decision = openrecall.ResultTriaged, openrecall.Decision(opts.decision)
			}
			s := notify.SubjectOf(r)
			if r.Outcome == openrecall.ResultTriaged {
				s.Fields.Route = opts.route
			}
			pos := al.Position
			t = routeTest{Position: &pos, AlertID: al.ID, Fields: s.Fields.NonEmpty(), Labels: al.Labels}
			t.Receivers, t.None = reach(root, r, s)
		}
		if err := printRouteTest(a.out, opts.output, doc, t); err != nil {
			return err
		}
	}
	return rd.end(a, opts.output, doc, records, rejected)
}

// printRouteTest prints t: to doc for -o json, a line for -o jsonl, and
// for people a heading line with what the matchers read, then a line per
// receiver reached, or why none is.
func printRouteTest(w io.Writer, output string, doc *jsonArray, t routeTest) error {
	switch output {
	case outputJSON:
		return doc.add(t)
	case outputJSONL:
		return writeJSON(w, outputJSONL, t)
	}
	var head []string
	if t.Position != nil {
		pos := *t.Position
		pos.Source = ""
		head = append(head, pos.String())
	}
	if t.AnalysisID != "" {
		head = append(head, t.AnalysisID)
	}
	if t.AlertID != "" {
		head = append(head, "alert "+clip(t.AlertID, 40))
	}
	if t.Error != "" {
		head = append(head, "rejected: "+t.Error)
	}
	for _, f := range notify.Fields() {
		if v := t.Fields[f]; v != "" {
			head = append(head, f+"="+clip(v, 40))
		}
	}
	if _, err := fmt.Fprintln(w, strings.Join(head, "  ")); err != nil {
		return err
	}
	for _, r := range t.Receivers {
		if _, err := fmt.Fprintf(w, "    %-8s %s\n", r.Kind, r.Why); err != nil {
			return err
		}
	}
	if t.None != "" {
		_, err := fmt.Fprintf(w, "    no receiver: %s\n", t.None)
		return err
	}
	return nil
}
