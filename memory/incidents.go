package memory

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// fpKey is the indexed key of a whole fingerprint: the first 8 bytes of the
// SHA-256 of its canonical string. Queries also compare the six columns, so
// a hash collision can never return a wrong match.
func fpKey(fp openrecall.Fingerprint) int64 {
	sum := sha256.Sum256([]byte(fp.String()))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// k4Key is the indexed key of the four critical values (error class, service
// role, attack pattern, environment).
func k4Key(fp openrecall.Fingerprint) int64 {
	h := sha256.New()
	for _, v := range []string{fp.ErrorClass, fp.ServiceRole, fp.AttackPattern, fp.Environment} {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
}

const incidentColumns = `id, dedupe_key, error_class, service_role, dependency_pattern, signal_shape,
	attack_pattern, environment, decision, note, dead_ends, analyst, impact_minutes, source_alert_id, created_at`

const insertIncident = `INSERT INTO incidents (id, dedupe_key, fp, k4, error_class, service_role,
	dependency_pattern, signal_shape, attack_pattern, environment, decision, note, dead_ends,
	analyst, impact_minutes, source_alert_id, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (dedupe_key) DO NOTHING`

// The recall tiers. Each query is pinned to its index with INDEXED BY and
// also compares the plain columns, so it is exact even if two keys collide.
const (
	criticalEqual = `error_class = ? AND service_role = ? AND attack_pattern = ? AND environment = ?`

	recallExact = `SELECT ` + incidentColumns + ` FROM incidents INDEXED BY incidents_fp
	WHERE fp = ? AND ` + criticalEqual + ` AND dependency_pattern = ? AND signal_shape = ?
	ORDER BY created_at DESC, id LIMIT ?`

	recallShapeDiffers = `SELECT ` + incidentColumns + ` FROM incidents INDEXED BY incidents_k4_dep
	WHERE k4 = ? AND ` + criticalEqual + ` AND dependency_pattern = ? AND signal_shape <> ?
	ORDER BY created_at DESC, id LIMIT ?`

	recallDependencyDiffers = `SELECT ` + incidentColumns + ` FROM incidents INDEXED BY incidents_k4_shape
	WHERE k4 = ? AND ` + criticalEqual + ` AND signal_shape = ? AND dependency_pattern <> ?
	ORDER BY created_at DESC, id LIMIT ?`

	recallBothDiffer = `SELECT ` + incidentColumns + ` FROM incidents INDEXED BY incidents_k4
	WHERE k4 = ? AND ` + criticalEqual + ` AND dependency_pattern <> ? AND signal_shape <> ?
	ORDER BY created_at DESC, id LIMIT ?`
)

// recallArgs returns the arguments of a recall tier query: the key, the
// critical values, the two descriptive values, the limit.
func recallArgs(key int64, fp openrecall.Fingerprint, a, b string, limit int) []any {
	return []any{key, fp.ErrorClass, fp.ServiceRole, fp.AttackPattern, fp.Environment, a, b, limit}
}

type rowScanner interface {
	Scan(dest ...any) error
}

func scanIncident(r rowScanner) (openrecall.Incident, error) {
	var (
		inc      openrecall.Incident
		deadEnds string
		created  int64
		decision string
	)
	err := r.Scan(&inc.ID, &inc.DedupeKey, &inc.Fingerprint.ErrorClass, &inc.Fingerprint.ServiceRole,
		&inc.Fingerprint.DependencyPattern, &inc.Fingerprint.SignalShape, &inc.Fingerprint.AttackPattern,
		&inc.Fingerprint.Environment, &decision, &inc.Note, &deadEnds, &inc.Analyst, &inc.ImpactMinutes,
		&inc.SourceAlertID, &created)
	if err != nil {
		return openrecall.Incident{}, err
	}
	inc.Decision = openrecall.Decision(decision)
	inc.CreatedAt = fromNanos(created)
	if err := json.Unmarshal([]byte(deadEnds), &inc.DeadEnds); err != nil {
		return openrecall.Incident{}, fmt.Errorf("incident %s: dead ends column: %w", inc.ID, err)
	}
	if len(inc.DeadEnds) == 0 {
		inc.DeadEnds = nil
	}
	return inc, nil
}

// prepare validates and normalizes inc for storage: the dedupe key and id
// derived from its content, CreatedAt set to now when zero and kept in UTC.
func (s *Store) prepare(inc openrecall.Incident) (openrecall.Incident, []any, error) {
	if err := inc.Validate(); err != nil {
		return inc, nil, err
	}
	inc = inc.Normalized()
	if inc.CreatedAt.IsZero() {
		inc.CreatedAt = s.now()
	}
	created, err := nanos(inc.CreatedAt)
	if err != nil {
		return inc, nil, fmt.Errorf("incident created_at: %w", err)
	}
	deadEnds := inc.DeadEnds
	if deadEnds == nil {
		deadEnds = []string{}
	}
	de, err := json.Marshal(deadEnds)
	if err != nil {
		return inc, nil, fmt.Errorf("incident dead ends: %w", err)
	}
	fp := inc.Fingerprint
	args := []any{inc.ID, inc.DedupeKey, fpKey(fp), k4Key(fp), fp.ErrorClass, fp.ServiceRole,
		fp.DependencyPattern, fp.SignalShape, fp.AttackPattern, fp.Environment, string(inc.Decision),
		inc.Note, string(de), inc.Analyst, inc.ImpactMinutes, inc.SourceAlertID, created}
	return inc, args, nil
}

// Retain stores an analyst decision. The incident is validated, normalized
// (dedupe key and stable id from its content) and given CreatedAt = now when
// zero. Retain is idempotent: when an equivalent incident is already stored
// (same dedupe key, whichever process stored it) it returns the stored record
// and created=false, leaving it untouched. The returned incident is exactly
// what Get returns for its id.
func (s *Store) Retain(ctx context.Context, inc openrecall.Incident) (openrecall.Incident, bool, error) {
	inc, args, err := s.prepare(inc)
	if err != nil {
		return openrecall.Incident{}, false, fmt.Errorf("retain: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: begin", err)
	}
	defer tx.Rollback()
	stored, created, err := retainTx(ctx, tx, args, inc.DedupeKey)
	if err != nil {
		return openrecall.Incident{}, false, err
	}
	if err := tx.Commit(); err != nil {
		return openrecall.Incident{}, false, translate("retain: commit", err)
	}
	s.log.Debug("retain", zap.String("id", stored.ID), zap.Bool("created", created),
		zap.String("fingerprint", stored.Fingerprint.String()), zap.String("decision", string(stored.Decision)))
	return stored, created, nil
}

func retainTx(ctx context.Context, tx *sql.Tx, args []any, dedupeKey string) (openrecall.Incident, bool, error) {
	res, err := tx.ExecContext(ctx, insertIncident, args...)
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: insert", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: rows affected", err)
	}
	stored, err := scanIncident(tx.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE dedupe_key = ?`, dedupeKey))
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: read back", err)
	}
	return stored, n == 1, nil
}

// Get returns the incident with the given id, or an error wrapping
// openrecall.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (openrecall.Incident, error) {
	inc, err := scanIncident(s.db.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE id = ?`, id))
	if err != nil {
		return openrecall.Incident{}, translate(fmt.Sprintf("get incident %q", id), err)
	}
	return inc, nil
}

// Recall returns up to limit incidents similar to fp, best first; see the
// package documentation for the exact semantics. limit <= 0 returns an empty
// result.
func (s *Store) Recall(ctx context.Context, fp openrecall.Fingerprint, limit int) ([]openrecall.Match, error) {
	if err := fp.Validate(); err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	out := []openrecall.Match{}
	if limit <= 0 {
		return out, nil
	}
	k4 := k4Key(fp)
	exact, err := s.recallTier(ctx, recallExact, recallArgs(fpKey(fp), fp, fp.DependencyPattern, fp.SignalShape, limit))
	if err != nil {
		return nil, err
	}
	out = appendMatches(out, fp, exact)
	if need := limit - len(out); need > 0 {
		a, err := s.recallTier(ctx, recallShapeDiffers, recallArgs(k4, fp, fp.DependencyPattern, fp.SignalShape, need))
		if err != nil {
			return nil, err
		}
		b, err := s.recallTier(ctx, recallDependencyDiffers, recallArgs(k4, fp, fp.SignalShape, fp.DependencyPattern, need))
		if err != nil {
			return nil, err
		}
		merged := append(a, b...)
		sortRecent(merged)
		if len(merged) > need {
			merged = merged[:need]
		}
		out = appendMatches(out, fp, merged)
	}
	if need := limit - len(out); need > 0 {
		rest, err := s.recallTier(ctx, recallBothDiffer, recallArgs(k4, fp, fp.DependencyPattern, fp.SignalShape, need))
		if err != nil {
			return nil, err
		}
		out = appendMatches(out, fp, rest)
	}
	s.log.Debug("recall", zap.String("fingerprint", fp.String()), zap.Int("limit", limit), zap.Int("matches", len(out)))
	return out, nil
}

func (s *Store) recallTier(ctx context.Context, query string, args []any) ([]openrecall.Incident, error) {
	rows, err := s.recall[query].QueryContext(ctx, args...)
	if err != nil {
		return nil, translate("recall", err)
	}
	defer rows.Close()
	var out []openrecall.Incident
	for rows.Next() {
		inc, err := scanIncident(rows)
		if err != nil {
			return nil, translate("recall: scan", err)
		}
		out = append(out, inc)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("recall", err)
	}
	return out, nil
}

// sortRecent orders incidents newer first, then by id ascending.
func sortRecent(incs []openrecall.Incident) {
	sort.Slice(incs, func(i, j int) bool {
		a, b := incs[i], incs[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID < b.ID
	})
}

func appendMatches(out []openrecall.Match, fp openrecall.Fingerprint, incs []openrecall.Incident) []openrecall.Match {
	for _, inc := range incs {
		out = append(out, openrecall.Match{Incident: inc, Score: openrecall.Similarity(fp, inc.Fingerprint)})
	}
	return out
}
