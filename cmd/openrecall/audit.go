package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

// The audit key comes from OPENRECALL_AUDIT_KEY (64 hex digits), else from
// the key file: OPENRECALL_AUDIT_KEY_FILE, else audit.key in openrecall's
// directory under the user's config directory, created on first use.
const (
	envAuditKey     = "OPENRECALL_AUDIT_KEY"
	envAuditKeyFile = "OPENRECALL_AUDIT_KEY_FILE"
)

// auditKeyPath is where the key file is (or will be created).
func (a *app) auditKeyPath() (string, error) {
	if a.auditKeyFile != "" {
		return a.auditKeyFile, nil
	}
	if p := os.Getenv(envAuditKeyFile); p != "" {
		return expandHome(p), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("audit key: no user config directory (%v): set %s or %s", err, envAuditKey, envAuditKeyFile)
	}
	return filepath.Join(dir, "openrecall", "audit.key"), nil
}

// loadAuditKey returns the audit key and where it came from, or the zero
// Key and where it was looked for when there is none.
func (a *app) loadAuditKey() (audit.Key, string, error) {
	if v := os.Getenv(envAuditKey); v != "" {
		k, err := audit.ParseKey(v)
		if err != nil {
			return audit.Key{}, "$" + envAuditKey, fmt.Errorf("$%s: %w", envAuditKey, err)
		}
		return k, "$" + envAuditKey, nil
	}
	path, err := a.auditKeyPath()
	if err != nil {
		return audit.Key{}, "", err
	}
	k, err := audit.ReadKeyFile(path)
	if errors.Is(err, audit.ErrNoKey) {
		return audit.Key{}, path, nil
	}
	return k, path, err
}

// auditKeyOrCreate returns the audit key, creating the key file when there
// is no key and the trail (keyed with boundKeyID, "" for none) needs no
// particular one.
func (a *app) auditKeyOrCreate(boundKeyID, db string) (audit.Key, error) {
	k, where, err := a.loadAuditKey()
	switch {
	case err != nil:
		return audit.Key{}, err
	case !k.IsZero():
		return k, nil
	case boundKeyID != "":
		return audit.Key{}, fmt.Errorf("the audit trail in %s is keyed with key %s, but no key was found at %s or in $%s: restore that key file or set %s: %w",
			db, boundKeyID, where, envAuditKey, envAuditKey, audit.ErrNoKey)
	}
	k, err = audit.CreateKeyFile(where, rand.Reader)
	if err != nil {
		return audit.Key{}, err
	}
	a.log.Info("created audit key file", zap.String("path", where), zap.String("key_id", k.ID()))
	return k, nil
}

// sealer returns the keyed sealer for appending to st's trail, binding the
// key to the trail on first use. A key other than the trail's is refused.
func (a *app) sealer(ctx context.Context, st *memory.Store) (audit.Sealer, error) {
	bound, err := st.AuditKeyID(ctx)
	if err != nil {
		return audit.Sealer{}, err
	}
	k, err := a.auditKeyOrCreate(bound, st.Path())
	if err != nil {
		return audit.Sealer{}, err
	}
	sign := func(legacyThrough, legacyCosts int64) string { return audit.BoundaryMAC(k, legacyThrough, legacyCosts) }
	if bound, err = st.BindAuditKey(ctx, k.ID(), sign); err != nil {
		return audit.Sealer{}, err
	}
	if bound != k.ID() {
		return audit.Sealer{}, fmt.Errorf("the audit trail in %s is keyed with key %s, the key at hand is %s: use that trail's key (%s or the key file): %w",
			st.Path(), bound, k.ID(), envAuditKey, audit.ErrWrongKey)
	}
	return audit.NewSealer(k), nil
}

// trailKeys is the command line's usecase.AuditKeys for the trail of one
// database: the key of $OPENRECALL_AUDIT_KEY or of the key file. It is
// safe for concurrent use (the server verifies per request).
type trailKeys struct {
	a *app
	// db names the database in errors.
	db string
}

// Key returns the key at hand; with create, it makes the key file when
// there is none and the trail is not keyed yet.
func (t trailKeys) Key(s openrecall.TrailState, create bool) (audit.Key, error) {
	k, _, err := t.a.loadAuditKey()
	if err != nil || !k.IsZero() || !create || s.KeyID != "" {
		return k, err
	}
	return t.a.auditKeyOrCreate("", t.db)
}

// Explain says where the key was looked for, or where it came from.
func (t trailKeys) Explain(err error) error {
	where := "$" + envAuditKey
	if os.Getenv(envAuditKey) == "" {
		where, _ = t.a.auditKeyPath() // an error here was the key's error already
	}
	if errors.Is(err, audit.ErrNoKey) {
		return fmt.Errorf("%s: %w (looked in $%s and at %s)", t.db, err, envAuditKey, where)
	}
	return fmt.Errorf("%s: %w (key from %s)", t.db, err, where)
}

// readCheckpoint reads --checkpoint: a checkpoint value, or a file holding
// one.
func readCheckpoint(arg string) (*audit.Checkpoint, error) {
	text := arg
	if !audit.LooksLikeCheckpoint(arg) {
		b, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("--checkpoint: %w", err)
		}
		text = string(b)
	}
	cp, err := audit.ParseCheckpoint(text)
	if err != nil {
		return nil, fmt.Errorf("--checkpoint %s: %w", arg, err)
	}
	return &cp, nil
}

// auditVerifyOptions are the flags of audit verify.
type auditVerifyOptions struct {
	checkpoint string
	archive    string
	output     string
}

// auditVerifyRun is `audit verify`: exit 0 intact, 4 tampered, 1 when it
// cannot verify (missing or wrong key, bad checkpoint, database error).
func auditVerifyRun(ctx context.Context, a *app, opts *auditVerifyOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	if opts.archive != "" {
		if opts.checkpoint != "" {
			return usageErr("--archive checks an archive file, --checkpoint the trail: give one")
		}
		return auditVerifyArchiveRun(ctx, a, opts)
	}
	var cp *audit.Checkpoint
	if opts.checkpoint != "" {
		var err error
		if cp, err = readCheckpoint(opts.checkpoint); err != nil {
			return err
		}
	}
	cfg, st, err := a.configStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	rep, err := a.useCases(cfg, st, nil).VerifyTrail(ctx, cp)
	if err != nil {
		return err
	}
	output := opts.output
	if output != outputTable {
		if err := writeJSON(a.out, output, usecase.NewVerified(rep)); err != nil {
			return err
		}
	}
	if len(rep.Problems) == 0 {
		if output == outputTable {
			fmt.Fprintf(a.out, "audit trail intact: %s\n", usecase.DescribeTrail(rep))
		}
		return nil
	}
	if output == outputTable {
		for _, p := range rep.Problems {
			fmt.Fprintf(a.out, "TAMPERED: %s\n", p)
		}
	}
	fmt.Fprintf(a.errOut, "openrecall: audit verify found %d problem(s) in %d entries and %d cost points\n", len(rep.Problems), rep.Entries, rep.Costs)
	return &exitError{code: exitTampered}
}

func newAuditVerifyCmd(a *app) *cobra.Command {
	opts := &auditVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the keyed hash chains: find any edited, deleted or reordered entry or cost point",
		Long: `Read the audit trail in one snapshot (safe while other processes append), recompute
every audit entry's and cost point's keyed hash, follow both chains from the first link to
their head records, and check the keyed boundary. With --checkpoint (a value printed by
'openrecall audit head', or a file holding one) also prove the trail still extends that
checkpoint: a cut tail, a head rolled back or a chain re-hashed from an earlier point is caught.
After 'openrecall audit archive' each chain starts after the latest archive record, once its
signature checks; a prefix missing without one is tampering. With --archive FILE check an
archive file instead: its SHA-256 is that of a signed archive record, and its entries and cost
points chain from the previous record's end to its record's.

Exit status 0: intact. 4: tampered (each problem names the entry or cost point). 1: could not
verify (the key is missing or is not the trail's, the checkpoint is invalid, a database error).`,
		Example: `  openrecall audit verify
  openrecall audit verify -o json
  openrecall audit head > /secure/place/openrecall.checkpoint
  openrecall audit verify --checkpoint /secure/place/openrecall.checkpoint
  openrecall audit verify --archive /archive/openrecall-2025.jsonl`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return auditVerifyRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.checkpoint, "checkpoint", "", "checkpoint value or file (from 'openrecall audit head') the trail must extend")
	cmd.Flags().StringVar(&opts.archive, "archive", "", "check this archive file (from 'openrecall audit archive') against its archive record instead")
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func newAuditHeadCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "head",
		Short: "Verify the trail and print a signed checkpoint of its head, to keep elsewhere",
		Long: `Verify the trail (as 'audit verify' does) and print a checkpoint: the head's sequence and
hash for audit entries and cost points, and the keyed boundary, signed with the audit key.
Keep it away from the database (another machine, a ticket, a log store); 'openrecall audit
verify --checkpoint' later proves the trail still extends it. The audit key is created on first
use when there is none.

Exit status 0: checkpoint printed. 4: the trail is tampered (no checkpoint). 1: could not
verify (the key is missing or is not the trail's, a database error).`,
		Example: `  openrecall audit head > openrecall.checkpoint`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return auditHeadRun(cmd.Context(), a)
		},
	}
}

// auditHeadRun is `audit head`: exit 0 with the checkpoint printed, 4 when
// the trail is tampered (no checkpoint), 1 when it cannot verify.
func auditHeadRun(ctx context.Context, a *app) error {
	cfg, st, err := a.configStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	h, err := a.useCases(cfg, st, nil).AuditHead(ctx)
	if err != nil {
		return err
	}
	if h.Checkpoint == nil {
		a.printTampered(h.Report.Problems)
		fmt.Fprintf(a.errOut, "openrecall: no checkpoint: the trail has %d problem(s)\n", len(h.Report.Problems))
		return &exitError{code: exitTampered}
	}
	fmt.Fprintln(a.out, h.Checkpoint)
	fmt.Fprintf(a.errOut, "checkpoint of %s\n", usecase.DescribeTrail(h.Report))
	return nil
}

// auditArchiveOptions are the flags of audit archive.
type auditArchiveOptions struct {
	before string
	out    string
}

func newAuditArchiveCmd(a *app) *cobra.Command {
	opts := &auditArchiveOptions{}
	cmd := &cobra.Command{
		Use:   "archive --before DATE --out FILE",
		Short: "Move the verified prefix of the trail older than a date to a file, with a signed archive record",
		Long: `Verify the trail (as 'audit verify' does), then move the prefix of the audit entries and of the
chained cost points older than --before (a date, midnight UTC, or an RFC 3339 time) to --out, as
JSON lines under a header naming where it starts and ends. The file is written and synced first;
then one transaction records the archive record (where each archived chain ends, the cut, the
time, the file's SHA-256, the key id, signed with the audit key) and deletes the prefix.
'audit verify' then starts each chain after that record; a prefix deleted without one is still
reported as tampered. 'audit verify --archive FILE' checks an archive file against its record.
A trail that does not verify is not archived; --out is never overwritten.

Exit status 0: archived, or nothing older than --before. 4: the trail is tampered (nothing
archived). 1: could not archive (the key is missing or is not the trail's, the file exists or
cannot be written, a database error): the trail is unchanged.`,
		Example: `  openrecall audit archive --before 2026-01-01 --out /archive/openrecall-2025.jsonl
  openrecall audit verify --archive /archive/openrecall-2025.jsonl`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return auditArchiveRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.before, "before", "", "archive what is older than this date (midnight UTC) or RFC 3339 time (required)")
	cmd.Flags().StringVar(&opts.out, "out", "", "archive file to create; an existing file is refused (required)")
	return cmd
}

// parseCut reads --before: a date (midnight UTC) or an RFC 3339 time.
func parseCut(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("want a date (2026-01-01) or an RFC 3339 time (2026-01-01T12:00:00Z)")
}

// auditArchiveRun is `audit archive`: exit 0 archived (or nothing to
// archive), 4 when the trail is tampered, 1 when it cannot archive. The
// archive file is removed unless the archive was recorded.
func auditArchiveRun(ctx context.Context, a *app, opts *auditArchiveOptions) (err error) {
	if opts.before == "" || opts.out == "" {
		return usageErr("audit archive needs --before DATE and --out FILE")
	}
	before, err := parseCut(opts.before)
	if err != nil {
		return usageErr("--before %q: %v", opts.before, err)
	}
	if _, err := os.Lstat(opts.out); err == nil {
		return fmt.Errorf("--out %s: the file exists; an archive never overwrites one", opts.out)
	}
	cfg, st, err := a.configStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	// The archive record is signed with the trail's key: bind one now
	// (creating it on first use) so that later appends keep that key.
	if _, err := a.sealer(ctx, st); err != nil {
		return err
	}
	res, err := a.useCases(cfg, st, nil).ArchiveTo(ctx, before, opts.out, func(err error) {
		a.log.Warn("could not remove the unused archive file", zap.String("path", opts.out), zap.Error(err))
	})
	if err != nil {
		return err
	}
	if len(res.Report.Problems) > 0 {
		a.printTampered(res.Report.Problems)
		fmt.Fprintf(a.errOut, "openrecall: nothing archived: the trail has %d problem(s)\n", len(res.Report.Problems))
		return &exitError{code: exitTampered}
	}
	if res.Record.IsZero() {
		fmt.Fprintf(a.out, "nothing to archive: no entry or cost point older than %s\n", before.Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(a.out, "archived %s to %s (sha256 %s)\n", describeArchived(res), opts.out, res.Record.FileSHA256)
	if len(res.After.Problems) > 0 {
		a.printTampered(res.After.Problems)
		fmt.Fprintf(a.errOut, "openrecall: archived, but what remains has %d problem(s)\n", len(res.After.Problems))
		return &exitError{code: exitTampered}
	}
	fmt.Fprintf(a.errOut, "audit trail intact: %s\n", usecase.DescribeTrail(res.After))
	return nil
}

// describeArchived names the ranges an archive moved.
func describeArchived(res usecase.Archived) string {
	span := func(n, from, through int64, many string) string {
		if n == 0 {
			return "no " + many
		}
		return fmt.Sprintf("%s %d-%d", many, from+1, through)
	}
	return span(res.Entries, res.From.Entries.Sequence, res.Record.Through, "entries") + " and " +
		span(res.CostPoints, res.From.CostPoints.Sequence, res.Record.CostThrough, "cost points")
}

// auditVerifyArchiveRun is `audit verify --archive`: exit 0 when the file
// checks against its archive record, 4 when it does not, 1 when it cannot
// check (no key, a file that is not an archive, a database error).
func auditVerifyArchiveRun(ctx context.Context, a *app, opts *auditVerifyOptions) error {
	f, err := os.Open(opts.archive)
	if err != nil {
		return fmt.Errorf("--archive: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only
	cfg, st, err := a.configStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	c, err := a.useCases(cfg, st, nil).VerifyArchive(ctx, f)
	if err != nil {
		return fmt.Errorf("--archive %s: %w", opts.archive, err)
	}
	if opts.output != outputTable {
		if err := writeJSON(a.out, opts.output, c); err != nil {
			return err
		}
	}
	if c.Intact {
		if opts.output == outputTable {
			fmt.Fprintf(a.out, "archive intact: %s holds entries %d-%d and cost points %d-%d; its archive record (archived %s, cut %s) is signed with key %s\n",
				opts.archive, c.From.Entries.Sequence+1, c.Through.Entries.Sequence, c.From.CostPoints.Sequence+1, c.Through.CostPoints.Sequence,
				c.Record.At.Format(time.RFC3339), c.Record.Before.Format(time.RFC3339), c.Record.KeyID)
		}
		return nil
	}
	if opts.output == outputTable {
		for _, p := range c.Problems {
			fmt.Fprintf(a.out, "TAMPERED: %s\n", p.Problem)
		}
	}
	fmt.Fprintf(a.errOut, "openrecall: the archive %s has %d problem(s)\n", opts.archive, len(c.Problems))
	return &exitError{code: exitTampered}
}

// printTampered prints one TAMPERED line per problem on stdout.
func (a *app) printTampered(problems []audit.Problem) {
	for _, p := range problems {
		fmt.Fprintf(a.out, "TAMPERED: %s\n", p)
	}
}
