package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
)

// sendersFlagUsage is the --senders flag's help, the same on every
// command that takes it.
const sendersFlagUsage = "directory of sender mapping files (YAML) laid over the built-in senders (default: the config's senders.dir)"

func newSendersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "senders",
		Short: "List the senders openrecall reads, and show how one reads a payload",
		Long: `Senders are the tools that post alerts to openrecall (Alertmanager, Datadog, Falco, …):
each is read by a mapping of its payload to the parts of an alert. A team adds its own, or
overrides a built-in one, with mapping files in the directory named by senders.dir (or
--senders DIR); they are validated at start, with errors that name the file, line and field.
'senders list' shows every sender; 'senders test FILE' reads a payload as analyze and serve
would and shows each part with the field it came from.`,
		Example: `  openrecall senders list
  openrecall senders list --senders ./senders -o json
  openrecall senders test payload.json
  openrecall senders test --senders ./senders --sender acme-monitor payload.json`,
	}
	cmd.AddCommand(newSendersListCmd(a), newSendersTestCmd(a))
	return cmd
}

type sendersListOptions struct {
	senders string
	output  string
}

func newSendersListCmd(a *app) *cobra.Command {
	opts := &sendersListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every sender: its kind, endpoint and where each part of its alerts comes from",
		Long: `List every sender openrecall reads, in detection order: its name (the path segment of
POST /api/v1/alerts/NAME and a --format value), its display name, its kind (a built-in sender
intake's own reader reads, a built-in adapter, a team's mapping file, or a mapping that
overrides a built-in), whether it is a security detection source (its every alert an attack),
and the payload fields its title, severity, service, rule and id come from.`,
		Example: `  openrecall senders list
  openrecall senders list --senders ./senders
  openrecall senders list -o json | jq '.[] | select(.kind == "mapping")'`,
		Args: exactArgs(0),
		RunE: func(_ *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return sendersListRun(a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.senders, "senders", "", sendersFlagUsage)
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// senderEntry is one sender as senders list shows it.
type senderEntry struct {
	Name    string `json:"name"`
	Display string `json:"display"`
	// Kind is built-in reader, built-in adapter, mapping or override.
	Kind sender.Kind `json:"kind"`
	// File is the mapping file a team's sender came from.
	File     string `json:"file,omitempty"`
	Security bool   `json:"security"`
	Endpoint string `json:"endpoint"`
	// Parts name the payload field each part comes from, by part.
	Parts []partOrigin `json:"parts,omitempty"`
	Point string       `json:"point,omitempty"`
	Auth  string       `json:"auth,omitempty"`
}

// partOrigin is where one part of a sender's alerts comes from.
type partOrigin struct {
	Part string `json:"part"`
	From string `json:"from"`
}

// docParts are the parts a sender's Doc names, in the order shown.
func docParts(d sender.Doc) []partOrigin {
	var out []partOrigin
	for _, p := range []partOrigin{
		{sender.PartTitle, d.Title}, {sender.PartSeverity, d.Severity}, {sender.PartService, d.Service},
		{sender.PartRule, d.Rule}, {sender.PartID, d.ID},
	} {
		if strings.TrimSpace(p.From) != "" {
			out = append(out, p)
		}
	}
	return out
}

// endpoint is the URL path that serves a sender.
func endpoint(name string) string { return "POST /api/v1/alerts/" + name }

func sendersListRun(a *app, opts *sendersListOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	set, files, err := a.loadSenders(cfg, opts.senders)
	if err != nil {
		return err
	}
	var list []senderEntry
	for _, sd := range set.Senders() {
		kind, _ := set.Kind(sd.Name)
		e := senderEntry{Name: sd.Name, Display: sd.Display, Kind: kind, Security: sd.Security, Endpoint: endpoint(sd.Name),
			Parts: docParts(sd.Doc), Point: sd.Doc.Point, Auth: sd.Doc.Auth}
		if kind == sender.KindMapping || kind == sender.KindOverride {
			e.File = files[sd.Name]
		}
		list = append(list, e)
	}
	if opts.output != outputTable {
		return writeList(a, opts.output, list)
	}
	fmt.Fprintf(a.out, "%-24s %-17s %-8s %s\n", "NAME", "KIND", "SECURITY", "ENDPOINT")
	for _, e := range list {
		fmt.Fprintf(a.out, "%-24s %-17s %-8s %s\n", e.Name, e.Kind, yesNo(e.Security), e.Endpoint)
		if e.Display != "" {
			fmt.Fprintf(a.out, "    %s\n", e.Display)
		}
		if e.File != "" {
			fmt.Fprintf(a.out, "    %-12s %s\n", "file", e.File)
		}
		for _, p := range e.Parts {
			fmt.Fprintf(a.out, "    %-12s from %s\n", p.Part, oneLine(p.From))
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

type sendersTestOptions struct {
	input   string
	sender  string
	senders string
	output  string
}

func newSendersTestCmd(a *app) *cobra.Command {
	opts := &sendersTestOptions{}
	cmd := &cobra.Command{
		Use:   "test FILE|-",
		Short: "Read a payload as openrecall would and show each part with the field it came from",
		Long: `Read FILE (a sender's JSON payload, as it would POST it; - for standard input) as analyze
and serve read it — as the named sender's with --sender NAME (what POST /api/v1/alerts/NAME
does), else detecting the sender as POST /api/v1/alerts does — and show, for each alert read,
the sender and each part: title, text, severity as sent and normalized, service, environment,
host, rule, id, status, timestamp, labels, entities and links, each with the payload field or
expression it came from ("as documented" when the reading names none and the sender's
documentation does). A payload no sender recognises is read by the generic reading, and the
output says so. No database is opened.

Exit status: 0 when every record was read; 3 when some were rejected; 1 when the file cannot
be read or nothing in it can (each record rejected); 2 for bad flags or an unknown --sender.`,
		Example: `  openrecall senders test payload.json
  openrecall senders test --sender datadog -o json payload.json
  openrecall senders test --senders ./senders --sender acme-monitor payload.json`,
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.input = args[0]
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return sendersTestRun(a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.sender, "sender", "", "read the payload as this sender's (default: detect the sender)")
	f.StringVar(&opts.senders, "senders", "", sendersFlagUsage)
	addOutputFlag(cmd, &opts.output)
	return cmd
}

// senderReading is one record of a payload as senders test shows it.
type senderReading struct {
	Position openrecall.Position `json:"position"`
	Error    string              `json:"error,omitempty"`
	Sender   string              `json:"sender,omitempty"`
	Display  string              `json:"display,omitempty"`
	Kind     sender.Kind         `json:"kind,omitempty"`
	// Generic says no sender recognised the payload: the generic reading
	// read it.
	Generic bool          `json:"generic,omitempty"`
	Parts   []partReading `json:"parts,omitempty"`
	// Alert is the normalized alert, what analyze triages.
	Alert *openrecall.Alert `json:"alert,omitempty"`
}

// partReading is one part of an alert read: its value and where it came
// from.
type partReading struct {
	Part  string `json:"part"`
	Value string `json:"value,omitempty"`
	// Sent is the value as the payload gave it, when intake normalized it
	// (the severity).
	Sent string `json:"sent,omitempty"`
	// From is the payload field or expression the part came from, as the
	// reading recorded it; Documented says it is the sender's
	// documentation instead (the reading recorded none).
	From       string `json:"from,omitempty"`
	Documented bool   `json:"documented,omitempty"`
}

func sendersTestRun(a *app, opts *sendersTestOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	set, err := a.senders(cfg, opts.senders)
	if err != nil {
		return err
	}
	format := intake.FormatAuto
	if opts.sender != "" {
		f, ok := intake.SenderFormat(set, opts.sender)
		if !ok {
			return usageErr("--sender %q: no such sender; one of %s", opts.sender, strings.Join(set.Names(), ", "))
		}
		format = f
	}
	in, source, err := a.openInput(opts.input)
	if err != nil {
		return err
	}
	defer a.closeLogged("input", in)
	body, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", source, err)
	}
	recs, err := intake.ParseBytes(body, intake.Options{Format: format, Source: source, Senders: set, Explain: true})
	if err != nil {
		return err
	}
	readings := make([]senderReading, len(recs))
	rejected := 0
	for i, rec := range recs {
		if rec.Err != nil {
			rejected++
			readings[i] = senderReading{Position: rec.Err.Position, Error: rec.Err.Reason}
			continue
		}
		readings[i] = readingOf(set, rec)
	}
	if opts.output != outputTable {
		if err := writeList(a, opts.output, readings); err != nil {
			return err
		}
	} else {
		for i, r := range readings {
			if i > 0 {
				fmt.Fprintln(a.out)
			}
			printReading(a.out, r)
		}
	}
	switch {
	case len(recs) == 0:
		return noAlerts(source)
	case rejected == len(recs):
		return fmt.Errorf("%s: no alert could be read (%d record(s) rejected)", source, rejected)
	case rejected > 0:
		fmt.Fprintf(a.errOut, "openrecall: %d record(s) rejected\n", rejected)
		return &exitError{code: exitPartial}
	}
	return nil
}

// readingOf explains an alert intake read: its sender and each part, with
// the field it came from.
func readingOf(set sender.Set, rec intake.Record) senderReading {
	al := rec.Alert
	r := senderReading{Position: al.Position, Sender: al.Sender, Alert: &al}
	sd, known := set.Lookup(al.Sender)
	switch {
	case al.Sender == openrecall.SenderGeneric:
		r.Generic, r.Display = true, "generic reading"
	case known:
		r.Display = sd.Display
		r.Kind, _ = set.Kind(sd.Name)
	}
	documented := map[string]string{}
	if known {
		for _, p := range docParts(sd.Doc) {
			documented[p.Part] = p.From
		}
	}
	part := func(name, value string) partReading {
		p := partReading{Part: name, Value: value, From: al.Origin[name]}
		if p.From == "" && value != "" && documented[name] != "" {
			p.From, p.Documented = documented[name], true
		}
		return p
	}
	ts := ""
	if !al.Timestamp.IsZero() {
		ts = al.Timestamp.Format(time.RFC3339Nano)
	}
	sev := part(sender.PartSeverity, string(al.Severity))
	sev.Sent = rec.SentSeverity
	r.Parts = []partReading{
		part(sender.PartTitle, al.Title),
		part("text", al.Text),
		sev,
		part(sender.PartService, al.Service),
		part(sender.PartEnvironment, al.Environment),
		part("host", al.Source),
		part(sender.PartRule, al.Rule),
		part(sender.PartID, al.ID),
		part(sender.PartStatus, al.Status),
		part("timestamp", ts),
		part("labels", pairs(al.Labels)),
		part("entities", pairs(al.Entities)),
		part("links", pairs(al.Links)),
	}
	return r
}

// pairs renders a map as "key=value" pairs in key order.
func pairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return strings.Join(out, ", ")
}

// printReading prints one record's reading for people, in the manner of
// fingerprint --explain: a line for the record and its sender, then one
// line per part, "part = value  from field".
func printReading(w io.Writer, r senderReading) {
	pos := r.Position
	pos.Source = ""
	if r.Error != "" {
		fmt.Fprintf(w, "%s  rejected: %s\n", pos.String(), r.Error)
		return
	}
	who := r.Sender
	switch {
	case who == "":
		who = "none (plain text)"
	case r.Generic:
		who += " (generic reading)"
	case r.Kind != "":
		who += " (" + r.Display + ", " + string(r.Kind) + ")"
	}
	fmt.Fprintf(w, "%s  sender %s\n", pos.String(), who)
	if r.Generic {
		fmt.Fprintln(w, "    no sender recognises this payload: read as any JSON is (name one with --sender, or teach openrecall the sender with a mapping file)")
	}
	for _, p := range r.Parts {
		value := oneLine(p.Value)
		if p.Part == "text" && strings.Contains(strings.TrimSpace(p.Value), "\n") {
			value = fmt.Sprintf("%s (%d lines)", clip(oneLine(firstLineOf(p.Value)), 48), strings.Count(strings.TrimSpace(p.Value), "\n")+1)
		}
		if p.Part == sender.PartSeverity && p.Sent != "" {
			value = p.Sent + " -> " + value
		}
		if value == "" {
			value = "-"
		}
		line := fmt.Sprintf("    %-12s = %s", p.Part, clip(value, 60))
		if p.From != "" {
			from := "from " + oneLine(p.From)
			if p.Documented {
				from += " (as documented)"
			}
			line = fmt.Sprintf("    %-12s = %-60s  %s", p.Part, clip(value, 60), from)
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// firstLineOf returns the first non-blank line of s.
func firstLineOf(s string) string {
	for l := range strings.Lines(s) {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}
