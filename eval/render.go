package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Output is everything one eval run prints: the report of the default mode
// and, with --modes, one row per mode.
type Output struct {
	Report Report    `json:"report"`
	Modes  []ModeRow `json:"modes,omitempty"`
}

// WriteJSON writes out as one indented JSON document.
func WriteJSON(w io.Writer, out Output) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write eval report: %w", err)
	}
	return nil
}

// WriteTable writes out for a person: the headline figures, a row per kind,
// per ground-truth decision and per family, the false bypasses, the pages,
// the targets, a one-line summary and, when present, the mode matrix.
func WriteTable(w io.Writer, out Output) error {
	r := out.Report
	ew := &errWriter{w: w}
	ew.printf("openrecall eval: %s, mode %s\n", r.Corpus, r.Mode)
	ew.printf("records %d (triaged %d, resolved %d, rejected %d); analyst decisions retained %d; a family counts towards bypass recall after its first %d analyst decisions\n\n",
		r.Records, r.Overall.Alerts, r.Resolved, r.Rejected, r.Retained, r.LearnAfter)

	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	header := "\tALERTS\tBYPASSED\tGROUPED\tEXCEPTED\tFALSE CLOSED\tMISSED REAL\tBYPASS RECALL\tACCURACY\tESCALATED\tCHEAP\tSTRONG\tNO ANALYSIS\tCOMPRESSION\tCOST\tBASELINE\tSAVED\n"
	row := func(name string, s Stats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", name, s.Alerts, s.Bypassed, s.GroupedMembers, s.Excepted, s.FalseBypasses, s.Missed,
			recallCell(s), pct(s.Accuracy()), pct(s.EscalationRate()), s.CheapCalls, s.StrongCalls, s.Unanalysed, pct(s.Compression()), s.Cost, s.Baseline, fmt.Sprintf("%.1f%%", s.SavingsPercent()))
	}
	fmt.Fprint(tw, "KIND"+header)
	row("overall", r.Overall)
	row("grouped", r.Grouped)
	row("exception", r.Exception)
	for _, g := range r.ByKind {
		row(g.Name, g.Stats)
	}
	fmt.Fprint(tw, "\n")
	fmt.Fprint(tw, "TRUTH"+header)
	for _, g := range r.ByTruth {
		row(g.Name, g.Stats)
	}
	fmt.Fprint(tw, "\n")
	fmt.Fprint(tw, "FAMILY"+header)
	var singles Stats
	nSingles := 0
	for _, g := range r.ByFamily {
		if g.Stats.Alerts == 1 {
			singles = addStats(singles, g.Stats)
			nSingles++
			continue
		}
		row(g.Name, g.Stats)
	}
	if nSingles > 0 {
		row(fmt.Sprintf("(%d one-alert families)", nSingles), singles)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	ew.list("FALSE CLOSURES (closed without a model, bypassed, by an exception or through a group; truth real or an attack)", len(r.FalseBypasses), " (see --output json)", func(i int) string {
		fb := r.FalseBypasses[i]
		return fmt.Sprintf("%s  alert %s  %s  family %s  truth %s  closed as %s", fb.Position, fb.AlertID, fb.Kind, fb.Family, fb.Truth, fb.Decision)
	})
	ew.list("MISSED REAL (truth real or an attack, decided benign; a model's verdict is a proposal the analyst reviews, never a closure)", len(r.MissedReal), " (see --output json)", func(i int) string {
		m := r.MissedReal[i]
		by := "by the " + m.By + " model after analysis, not marked for a person's approval"
		if m.Approval {
			by = "by the " + m.By + " model after analysis, for a person's approval"
		}
		switch m.By {
		case "memory":
			by = "closed by memory without a model: a false bypass"
		case "group":
			by = "closed through its alert group, without a model: a false closure"
		case "exception":
			by = "closed by an exception, without a model: a false closure"
		case "":
			by = "with no model answer accepted"
		}
		return fmt.Sprintf("%s  alert %s  %s  family %s  truth %s  decided %s %s", m.Position, m.AlertID, m.Kind, m.Family, m.Truth, m.Decision, by)
	})
	ew.list("REJECTED RECORDS (not replayed)", len(r.Rejections), "", func(i int) string {
		return fmt.Sprintf("%s: %s", r.Rejections[i].Position, r.Rejections[i].Reason)
	})

	ew.printf("\nEXCEPTIONS: %d result(s) carried a proposal; the analyst approved %d and declined %d (made for an alert whose truth is real); %d alert(s) closed by an exception: %d model call(s) saved, %s of baseline; %d of them falsely\n",
		r.Exceptions.Proposals, r.Exceptions.Approved, r.Exceptions.Declined, r.Exception.Alerts, r.Exception.Alerts, r.Exception.Savings(), r.Exception.FalseBypasses)
	if st := r.Storms; st.Firings > 0 || st.Intruders > 0 {
		ew.printf("DETECTION STORMS: %d storm firing(s) in %d group(s); %d intruder firing(s) (one entity field differs), %d in no group of the storm's firings, %d closed without a person\n",
			st.Firings, st.Groups, st.Intruders, st.Apart, st.Closed)
	}

	ew.printf("PAGES: %s: %d firing(s), one page each without openrecall or one per Alertmanager notification; with it, %d notification(s) by %s\n",
		r.Pages, r.Pages.Firings, r.Pages.Notifications, pagesRouteName(r.PagesRoute))

	ew.printf("\nTARGETS\n")
	for _, t := range r.Targets {
		got := pct(t.Got)
		switch t.Name {
		case "false_bypasses":
			got = fmt.Sprintf("%.0f", t.Got)
		case "savings_percent":
			got = fmt.Sprintf("%.1f%%", t.Got)
		}
		state := "met"
		if !t.Met {
			state = "MISSED: " + t.Gap
		}
		ew.printf("  %-16s want %-7s got %-8s %s\n", t.Name, t.Want, got, state)
	}
	ew.printf("\n%s\n", Summary(r))
	if n := reviewed(r.Overall); n > 0 {
		verdict := "SAFE"
		if !r.Safe() {
			verdict = "UNSAFE"
		}
		ew.printf("%s counts closures only (false_bypasses: alerts closed without a model, by memory, an exception or a group). missed_real=%d: %d of them a model's benign verdict after analysis on an alert whose truth is real (listed under MISSED REAL): a proposal the analyst reviews, never a closure; an accuracy error a person must catch.\n",
			verdict, r.Overall.Missed, n)
	}

	if len(out.Modes) > 0 {
		ew.printf("\nMODES (memory backend × model)\n")
		tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, "MODE\tFALSE BYPASS\tBYPASS RECALL\tACCURACY\tESCALATED\tSAVED\tALERTS/S\tSTATUS\n")
		for _, m := range out.Modes {
			if m.Report == nil {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\tunavailable: %s\n", m.Mode, m.Reason)
				continue
			}
			s := m.Report.Overall
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.1f%%\t%.0f\tran\n", m.Mode, s.FalseBypasses, recallCell(s), pct(s.Accuracy()),
				pct(s.EscalationRate()), s.SavingsPercent(), m.Report.AlertsPerSecond)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return ew.err
}

// Summary returns the one-line summary of the target figures.
func Summary(r Report) string {
	s := r.Overall
	parts := []string{
		fmt.Sprintf("false_bypasses=%d", s.FalseBypasses),
		fmt.Sprintf("missed_real=%d", s.Missed),
		"bypass_recall=" + recallCell(s),
		"accuracy=" + pct(s.Accuracy()),
		"escalation_rate=" + pct(s.EscalationRate()),
		fmt.Sprintf("cost=%s baseline=%s savings=%.1f%%", s.Cost, s.Baseline, s.SavingsPercent()),
		fmt.Sprintf("pages_without=%d pages_with=%d pages_avoided=%.1f%%", r.Pages.Without, r.Pages.With, r.Pages.AvoidedPercent()),
		fmt.Sprintf("escalated_without_analysis=%d", s.Unanalysed),
		fmt.Sprintf("model_calls=cheap:%d,strong:%d", s.CheapCalls, s.StrongCalls),
		"compression=" + pct(s.Compression()),
		// excepted: the model calls exceptions saved (one per alert closed).
		fmt.Sprintf("excepted=%d proposals=%d approved=%d declined=%d", s.Excepted,
			r.Exceptions.Proposals, r.Exceptions.Approved, r.Exceptions.Declined),
		fmt.Sprintf("alerts_per_second=%.0f", r.AlertsPerSecond),
	}
	verdict := "SAFE"
	if !r.Safe() {
		verdict = "UNSAFE"
	}
	return "summary: " + verdict + " " + strings.Join(parts, " ")
}

// pagesRouteName names the route tree a report's pages were counted
// with (Report.PagesRoute) for people.
func pagesRouteName(route string) string {
	if route == "configured" {
		return "the configuration's notify route"
	}
	return `the default paging route (decision=~"escalated|real")`
}

// reviewed returns how many of s's missed real alerts were not bypassed:
// a model's benign verdicts, which the analyst reviews.
func reviewed(s Stats) int { return s.Missed - s.FalseBypasses }

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func recallCell(s Stats) string {
	if s.Eligible == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*s.BypassRecall(), s.EligibleBypassed, s.Eligible)
}

// errWriter keeps the first write error, so rendering code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// list prints a heading and the first 20 of n lines (line(i) gives each),
// then how many more there are and where (more); nothing when n is 0.
func (e *errWriter) list(heading string, n int, more string, line func(i int) string) {
	if n == 0 {
		return
	}
	e.printf("\n%s:\n", heading)
	for i := range min(n, 20) {
		e.printf("  %s\n", line(i))
	}
	if n > 20 {
		e.printf("  … and %d more%s\n", n-20, more)
	}
}
