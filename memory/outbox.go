package memory

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// The outbox (DESIGN §12b): each receiver's notification intent about a
// stored result, written in the sink's transaction with the result
// (recordIntentsTx), and the dispatcher's side — claims under a lease,
// outcomes fenced on the claim, dead letters retried by hand, counts,
// pruning.
//
// Every write here runs in the store's one write transaction at a time
// (inTx: SQLite's immediate transaction, PostgreSQL's write lock), not
// under row locks as the inbox's hot paths do: the claim's ordering rule
// reads other rows than those it claims (an episode's earlier intents),
// and a retry by hand moves such a row back to pending, so the read and
// the write must be atomic against every other writer.

// NotifyFunc gives the intents of one result, stored as part of the
// firing episode episode (openrecall.Delivery.EpisodeOf: the analysis
// that opened the alert's episode; the result's own analysis when it came
// from no delivery): the receivers its routes reach, each once, with the
// kind and the key of the notification (notify's route tree and its key
// rule are the product's). A result it gives none is notified to no one.
// It runs inside the batch's transaction: it must be quick and must not
// use the Store.
type NotifyFunc func(r openrecall.Result, episode string) []openrecall.Intent

// maxIntentError caps the receiver's answer kept in last_error, in bytes.
const maxIntentError = 2048

// intentWidth is the number of columns recordIntentsTx writes per intent.
const intentWidth = 7

// recordIntentsTx writes the intents notify gives each of results (the
// batch's stored results, in order) in tx, with multi-row inserts: one row
// per intent, pending from now. A resolve or an update is written only for
// an episode the receiver has a trigger of (stored before, or earlier in
// the batch): a recovery or a decision is news only to a receiver that
// heard of the alert (DESIGN §12b). A result's trigger or resolve for a
// receiver it has already (stored before) is not written again; updates
// may repeat. An invalid intent, or two for one receiver and kind of one
// result, fails the batch (openrecall.ErrInvalid): the hook is the
// product's code, and a result is never stored with some of its intents.
func (s *conn) recordIntentsTx(ctx context.Context, tx *sql.Tx, results []openrecall.Result, notify NotifyFunc, now time.Time) error {
	if notify == nil {
		return nil
	}
	at, err := nanos(now)
	if err != nil {
		return fmt.Errorf("persist: intents: %w", err)
	}
	type row struct {
		analysisID string
		openrecall.Intent
	}
	var rows []row
	var followKeys []any
	for _, r := range results {
		seen := map[[2]string]bool{}
		for _, in := range notify(r, s.leases.episodeOf(r.AnalysisID)) {
			if err := in.Validate(); err != nil {
				return fmt.Errorf("persist: analysis %s: %w", r.AnalysisID, err)
			}
			k := [2]string{in.Receiver, in.Kind}
			if seen[k] {
				return fmt.Errorf("persist: analysis %s: two %s intents for %s: %w", r.AnalysisID, in.Kind, in.Receiver, openrecall.ErrInvalid)
			}
			seen[k] = true
			rows = append(rows, row{r.AnalysisID, in})
			if in.Kind != openrecall.IntentTrigger {
				followKeys = append(followKeys, in.Key)
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	triggered, err := triggeredEpisodes(ctx, tx, followKeys)
	if err != nil {
		return err
	}
	var args []any
	for _, w := range rows {
		ep := [2]string{w.Receiver, w.Key}
		switch {
		case w.Kind == openrecall.IntentTrigger:
			triggered[ep] = true
		case !triggered[ep]:
			continue // no trigger of its episode: the receiver never heard of it
		}
		args = append(args, w.analysisID, w.Receiver, w.Kind, w.Key, at, at, at)
	}
	if len(args) == 0 {
		return nil
	}
	err = insertRowsThen(ctx, tx, `INSERT INTO outbox (analysis_id, receiver, kind, episode, created_at, since, next_at) VALUES `,
		` ON CONFLICT DO NOTHING`, intentWidth, args)
	return translate("persist: intents", err)
}

// triggeredEpisodes returns the episodes (receiver, key) among keys that
// have a trigger intent stored, in any state: one query, none when keys
// is empty.
func triggeredEpisodes(ctx context.Context, tx *sql.Tx, keys []any) (map[[2]string]bool, error) {
	out := map[[2]string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	var p params
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT receiver, episode FROM outbox WHERE kind = 'trigger' AND episode IN (`+p.list(len(keys))+`)`, keys...)
	if err != nil {
		return nil, translate("persist: intents: triggers", err)
	}
	defer rows.Close()
	for rows.Next() {
		var receiver, key string
		if err := rows.Scan(&receiver, &key); err != nil {
			return nil, translate("persist: intents: triggers", err)
		}
		out[[2]string{receiver, key}] = true
	}
	return out, translate("persist: intents: triggers", rows.Err())
}

// recordUpdatesTx writes, in tx, an update intent about analysisID (a
// person decided it) for every receiver that has a trigger of it: the
// decision is news to whoever heard of the alert, and to no one else. A
// member of a group a person decided has had its updates from the group's
// decision (DecideGroup), which then settles what waited of each member
// here: none is written twice.
func recordUpdatesTx(ctx context.Context, tx *sql.Tx, analysisID string, at int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox (analysis_id, receiver, kind, episode, created_at, since, next_at)
		SELECT o.analysis_id, o.receiver, 'update', o.episode, $1, $1, $1 FROM outbox AS o
		WHERE o.analysis_id = $2 AND o.kind = 'trigger' AND NOT EXISTS (SELECT 1 FROM group_members AS m
			JOIN alert_groups AS g ON g.id = m.group_id WHERE m.analysis_id = o.analysis_id AND g.decided_at IS NOT NULL)
		ORDER BY o.id`,
		at, analysisID)
	return translate("decide "+analysisID+": notification updates", err)
}

// intentColumns are the columns scanIntent reads.
const intentColumns = `id, analysis_id, receiver, kind, episode, state, created_at, since, attempts, next_at, last_error,
	sent_at, dead_at, delivery_state, lease_until`

func scanIntent(r rowScanner) (openrecall.OutboxIntent, error) {
	var (
		in                         openrecall.OutboxIntent
		created, since, next       int64
		sentAt, deadAt, leaseUntil sql.NullInt64
		delivery                   sql.NullString
	)
	if err := r.Scan(&in.ID, &in.AnalysisID, &in.Receiver, &in.Kind, &in.Key, &in.State, &created, &since, &in.Attempts, &next,
		&in.LastError, &sentAt, &deadAt, &delivery, &leaseUntil); err != nil {
		return in, err
	}
	in.CreatedAt, in.Since, in.NextAt = fromNanos(created), fromNanos(since), fromNanos(next)
	if sentAt.Valid {
		in.SentAt = fromNanos(sentAt.Int64)
	}
	if deadAt.Valid {
		in.DeadAt = fromNanos(deadAt.Int64)
	}
	if leaseUntil.Valid {
		in.LeaseUntil = fromNanos(leaseUntil.Int64)
	}
	if delivery.Valid {
		if err := json.Unmarshal([]byte(delivery.String), &in.Delivery); err != nil {
			return in, fmt.Errorf("intent %d: delivery state: %w", in.ID, err)
		}
	}
	return in, nil
}

// deliveryJSON is a delivery state as stored: NULL when there is none (nil
// or empty).
func deliveryJSON(state map[string]string) (sql.NullString, error) {
	if len(state) == 0 {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(state)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// ClaimIntents leases up to limit pending intents whose next try has come
// (NextAt, by the Store's clock) to this Store until its lease
// (Options.Lease, by the wall clock) passes, oldest first, and returns
// them, each with the Prior of its episode and its LeaseUntil. Each claim
// counts an attempt. The rules are the inbox's (lease.go), and one more:
//
//   - an intent no one holds is claimable, and so is one whose lease
//     passed, by any Store but the one that let it pass (its send may
//     still be under way), and one a former start of this instance
//     (Options.Instance) held;
//   - an intent this Store claimed and has not reported the outcome of is
//     never claimed by it again, even when another took it over and gave
//     it back: its first send is still in flight;
//   - an intent is never claimed while an earlier intent of its episode
//     (the same receiver and key, a smaller id) is pending, claimed or
//     not: a resolve is never delivered before its trigger, nor one
//     update before another. An earlier dead letter blocks nothing: the
//     episode goes on without it, and a retry by hand is refused once a
//     later intent of its episode was sent or is being sent (RetryIntent).
//
// So an episode has one intent in flight at a time, delivered in creation
// order, as long as a send ends before its lease passes (LeaseUntil; or
// the lease is renewed, RenewIntents). With receivers, only intents to
// them are claimed (a dispatcher claims for the receivers with a free
// slot, so a slow receiver's intents are not held while they wait). A
// database whose schema version is not this binary's is refused
// (openrecall.ErrSchemaMismatch).
func (s *Outbox) ClaimIntents(ctx context.Context, limit int, receivers ...string) ([]openrecall.OutboxIntent, error) {
	if limit <= 0 {
		return nil, nil
	}
	l := s.leases
	wall := time.Now().UnixNano()
	now, err := nanos(s.now())
	if err != nil {
		return nil, fmt.Errorf("claim intents: %w", err)
	}
	var out []openrecall.OutboxIntent
	err = s.inTx(ctx, "claim intents", func(tx *sql.Tx) error {
		out = out[:0]
		if err := sameSchemaTx(ctx, tx, "claim intents"); err != nil {
			return err
		}
		args := []any{l.instance, l.owner, wall + l.ttl.Nanoseconds(), now, wall}
		q := `UPDATE outbox SET lease_instance = $1, lease_owner = $2, lease_until = $3, attempts = attempts + 1
			WHERE id IN (SELECT o.id FROM outbox o WHERE o.state = 'pending' AND o.next_at <= $4
				AND (o.lease_until IS NULL OR (o.lease_until < $5 AND o.lease_owner <> $2) OR (o.lease_instance = $1 AND o.lease_owner <> $2))
				AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.receiver = o.receiver AND e.episode = o.episode AND e.state = 'pending' AND e.id < o.id)`
		p := params{n: 5}
		if len(receivers) > 0 {
			q += ` AND o.receiver IN (` + p.list(len(receivers)) + `)`
			for _, r := range receivers {
				args = append(args, r)
			}
		}
		if mine := l.intentsInFlight(); len(mine) > 0 {
			q += ` AND o.id NOT IN (` + p.list(len(mine)) + `)`
			args = append(args, mine...)
		}
		q += ` ORDER BY o.id LIMIT ` + p.next() + `) RETURNING ` + intentColumns
		args = append(args, limit)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return translate("claim intents", err)
		}
		for rows.Next() {
			in, err := scanIntent(rows)
			if err != nil {
				rows.Close()
				return translate("claim intents: scan", err)
			}
			out = append(out, in)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate("claim intents", err)
		}
		for i := range out {
			if out[i].Prior, err = priorTx(ctx, tx, out[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	for _, in := range out {
		l.intents[in.ID] = int64(in.Attempts)
	}
	l.mu.Unlock()
	// RETURNING gives no order: the oldest first.
	slices.SortFunc(out, func(a, b openrecall.OutboxIntent) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// priorTx reads the Prior of in: the delivery state of the latest intent
// of its episode sent before it with one. A later delivery that returned
// nothing (a resolve that gives no new state) leaves the earlier state the
// episode's.
func priorTx(ctx context.Context, tx *sql.Tx, in openrecall.OutboxIntent) (map[string]string, error) {
	var state string
	err := tx.QueryRowContext(ctx, `SELECT delivery_state FROM outbox WHERE receiver = $1 AND episode = $2 AND state = 'sent'
		AND id < $3 AND delivery_state IS NOT NULL ORDER BY id DESC LIMIT 1`, in.Receiver, in.Key, in.ID).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(fmt.Sprintf("claim intents: prior of %d", in.ID), err)
	}
	var prior map[string]string
	if err := json.Unmarshal([]byte(state), &prior); err != nil {
		return nil, fmt.Errorf("claim intents: prior of %d: %w", in.ID, err)
	}
	return prior, nil
}

// IntentSent records that the receiver took intent id, and what it
// returned (state, the Prior of the episode's later intents; nil or empty
// keeps the episode's earlier state as their Prior). It is fenced on this
// Store's claim: only while the intent is still pending under the claim
// ClaimIntents gave this Store (its owner and attempt) is anything
// written; otherwise it returns an error wrapping openrecall.ErrLeaseLost
// and writes nothing. Once the outcome is written or refused the claim is
// this Store's no more; a storage error keeps it, to report again.
func (s *Outbox) IntentSent(ctx context.Context, id int64, state map[string]string) error {
	body, err := deliveryJSON(state)
	if err != nil {
		return fmt.Errorf("intent %d sent: delivery state: %w", id, err)
	}
	at, err := nanos(s.now())
	if err != nil {
		return fmt.Errorf("intent %d sent: %w", id, err)
	}
	return s.outcome(ctx, "sent", id, `state = 'sent', sent_at = $1, delivery_state = $2`, at, body)
}

// IntentFailed records a try of intent id that did not deliver it: the
// intent stays pending, is not claimed again before nextAt (the
// dispatcher's back-off, or the receiver's Retry-After), and keeps
// errText, capped, as its last error. Its claim is given up, so any
// Store may take it at nextAt. Fenced as IntentSent is.
func (s *Outbox) IntentFailed(ctx context.Context, id int64, errText string, nextAt time.Time) error {
	next, err := nanos(nextAt)
	if err != nil {
		return fmt.Errorf("intent %d failed: %w", id, err)
	}
	return s.outcome(ctx, "failed", id, `last_error = $1, next_at = $2`, capError(errText), next)
}

// IntentDead makes intent id a dead letter: the dispatcher gave up on it
// (the receiver refused it for good, or it outlived the maximum age). It
// keeps errText, capped, as its last error, and stays listed until a
// person retries it (RetryIntent). Fenced as IntentSent is.
func (s *Outbox) IntentDead(ctx context.Context, id int64, errText string) error {
	at, err := nanos(s.now())
	if err != nil {
		return fmt.Errorf("intent %d dead: %w", id, err)
	}
	return s.outcome(ctx, "dead", id, `state = 'dead', dead_at = $1, last_error = $2`, at, capError(errText))
}

// outcome writes set (its placeholders numbered from $1, args) on intent
// id while this Store's claim of it holds, and gives the claim up.
func (s *Outbox) outcome(ctx context.Context, what string, id int64, set string, args ...any) error {
	l := s.leases
	l.mu.Lock()
	attempt, held := l.intents[id]
	l.mu.Unlock()
	if !held {
		return fmt.Errorf("intent %d %s: this process holds no claim of it: %w", id, what, openrecall.ErrLeaseLost)
	}
	p := params{n: len(args)}
	q := `UPDATE outbox SET ` + set + `, lease_instance = '', lease_owner = '', lease_until = NULL
		WHERE id = ` + p.next() + ` AND state = 'pending' AND lease_owner = ` + p.next() + ` AND attempts = ` + p.next()
	var n int64
	err := s.inTx(ctx, "intent "+what, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, append(args, id, l.owner, attempt)...)
		if err != nil {
			return translate(fmt.Sprintf("intent %d %s", id, what), err)
		}
		n, err = res.RowsAffected()
		return translate(fmt.Sprintf("intent %d %s", id, what), err)
	})
	if err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.intents, id)
	l.mu.Unlock()
	if n == 0 {
		return fmt.Errorf("intent %d %s: another process took it over after this one's lease passed: %w", id, what, openrecall.ErrLeaseLost)
	}
	return nil
}

// capError cuts a receiver's answer to maxIntentError bytes, at a rune
// boundary.
func capError(s string) string {
	if len(s) <= maxIntentError {
		return s
	}
	cut := maxIntentError
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// RenewIntents extends the lease of every intent this Store holds (claimed,
// no outcome reported) by Options.Lease from now, as RenewLeases does the
// inbox's: a dispatcher whose sends may outlast a lease renews at a third
// of it. An intent another Store took over is not renewed (its outcome
// here is refused).
func (s *Outbox) RenewIntents(ctx context.Context) error {
	l := s.leases
	mine := l.intentsInFlight()
	if len(mine) == 0 {
		return nil
	}
	p := params{n: 2}
	q := `UPDATE outbox SET lease_until = $1 WHERE lease_owner = $2 AND state = 'pending' AND id IN (` + p.list(len(mine)) + `)`
	return s.inTx(ctx, "renew intents", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q, append([]any{time.Now().UnixNano() + l.ttl.Nanoseconds(), l.owner}, mine...)...)
		return translate("renew intents", err)
	})
}

// intentsInFlight returns the outbox ids this Store claimed and has not
// reported the outcome of.
func (l *leases) intentsInFlight() []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]any, 0, len(l.intents))
	for id := range l.intents {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b any) int { return cmp.Compare(a.(int64), b.(int64)) })
	return out
}

// Intents lists the intents f selects, newest first: for `openrecall
// outbox` and the cockpit (the dead letters, what is pending, what was
// sent).
func (s *Outbox) Intents(ctx context.Context, f openrecall.IntentFilter) ([]openrecall.OutboxIntent, error) {
	var p params
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"state", f.State}, {"receiver", f.Receiver}, {"analysis_id", f.AnalysisID}} {
		if c.v != "" {
			where = append(where, c.col+` = `+p.next())
			args = append(args, c.v)
		}
	}
	q := `SELECT ` + intentColumns + ` FROM outbox`
	for i, w := range where {
		if i == 0 {
			q += ` WHERE ` + w
		} else {
			q += ` AND ` + w
		}
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ` + p.next()
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate("intents", err)
	}
	defer rows.Close()
	out := []openrecall.OutboxIntent{}
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, translate("intents: scan", err)
		}
		out = append(out, in)
	}
	return out, translate("intents", rows.Err())
}

// RetryIntent puts dead letter id back to pending, to be tried at once: a
// person retries it by hand. Its tries start again (Since is now, so the
// maximum age counts from the retry); its attempts and last error stay. An
// unknown id wraps openrecall.ErrNotFound; an intent that is not dead, or
// whose episode has a later intent sent or being sent (delivering this one
// now would reverse their order: a trigger after its resolve opens the
// incident again), wraps openrecall.ErrInvalid and changes nothing.
func (s *Outbox) RetryIntent(ctx context.Context, id int64) error {
	at, err := nanos(s.now())
	if err != nil {
		return fmt.Errorf("retry intent %d: %w", id, err)
	}
	return s.inTx(ctx, "retry intent", func(tx *sql.Tx) error {
		var state, receiver, episode string
		err := tx.QueryRowContext(ctx, `SELECT state, receiver, episode FROM outbox WHERE id = $1`, id).Scan(&state, &receiver, &episode)
		if err != nil {
			return translate(fmt.Sprintf("retry intent %d", id), err)
		}
		if state != openrecall.IntentDead {
			return fmt.Errorf("retry intent %d: it is %s, not a dead letter: %w", id, state, openrecall.ErrInvalid)
		}
		var later int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE receiver = $1 AND episode = $2 AND id > $3
			AND (state = 'sent' OR (state = 'pending' AND lease_owner <> ''))`, receiver, episode, id).Scan(&later); err != nil {
			return translate(fmt.Sprintf("retry intent %d", id), err)
		}
		if later > 0 {
			return fmt.Errorf("retry intent %d: a later notification of its episode to %s was sent or is being sent, and this one would arrive after it: %w",
				id, receiver, openrecall.ErrInvalid)
		}
		_, err = tx.ExecContext(ctx, `UPDATE outbox SET state = 'pending', dead_at = NULL, since = $1, next_at = $1 WHERE id = $2 AND state = 'dead'`, at, id)
		return translate(fmt.Sprintf("retry intent %d", id), err)
	})
}

// OutboxCounts counts the pending intents and the dead letters, in all and
// per receiver, and says when the oldest pending one was written: the
// outbox's metrics.
func (s *Outbox) OutboxCounts(ctx context.Context) (openrecall.OutboxCounts, error) {
	c := openrecall.OutboxCounts{ByReceiver: map[string]openrecall.ReceiverCounts{}}
	rows, err := s.db.QueryContext(ctx, `SELECT receiver, state, COUNT(*), MIN(created_at) FROM outbox
		WHERE state IN ('pending', 'dead') GROUP BY receiver, state`)
	if err != nil {
		return c, translate("outbox counts", err)
	}
	defer rows.Close()
	var oldest int64
	for rows.Next() {
		var receiver, state string
		var n int
		var first int64
		if err := rows.Scan(&receiver, &state, &n, &first); err != nil {
			return c, translate("outbox counts: scan", err)
		}
		rc := c.ByReceiver[receiver]
		if state == openrecall.IntentPending {
			rc.Pending += n
			c.Pending += n
			if oldest == 0 || first < oldest {
				oldest = first
			}
		} else {
			rc.Dead += n
			c.Dead += n
		}
		c.ByReceiver[receiver] = rc
	}
	if oldest != 0 {
		c.OldestPending = fromNanos(oldest)
	}
	return c, translate("outbox counts", rows.Err())
}

// PruneOutbox deletes, in transactions of batch intents (DefaultPruneBatch
// when batch <= 0), the intents sent before before, and returns how many
// it deleted. It keeps the one that gives its episode's later intents
// their Prior (the episode's latest sent intent with a delivery state)
// while a later intent of the episode is pending, and while the episode is
// open: until a resolve of it, sent before before too, closes it. So
// pruning never takes a Prior a claim would return, but of an episode that
// resolved longer than the retention ago. Pending intents and dead letters
// are never pruned. serve prunes with the inbox's retention.
func (s *Outbox) PruneOutbox(ctx context.Context, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	cut, err := nanos(before)
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", err)
	}
	total := 0
	for {
		var n int
		err := s.inTx(ctx, "prune outbox", func(tx *sql.Tx) error {
			ids, err := prunableIntents(ctx, tx, cut, batch)
			if err != nil || len(ids) == 0 {
				return err
			}
			var p params
			res, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE id IN (`+p.list(len(ids))+`)`, ids...)
			if err != nil {
				return translate("prune outbox: delete", err)
			}
			d, err := res.RowsAffected()
			n = int(d)
			return translate("prune outbox: delete", err)
		})
		total += n
		if err != nil || n < batch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// prunableIntents selects up to batch intents PruneOutbox deletes: sent
// before cut, and not the Prior of their open episode nor of a pending
// intent.
func prunableIntents(ctx context.Context, tx *sql.Tx, cut int64, batch int) ([]any, error) {
	// An intent is its episode's Prior when it has a delivery state and no
	// later sent intent of the episode has one.
	rows, err := tx.QueryContext(ctx, `SELECT o.id FROM outbox o WHERE o.state = 'sent' AND o.sent_at < $1
		AND (o.delivery_state IS NULL
			OR EXISTS (SELECT 1 FROM outbox n WHERE n.receiver = o.receiver AND n.episode = o.episode AND n.state = 'sent'
				AND n.id > o.id AND n.delivery_state IS NOT NULL)
			OR (EXISTS (SELECT 1 FROM outbox r WHERE r.receiver = o.receiver AND r.episode = o.episode AND r.state = 'sent'
					AND r.kind = 'resolve' AND r.id >= o.id AND r.sent_at < $1)
				AND NOT EXISTS (SELECT 1 FROM outbox w WHERE w.receiver = o.receiver AND w.episode = o.episode AND w.state = 'pending'
					AND w.id > o.id)))
		ORDER BY o.id LIMIT $2`, cut, batch)
	if err != nil {
		return nil, translate("prune outbox", err)
	}
	defer rows.Close()
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, translate("prune outbox: scan", err)
		}
		ids = append(ids, id)
	}
	return ids, translate("prune outbox", rows.Err())
}
