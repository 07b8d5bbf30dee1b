package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/openrecall/openrecall"
)

// recordGroupsTx stores the groups of a batch of results, in input order,
// inside the transaction that persists their audit entries (DESIGN §6a): a
// head opens its group, a member joins its group (its size and time span
// grow). A result stored before (the same analysis id) changes nothing, so
// a batch persisted again after a crash counts no member twice. A member
// that joins a group decided since carries the group's decision.
//
// A member whose group is no longer stored (serve forgot it, untouched for
// longer than the retention, after an archive: ForgetArchived) opens it
// again from its own result: the key is the same for every member and the
// head it records carries the decision the member took from its head.
func recordGroupsTx(ctx context.Context, tx *sql.Tx, q *statements, results []openrecall.Result, now int64) error {
	var open, join, grow *sql.Stmt
	defer func() {
		for _, st := range []*sql.Stmt{open, join, grow} {
			if st != nil {
				_ = st.Close() // a statement of a transaction ends with it
			}
		}
	}()
	prepare := func(st **sql.Stmt, query string) error {
		if *st != nil {
			return nil
		}
		var err error
		*st, err = tx.PrepareContext(ctx, query)
		return translate("groups: prepare", err)
	}
	var roles boxes[string]
	var times boxes[int64]
	nowv := any(now) // one box for every statement
	for _, r := range results {
		g := r.Group
		if g == nil {
			continue
		}
		at := clampedNanos(g.At)
		openIt := func() error {
			args, err := openArgs(r, now)
			if err != nil {
				return err
			}
			if err := prepare(&open, q.openGroup); err != nil {
				return err
			}
			if _, err = open.ExecContext(ctx, args...); err != nil {
				return translate("group "+g.ID+": open", err)
			}
			return nil
		}
		if g.Role == openrecall.GroupRoleHead {
			if err := openIt(); err != nil {
				return err
			}
		}
		if err := prepare(&join, q.joinGroup); err != nil {
			return err
		}
		id := any(g.ID) // one box for the member's statements
		joined := func() (int64, error) {
			res, err := join.ExecContext(ctx, r.AnalysisID, r.Alert.ID, roles.of(g.Role), id)
			if err == nil {
				var n int64
				if n, err = res.RowsAffected(); err == nil {
					return n, nil
				}
			}
			return 0, translate("group "+g.ID+": member "+r.AnalysisID, err)
		}
		n, err := joined()
		if err != nil {
			return err
		}
		if n == 0 {
			var exists int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM group_members WHERE analysis_id = $1`, r.AnalysisID).Scan(&exists)
			if err == nil {
				continue // stored before
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("group %s of %s: %w", g.ID, r.AnalysisID, translate("group member", err))
			}
			// Not stored, so the group is not: it was forgotten.
			if err := openIt(); err != nil {
				return err
			}
			if n, err = joined(); err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("group %s of %s: the group was neither stored nor opened", g.ID, r.AnalysisID)
			}
		}
		if err := prepare(&grow, q.growGroup); err != nil {
			return err
		}
		atv := times.of(at)
		if _, err := grow.ExecContext(ctx, atv, atv, nowv, id); err != nil {
			return translate("group "+g.ID+": grow", err)
		}
	}
	return nil
}

// openGroupSQL opens a group unless it is stored already (openArgs).
func openGroupSQL(d dialect) string {
	return d.insertOrIgnore() + ` alert_groups (id, batch, key_hash, key, rule, service,
	head_severity, head, head_analysis, size, first_at, last_at, touched_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $11, $12)` + d.onConflictIgnore()
}

// joinGroupSQL adds a member to a stored group, with the group's decision,
// unless the analysis is a member already (arguments: analysis id, alert
// id, role, group id).
func joinGroupSQL(d dialect) string {
	return d.insertOrIgnore() + ` group_members (analysis_id, group_id, alert_id, role, decision)
			SELECT $1, id, $2, $3, decision FROM alert_groups WHERE id = $4` + d.onConflictIgnore()
}

// growGroupSQL counts a member into its group and widens the group's time
// span to it (arguments: the member's time twice, now, the group id).
func growGroupSQL(d dialect) string {
	return `UPDATE alert_groups SET size = size + 1, first_at = ` + d.least("first_at", "$1") + `, last_at = ` + d.greatest("last_at", "$2") + `,
			touched_at = ` + d.greatest("touched_at", "$3") + ` WHERE id = $4`
}

// openArgs returns the arguments of openGroup for head result r, opened at
// now (UTC unix nanoseconds).
func openArgs(r openrecall.Result, now int64) ([]any, error) {
	g := r.Group
	key, ok := openrecall.GroupKeyOf(r.Alert, r.Identity, r.Fingerprint)
	if !ok {
		return nil, fmt.Errorf("group %s: head %s has no identity: %w", g.ID, r.AnalysisID, openrecall.ErrInvalid)
	}
	keyJSON, err := json.Marshal(key)
	if err != nil {
		return nil, fmt.Errorf("group %s: encode key: %w", g.ID, err)
	}
	head, err := json.Marshal(openrecall.HeadOf(r))
	if err != nil {
		return nil, fmt.Errorf("group %s: encode head: %w", g.ID, err)
	}
	at := clampedNanos(g.At)
	return []any{g.ID, r.Batch, key.Hash(), string(keyJSON), key.Identity.Rule, key.Identity.Service,
		string(r.Alert.Severity), string(head), r.AnalysisID, at, at, now}, nil
}

// openFencedGroupsTx opens the groups headed by results fenced out of a
// persist (another serve process reclaimed their deliveries): the head's
// result is not stored, but this process's later results of the same
// storm were grouped under it and join it. Without the group they could
// never be stored (their member row needs it), and the process would
// retry them for ever. The head joins no group here: the process now
// holding its delivery stores its own result.
func openFencedGroupsTx(ctx context.Context, tx *sql.Tx, q *statements, results []openrecall.Result, now int64) error {
	for _, r := range results {
		if r.Group == nil || r.Group.Role != openrecall.GroupRoleHead {
			continue
		}
		args, err := openArgs(r, now)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q.openGroup, args...); err != nil {
			return translate("group "+r.Group.ID+": open", err)
		}
	}
	return nil
}

// clampedNanos is t in UTC unix nanoseconds, clamped to the storable range:
// an alert's own time is the sender's word, and a far-off one must not stop
// its batch from being stored.
func clampedNanos(t time.Time) int64 {
	if n, err := nanos(t); err == nil {
		return n
	}
	if t.Year() < 1678 {
		return math.MinInt64
	}
	return math.MaxInt64
}

const groupColumns = `id, batch, key, head_severity, head, size, first_at, last_at, decided_at, decision, memory_id, analyst`

func scanGroup(r rowScanner) (openrecall.Group, error) {
	var g openrecall.Group
	var key, sev, head string
	var first, last int64
	var decidedAt sql.NullInt64
	var decision, memoryID, analyst sql.NullString
	if err := r.Scan(&g.ID, &g.Batch, &key, &sev, &head, &g.Size, &first, &last, &decidedAt, &decision, &memoryID, &analyst); err != nil {
		return g, err
	}
	if err := json.Unmarshal([]byte(key), &g.Key); err != nil {
		return g, fmt.Errorf("group %s: key: %w", g.ID, err)
	}
	if err := json.Unmarshal([]byte(head), &g.Head); err != nil {
		return g, fmt.Errorf("group %s: head: %w", g.ID, err)
	}
	g.HeadSeverity, g.FirstAt, g.LastAt = openrecall.Severity(sev), fromNanos(first), fromNanos(last)
	if decidedAt.Valid {
		g.Decided, g.DecidedAt = true, fromNanos(decidedAt.Int64)
		g.Decision, g.MemoryID, g.Analyst = openrecall.Decision(decision.String), memoryID.String, analyst.String
	}
	return g, nil
}

func (s *conn) queryGroups(ctx context.Context, what, query string, args ...any) ([]openrecall.Group, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(what, err)
	}
	defer rows.Close()
	out := []openrecall.Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, translate(what+": scan", err)
		}
		out = append(out, g)
	}
	return out, translate(what, rows.Err())
}

// OpenGroups returns the groups of batch that no person has decided and
// that are the latest of their key: the groups a run of batch continues.
func (s *Decisions) OpenGroups(ctx context.Context, batch string) ([]openrecall.Group, error) {
	return s.queryGroups(ctx, "open groups", `SELECT `+groupColumns+` FROM alert_groups WHERE rowid IN
		(SELECT MAX(rowid) FROM alert_groups WHERE batch = $1 GROUP BY key_hash) AND decided_at IS NULL ORDER BY rowid`, batch)
}

// Groups returns up to limit groups, newest first: only those no person has
// decided when open is set.
func (s *Decisions) Groups(ctx context.Context, open bool, limit int) ([]openrecall.Group, error) {
	cond := ""
	if open {
		cond = "WHERE decided_at IS NULL"
	}
	return s.queryGroups(ctx, "groups", `SELECT `+groupColumns+` FROM alert_groups `+cond+` ORDER BY rowid DESC LIMIT $1`, limit)
}

// Group returns the group id; an unknown id wraps openrecall.ErrNotFound.
func (s *Decisions) Group(ctx context.Context, id string) (openrecall.Group, error) {
	g, err := scanGroup(s.db.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM alert_groups WHERE id = $1`, id))
	if err != nil {
		return g, translate("group "+id, err)
	}
	return g, nil
}

// GroupOf returns the group membership of an analysis; an analysis in no
// group wraps openrecall.ErrNotFound.
func (s *Decisions) GroupOf(ctx context.Context, analysisID string) (openrecall.GroupMember, error) {
	var m openrecall.GroupMember
	var decision sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT analysis_id, group_id, alert_id, role, decision FROM group_members WHERE analysis_id = $1`,
		analysisID).Scan(&m.AnalysisID, &m.GroupID, &m.AlertID, &m.Role, &decision)
	if err != nil {
		return m, translate("group of "+analysisID, err)
	}
	m.Decision = openrecall.Decision(decision.String)
	return m, nil
}

// GroupMembers returns the firings of group id, head first, in the order
// they were stored.
func (s *Decisions) GroupMembers(ctx context.Context, id string) ([]openrecall.GroupMember, error) {
	return s.queryMembers(ctx, `SELECT analysis_id, group_id, alert_id, role, decision FROM group_members
		WHERE group_id = $1 ORDER BY role = 'member', rowid`, id)
}

// GroupMembersAfter returns up to limit firings of group id in
// GroupMembers' order, those after the firing whose analysis id is after
// ("" for the first page): a cursor that stays valid while the group
// grows. A cursor that is no firing of the group wraps
// openrecall.ErrNotFound.
func (s *Decisions) GroupMembersAfter(ctx context.Context, id, after string, limit int) ([]openrecall.GroupMember, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("group members: limit %d: %w", limit, openrecall.ErrInvalid)
	}
	if after == "" {
		return s.queryMembers(ctx, `SELECT analysis_id, group_id, alert_id, role, decision FROM group_members
			WHERE group_id = $1 ORDER BY role = 'member', rowid LIMIT $2`, id, limit)
	}
	var role string
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT role, rowid FROM group_members WHERE analysis_id = $1 AND group_id = $2`, after, id).Scan(&role, &at)
	if err != nil {
		return nil, translate("group "+id+": firing "+after, err)
	}
	if role != openrecall.GroupRoleMember {
		// After the head (or a head opened again): every member.
		return s.queryMembers(ctx, `SELECT analysis_id, group_id, alert_id, role, decision FROM group_members
			WHERE group_id = $1 AND role = 'member' ORDER BY rowid LIMIT $2`, id, limit)
	}
	return s.queryMembers(ctx, `SELECT analysis_id, group_id, alert_id, role, decision FROM group_members
		WHERE group_id = $1 AND role = 'member' AND rowid > $2 ORDER BY rowid LIMIT $3`, id, at, limit)
}

func (s *Decisions) queryMembers(ctx context.Context, query string, args ...any) ([]openrecall.GroupMember, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate("group members", err)
	}
	defer rows.Close()
	var out []openrecall.GroupMember
	for rows.Next() {
		var m openrecall.GroupMember
		var decision sql.NullString
		if err := rows.Scan(&m.AnalysisID, &m.GroupID, &m.AlertID, &m.Role, &decision); err != nil {
			return nil, translate("group members: scan", err)
		}
		m.Decision = openrecall.Decision(decision.String)
		out = append(out, m)
	}
	return out, translate("group members", rows.Err())
}

// DecideGroup records a person's decision of group id in one transaction
// (DESIGN §6a): it retains inc, the one memory of the group (keyed by its
// head's alert id: a storm is one vote), closes the group and records the
// decision on every member. A group decided before is refused with
// openrecall.ErrGroupDecided (and ErrInvalid), an unknown one with ErrNotFound; nothing is
// stored then. It returns the group as decided, the memory as stored,
// whether it was created, and the members.
func (s *Decisions) DecideGroup(ctx context.Context, id string, inc openrecall.Incident) (openrecall.Group, openrecall.Incident, bool, []openrecall.GroupMember, error) {
	inc, args, err := s.prepare(inc)
	if err != nil {
		return openrecall.Group{}, openrecall.Incident{}, false, nil, fmt.Errorf("decide group %s: %w", id, err)
	}
	var g openrecall.Group
	var stored openrecall.Incident
	var created bool
	err = s.inTx(ctx, "decide group "+id, func(tx *sql.Tx) error {
		var err error
		if g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM alert_groups WHERE id = $1`, id)); err != nil {
			return translate("group "+id, err)
		}
		if g.Decided {
			return fmt.Errorf("group %s was decided %s by %q at %s: %w (%w)", id, g.Decision, g.Analyst, g.DecidedAt.Format(time.RFC3339), openrecall.ErrGroupDecided, openrecall.ErrInvalid)
		}
		if stored, created, err = s.retainTx(ctx, tx, args, inc); err != nil {
			return err
		}
		now := s.now()
		if _, err := tx.ExecContext(ctx, `UPDATE alert_groups SET decided_at = $1, decision = $2, memory_id = $3, analyst = $4 WHERE id = $5`,
			now.UnixNano(), string(inc.Decision), stored.ID, inc.Analyst, id); err != nil {
			return translate("decide group "+id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE group_members SET decision = $1 WHERE group_id = $2`, string(inc.Decision), id); err != nil {
			return translate("decide group "+id+": members", err)
		}
		// The decision is news to every receiver that heard of a member.
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (analysis_id, receiver, kind, episode, created_at, since, next_at)
			SELECT o.analysis_id, o.receiver, 'update', o.episode, $1, $1, $1 FROM outbox AS o
			JOIN group_members AS m ON m.analysis_id = o.analysis_id
			WHERE m.group_id = $2 AND o.kind = 'trigger' ORDER BY o.id`, now.UnixNano(), id); err != nil {
			return translate("decide group "+id+": notification updates", err)
		}
		g.Decided, g.DecidedAt, g.Decision, g.MemoryID, g.Analyst = true, now.UTC(), inc.Decision, stored.ID, inc.Analyst
		return nil
	})
	if err != nil {
		return openrecall.Group{}, openrecall.Incident{}, false, nil, err
	}
	// Counted even when an equivalent memory was stored: the retain may
	// have filled in its identity (fillIdentity), which recall reads.
	s.incidentWrites.Add(1)
	s.indexWrote(stored)
	members, err := s.GroupMembers(ctx, id)
	if err != nil {
		return g, stored, created, nil, err
	}
	return g, stored, created, members, nil
}

// GroupScope is the store's groups of one batch, as its runs continue them
// (workflow.GroupStore): serve's groups, never those of an analyze run.
type GroupScope struct {
	Store *Store
	Batch string
}

// OpenGroups returns the open groups of the scope.
func (g GroupScope) OpenGroups(ctx context.Context) ([]openrecall.Group, error) {
	return g.Store.OpenGroups(ctx, g.Batch)
}

// Group returns the group id.
func (g GroupScope) Group(ctx context.Context, id string) (openrecall.Group, error) {
	return g.Store.Group(ctx, id)
}

// GroupOf returns the group membership of an analysis.
func (g GroupScope) GroupOf(ctx context.Context, analysisID string) (openrecall.GroupMember, error) {
	return g.Store.GroupOf(ctx, analysisID)
}
