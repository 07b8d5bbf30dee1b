package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/openrecall/openrecall"
)

// claimColumns reads a claim with what the store holds of its group: the
// stored group's last firing, head and decision (NULL while the claim is
// pending).
const claimColumns = `c.seq, c.group_id, c.owner, c.head_severity, c.at, g.last_at, g.head, g.decided_at`

// claimsSQL selects the claims of a key in a batch made after a seq,
// oldest first, with their groups (arguments: batch, key hash, seq).
const claimsSQL = `SELECT ` + claimColumns + ` FROM group_claims AS c LEFT JOIN alert_groups AS g ON g.id = c.group_id
	WHERE c.batch = $1 AND c.key_hash = $2 AND c.seq > $3 ORDER BY c.seq`

// GroupClaimSeq returns the seq of the last group claim stored (0 when
// none): a run that starts reads the claims after it (GroupClaims).
func (s *Decisions) GroupClaimSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM group_claims`).Scan(&seq)
	return seq, translate("group claims: last", err)
}

// GroupClaims returns the claims of key in batch made after seq since,
// oldest first, each with its owner and what the store holds of its group
// (DESIGN §13): the groups every process opened since a run started, and
// how far they grew.
func (s *Decisions) GroupClaims(ctx context.Context, batch string, key openrecall.GroupKey, since int64) ([]openrecall.GroupClaim, error) {
	return queryClaims(ctx, s.db, batch, key, since)
}

// queryer is what a query needs: the store's connection or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryClaims(ctx context.Context, q queryer, batch string, key openrecall.GroupKey, since int64) ([]openrecall.GroupClaim, error) {
	rows, err := q.QueryContext(ctx, claimsSQL, batch, key.Hash(), since)
	if err != nil {
		return nil, translate("group claims", err)
	}
	defer rows.Close()
	var out []openrecall.GroupClaim
	for rows.Next() {
		c := openrecall.GroupClaim{Key: key}
		var sev string
		var at int64
		var last, decided sql.NullInt64
		var head sql.NullString
		if err := rows.Scan(&c.Seq, &c.ID, &c.Owner, &sev, &at, &last, &head, &decided); err != nil {
			return nil, translate("group claims: scan", err)
		}
		c.HeadSeverity, c.Last = openrecall.Severity(sev), fromNanos(at)
		if head.Valid {
			c.Stored, c.Decided = true, decided.Valid
			if err := json.Unmarshal([]byte(head.String), &c.Head); err != nil {
				return nil, fmt.Errorf("group %s: head: %w", c.ID, err)
			}
			if l := fromNanos(last.Int64); l.After(c.Last) {
				c.Last = l
			}
		}
		out = append(out, c)
	}
	return out, translate("group claims", rows.Err())
}

// ClaimGroup opens group c (its ID, Key, Owner, HeadSeverity and Last, the
// head's time) in batch under the lock of its key, unless another owner's
// group takes the firing (DESIGN §13): in one transaction it reads the
// claims of the key made after since by other owners (GroupClaims) and
// asks join whether the firing joins one of them; when it does, nothing
// is written and opened is false. Otherwise the claim is stored and opened
// is true. A claim of c.ID stored before (its head run again after a
// crash) is opened again. join runs inside the transaction: it must not
// use the store. others are the claims join was given.
func (s *Decisions) ClaimGroup(ctx context.Context, batch string, c openrecall.GroupClaim, since int64,
	join func(others []openrecall.GroupClaim) bool) (opened bool, others []openrecall.GroupClaim, err error) {
	at, err := nanos(c.Last)
	if err != nil {
		at = clampedNanos(c.Last)
	}
	tx, err := s.db.BeginTx(withRowLocks(ctx), nil)
	if err != nil {
		return false, nil, translate("claim group "+c.ID+": begin", err)
	}
	defer tx.Rollback()
	if s.pg {
		// The key's own lock: claims of other keys, the inbox and the
		// sink's batches go on meanwhile. SQLite's immediate
		// transaction serialises claims as it does every writer.
		h := fnv.New32a()
		_, _ = h.Write([]byte("group\x00" + batch + "\x00" + c.Key.Hash())) // a hash's Write does not fail
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1, $2)", int32(s.lockKey), int32(h.Sum32())); err != nil {
			return false, nil, translate("claim group "+c.ID+": lock its key", err)
		}
	}
	var exists int
	switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM group_claims WHERE group_id = $1`, c.ID).Scan(&exists); {
	case err == nil:
		return true, nil, nil
	case !errors.Is(err, sql.ErrNoRows):
		return false, nil, translate("claim group "+c.ID, err)
	}
	if others, err = queryClaims(ctx, tx, batch, c.Key, since); err != nil {
		return false, nil, err
	}
	if join(others) {
		return false, others, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO group_claims (group_id, batch, key_hash, owner, head_severity, at) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, batch, c.Key.Hash(), c.Owner, string(c.HeadSeverity), at); err != nil {
		return false, nil, translate("claim group "+c.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return false, nil, translate("claim group "+c.ID+": commit", err)
	}
	return true, others, nil
}

// GroupClaimSeq returns the seq of the last group claim stored.
func (g GroupScope) GroupClaimSeq(ctx context.Context) (int64, error) {
	return g.Store.GroupClaimSeq(ctx)
}

// GroupClaims returns the scope's claims of key made after since.
func (g GroupScope) GroupClaims(ctx context.Context, key openrecall.GroupKey, since int64) ([]openrecall.GroupClaim, error) {
	return g.Store.GroupClaims(ctx, g.Batch, key, since)
}

// ClaimGroup opens group c in the scope unless join takes the firing into
// another owner's group (Decisions.ClaimGroup).
func (g GroupScope) ClaimGroup(ctx context.Context, c openrecall.GroupClaim, since int64, join func([]openrecall.GroupClaim) bool) (bool, []openrecall.GroupClaim, error) {
	return g.Store.ClaimGroup(ctx, g.Batch, c, since, join)
}
