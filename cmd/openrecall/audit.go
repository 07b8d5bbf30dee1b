package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
	output     string
}

// auditVerifyRun is `audit verify`: exit 0 intact, 4 tampered, 1 when it
// cannot verify (missing or wrong key, bad checkpoint, database error).
func auditVerifyRun(ctx context.Context, a *app, opts *auditVerifyOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	var cp *audit.Checkpoint
	if opts.checkpoint != "" {
		var err error
		if cp, err = readCheckpoint(opts.checkpoint); err != nil {
			return err
		}
	}
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	rep, err := a.useCases(st, nil).VerifyTrail(ctx, cp)
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

Exit status 0: intact. 4: tampered (each problem names the entry or cost point). 1: could not
verify (the key is missing or is not the trail's, the checkpoint is invalid, a database error).`,
		Example: `  openrecall audit verify
  openrecall audit verify -o json
  openrecall audit head > /secure/place/openrecall.checkpoint
  openrecall audit verify --checkpoint /secure/place/openrecall.checkpoint`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return auditVerifyRun(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.checkpoint, "checkpoint", "", "checkpoint value or file (from 'openrecall audit head') the trail must extend")
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
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	h, err := a.useCases(st, nil).AuditHead(ctx)
	if err != nil {
		return err
	}
	if h.Checkpoint == nil {
		for _, p := range h.Report.Problems {
			fmt.Fprintf(a.out, "TAMPERED: %s\n", p)
		}
		fmt.Fprintf(a.errOut, "openrecall: no checkpoint: the trail has %d problem(s)\n", len(h.Report.Problems))
		return &exitError{code: exitTampered}
	}
	fmt.Fprintln(a.out, h.Checkpoint)
	fmt.Fprintf(a.errOut, "checkpoint of %s\n", usecase.DescribeTrail(h.Report))
	return nil
}
