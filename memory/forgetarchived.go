package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/openrecall/openrecall"
)

// forgettable is one kind of row ForgetArchived deletes: pick selects up to
// a batch of keys older than a cut, oldest first, with whether each was
// never decided; del deletes one key (the rows its first statement deleted
// are the kind's dependents); add counts a batch in a Forgotten.
type forgettable struct {
	name   string
	pick   string
	del    []string
	intKey bool // the key is an integer, else text
	add    func(f *openrecall.Forgotten, n, undecided, dependents int)
}

// forgettables are the kinds of rows ForgetArchived deletes, in order, in
// dialect d: each picked through the index its cut-off reads.
func forgettables(d dialect) []forgettable {
	return []forgettable{
		{name: "inbox", pick: `SELECT id, 0 FROM inbox` + d.indexedBy("inbox_forgettable") + `
		WHERE pruned_at IS NOT NULL AND done_at < $1 ORDER BY done_at LIMIT $2`,
			del: []string{`DELETE FROM inbox WHERE id = $1`}, intKey: true,
			add: func(f *openrecall.Forgotten, n, _, _ int) { f.Deliveries += n }},
		{name: "waiting", pick: `SELECT analysis_id, CASE WHEN decided_at IS NULL THEN 1 ELSE 0 END FROM waiting` + d.indexedBy("waiting_since") + `
		WHERE since < $1 ORDER BY since LIMIT $2`,
			del: []string{`DELETE FROM waiting WHERE analysis_id = $1`},
			add: func(f *openrecall.Forgotten, n, undecided, _ int) {
				f.Waiting, f.Expired = f.Waiting+n, f.Expired+undecided
			}},
		{name: "history", pick: `SELECT analysis_id, 0 FROM history` + d.indexedBy("history_at") + `
		WHERE at < $1 ORDER BY at LIMIT $2`,
			del: []string{`DELETE FROM history WHERE analysis_id = $1`},
			add: func(f *openrecall.Forgotten, n, _, _ int) { f.History += n }},
		{name: "groups", pick: `SELECT id, CASE WHEN decided_at IS NULL THEN 1 ELSE 0 END FROM alert_groups` + d.indexedBy("alert_groups_touched") + `
		WHERE touched_at < $1 ORDER BY touched_at LIMIT $2`,
			del: []string{`DELETE FROM group_members WHERE group_id = $1`, `DELETE FROM group_claims WHERE group_id = $1`, `DELETE FROM alert_groups WHERE id = $1`},
			add: func(f *openrecall.Forgotten, n, undecided, members int) {
				f.Groups, f.ExpiredGroups, f.Members = f.Groups+n, f.ExpiredGroups+undecided, f.Members+members
			}},
		{name: "alert state", pick: `SELECT alert_id, 0 FROM alert_state` + d.indexedBy("alert_state_updated") + `
		WHERE updated_at < $1 ORDER BY updated_at LIMIT $2`,
			del: []string{`DELETE FROM alert_state WHERE alert_id = $1`},
			add: func(f *openrecall.Forgotten, n, _, _ int) { f.AlertStates += n }},
	}
}

// ForgetArchived deletes the rows that served only analyses an archive of
// the audit trail has taken (DESIGN §11, server.archive_dir), in
// transactions of at most batch rows (DefaultPruneBatch when batch <= 0)
// so other writers wait milliseconds at most, stopping between two when
// ctx is done:
//
//   - pruned inbox rows that finished before cut (a row whose documents
//     are still stored is never forgotten: PruneInbox comes first);
//   - what waits for a person since before cut, decided or not (an item
//     nobody decided expires: counted as Expired);
//   - the history of what was closed without a person before cut;
//   - alert groups not opened nor grown since cut, with their member rows
//     (a later firing of a forgotten group opens it again);
//   - the redelivery state of alerts not delivered since cut (a later
//     redelivery is triaged as a new alert).
//
// cut is taken no later than the latest archive record's cut: nothing is
// forgotten before an archive, so the audit entries of every analysis whose
// rows go are in an archive file, or still in the trail. Memories,
// exceptions, batches, the budget and the chains stay; no recall and no
// verdict of audit verify changes (P103).
func (s *Store) ForgetArchived(ctx context.Context, cut time.Time, batch int) (openrecall.Forgotten, error) {
	var out openrecall.Forgotten
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	a, err := latestArchive(ctx, s.db)
	if err != nil {
		return out, translate("forget archived: latest archive", err)
	}
	if a.Before.IsZero() {
		return out, nil
	}
	if a.Before.Before(cut) {
		cut = a.Before
	}
	at, err := nanos(cut.UTC())
	if err != nil {
		return out, fmt.Errorf("forget archived: %w", err)
	}
	for _, f := range s.sql.forgettables {
		for {
			n, undecided, dependents, err := s.forgetBatch(ctx, f, at, batch)
			f.add(&out, n, undecided, dependents)
			if err != nil {
				return out, err
			}
			if n < batch {
				break
			}
			if err := ctx.Err(); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// forgetBatch deletes up to batch rows of kind f older than at in one
// transaction, and returns how many, how many of them were never decided,
// and the dependent rows its first statement deleted.
func (s *conn) forgetBatch(ctx context.Context, f forgettable, at int64, batch int) (n, undecided, dependents int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, 0, translate("forget "+f.name+": begin", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, f.pick, at, batch)
	if err != nil {
		return 0, 0, 0, translate("forget "+f.name, err)
	}
	var keys []any
	for rows.Next() {
		var id int64
		var text string
		var never int
		key := any(&text)
		if f.intKey {
			key = &id
		}
		if err := rows.Scan(key, &never); err != nil {
			rows.Close()
			return 0, 0, 0, translate("forget "+f.name+": scan", err)
		}
		if f.intKey {
			keys = append(keys, id)
		} else {
			keys = append(keys, text)
		}
		undecided += never
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, 0, translate("forget "+f.name, err)
	}
	for i, q := range f.del {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return 0, 0, 0, translate("forget "+f.name+": prepare", err)
		}
		for _, k := range keys {
			res, err := st.ExecContext(ctx, k)
			if err != nil {
				st.Close()
				return 0, 0, 0, translate("forget "+f.name+": delete", err)
			}
			if i == 0 && len(f.del) > 1 { // the dependents go first
				m, err := res.RowsAffected()
				if err != nil {
					st.Close()
					return 0, 0, 0, translate("forget "+f.name+": delete", err)
				}
				dependents += int(m)
			}
		}
		st.Close()
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, 0, translate("forget "+f.name+": commit", err)
	}
	return len(keys), undecided, dependents, nil
}
