package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/examples"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

func newMemoryCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Seed, import, export and inspect the memory database",
		Example: `  openrecall memory seed
  openrecall memory export backup.jsonl
  openrecall memory stats`,
	}
	cmd.AddCommand(newMemorySeedCmd(a), newMemoryImportCmd(a), newMemoryExportCmd(a), newMemoryStatsCmd(a), newMemoryForgetCmd(a), newMemoryMigrateCmd(a))
	return cmd
}

// seedRecord is one line of a seed file: an analyst decision about an alert
// (fingerprinted with the current rules) or about a canonical fingerprint.
type seedRecord struct {
	Alert         json.RawMessage     `json:"alert"`
	Fingerprint   string              `json:"fingerprint"`
	AlertID       string              `json:"alert_id"`
	Rule          string              `json:"rule"`
	Service       string              `json:"service"`
	Severity      openrecall.Severity `json:"severity"`
	Decision      openrecall.Decision `json:"decision"`
	Note          string              `json:"note"`
	DeadEnds      []string            `json:"dead_ends"`
	Analyst       string              `json:"analyst"`
	ImpactMinutes int                 `json:"business_impact_minutes"`
}

// memorySeedOptions are the argument and flags of memory seed.
type memorySeedOptions struct {
	// input is the seed file; empty means the bundled example's.
	input string
	rules string
}

func newMemorySeedCmd(a *app) *cobra.Command {
	opts := &memorySeedOptions{}
	cmd := &cobra.Command{
		Use:   "seed [FILE|-]",
		Short: "Retain analyst decisions from a seed file (default: the bundled example's)",
		Long: `Retain every decision of a seed file: JSON Lines, each line an object with "decision",
"note", "dead_ends", "analyst", "business_impact_minutes" and either "alert" (an alert in any
intake format, fingerprinted and identified with the current rules; its id becomes the source
alert id) or "fingerprint" (a canonical fingerprint, with optional "alert_id", "rule", "service"
and "severity"; without "rule" the memory is related knowledge only). Without FILE the bundled
example's seed is used. Seeding memories from before identity existed again gives them their
identity back. Seeding twice stores nothing new. Bad lines are reported with their line
number and the rest is seeded (exit status 3).`,
		Example: `  openrecall memory seed
  openrecall memory seed decisions.jsonl
  openrecall --db team.db memory seed - < decisions.jsonl`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.input = args[0]
			}
			return memorySeedRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML)")
	return cmd
}

func memorySeedRun(ctx context.Context, a *app, opts *memorySeedOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	var in io.Reader
	source := "bundled example seed"
	if opts.input == "" {
		in = bytes.NewReader(examples.Seed())
	} else {
		rc, src, err := a.openInput(opts.input)
		if err != nil {
			return err
		}
		defer a.closeLogged("input", rc)
		in, source = rc, src
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
	uc := a.useCases(cfg, st, ex)

	br := bufio.NewReaderSize(in, 64<<10)
	created, known, bad := 0, 0, 0
	for line := 1; ; line++ {
		raw, size, rerr := readRecordLine(br, memory.MaxRecordBytes)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("read %s: line %d: %w", source, line, rerr)
		}
		if errors.Is(rerr, io.EOF) && size == 0 {
			break
		}
		if size > memory.MaxRecordBytes {
			bad++
			fmt.Fprintf(a.errOut, "openrecall: %s: line %d: record is %d bytes, over the limit of %d bytes\n", source, line, size, memory.MaxRecordBytes)
			continue
		}
		b := bytes.TrimSpace(raw)
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		req, err := seedRequest(b)
		if err == nil {
			var out []usecase.Retained
			if out, err = uc.Retain(ctx, req); err == nil {
				if out[0].Created {
					created++
				} else {
					known++
				}
				continue
			}
		}
		bad++
		fmt.Fprintf(a.errOut, "openrecall: %s: line %d: %v\n", source, line, err)
	}
	fmt.Fprintf(a.out, "seeded %d memories from %s: %d new, %d already known, %d rejected\n", created+known, source, created, known, bad)
	if bad > 0 {
		return &exitError{code: exitPartial}
	}
	return nil
}

// seedRequest is the retain a seed line asks for.
func seedRequest(line []byte) (usecase.RetainRequest, error) {
	var r seedRecord
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return usecase.RetainRequest{}, fmt.Errorf("invalid seed record: %w", err)
	}
	d := usecase.Decision{Decision: r.Decision, Note: r.Note, DeadEnds: r.DeadEnds, Analyst: r.Analyst,
		ImpactMinutes: r.ImpactMinutes, AlertID: r.AlertID}
	var about usecase.Subject
	switch {
	case r.Fingerprint != "" && len(r.Alert) > 0:
		return usecase.RetainRequest{}, fmt.Errorf("give \"alert\" or \"fingerprint\", not both")
	case len(r.Alert) > 0 && (r.Rule != "" || r.Service != "" || r.Severity != ""):
		return usecase.RetainRequest{}, fmt.Errorf("\"rule\", \"service\" and \"severity\" go with \"fingerprint\"; an alert carries its own")
	case r.Fingerprint != "":
		fp, err := openrecall.ParseFingerprint(r.Fingerprint)
		if err != nil {
			return usecase.RetainRequest{}, err
		}
		about = usecase.Subject{Fingerprint: &fp, Identity: openrecall.Identity{Rule: strings.TrimSpace(r.Rule), Service: strings.ToLower(strings.TrimSpace(r.Service))}, Severity: r.Severity}
	case len(r.Alert) > 0:
		recs, err := intake.ParseBytes(r.Alert, intake.Options{})
		if err != nil {
			return usecase.RetainRequest{}, err
		}
		if len(recs) != 1 {
			return usecase.RetainRequest{}, fmt.Errorf("\"alert\" must hold exactly one alert, it holds %d", len(recs))
		}
		if recs[0].Err != nil {
			return usecase.RetainRequest{}, fmt.Errorf("alert: %s", recs[0].Err.Reason)
		}
		about = usecase.Subject{Alerts: []openrecall.Alert{recs[0].Alert}}
	default:
		return usecase.RetainRequest{}, fmt.Errorf("a seed record needs \"alert\" or \"fingerprint\"")
	}
	return usecase.RetainRequest{Decision: d, Subject: about}, nil
}

// memoryImportOptions are the argument of memory import.
type memoryImportOptions struct {
	input   string
	analyst string
}

func newMemoryImportCmd(a *app) *cobra.Command {
	opts := &memoryImportOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import memories exported by 'memory export' (JSON Lines of incidents)",
		Long: `Import incidents (the JSON Lines that 'memory export' writes). Existing memories are
kept; equivalent ones are recognised by their dedupe key and not stored twice. Bad lines are
reported with their line number and the rest is imported (exit status 3). Exceptions in the
file (DESIGN §6b) are imported only with --analyst, the person who imports them: each import is
an audit entry with that analyst as its actor, naming the person who first approved the exception,
who stays its approver. Each must obey the rules of 'exception add' here (a rule and a service, a
benign decision, a known ceiling, a match field for an attack pattern, not revoked, an expiry in
the future and within exceptions.max_expiry from now); one that does not is reported with its
line and not stored (exit status 3). Without --analyst they are reported and skipped.`,
		Example: `  openrecall memory import backup.jsonl
  openrecall --db old.db memory export | openrecall --db new.db memory import - --analyst alice`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.input = args[0]
			return memoryImportRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.analyst, "analyst", "", "who imports the exceptions in the file (required to import them)")
	return cmd
}

func memoryImportRun(ctx context.Context, a *app, opts *memoryImportOptions) error {
	in, source, err := a.openInput(opts.input)
	if err != nil {
		return err
	}
	defer a.closeLogged("input", in)
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	rep, err := st.Import(ctx, in)
	if err != nil {
		return err
	}
	var excs []openrecall.Exception
	var lines []int
	for _, x := range rep.Exceptions {
		if strings.TrimSpace(opts.analyst) == "" {
			rep.Rejected = append(rep.Rejected, memory.RecordError{Line: x.Line,
				Reason: "exception " + x.Exception.ID + " not imported: importing an exception is a person's action, give --analyst"})
			continue
		}
		excs = append(excs, x.Exception)
		lines = append(lines, x.Line)
	}
	if len(excs) > 0 {
		cfg, err := a.config()
		if err != nil {
			return err
		}
		uc := a.useCases(cfg, st, nil)
		imp, err := uc.ImportExceptions(ctx, excs, opts.analyst)
		if err != nil {
			return err
		}
		for _, r := range imp.Refused {
			rep.Rejected = append(rep.Rejected, memory.RecordError{Line: lines[r.Index],
				Reason: fmt.Sprintf("exception %s not imported: %v", r.ID, r.Err)})
		}
		sort.SliceStable(rep.Rejected, func(i, j int) bool { return rep.Rejected[i].Line < rep.Rejected[j].Line })
		fmt.Fprintf(a.out, "imported %d exceptions: %d new, %d already held, %d refused; imported by %s (audited), each keeps its original approver\n",
			len(excs), imp.Created, imp.Existing, len(imp.Refused), opts.analyst)
	}
	for _, e := range rep.Rejected {
		fmt.Fprintf(a.errOut, "openrecall: %s: line %d: %s\n", source, e.Line, e.Reason)
	}
	fmt.Fprintf(a.out, "imported %d records from %s: %d new, %d already known, %d rejected\n",
		rep.Read, source, rep.Created, rep.Existing, len(rep.Rejected))
	if len(rep.Rejected) > 0 {
		return &exitError{code: exitPartial}
	}
	return nil
}

// memoryExportOptions are the argument of memory export.
type memoryExportOptions struct {
	// file is where to write; empty or "-" means standard output.
	file string
}

func newMemoryExportCmd(a *app) *cobra.Command {
	opts := &memoryExportOptions{}
	return &cobra.Command{
		Use:   "export [FILE|-]",
		Short: "Write every memory as JSON Lines (oldest first)",
		Example: `  openrecall memory export backup.jsonl
  openrecall memory export | jq -r .decision | sort | uniq -c`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.file = args[0]
			}
			return memoryExportRun(cmd.Context(), a, opts)
		},
	}
}

func memoryExportRun(ctx context.Context, a *app, opts *memoryExportOptions) (err error) {
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	out := a.out
	if opts.file != "" && opts.file != "-" {
		f, err := os.Create(opts.file)
		if err != nil {
			return err
		}
		// The export is only complete once the file is closed.
		defer func() {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("export to %s: %w", opts.file, cerr)
			}
		}()
		out = f
	}
	bw := bufio.NewWriter(out)
	n, err := st.Export(ctx, bw)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.errOut, "exported %d memories\n", n)
	return nil
}

// memoryStatsOptions are the flags of memory stats.
type memoryStatsOptions struct {
	output string
}

func newMemoryStatsCmd(a *app) *cobra.Command {
	opts := &memoryStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Summarise the memory database",
		Example: `  openrecall memory stats
  openrecall --db team.db memory stats -o json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return memoryStatsRun(cmd.Context(), a, opts)
		},
	}
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func memoryStatsRun(ctx context.Context, a *app, opts *memoryStatsOptions) error {
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	s, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, s)
	}
	printStats(a.out, s)
	return nil
}

func newMemoryMigrateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create the memory database, or upgrade its schema to this binary's",
		Long: `Open the memory database for writing: create it when missing, apply pending schema
migrations and mark the file as openrecall's. Commands that write (analyze, retain, memory seed
and import) do this by themselves; read-only commands (audit show and verify, cost, recall,
memory export and stats) never change the file and refuse an older schema until this is run.`,
		Example: `  openrecall memory migrate
  openrecall --db team.db memory migrate`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return memoryMigrateRun(cmd.Context(), a)
		},
	}
}

// memoryMigrateRun is memory migrate, which takes no flags.
func memoryMigrateRun(ctx context.Context, a *app) error {
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	s, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.out, "memory database %s is at schema v%d\n", s.Path, s.SchemaVersion)
	return err
}

func printStats(w io.Writer, s memory.Stats) {
	fmt.Fprintf(w, "database     %s (schema v%d)\n", s.Path, s.SchemaVersion)
	fmt.Fprintf(w, "memories     %d across %d fingerprints and %d identities\n", s.Incidents, s.Fingerprints, s.Identities)
	fmt.Fprintf(w, "  without identity %d (related knowledge only, never a vote; re-seed or re-import with identities)\n", s.WithoutIdentity)
	if s.Forgotten > 0 {
		fmt.Fprintf(w, "  taken back       %d (forgotten or superseded, never recalled)\n", s.Forgotten)
	}
	ds := make([]string, 0, len(s.ByDecision))
	for d := range s.ByDecision {
		ds = append(ds, string(d))
	}
	sort.Strings(ds)
	for _, d := range ds {
		fmt.Fprintf(w, "  %-14s %d\n", d, s.ByDecision[openrecall.Decision(d)])
	}
	fmt.Fprintf(w, "audit        %d entries\n", s.AuditEntries)
	fmt.Fprintf(w, "cost curve   %d points in %d runs\n", s.CostPoints, s.Batches)
	if len(s.TopIdentities) > 0 {
		fmt.Fprintln(w, "largest identities:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, c := range s.TopIdentities {
			fmt.Fprintf(tw, "  %d\t%s\n", c.Count, c.Identity)
		}
		_ = tw.Flush() // tw writes to w, whose errors the caller's writer keeps
	}
	if len(s.TopFamilies) > 0 {
		fmt.Fprintln(w, "largest families:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, f := range s.TopFamilies {
			fmt.Fprintf(tw, "  %d\t%s\t%s\n", f.Count, f.Fingerprint.ID(), f.Fingerprint)
		}
		_ = tw.Flush() // tw writes to w, whose errors the caller's writer keeps
	}
}

// readRecordLine reads one line of br without its newline, keeping at most
// limit bytes of it: a longer line is consumed to its end, not buffered, and
// only its size is returned. err is io.EOF after the last line.
func readRecordLine(br *bufio.Reader, limit int) (line []byte, size int, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		size += len(frag)
		if size <= limit+2 {
			line = append(line, frag...)
		} else {
			line = nil
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, 0, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if size > 0 && err == nil {
			size-- // the newline
		}
		if size > limit {
			return nil, size, err
		}
		return line, len(line), err
	}
}

// memoryForgetOptions are the argument and flags of memory forget.
type memoryForgetOptions struct {
	id      string
	analyst string
	reason  string
}

func newMemoryForgetCmd(a *app) *cobra.Command {
	opts := &memoryForgetOptions{}
	cmd := &cobra.Command{
		Use:   "forget ID",
		Short: "Take a decision back: the memory no longer votes nor is recalled (audited)",
		Long: `Take back the decision of memory ID (as 'recall' and 'memory export' show it): it is no
longer recalled and never votes for a bypass again. The record stays, marked forgotten, so
re-importing an old export cannot bring its vote back, and the audit trail records who took it
back and why. To replace a decision with another, use 'retain --supersedes ID'.`,
		Example: `  openrecall memory forget inc_3f2a9c0d1e2b4a5c --analyst alice --reason "was a real outage"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.id = args[0]
			return memoryForgetRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.analyst, "analyst", "", "who takes the decision back")
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why")
	return cmd
}

func memoryForgetRun(ctx context.Context, a *app, opts *memoryForgetOptions) error {
	cfg, st, err := a.configStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	f, err := a.useCases(cfg, st, nil).Forget(ctx, opts.id, opts.reason, opts.analyst)
	if err != nil {
		return err
	}
	inc := f.Incident
	if !f.Changed {
		fmt.Fprintf(a.out, "already taken back %s (at %s)\n", inc.ID, inc.ForgottenAt.Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(a.out, "took back %s: %s for %s  %s\n", inc.ID, inc.Decision, inc.Identity, inc.Fingerprint)
	return nil
}
