package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// WaitsFunc says whether a result waits for a person and, when it does,
// what waits (usecase.WaitingFor is the product's rule). The Result it
// sets, if any, is the result it was given (its audit entries are not
// stored): the sink writes the result's document, encoded once for all
// the rows of its batch.
type WaitsFunc func(r openrecall.Result) (openrecall.Waiting, bool)

// recordWaitingTx stores what waits for a person among results, in the
// transaction of their audit entries, with multi-row inserts. An analysis
// already recorded keeps its first row (and its decision).
// A row whose analysis has an inbox row in refs names it instead of
// copying its result (waitref.go).
// Each result document is docs' (nil: encoded here). It returns the
// bindings of the rows it sealed, for the caller to chain (PersistBatch
// chains each after its analysis's entries).
func (s *conn) recordWaitingTx(ctx context.Context, tx *sql.Tx, results []openrecall.Result, waits WaitsFunc, now time.Time, refs map[string]*waitRef, docs *jsonfast.Docs) ([]binding, error) {
	if waits == nil {
		return nil, nil
	}
	var ws []openrecall.Waiting
	for _, r := range results {
		w, ok := waits(r)
		if !ok {
			continue
		}
		if w.Since.IsZero() {
			w.Since = now
		}
		ws = append(ws, w)
	}
	return s.insertWaitingRowsTx(ctx, tx, ws, refs, docs)
}

// insertWaitingTx inserts ws in order and chains the seals of the rows it
// sealed; an analysis already recorded (before or earlier in ws) keeps its
// first row.
func (s *conn) insertWaitingTx(ctx context.Context, tx *sql.Tx, ws []openrecall.Waiting) error {
	binds, err := s.insertWaitingRowsTx(ctx, tx, ws, nil, nil)
	if err != nil {
		return err
	}
	return s.bindTx(ctx, tx, binds)
}

// waitingWidth is the number of columns insertWaitingTx writes.
const waitingWidth = 15

// insertWaitingRowsTx inserts ws in order and returns the bindings of the
// rows it sealed, not chained yet. A row whose analysis has an inbox row in
// refs names it and stores no copy of its result (waitref.go). Each
// result document is docs' (nil: encoded here).
func (s *conn) insertWaitingRowsTx(ctx context.Context, tx *sql.Tx, ws []openrecall.Waiting, refs map[string]*waitRef, docs *jsonfast.Docs) ([]binding, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(ws)*waitingWidth)
	var buf []byte
	var binds []binding
	var stored map[string]bool
	if s.seal != nil {
		// An analysis already recorded keeps its first row (and seal).
		var err error
		if stored, err = waitingStored(ctx, tx, ws); err != nil {
			return nil, err
		}
	}
	for _, w := range ws {
		body := "{}"
		if w.Result != nil {
			// What json.Marshal writes (HTML escaped), without its audit
			// entries.
			var err error
			if buf, err = docs.Append(buf[:0], w.Result, nil, true); err != nil {
				return nil, fmt.Errorf("waiting %s: encode result: %w", w.AnalysisID, err)
			}
			body = string(buf)
		}
		since, err := nanos(w.Since)
		if err != nil {
			return nil, fmt.Errorf("waiting %s: %w", w.AnalysisID, err)
		}
		seal := ""
		if s.seal != nil && !stored[w.AnalysisID] {
			stored[w.AnalysisID] = true
			var e rowEnc
			e.str(w.AnalysisID)
			e.str(w.Batch)
			e.int(since)
			for _, v := range []string{w.Reason, w.Why, string(w.Severity), w.Identity.Rule, w.Identity.Service, w.Title, w.AlertID, string(w.Proposed), body} {
				e.str(v)
			}
			e.nullInt(sql.NullInt64{})
			for range 3 { // decided_by, decision, memory_id
				e.nullStr(sql.NullString{})
			}
			seal = s.seal.Row(openrecall.RowWaiting, e.b)
			binds = append(binds, binding{kind: openrecall.RowWaiting, id: w.AnalysisID, alertID: w.AlertID, event: "waiting", seal: seal,
				reason: "waits for a person: " + w.Reason, at: fromNanos(since)})
		}
		// What the queue orders and searches by, copied from the result.
		var attack string
		if w.Result != nil {
			attack = w.Result.Fingerprint.AttackPattern
		}
		// The row names its inbox row instead of copying (the first row
		// of its analysis in ws; one stored before keeps its own).
		column, inbox := body, any(nil)
		if ref := refs[w.AnalysisID]; ref != nil && !ref.named && w.Result != nil {
			ref.named, ref.body = true, body
			column, inbox = "", ref.inbox
		}
		args = append(args, w.AnalysisID, w.Batch, since, w.Reason, w.Why, string(w.Severity), w.Identity.Rule, w.Identity.Service,
			w.Title, w.AlertID, string(w.Proposed), column, seal, attack, inbox)
	}
	err := insertRowsThen(ctx, tx, `INSERT INTO waiting (analysis_id, batch, since, reason, why, severity, rule, service, title, alert_id, proposed, result, seal, attack, result_inbox)
		VALUES `, ` ON CONFLICT (analysis_id) DO NOTHING`, waitingWidth, args)
	if len(ws) == 1 {
		return binds, translate("waiting "+ws[0].AnalysisID, err)
	}
	return binds, translate(fmt.Sprintf("waiting %s to %s", ws[0].AnalysisID, ws[len(ws)-1].AnalysisID), err)
}

// RecordWaiting stores what waits for a person, outside a run (a test, an
// import); an analysis already recorded keeps its first row.
func (s *Decisions) RecordWaiting(ctx context.Context, ws []openrecall.Waiting) error {
	return s.inTx(ctx, "record waiting", func(tx *sql.Tx) error {
		return s.insertWaitingTx(ctx, tx, ws)
	})
}

// queueColumns are what the queue orders and searches by (scanQueue):
// the attack pattern the row copied from its result, the labels of its
// result when withLabels (a search reads them: they are parsed from the
// result only then, and no copy beside the row makes every row longer),
// and the time the same firing resolved (resolvedAtSQL).
func (s *Decisions) queueColumns(withLabels bool) string {
	labels := `''`
	if withLabels {
		labels = `COALESCE(` + s.d.jsonText("("+waitingResultSQL("waiting")+")", "alert", "labels") + `, '')`
	}
	return `attack, ` + labels + `, ` + resolvedAtSQL
}

// scanQueue scans queueColumns into w.
func scanQueue(w *openrecall.Waiting, attack, labels string, resolved sql.NullInt64) error {
	w.Attack = attack
	if labels != "" && labels != "{}" {
		if err := json.Unmarshal([]byte(labels), &w.Labels); err != nil {
			return fmt.Errorf("waiting %s: labels: %w", w.AnalysisID, err)
		}
	}
	if resolved.Valid {
		w.ResolvedAt = fromNanos(resolved.Int64)
	}
	return nil
}

// resolvedAtSQL is the time a waiting row's firing resolved, NULL while it
// fires: its alert's state is resolved and still names this analysis as
// the triage of its firing (a new firing names another).
const resolvedAtSQL = `(SELECT st.updated_at FROM alert_state AS st WHERE st.alert_id = waiting.alert_id
	AND st.triage_analysis_id = waiting.analysis_id AND st.status = '` + openrecall.StatusResolved + `')`

const waitingColumns = `analysis_id, batch, since, reason, why, severity, rule, service, title, alert_id, proposed,
	decided_at, COALESCE(decided_by, ''), COALESCE(decision, ''), COALESCE(memory_id, '')`

func scanWaiting(r rowScanner, extra ...any) (openrecall.Waiting, error) {
	var w openrecall.Waiting
	var since int64
	var decidedAt sql.NullInt64
	var severity, proposed, decision string
	dest := []any{&w.AnalysisID, &w.Batch, &since, &w.Reason, &w.Why, &severity, &w.Identity.Rule, &w.Identity.Service,
		&w.Title, &w.AlertID, &proposed, &decidedAt, &w.DecidedBy, &decision, &w.MemoryID}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return w, err
	}
	w.Since = fromNanos(since)
	w.Severity, w.Proposed, w.Decision = openrecall.Severity(severity), openrecall.Decision(proposed), openrecall.Decision(decision)
	if decidedAt.Valid {
		w.Decided, w.DecidedAt = true, fromNanos(decidedAt.Int64)
	}
	return w, nil
}

// Awaiting returns what waits for a person and is not decided yet, oldest
// first, as f selects: each row as it was sealed (an edited one is left
// out, logged and counted; audit verify names it).
func (s *Decisions) Awaiting(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	return s.awaiting(ctx, f, s.seal != nil)
}

// AwaitingIndex is Awaiting without checking the rows' seals, and without
// reading their results: what the queue orders and pages (DESIGN §12a),
// which then checks the seal of each row it shows (WaitingFor). Its rows
// carry their labels only when f.Search is set (their only reader here).
func (s *Decisions) AwaitingIndex(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	return s.awaiting(ctx, f, false)
}

func (s *Decisions) awaiting(ctx context.Context, f openrecall.WaitingFilter, check bool) ([]openrecall.Waiting, error) {
	var where []string
	var args []any
	var p params // the statement has no other placeholder before these
	for _, c := range []struct{ col, v string }{{"severity", string(f.Severity)}, {"rule", f.Rule}, {"service", f.Service}} {
		if c.v != "" {
			where = append(where, c.col+" = "+p.next())
			args = append(args, c.v)
		}
	}
	// An analysis of an open group that waits is folded into the group,
	// which waits as one item (WaitingGroups).
	cols := waitingColumns
	if check {
		cols += `, ` + waitingSealColumns
	}
	cols += `, ` + s.queueColumns(check || f.Search != "")
	q := `SELECT ` + cols + ` FROM waiting` + s.d.indexedBy("waiting_open") + ` WHERE decided_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM group_members AS m JOIN alert_groups AS g ON g.id = m.group_id
			WHERE m.analysis_id = waiting.analysis_id AND ` + s.sql.groupWaits + `)`
	for _, w := range where {
		q += " AND " + w
	}
	q += " ORDER BY since, analysis_id"
	if f.Limit > 0 {
		q += " LIMIT " + p.next()
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate("awaiting", err)
	}
	defer rows.Close()
	out := []openrecall.Waiting{}
	for rows.Next() {
		var dests []any
		var sealed func() (string, []byte, string, string)
		if check {
			dests, sealed = waitingSealDests()
		}
		var attack, labels string
		var resolved sql.NullInt64
		w, err := scanWaiting(rows, append(dests, &attack, &labels, &resolved)...)
		if err != nil {
			return nil, translate("awaiting: scan", err)
		}
		if err := scanQueue(&w, attack, labels, resolved); err != nil {
			return nil, err
		}
		if sealed != nil {
			if _, content, seal, _ := sealed(); !s.seal.sealed(openrecall.RowWaiting, content, seal) {
				s.refuse(openrecall.RowWaiting, w.AnalysisID, seal)
				continue
			}
		}
		out = append(out, w)
	}
	return out, translate("awaiting", rows.Err())
}

// WaitingFor returns what waited for a person about analysisID, with its
// result, decided or not; an analysis that never waited wraps
// openrecall.ErrNotFound.
func (s *Decisions) WaitingFor(ctx context.Context, analysisID string) (openrecall.Waiting, error) {
	dests, sealed := waitingSealDests()
	var resolved sql.NullInt64
	w, err := scanWaiting(s.db.QueryRowContext(ctx, `SELECT `+waitingColumns+`, `+waitingSealColumns+`, `+resolvedAtSQL+`
		FROM waiting WHERE analysis_id = $1`, analysisID), append(dests, &resolved)...)
	if err != nil {
		return w, translate("waiting "+analysisID, err)
	}
	_, content, seal, body := sealed()
	if s.seal != nil && !s.seal.sealed(openrecall.RowWaiting, content, seal) {
		s.refuse(openrecall.RowWaiting, analysisID, seal)
		return openrecall.Waiting{}, integrityErr("waiting row of analysis", analysisID, "it does not match its seal in the audit chain")
	}
	w.Result = &openrecall.Result{}
	if err := json.Unmarshal([]byte(body), w.Result); err != nil {
		return w, fmt.Errorf("waiting %s: result: %w", analysisID, err)
	}
	w.Attack, w.Labels = w.Result.Fingerprint.AttackPattern, w.Result.Alert.Labels
	if resolved.Valid {
		w.ResolvedAt = fromNanos(resolved.Int64)
	}
	return w, nil
}

// Decide marks what waits about analysisID as decided by w's DecidedBy,
// DecidedAt, Decision and MemoryID. It returns false, changing nothing, when
// the analysis was decided already or never waited.
func (s *Decisions) Decide(ctx context.Context, w openrecall.Waiting) (bool, error) {
	at, err := nanos(w.DecidedAt)
	if err != nil {
		return false, fmt.Errorf("decide %s: %w", w.AnalysisID, err)
	}
	decided := false
	err = s.inTx(ctx, "decide "+w.AnalysisID, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE waiting SET decided_at = $1, decided_by = $2, decision = $3, memory_id = $4
			WHERE analysis_id = $5 AND decided_at IS NULL`, at, w.DecidedBy, string(w.Decision), w.MemoryID, w.AnalysisID)
		if err != nil {
			return translate("decide "+w.AnalysisID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return translate("decide "+w.AnalysisID, err)
		}
		if decided = n == 1; !decided {
			return nil
		}
		if err := recordUpdatesTx(ctx, tx, w.AnalysisID, at); err != nil {
			return err
		}
		if s.seal == nil {
			return nil
		}
		id, content, _, err := scanWaitingContent(tx.QueryRowContext(ctx, `SELECT `+waitingSealColumns+` FROM waiting WHERE analysis_id = $1`, w.AnalysisID))
		if err != nil {
			return translate("decide "+w.AnalysisID+": read back", err)
		}
		seal := s.seal.Row(openrecall.RowWaiting, content)
		if _, err := tx.ExecContext(ctx, `UPDATE waiting SET seal = $1 WHERE analysis_id = $2`, seal, id); err != nil {
			return translate("decide "+w.AnalysisID+": seal", err)
		}
		return s.bindTx(ctx, tx, []binding{{kind: openrecall.RowWaiting, id: id, alertID: w.AlertID, event: "waiting-decide", seal: seal,
			reason: fmt.Sprintf("decided %s by %s", w.Decision, w.DecidedBy), at: w.DecidedAt}})
	})
	return decided, err
}

// waitingSealColumns are the columns of a waiting row its seal covers, in
// the order of its encoding, then the seal; the result is read as the row
// holds it: its own copy, or the inbox row it names and that row's result
// (waitingResult), so a row reads the same content either way.
const waitingSealColumns = `analysis_id, batch, since, reason, why, severity, rule, service, title, alert_id, proposed, result,
	waiting.result_inbox, (SELECT ri.result FROM inbox AS ri WHERE ri.id = waiting.result_inbox),
	decided_at, decided_by, decision, memory_id, seal`

// scanWaitingContent scans a row of waitingSealColumns (and extra after
// them) and returns its analysis id, the encoding its seal covers and its
// seal.
func scanWaitingContent(r rowScanner, extra ...any) (string, []byte, string, error) {
	dests, sealed := waitingSealDests()
	if err := r.Scan(append(dests, extra...)...); err != nil {
		return "", nil, "", err
	}
	id, content, seal, _ := sealed()
	return id, content, seal, nil
}

// waitingSealDests returns the scan destinations of waitingSealColumns and
// a function that, after the scan, returns the analysis id, the encoding
// the seal covers, the seal and the result document.
func waitingSealDests() ([]any, func() (id string, content []byte, seal, result string)) {
	var (
		id, batch, reason, why, severity, rule, service, title, alertID, proposed, own, seal string
		since                                                                                int64
		inbox, decidedAt                                                                     sql.NullInt64
		ref, by, decision, memoryID                                                          sql.NullString
	)
	dests := []any{&id, &batch, &since, &reason, &why, &severity, &rule, &service, &title, &alertID, &proposed, &own, &inbox, &ref,
		&decidedAt, &by, &decision, &memoryID, &seal}
	return dests, func() (string, []byte, string, string) {
		result := waitingResult(own, inbox, ref)
		var e rowEnc
		e.str(id)
		e.str(batch)
		e.int(since)
		for _, v := range []string{reason, why, severity, rule, service, title, alertID, proposed, result} {
			e.str(v)
		}
		e.nullInt(decidedAt)
		e.nullStr(by)
		e.nullStr(decision)
		e.nullStr(memoryID)
		return id, e.b, seal, result
	}
}

// waitingStored returns which analyses of ws already have a waiting row,
// with one query per storedChunk analyses (a batch's is one), not one per
// analysis.
func waitingStored(ctx context.Context, tx *sql.Tx, ws []openrecall.Waiting) (map[string]bool, error) {
	out := make(map[string]bool, len(ws))
	for len(ws) > 0 {
		k := min(len(ws), storedChunk)
		args := make([]any, k)
		for i, w := range ws[:k] {
			args[i] = w.AnalysisID
		}
		var p params
		rows, err := tx.QueryContext(ctx, `SELECT analysis_id FROM waiting WHERE analysis_id IN (`+p.list(k)+`)`, args...)
		if err != nil {
			return nil, translate("waiting "+ws[0].AnalysisID, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, translate("waiting "+ws[0].AnalysisID, err)
			}
			out[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, translate("waiting "+ws[0].AnalysisID, err)
		}
		ws = ws[k:]
	}
	return out, nil
}

// storedChunk is the most analyses waitingStored asks about in one query.
const storedChunk = 256

// groupWaitsCond selects, in alert_groups AS g, the groups that wait for a
// person (usecase.GroupWaits is the rule): no person decided them, they
// have members besides their head, and memory did not bypass their head
// (its members were closed by memory, nothing waits).
func groupWaitsCond(d dialect) string {
	return `g.decided_at IS NULL AND g.size > 1 AND ` + d.jsonNotTrue("g.head", "bypassed")
}

// WaitingGroups returns the open alert groups that wait for a person's
// decision, oldest first (by their first firing), as f selects (the
// head's severity, the identity's fields).
func (s *Decisions) WaitingGroups(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Group, error) {
	q := `SELECT ` + groupColumns + ` FROM alert_groups AS g WHERE ` + s.sql.groupWaits
	var args []any
	var p params
	for _, c := range []struct{ col, v string }{{"head_severity", string(f.Severity)}, {"rule", f.Rule}, {"service", f.Service}} {
		if c.v != "" {
			q += " AND g." + c.col + " = " + p.next()
			args = append(args, c.v)
		}
	}
	q += " ORDER BY g.first_at, g.id"
	if f.Limit > 0 {
		q += " LIMIT " + p.next()
		args = append(args, f.Limit)
	}
	return s.queryGroups(ctx, "waiting groups", q, args...)
}

// awaitingProposalSQL selects the undecided analyses whose result carried
// an exception proposal id (AwaitingProposal), through waiting_open on
// SQLite.
func awaitingProposalSQL(d dialect) string {
	return `SELECT ` + waitingColumns + ` FROM waiting` + d.indexedBy("waiting_open") + `
		WHERE decided_at IS NULL AND ` + d.jsonText("("+waitingResultSQL("waiting")+")", "proposal", "id") + ` = $1 ORDER BY since, analysis_id`
}

// AwaitingProposal returns the analyses not decided yet whose result
// carried the exception proposal id, oldest first.
func (s *Decisions) AwaitingProposal(ctx context.Context, id string) ([]openrecall.Waiting, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.awaitingProposal, id)
	if err != nil {
		return nil, translate("awaiting proposal "+id, err)
	}
	defer rows.Close()
	out := []openrecall.Waiting{}
	for rows.Next() {
		w, err := scanWaiting(rows)
		if err != nil {
			return nil, translate("awaiting proposal: scan", err)
		}
		out = append(out, w)
	}
	return out, translate("awaiting proposal "+id, rows.Err())
}
