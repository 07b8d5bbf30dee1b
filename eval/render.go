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
// per ground-truth decision and per family, the false bypasses, the targets, a one-line summary and,
// when present, the mode matrix.
func WriteTable(w io.Writer, out Output) error {
	r := out.Report
	ew := &errWriter{w: w}
	ew.printf("openrecall eval: %s, mode %s\n", r.Corpus, r.Mode)
	ew.printf("records %d (triaged %d, resolved %d, rejected %d); analyst decisions retained %d; a family counts towards bypass recall after its first %d analyst decisions\n\n",
		r.Records, r.Overall.Alerts, r.Resolved, r.Rejected, r.Retained, r.LearnAfter)

	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	header := "\tALERTS\tBYPASSED\tGROUPED\tFALSE CLOSED\tMISSED REAL\tBYPASS RECALL\tACCURACY\tESCALATED\tCHEAP\tSTRONG\tNO ANALYSIS\tCOMPRESSION\tCOST\tBASELINE\tSAVED\n"
	row := func(name string, s Stats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", name, s.Alerts, s.Bypassed, s.GroupedMembers, s.FalseBypasses, s.Missed,
			recallCell(s), pct(s.Accuracy()), pct(s.EscalationRate()), s.CheapCalls, s.StrongCalls, s.Unanalysed, pct(s.Compression()), s.Cost, s.Baseline, fmt.Sprintf("%.1f%%", s.SavingsPercent()))
	}
	fmt.Fprint(tw, "KIND"+header)
	row("overall", r.Overall)
	row("grouped", r.Grouped)
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

	if len(r.FalseBypasses) > 0 {
		ew.printf("\nFALSE CLOSURES (closed without a model, bypassed or through a group; truth real or an attack):\n")
		for i, fb := range r.FalseBypasses {
			if i == 20 {
				ew.printf("  … and %d more (see --output json)\n", len(r.FalseBypasses)-20)
				break
			}
			ew.printf("  %s  alert %s  %s  family %s  truth %s  closed as %s\n", fb.Position, fb.AlertID, fb.Kind, fb.Family, fb.Truth, fb.Decision)
		}
	}
	if len(r.Rejections) > 0 {
		ew.printf("\nREJECTED RECORDS (not replayed):\n")
		for i, rj := range r.Rejections {
			if i == 20 {
				ew.printf("  … and %d more\n", len(r.Rejections)-20)
				break
			}
			ew.printf("  %s: %s\n", rj.Position, rj.Reason)
		}
	}

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
		fmt.Sprintf("escalated_without_analysis=%d", s.Unanalysed),
		fmt.Sprintf("model_calls=cheap:%d,strong:%d", s.CheapCalls, s.StrongCalls),
		fmt.Sprintf("alerts_per_second=%.0f", r.AlertsPerSecond),
	}
	verdict := "SAFE"
	if !r.Safe() {
		verdict = "UNSAFE"
	}
	return "summary: " + verdict + " " + strings.Join(parts, " ")
}

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
