package memory

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/openrecall/openrecall"
)

// The digest (DESIGN §12b): per receiver, every window, what openrecall
// closed without a person. ClosedBetween reads a window's closed analyses
// off the inbox; AddDigest writes the window's digest intents to the
// outbox, once per window and receiver whatever the number of processes
// that write them.

// closedBetweenSQL selects the finished deliveries completed in [$1, $2)
// whose stored result may be closed without a person (triaged, a benign
// decision: the rest of the rule, Result.ClosedWithoutPerson, is read in
// Go), the latest completed first, through inbox_prunable on SQLite (its
// done_at range; a pruned row keeps no result to count).
func closedBetweenSQL(d dialect) string {
	return `SELECT ` + servedColumns + ` FROM inbox` + d.indexedBy("inbox_prunable") + `
		WHERE done_seq IS NOT NULL AND pruned_at IS NULL AND done_at >= $1 AND done_at < $2
			AND ` + d.jsonText("result", "outcome") + ` = 'triaged'
			AND ` + d.jsonText("result", "decision") + ` IN ('false_positive', 'duplicate', 'known_benign')
		ORDER BY done_at DESC, id DESC`
}

// ClosedBetween returns what openrecall closed without a person
// (openrecall.Result.ClosedWithoutPerson) among the analyses whose
// delivery was completed in [from, to) by the Store's clock: counts by
// identity and by Alert DNA, and per identity up to links analysis ids,
// the latest completed first. A row that does not match its seal is
// counted as Withheld, not read. A result pruned after the retention is
// no longer there to count: a digest is read well within it.
func (s *Inbox) ClosedBetween(ctx context.Context, from, to time.Time, links int) (openrecall.ClosedWindow, error) {
	w := openrecall.ClosedWindow{From: from.UTC(), To: to.UTC()}
	lo, err := nanos(from)
	if err != nil {
		return w, fmt.Errorf("closed between: %w", err)
	}
	hi, err := nanos(to)
	if err != nil {
		return w, fmt.Errorf("closed between: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, s.sql.closedBetween, lo, hi)
	if err != nil {
		return w, translate("closed between", err)
	}
	defer rows.Close()
	ids := map[openrecall.Identity]*openrecall.ClosedIdentity{}
	fams := map[openrecall.Fingerprint]*openrecall.ClosedFamily{}
	for rows.Next() {
		sv, err := s.scanServedChecked(rows)
		if err != nil {
			return w, translate("closed between: scan", err)
		}
		if sv.Integrity != "" {
			w.Withheld++
			continue
		}
		if sv.Result == nil || !sv.Result.ClosedWithoutPerson() {
			continue
		}
		r := sv.Result
		w.Closed++
		ci := ids[r.Identity]
		if ci == nil {
			ci = &openrecall.ClosedIdentity{Identity: r.Identity, ByDecision: map[openrecall.Decision]int{}}
			ids[r.Identity] = ci
		}
		ci.Count++
		ci.ByDecision[r.Decision]++
		if len(ci.AnalysisIDs) < links {
			ci.AnalysisIDs = append(ci.AnalysisIDs, sv.AnalysisID)
		}
		cf := fams[r.Fingerprint]
		if cf == nil {
			cf = &openrecall.ClosedFamily{Fingerprint: r.Fingerprint, ID: r.Fingerprint.ID()}
			fams[r.Fingerprint] = cf
		}
		cf.Count++
	}
	if err := rows.Err(); err != nil {
		return w, translate("closed between", err)
	}
	for _, ci := range ids {
		w.Identities = append(w.Identities, *ci)
	}
	slices.SortFunc(w.Identities, func(a, b openrecall.ClosedIdentity) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Identity.Rule, b.Identity.Rule), cmp.Compare(a.Identity.Service, b.Identity.Service))
	})
	for _, cf := range fams {
		w.Families = append(w.Families, *cf)
	}
	slices.SortFunc(w.Families, func(a, b openrecall.ClosedFamily) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Fingerprint.String(), b.Fingerprint.String()))
	})
	return w, nil
}

// AddDigest writes, in one transaction, the digest intent id (an
// openrecall.DigestID) with key to each of receivers, pending from now,
// and returns how many it wrote: a receiver that has the digest already
// (written by this process or another, in any state) is skipped, so a
// window's digest reaches a receiver once however many processes write
// it. An invalid intent wraps openrecall.ErrInvalid and writes nothing.
func (s *Outbox) AddDigest(ctx context.Context, id, key string, receivers []string) (int, error) {
	if _, _, err := openrecall.ParseDigestID(id); err != nil {
		return 0, fmt.Errorf("add digest: %w", err)
	}
	at, err := nanos(s.now())
	if err != nil {
		return 0, fmt.Errorf("add digest %s: %w", id, err)
	}
	var args []any
	for _, r := range receivers {
		in := openrecall.Intent{Receiver: r, Kind: openrecall.IntentDigest, Key: key}
		if err := in.Validate(); err != nil {
			return 0, fmt.Errorf("add digest %s: %w", id, err)
		}
		args = append(args, id, r, in.Kind, key, at, at, at)
	}
	if len(args) == 0 {
		return 0, nil
	}
	var n int
	err = s.inTx(ctx, "add digest", func(tx *sql.Tx) error {
		var before, after int
		count := `SELECT COUNT(*) FROM outbox WHERE analysis_id = $1 AND kind = 'digest'`
		if err := tx.QueryRowContext(ctx, count, id).Scan(&before); err != nil {
			return translate("add digest "+id, err)
		}
		if err := insertRowsThen(ctx, tx, `INSERT INTO outbox (analysis_id, receiver, kind, episode, created_at, since, next_at) VALUES `,
			` ON CONFLICT DO NOTHING`, intentWidth, args); err != nil {
			return translate("add digest "+id, err)
		}
		if err := tx.QueryRowContext(ctx, count, id).Scan(&after); err != nil {
			return translate("add digest "+id, err)
		}
		n = after - before
		return nil
	})
	return n, err
}

// HasDigest returns which of receivers have the digest id already (in any
// state): the digest job reads it before it counts a window.
func (s *Outbox) HasDigest(ctx context.Context, id string, receivers []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(receivers) == 0 {
		return out, nil
	}
	p := params{n: 1}
	args := []any{id}
	for _, r := range receivers {
		args = append(args, r)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT receiver FROM outbox WHERE analysis_id = $1 AND kind = 'digest' AND receiver IN (`+
		p.list(len(receivers))+`)`, args...)
	if err != nil {
		return nil, translate("has digest "+id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, translate("has digest "+id, err)
		}
		out[r] = true
	}
	return out, translate("has digest "+id, rows.Err())
}
