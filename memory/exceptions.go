package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openrecall/openrecall"
)

// recordProposalsTx stores the exception proposals of a batch of results
// inside the transaction that persists them (DESIGN §6b). A proposal's id
// is derived from its content, so the same proposal made again is one row:
// the first alert that made it keeps it.
func recordProposalsTx(ctx context.Context, tx *sql.Tx, q *statements, results []openrecall.Result) error {
	for _, r := range results {
		p := r.Proposal
		if p == nil {
			continue
		}
		match, err := json.Marshal(p.Match)
		if err != nil {
			return fmt.Errorf("proposal %s: encode match fields: %w", p.ID, err)
		}
		supporting, err := json.Marshal(p.Supporting)
		if err != nil {
			return fmt.Errorf("proposal %s: encode supporting memories: %w", p.ID, err)
		}
		created := p.CreatedAt
		if created.IsZero() {
			created = r.Alert.Timestamp
		}
		if _, err := tx.ExecContext(ctx, q.addProposal,
			p.ID, p.Identity.Rule, p.Identity.Service, p.DNA.String(), string(match), string(p.Decision),
			string(p.MaxSeverity), int64(p.Expiry), string(supporting), p.AlertID, r.Batch, clampedNanos(created)); err != nil {
			return translate("proposal "+p.ID, err)
		}
	}
	return nil
}

const proposalColumns = `id, rule, service, dna, match, decision, max_severity, expiry_ns, supporting, alert_id, created_at, approved_as`

func scanProposal(r rowScanner) (openrecall.Proposal, error) {
	var (
		p                                 openrecall.Proposal
		dna, match, decision, sev, suppor string
		expiry, created                   int64
		approved                          sql.NullString
	)
	if err := r.Scan(&p.ID, &p.Identity.Rule, &p.Identity.Service, &dna, &match, &decision, &sev, &expiry, &suppor,
		&p.AlertID, &created, &approved); err != nil {
		return p, err
	}
	var err error
	if p.DNA, err = openrecall.ParseFingerprint(dna); err != nil {
		return p, fmt.Errorf("proposal %s: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(match), &p.Match); err != nil {
		return p, fmt.Errorf("proposal %s: match column: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(suppor), &p.Supporting); err != nil {
		return p, fmt.Errorf("proposal %s: supporting column: %w", p.ID, err)
	}
	p.Decision, p.MaxSeverity = openrecall.Decision(decision), openrecall.Severity(sev)
	p.Expiry, p.CreatedAt, p.ApprovedAs = time.Duration(expiry), fromNanos(created), approved.String
	return p, nil
}

// Proposals returns the stored exception proposals, oldest first; with
// pending only those no person has approved yet.
func (s *Decisions) Proposals(ctx context.Context, pending bool) ([]openrecall.Proposal, error) {
	q := `SELECT ` + proposalColumns + ` FROM exception_proposals`
	if pending {
		q += ` WHERE approved_as IS NULL`
	}
	return queryAll(ctx, s.db, "proposals", scanProposal, q+` ORDER BY created_at, id`)
}

// Proposal returns the proposal id; an unknown id wraps
// openrecall.ErrNotFound.
func (s *Decisions) Proposal(ctx context.Context, id string) (openrecall.Proposal, error) {
	p, err := scanProposal(s.db.QueryRowContext(ctx, `SELECT `+proposalColumns+` FROM exception_proposals WHERE id = $1`, id))
	if err != nil {
		return p, translate(fmt.Sprintf("proposal %q", id), err)
	}
	return p, nil
}

// ProposalsFor returns the proposals made for an identity, oldest first.
func (s *Decisions) ProposalsFor(ctx context.Context, id openrecall.Identity) ([]openrecall.Proposal, error) {
	out, err := queryAll(ctx, s.db, "proposals", scanProposal,
		`SELECT `+proposalColumns+` FROM exception_proposals WHERE rule = $1 AND service = $2 ORDER BY created_at, id`, id.Rule, id.Service)
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

const exceptionColumns = `id, rule, service, dna, match, decision, max_severity, expires_at, created_at, analyst, note,
	proposal_id, revoked_at, revoked_by, revoke_reason`

func scanException(r rowScanner) (openrecall.Exception, error) {
	var (
		e                         openrecall.Exception
		dna, match, decision, sev string
		expires, created          int64
		revoked                   sql.NullInt64
	)
	if err := r.Scan(&e.ID, &e.Identity.Rule, &e.Identity.Service, &dna, &match, &decision, &sev, &expires, &created,
		&e.Analyst, &e.Note, &e.ProposalID, &revoked, &e.RevokedBy, &e.RevokeReason); err != nil {
		return e, err
	}
	var err error
	if e.DNA, err = openrecall.ParseFingerprint(dna); err != nil {
		return e, fmt.Errorf("exception %s: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(match), &e.Match); err != nil {
		return e, fmt.Errorf("exception %s: match column: %w", e.ID, err)
	}
	if len(e.Match) == 0 {
		e.Match = nil
	}
	e.Decision, e.MaxSeverity = openrecall.Decision(decision), openrecall.Severity(sev)
	e.ExpiresAt, e.CreatedAt = fromNanos(expires), fromNanos(created)
	if revoked.Valid {
		e.RevokedAt = fromNanos(revoked.Int64)
	}
	return e, nil
}

// AddException stores an exception a person approved or wrote, after
// Validate; when it approves a proposal (ProposalID set) the proposal is
// marked approved in the same transaction, and a proposal approved before
// is refused (wrapping openrecall.ErrInvalid). Storing the same exception
// (same id) again stores nothing and returns the stored one, created
// false.
func (s *Decisions) AddException(ctx context.Context, e openrecall.Exception) (openrecall.Exception, bool, error) {
	if err := e.Validate(); err != nil {
		return e, false, err
	}
	if e.ID == "" {
		e.ID = openrecall.ExceptionID(e)
	}
	match := e.Match
	if match == nil {
		match = map[string]string{}
	}
	mj, err := json.Marshal(match)
	if err != nil {
		return e, false, fmt.Errorf("exception match fields: %w", err)
	}
	expires, err := nanos(e.ExpiresAt)
	if err != nil {
		return e, false, fmt.Errorf("exception expiry: %w", err)
	}
	created, err := nanos(e.CreatedAt)
	if err != nil {
		return e, false, fmt.Errorf("exception created_at: %w", err)
	}
	revoked, err := optionalNanos(e.RevokedAt)
	if err != nil {
		return e, false, fmt.Errorf("exception revoked_at: %w", err)
	}
	var stored openrecall.Exception
	createdRow := false
	err = s.inTx(ctx, "add exception", func(tx *sql.Tx) error {
		if e.ProposalID != "" {
			var approved sql.NullString
			if err := tx.QueryRowContext(ctx, `SELECT approved_as FROM exception_proposals WHERE id = $1`, e.ProposalID).Scan(&approved); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("proposal %q: %w", e.ProposalID, openrecall.ErrNotFound)
				}
				return translate("add exception: proposal", err)
			}
			if approved.Valid && approved.String != e.ID {
				return fmt.Errorf("proposal %s was approved already, as exception %s: %w", e.ProposalID, approved.String, openrecall.ErrInvalid)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE exception_proposals SET approved_as = $1 WHERE id = $2`, e.ID, e.ProposalID); err != nil {
				return translate("add exception: approve proposal", err)
			}
		}
		res, err := tx.ExecContext(ctx, s.sql.addException,
			e.ID, e.Identity.Rule, e.Identity.Service, e.DNA.String(), string(mj), string(e.Decision), string(e.MaxSeverity),
			expires, created, e.Analyst, e.Note, e.ProposalID, revoked, e.RevokedBy, e.RevokeReason)
		if err != nil {
			return translate("add exception", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return translate("add exception", err)
		}
		createdRow = n == 1
		stored, err = scanException(tx.QueryRowContext(ctx, `SELECT `+exceptionColumns+` FROM exceptions WHERE id = $1`, e.ID))
		return translate("add exception: read back", err)
	})
	if err != nil {
		return e, false, err
	}
	return stored, createdRow, nil
}

// Exception returns the exception id; an unknown id wraps
// openrecall.ErrNotFound.
func (s *Decisions) Exception(ctx context.Context, id string) (openrecall.Exception, error) {
	e, err := scanException(s.db.QueryRowContext(ctx, `SELECT `+exceptionColumns+` FROM exceptions WHERE id = $1`, id))
	if err != nil {
		return e, translate(fmt.Sprintf("exception %q", id), err)
	}
	return e, nil
}

// Exceptions returns every exception, oldest first: active, expired and
// revoked.
func (s *Decisions) Exceptions(ctx context.Context) ([]openrecall.Exception, error) {
	return queryAll(ctx, s.db, "exceptions", scanException, `SELECT `+exceptionColumns+` FROM exceptions ORDER BY created_at, id`)
}

// queryAll runs q and scans every row with scan; what names the rows in
// errors. It returns an empty slice, never nil, for no rows.
func queryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(rowScanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, translate(what, err)
		}
		out = append(out, x)
	}
	return out, translate(what, rows.Err())
}

// RevokeException revokes exception id at at, by analyst, for reason; it
// returns the exception and whether it changed (false when it was revoked
// already). An unknown id wraps openrecall.ErrNotFound.
func (s *Decisions) RevokeException(ctx context.Context, id, analyst, reason string, at time.Time) (openrecall.Exception, bool, error) {
	n, err := nanos(at)
	if err != nil {
		return openrecall.Exception{}, false, err
	}
	var e openrecall.Exception
	changed := false
	err = s.inTx(ctx, "revoke exception", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE exceptions SET revoked_at = $1, revoked_by = $2, revoke_reason = $3 WHERE id = $4 AND revoked_at IS NULL`,
			n, analyst, reason, id)
		if err != nil {
			return translate("revoke exception", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return translate("revoke exception", err)
		}
		changed = k == 1
		e, err = scanException(tx.QueryRowContext(ctx, `SELECT `+exceptionColumns+` FROM exceptions WHERE id = $1`, id))
		return translate(fmt.Sprintf("exception %q", id), err)
	})
	return e, changed, err
}

// ExpiriesDue reports whether an exception expired by now has an expiry the
// audit trail has not recorded yet; a cheap read, so that a command that
// finds none needs neither the audit key nor a write.
func (s *Decisions) ExpiriesDue(ctx context.Context, now time.Time) (bool, error) {
	var due bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM exceptions
		WHERE expiry_recorded = 0 AND revoked_at IS NULL AND expires_at <= $1)`, clampedNanos(now)).Scan(&due)
	return due, translate("expired exceptions", err)
}

// TakeExpired returns the exceptions expired by now whose expiry the audit
// trail has not recorded yet, and marks them recorded; record writes their
// audit entries inside the same transaction, so each expiry is recorded
// exactly once.
func (s *Decisions) TakeExpired(ctx context.Context, now time.Time, record func(ctx context.Context, tx *sql.Tx, expired []openrecall.Exception) error) ([]openrecall.Exception, error) {
	var out []openrecall.Exception
	err := s.inTx(ctx, "record exception expiries", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+exceptionColumns+` FROM exceptions
			WHERE expiry_recorded = 0 AND revoked_at IS NULL AND expires_at <= $1 ORDER BY expires_at, id`, clampedNanos(now))
		if err != nil {
			return translate("expired exceptions", err)
		}
		for rows.Next() {
			e, err := scanException(rows)
			if err != nil {
				rows.Close()
				return translate("expired exceptions", err)
			}
			out = append(out, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate("expired exceptions", err)
		}
		if len(out) == 0 {
			return nil
		}
		for _, e := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE exceptions SET expiry_recorded = 1 WHERE id = $1`, e.ID); err != nil {
				return translate("record expiry of "+e.ID, err)
			}
		}
		return record(ctx, tx, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordExpiries records in the audit trail, with actor system, each
// exception expired by now and not recorded yet, sealed with seal; it
// returns them. Every writing command calls it first (DESIGN §6b).
func (s *Decisions) RecordExpiries(ctx context.Context, now time.Time, seal SealFunc) ([]openrecall.Exception, error) {
	return s.TakeExpired(ctx, now, func(ctx context.Context, tx *sql.Tx, expired []openrecall.Exception) error {
		entries := make([]openrecall.AuditEntry, len(expired))
		for i, e := range expired {
			entries[i] = openrecall.AuditEntry{
				AnalysisID: "exception-expire-" + e.ID, Batch: "exceptions", Step: openrecall.StepExceptionExpire,
				Reason:  fmt.Sprintf("%s expired at %s; by system", e.Describe(), e.ExpiresAt.UTC().Format(time.RFC3339)),
				Outcome: openrecall.ExceptionExpired, ProposedDecision: e.Decision,
			}
		}
		_, err := s.appendAuditTx(ctx, tx, entries, seal)
		return err
	})
}

// addProposalSQL stores an exception proposal unless one with its id is
// stored already.
func addProposalSQL(d dialect) string {
	return d.insertOrIgnore() + ` exception_proposals (id, rule, service, dna, match,
			decision, max_severity, expiry_ns, supporting, alert_id, batch, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)` + d.onConflictIgnore()
}

// addExceptionSQL stores an exception unless one with its id is stored
// already (AddException then tells the same from a conflicting one).
func addExceptionSQL(d dialect) string {
	return d.insertOrIgnore() + ` exceptions (id, rule, service, dna, match, decision, max_severity,
			expires_at, created_at, analyst, note, proposal_id, revoked_at, revoked_by, revoke_reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)` + d.onConflictIgnore()
}
