package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
)

type fingerprintOptions struct {
	input   string
	format  string
	rules   string
	senders string
	explain bool
	output  string
}

func newFingerprintCmd(a *app) *cobra.Command {
	opts := &fingerprintOptions{}
	cmd := &cobra.Command{
		Use:   "fingerprint [FILE|-]",
		Short: "Print the identity and Alert DNA of every alert",
		Long: `Print each alert's six-field Alert DNA — its short id and canonical string
(error_class=…;service_role=…;dependency_pattern=…;signal_shape=…;attack_pattern=…;environment=…) —
and its identity, last: "rule @ service", or "-" when it has none.
--explain shows which label or rule set each identity part and each field.
No database is opened.`,
		Example: `  openrecall fingerprint examples/queue.jsonl
  openrecall fingerprint --explain alert.json
  openrecall fingerprint -o jsonl --rules my-rules.yaml - < queue.jsonl`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return fingerprintRun(a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.format, "format", "auto", "input format (see analyze --format)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML)")
	f.StringVar(&opts.senders, "senders", "", sendersFlagUsage)
	f.BoolVar(&opts.explain, "explain", false, "show the label or rule behind each identity part and field")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

type fingerprintLine struct {
	Position    openrecall.Position     `json:"position"`
	AlertID     string                  `json:"alert_id,omitempty"`
	Error       string                  `json:"error,omitempty"`
	ID          string                  `json:"fingerprint_id,omitempty"`
	Canonical   string                  `json:"canonical,omitempty"`
	Fingerprint *openrecall.Fingerprint `json:"fingerprint,omitempty"`
	Identity    *openrecall.Identity    `json:"identity,omitempty"`
	// Sender names the sender adapter that read the alert and, with
	// --explain, Origin the payload field each part came from.
	Sender string            `json:"sender,omitempty"`
	Origin map[string]string `json:"origin,omitempty"`
	// IdentityEvidence says which label or rule set each identity part.
	IdentityEvidence []fingerprint.Evidence `json:"identity_evidence,omitempty"`
	Evidence         []fingerprint.Evidence `json:"evidence,omitempty"`
}

func fingerprintRun(a *app, opts *fingerprintOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	r, err := a.alertReader(cfg, opts.senders, opts.format, opts.rules, opts.input)
	if err != nil {
		return err
	}
	defer a.closeLogged("input", r.in)
	ex := r.ex
	rejected, records := 0, 0
	doc := &jsonArray{w: a.out} // -o json: one array of every line
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var l fingerprintLine
		if rec.Err != nil {
			rejected++
			l = fingerprintLine{Position: rec.Err.Position, Error: rec.Err.Reason}
		} else {
			fp, ev := ex.Explain(rec.Alert)
			id, idEv := ex.ExplainIdentity(rec.Alert)
			l = fingerprintLine{Position: rec.Alert.Position, AlertID: rec.Alert.ID, ID: fp.ID(), Canonical: fp.String(), Fingerprint: &fp, Identity: &id}
			if opts.explain {
				l.Evidence = ev
				l.IdentityEvidence = idEv
				l.Sender, l.Origin = rec.Alert.Sender, rec.Alert.Origin
			}
		}
		records++
		if opts.output == outputJSON {
			err = doc.add(l)
		} else {
			err = printFingerprintLine(a.out, opts.output, l)
		}
		if err != nil {
			return err
		}
	}
	return r.end(a, opts.output, doc, records, rejected)
}

func printFingerprintLine(w io.Writer, format string, l fingerprintLine) error {
	if format != outputTable {
		return writeJSON(w, outputJSONL, l)
	}
	pos := l.Position
	pos.Source = ""
	if l.Error != "" {
		_, err := fmt.Fprintf(w, "%-16s rejected: %s\n", pos.String(), l.Error)
		return err
	}
	// The identity comes last and whole: clipped, two rules could look alike.
	if _, err := fmt.Fprintf(w, "%-16s %-24s %s  %s  %s\n", clip(pos.String(), 16), clip(l.AlertID, 24), l.ID, l.Canonical, l.Identity.String()); err != nil {
		return err
	}
	if l.Sender != "" {
		if _, err := fmt.Fprintf(w, "    %-18s = %s%s\n", "sender", l.Sender, originList(l.Origin)); err != nil {
			return err
		}
	}
	for _, e := range append(l.IdentityEvidence, l.Evidence...) {
		if _, err := fmt.Fprintf(w, "    %-18s = %-20s from %s (%s)\n", e.Field, e.Value, e.Source, e.Rule); err != nil {
			return err
		}
	}
	return nil
}

// originList renders where each part of a sender's alert came from, in a
// fixed order: " (title from Subject, id from MessageId)".
func originList(origin map[string]string) string {
	var parts []string
	for _, part := range []string{"title", "severity", "service", "environment", "rule", "id"} {
		if f := origin[part]; f != "" {
			parts = append(parts, part+" from "+f)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// alertInput is the alerts a command reads without triaging them, as
// alertReader opens them.
type alertInput struct {
	*intake.Reader
	ex *fingerprint.Extractor
	// source names the input, for the error that says it held nothing.
	source string
	in     io.Closer
}

// alertReader opens the alerts of input as the commands that read alerts
// without triaging them do (fingerprint, routes test): the configured
// senders and those of sendersDir, the --format, and the extractor of the
// --rules. The caller closes in.
func (a *app) alertReader(cfg config.Config, sendersDir, formatFlag, rulesFlag, input string) (alertInput, error) {
	senders, err := a.senders(cfg, sendersDir)
	if err != nil {
		return alertInput{}, err
	}
	format, err := intake.ParseFormatIn(formatFlag, senders)
	if err != nil {
		return alertInput{}, usageErr("--format: %v", err)
	}
	ex, err := a.extractor(cfg, rulesFlag)
	if err != nil {
		return alertInput{}, err
	}
	in, source, err := a.openInput(input)
	if err != nil {
		return alertInput{}, err
	}
	return alertInput{Reader: intake.NewReader(in, intake.Options{Format: format, Source: source, Senders: senders}), ex: ex, source: source, in: in}, nil
}

// end finishes a read of the input: the -o json array closed, an input
// that held no record refused, and rejected records said (exit 3).
func (in alertInput) end(a *app, output string, doc *jsonArray, records, rejected int) error {
	if output == outputJSON {
		if err := doc.close(); err != nil {
			return err
		}
	}
	if records == 0 {
		return noAlerts(in.source)
	}
	if rejected > 0 {
		fmt.Fprintf(a.errOut, "openrecall: %d record(s) rejected\n", rejected)
		return &exitError{code: exitPartial}
	}
	return nil
}
