package memory

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/openrecall/openrecall/internal/jsonfast"
)

// A waiting row whose analysis finished a delivery of the inbox in the
// transaction that recorded it stores no copy of its result: it names the
// inbox row (waiting.result_inbox, migration 0022) and reads the result
// there, the inbox document with the value of its "audit" member replaced
// by null (auditNulled) — byte for byte what the row would have stored, so
// its seal covers the same content either way. Before an inbox row's
// result is emptied (PruneInbox), the rows that name it take their copy
// back (takeBackTx) in the same transaction (DESIGN §12a).

// waitRef is a waiting row that may name the inbox row of its analysis
// instead of copying its result: the inbox row's id and, once
// insertWaitingRowsTx stored the row naming it, the result document the
// row's seal covers (what finishTx checks the inbox document against).
type waitRef struct {
	inbox int64
	body  string
	named bool
}

// waitRefs returns, for the deliveries a batch takes off the inbox and
// stores now (not stored by an earlier run), the inbox row of each
// analysis, which its waiting row may name.
func waitRefs(f fence) map[string]*waitRef {
	if len(f.taken) == 0 {
		return nil
	}
	refs := make(map[string]*waitRef, len(f.taken))
	for _, c := range f.taken {
		if f.stored[c.at] == nil {
			refs[c.row.analysisID] = &waitRef{inbox: c.row.id}
		}
	}
	return refs
}

// checkRefTx makes sure the waiting row of analysisID that names its inbox
// row reads the result it sealed from body, the inbox document finishTx
// writes; a row that would not (a result waited as another than the one
// finished, none expected) takes its own copy back.
func checkRefTx(ctx context.Context, tx *sql.Tx, refs map[string]*waitRef, analysisID string, body []byte) error {
	ref := refs[analysisID]
	if ref == nil || !ref.named {
		return nil
	}
	if derived, ok := auditNulled(nil, body); ok && string(derived) == ref.body {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE waiting SET result = $1, result_inbox = NULL WHERE analysis_id = $2 AND result_inbox = $3`,
		ref.body, analysisID, ref.inbox)
	return translate("waiting "+analysisID+": copy result", err)
}

// waitingResult is the result document a waiting row reads: its own copy
// when it names no inbox row, else the inbox row's result with its entries
// taken out ("" when the inbox row or its result is gone or unreadable,
// or the row holds a copy too: no row is written so, and no seal covers
// "").
func waitingResult(own string, inbox sql.NullInt64, ref sql.NullString) string {
	if !inbox.Valid {
		return own
	}
	if !ref.Valid || own != "" {
		return ""
	}
	b, ok := auditNulled(nil, []byte(ref.String))
	if !ok {
		return ""
	}
	return string(b)
}

// waitingResultSQL is the result document of the waiting row table (an
// alias or "waiting") for SQL that reads its members: the inbox row's
// document when the row names one (members but "audit" are the same).
func waitingResultSQL(table string) string {
	return `CASE WHEN ` + table + `.result_inbox IS NULL THEN ` + table + `.result
		ELSE (SELECT ri.result FROM inbox AS ri WHERE ri.id = ` + table + `.result_inbox) END`
}

// takeBackTx gives the waiting rows that name any of the inbox rows ids
// their own copy of the result they read, before those rows' results are
// emptied or deleted, in tx. The rows' content, and so their seals, stay
// the same.
func takeBackTx(ctx context.Context, tx *sql.Tx, ids []int64) error {
	for len(ids) > 0 {
		k := min(len(ids), storedChunk)
		args := make([]any, k)
		for i, id := range ids[:k] {
			args[i] = id
		}
		var p params
		rows, err := tx.QueryContext(ctx, `SELECT w.analysis_id, w.result_inbox, ri.result FROM waiting AS w JOIN inbox AS ri ON ri.id = w.result_inbox
			WHERE w.result_inbox IN (`+p.list(k)+`)`, args...)
		if err != nil {
			return translate("take back waiting results", err)
		}
		var back []any
		for rows.Next() {
			var id string
			var inbox int64
			var ref sql.NullString
			if err := rows.Scan(&id, &inbox, &ref); err != nil {
				rows.Close()
				return translate("take back waiting results: scan", err)
			}
			back = append(back, waitingResult("", sql.NullInt64{Int64: inbox, Valid: true}, ref), id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate("take back waiting results", err)
		}
		for i := 0; i < len(back); i += 2 {
			if _, err := tx.ExecContext(ctx, `UPDATE waiting SET result = $1, result_inbox = NULL WHERE analysis_id = $2`, back[i], back[i+1]); err != nil {
				return translate(fmt.Sprintf("waiting %s: take back result", back[i+1]), err)
			}
		}
		ids = ids[k:]
	}
	return nil
}

// auditNulled appends to dst doc, a JSON object, with the value of each of
// its top-level "audit" members replaced by null, every other byte as it
// is; ok is false when doc is not a JSON object it can read. For a result
// document as the encoder writes it (jsonfast.AppendResult, encoding/json)
// this is byte for byte the document of the same result without its
// entries, which the encoder writes as "audit":null.
func auditNulled(dst, doc []byte) ([]byte, bool) {
	d := jsonfast.Scanner[[]byte]{S: doc}
	d.Space()
	empty, ok := d.Open('{')
	if !ok {
		return dst, false
	}
	if empty {
		return append(dst, doc...), d.End()
	}
	last := 0
	for {
		key, plain, ok := d.Token()
		if !ok {
			return dst, false
		}
		name := doc[key:d.I]
		if !d.Colon() {
			return dst, false
		}
		start := d.I
		if !d.SkipValue() {
			return dst, false
		}
		if plain && string(name) == `"audit"` {
			// An object or array's value ends at its bracket, before the
			// white space its last Next consumed.
			end := d.I
			for end > start && (doc[end-1] == ' ' || doc[end-1] == '\t' || doc[end-1] == '\n' || doc[end-1] == '\r') {
				end--
			}
			dst = append(append(dst, doc[last:start]...), "null"...)
			last = end
		}
		more, ok := d.Next('}')
		if !ok {
			return dst, false
		}
		if !more {
			return append(dst, doc[last:]...), d.End()
		}
	}
}
