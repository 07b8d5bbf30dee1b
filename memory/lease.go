package memory

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// Several serve processes share one inbox (DESIGN §13): each claims
// pending deliveries under a lease, and persists and completes a delivery
// only while it still holds that lease, fenced on its owner and attempt.

// DefaultLease is how long a claim holds a delivery unless renewed.
const DefaultLease = time.Minute

// leases is what one Store holds of the inbox: its owner name and the
// deliveries it claimed and has not completed.
type leases struct {
	mu       sync.Mutex
	instance string
	owner    string
	ttl      time.Duration
	// held: inbox id → the claim; byAnalysis: analysis id → inbox id;
	// lost: claims this Store found reclaimed by another owner (counted in
	// Store.lost), kept until the delivery's completion comes so that
	// neither its persist nor its completion writes unfenced.
	held       map[int64]claimedRow
	byAnalysis map[string]int64
	lost       map[int64]string // inbox id → analysis id
	// claiming counts the Claims under way: rows they committed may not
	// be in held yet.
	claiming int
	// intents: outbox id → the attempt of this Store's claim of it, from
	// ClaimIntents until its outcome is written or refused (outbox.go).
	intents map[int64]int64
	// afterRenew is Options.AfterRenew.
	afterRenew func()
}

// claimedRow is one delivery this Store holds.
type claimedRow struct {
	attempt    int64
	analysisID string
	// episode is the delivery's firing episode (Delivery.EpisodeOf), the
	// key of its result's notifications (recordIntentsTx).
	episode string
}

func newLeases(opts Options) *leases {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	ttl := opts.Lease
	if ttl <= 0 {
		ttl = DefaultLease
	}
	return &leases{instance: opts.Instance, owner: opts.Instance + "/" + hex.EncodeToString(b[:]), ttl: ttl,
		held: map[int64]claimedRow{}, byAnalysis: map[string]int64{}, lost: map[int64]string{}, intents: map[int64]int64{},
		afterRenew: opts.AfterRenew}
}

// claim returns the attempt this Store holds of inbox row id; false when
// it holds none.
func (l *leases) claim(id int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.held[id]
	return c.attempt, ok
}

// claimOf returns the inbox id and attempt this Store holds for an
// analysis, and whether it claimed it at all (held or lost).
func (l *leases) claimOf(analysisID string) (id, attempt int64, claimed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.byAnalysis[analysisID]
	if !ok {
		return 0, 0, false
	}
	return id, l.held[id].attempt, true
}

// isLost reports whether this Store claimed inbox row id and found it
// reclaimed by another owner.
// episodeOf names the firing episode of the delivery this Store claimed
// whose analysis is analysisID; the analysis itself when it claimed none
// (a result that came from no delivery is its own episode).
func (l *leases) episodeOf(analysisID string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.byAnalysis[analysisID]; ok && l.held[id].episode != "" {
		return l.held[id].episode
	}
	return analysisID
}

func (l *leases) isLost(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, lost := l.lost[id]
	return lost
}

// forfeit records that another owner reclaimed inbox row id: this Store
// writes nothing more for it. It reports whether the claim was held (so
// the loss is counted once).
func (l *leases) forfeit(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.held[id]
	if !ok {
		return false
	}
	delete(l.held, id)
	l.lost[id] = c.analysisID
	return true
}

// forfeitAt is forfeit of the claim of inbox row id at attempt only: a
// claim this Store made of it since (a newer attempt) stays held.
func (l *leases) forfeitAt(id, attempt int64) bool {
	l.mu.Lock()
	c, ok := l.held[id]
	l.mu.Unlock()
	if !ok || c.attempt != attempt {
		return false
	}
	return l.forfeit(id)
}

// inFlight returns the inbox ids this Store claimed and has not completed,
// held or lost.
func (l *leases) inFlight() []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]any, 0, len(l.held)+len(l.lost))
	for id := range l.held {
		out = append(out, id)
	}
	for id := range l.lost {
		out = append(out, id)
	}
	return out
}

// claimStarted and claimEnded bracket a Claim: while one is under way,
// a renewal releases no row as unheld (the Claim may have committed it
// and not yet recorded it).
func (l *leases) claimStarted() {
	l.mu.Lock()
	l.claiming++
	l.mu.Unlock()
}

func (l *leases) claimEnded() {
	l.mu.Lock()
	l.claiming--
	l.mu.Unlock()
}

// release forgets inbox row id: its completion came.
func (l *leases) release(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.held[id]; ok {
		delete(l.byAnalysis, c.analysisID)
	}
	if a, ok := l.lost[id]; ok {
		delete(l.byAnalysis, a)
	}
	delete(l.held, id)
	delete(l.lost, id)
}

// Owner returns the lease owner this Store claims as: its instance name
// and a session id of this open.
func (s *Inbox) Owner() string { return s.leases.owner }

// LeasesLost returns how many claimed deliveries this Store found
// reclaimed by another owner when it came to persist, complete or renew
// them: their results were not written by this Store.
func (s *Inbox) LeasesLost() int64 { return s.lost.Load() }

// Claim leases up to limit pending deliveries, oldest first, to this Store
// until its lease (Options.Lease) passes: deliveries no one holds, whose
// lease expired, or that a former start of this instance (Options.Instance)
// held. Each claim increments the delivery's attempt. On PostgreSQL the
// rows are picked FOR UPDATE SKIP LOCKED, so processes claiming at once
// take different rows. A database whose schema version is not this
// binary's is refused (openrecall.ErrSchemaMismatch): nothing is claimed.
func (s *Inbox) Claim(ctx context.Context, limit int) ([]openrecall.Delivery, error) {
	l := s.leases
	l.claimStarted()
	defer l.claimEnded()
	now := time.Now().UnixNano()
	tx, err := s.db.BeginTx(withRowLocks(ctx), nil)
	if err != nil {
		return nil, translate("claim: begin", err)
	}
	defer tx.Rollback()
	if err := sameSchemaTx(ctx, tx, "claim"); err != nil {
		return nil, err
	}
	// A lease this Store let pass (a pause longer than it) is another
	// owner's to take, never this Store's own: its analysis is still in
	// flight here, and a second claim would pass the fence of both
	// analyses (the fence reads this Store's latest attempt), persisting
	// the delivery twice.
	// Nor does it claim again a delivery it still holds or lost and has
	// not completed, which another owner took and let pass: that first
	// analysis is in flight here too.
	args := []any{l.instance, l.owner, now + l.ttl.Nanoseconds(), now, l.owner, l.instance, l.owner}
	// pick goes inside the UPDATE below, after its $1–$3: its fixed text
	// writes $4–$7 and p numbers the rest.
	pick := `SELECT id FROM inbox WHERE done_seq IS NULL
		AND (lease_until IS NULL OR (lease_until < $4 AND lease_owner <> $5) OR (lease_instance = $6 AND lease_owner <> $7))`
	p := params{n: 7}
	if mine := l.inFlight(); len(mine) > 0 {
		pick += ` AND id NOT IN (` + p.list(len(mine)) + `)`
		args = append(args, mine...)
	}
	pick += ` ORDER BY id LIMIT ` + p.next()
	args = append(args, limit)
	if s.pg {
		pick += " FOR UPDATE SKIP LOCKED"
	}
	rows, err := tx.QueryContext(ctx, `UPDATE inbox SET lease_instance = $1, lease_owner = $2, lease_until = $3, attempt = attempt + 1
		WHERE id IN (`+pick+`) RETURNING id, attempt, analysis_id, delivery`, args...)
	if err != nil {
		return nil, translate("claim", err)
	}
	var out []openrecall.Delivery
	var attempts []int64
	for rows.Next() {
		var id, attempt int64
		var analysisID, body string
		if err := rows.Scan(&id, &attempt, &analysisID, &body); err != nil {
			rows.Close()
			return nil, translate("claim: scan", err)
		}
		var d openrecall.Delivery
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			rows.Close()
			return nil, fmt.Errorf("claim: delivery %d: %w", id, err)
		}
		d.ID, d.AnalysisID = id, analysisID
		out = append(out, d)
		attempts = append(attempts, attempt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate("claim", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, translate("claim: commit", err)
	}
	l.mu.Lock()
	for i, d := range out {
		l.held[d.ID] = claimedRow{attempt: attempts[i], analysisID: d.AnalysisID, episode: d.EpisodeOf()}
		l.byAnalysis[d.AnalysisID] = d.ID
		delete(l.lost, d.ID)
	}
	l.mu.Unlock()
	// RETURNING gives no order: the oldest first, as the inbox is drained.
	slices.SortFunc(out, func(a, b openrecall.Delivery) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// sameSchemaTx refuses, in tx, a database whose schema version is not
// this binary's (openrecall.ErrSchemaMismatch): a claim of work from it
// would be read or written with another schema's meaning.
func sameSchemaTx(ctx context.Context, tx *sql.Tx, what string) error {
	var version int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&version); err != nil {
		return translate(what+": schema version", err)
	}
	if want := SchemaVersion(); version != want {
		return fmt.Errorf("%s: the database's schema version is %d, this binary's is %d (another openrecall migrated it): upgrade or restart with the matching binary: %w",
			what, version, want, openrecall.ErrSchemaMismatch)
	}
	return nil
}

// RenewLeases extends the lease of every delivery this Store holds by
// Options.Lease from now, forgets those the database says another owner
// holds (counted in LeasesLost), and releases the rows this Store owns and
// no longer works on (a Claim's rows it never recorded), so that they are
// claimed again instead of pending until a restart. serve renews at a
// third of the lease, whether it holds any or not. A deadlock or serialisation failure (PostgreSQL's
// 40P01, 40001: the renewal locks many rows while a completion or another
// process locks some of them) or a busy database is retried, a few times.
func (s *Inbox) RenewLeases(ctx context.Context) error {
	var err error
	for try := 1; ; try++ {
		if err = s.renewLeases(ctx); err == nil || !errors.Is(err, ErrBusy) || try == renewTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try) * 50 * time.Millisecond):
		}
	}
}

// renewTries bounds the tries of a renewal that meets a deadlock, a
// serialisation failure or a busy database; serve renews again at the
// next third of the lease.
const renewTries = 5

// renewLeases is one try of RenewLeases, in one transaction.
func (s *conn) renewLeases(ctx context.Context) error {
	l := s.leases
	// seen: the claims this renewal can judge. A Claim that commits while
	// the renewal's UPDATE runs is not in its rows (PostgreSQL's statement
	// snapshot; SQLite's commit after it), nor in seen: it is never
	// forfeited for being missing.
	l.mu.Lock()
	seen := make(map[int64]int64, len(l.held))
	for id, c := range l.held {
		seen[id] = c.attempt
	}
	l.mu.Unlock()
	now := time.Now().UnixNano()
	tx, err := s.db.BeginTx(withRowLocks(ctx), nil)
	if err != nil {
		return translate("renew leases: begin", err)
	}
	defer tx.Rollback()
	q := `UPDATE inbox SET lease_until = $1 WHERE lease_owner = $2 AND done_seq IS NULL RETURNING id, attempt`
	if s.pg {
		// The rows are locked in id order, as a completion's are taken
		// one by one: fewer deadlocks to retry.
		q = `UPDATE inbox SET lease_until = $1 WHERE id IN (SELECT id FROM inbox WHERE lease_owner = $2 AND done_seq IS NULL ORDER BY id FOR UPDATE) RETURNING id, attempt`
	}
	renewed, err := idAttempts(ctx, tx, "renew leases", q, now+l.ttl.Nanoseconds(), l.owner)
	if err != nil {
		return err
	}
	// A claim seen and not renewed, or renewed at another attempt: the
	// database says who holds the row now. Only another owner, or a
	// newer claim, forfeits it; a row this Store completed meanwhile
	// (release forgets it) or one it still holds does not.
	var gone []int64
	var check []any
	for id, attempt := range seen {
		if a, ok := renewed[id]; ok {
			if a != attempt {
				gone = append(gone, id)
			}
			continue
		}
		check = append(check, id)
	}
	if len(check) > 0 {
		var p params
		rows, err := tx.QueryContext(ctx, `SELECT id, lease_owner, attempt FROM inbox WHERE id IN (`+p.list(len(check))+`)`, check...)
		if err != nil {
			return translate("renew leases: owners", err)
		}
		for rows.Next() {
			var id, attempt int64
			var owner string
			if err := rows.Scan(&id, &owner, &attempt); err != nil {
				rows.Close()
				return translate("renew leases: owners", err)
			}
			if owner != l.owner || attempt != seen[id] {
				gone = append(gone, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate("renew leases: owners", err)
		}
	}
	// A row this Store owns and neither holds nor lost, while no Claim is
	// under way (a Claim never takes a row this Store owns, so none can
	// record it later), is worked on by no one: it is released to be
	// claimed again, by this Store or another.
	l.mu.Lock()
	var orphans []any
	if l.claiming == 0 {
		for id, attempt := range renewed {
			_, held := l.held[id]
			_, lost := l.lost[id]
			if !held && !lost {
				orphans = append(orphans, id, attempt)
			}
		}
	}
	l.mu.Unlock()
	for i := 0; i < len(orphans); i += 2 {
		if _, err := tx.ExecContext(ctx, `UPDATE inbox SET lease_instance = '', lease_owner = '', lease_until = NULL
			WHERE id = $1 AND attempt = $2 AND lease_owner = $3 AND done_seq IS NULL`, orphans[i], orphans[i+1], l.owner); err != nil {
			return translate("renew leases: release", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return translate("renew leases: commit", err)
	}
	if len(orphans) > 0 {
		s.log.Warn("released inbox deliveries this store owned and no longer worked on; they are claimed again",
			zap.Int("deliveries", len(orphans)/2))
	}
	if l.afterRenew != nil {
		l.afterRenew()
	}
	for _, id := range gone {
		if l.forfeitAt(id, seen[id]) {
			s.lost.Add(1)
		}
	}
	return nil
}

// idAttempts runs q in tx and returns the id and attempt of each row it
// returns.
func idAttempts(ctx context.Context, tx *sql.Tx, what, q string, args ...any) (map[int64]int64, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(what, err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, attempt int64
		if err := rows.Scan(&id, &attempt); err != nil {
			return nil, translate(what+": scan", err)
		}
		out[id] = attempt
	}
	return out, translate(what, rows.Err())
}

// fence is what a batch's transaction found of the deliveries of its
// results: keep[i] says whether results[i] may be stored (all those this
// Store never claimed, such as an analyze run's, and those whose claim it
// still holds); taken are the deliveries it took off the inbox (at: the
// index of their result); stored[i], when not nil, holds the entries a
// binary that stored a result and completed its delivery in two
// transactions stored before it stopped between them: that result is
// completed with them and stored no more. claimed are the inbox ids of
// the batch this Store claimed and lost those of them another owner holds
// now; the commit settles both (settleFence).
type fence struct {
	keep    []bool
	stored  [][]openrecall.AuditEntry
	taken   []completing
	claimed []int64
	lost    []int64
}

// fenceTx takes off the inbox, in tx, the deliveries of results this Store
// claimed and still holds (takeTx: the update is the fence), and returns
// what it found.
func (s *conn) fenceTx(ctx context.Context, tx *sql.Tx, results []openrecall.Result) (fence, error) {
	f := fence{keep: make([]bool, len(results)), stored: make([][]openrecall.AuditEntry, len(results))}
	var ids []int64
	var at []int
	for i, r := range results {
		id, _, ok := s.leases.claimOf(r.AnalysisID)
		if !ok {
			f.keep[i] = true
			continue
		}
		f.claimed = append(f.claimed, id)
		ids, at = append(ids, id), append(at, i)
	}
	if len(ids) == 0 {
		return f, nil
	}
	taken, lost, err := s.takeTx(ctx, tx, ids, false)
	if err != nil {
		return f, err
	}
	for k := range taken {
		i := at[taken[k].at]
		taken[k].at, f.keep[i] = i, true
		if taken[k].row.attempt <= 1 {
			continue // a first claim: no earlier process stored anything of it
		}
		stored, err := auditByAnalysis(ctx, tx, results[i].AnalysisID)
		if err != nil {
			return f, err
		}
		if len(stored) > 0 {
			f.stored[i] = stored
		}
	}
	f.taken, f.lost = taken, lost
	return f, nil
}

// settleFence releases, once a batch's transaction has committed, the
// claims of its deliveries: completed, or found lost to another owner
// (counted once, as a renewal that found it would have).
func (s *conn) settleFence(f fence) {
	for _, id := range f.lost {
		if s.leases.forfeit(id) {
			s.lost.Add(1)
		}
	}
	for _, id := range f.claimed {
		s.leases.release(id)
	}
}

// alertLocks takes, on PostgreSQL, a transaction-level advisory lock on the
// state of each alert of ds that is not a rejection, in one order, so two
// processes receiving the same notification check and move its state one
// after the other. SQLite's immediate transaction already serialises them.
func (s *conn) alertLocks(ctx context.Context, tx *sql.Tx, ds []openrecall.Delivery) error {
	if !s.pg {
		return nil
	}
	var keys []int32
	for _, d := range ds {
		if d.Rejection != "" {
			continue
		}
		h := fnv.New32a()
		_, _ = h.Write([]byte(d.Alert.ID)) // a hash's Write does not fail
		keys = append(keys, int32(h.Sum32()))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1, $2)", int32(s.lockKey), k); err != nil {
			return translate("enqueue: lock alert state", err)
		}
	}
	return nil
}
