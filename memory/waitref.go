package memory

import (
	"context"
	"database/sql"
	"fmt"
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
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return dst, false
	}
	last := 0
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return append(dst, doc...), skipSpace(doc, i+1) == len(doc)
	}
	for {
		if i >= len(doc) || doc[i] != '"' {
			return dst, false
		}
		end, ok := skipString(doc, i)
		if !ok {
			return dst, false
		}
		key := doc[i:end]
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return dst, false
		}
		start := skipSpace(doc, i+1)
		if end, ok = skipValue(doc, start); !ok {
			return dst, false
		}
		if string(key) == `"audit"` {
			dst = append(append(dst, doc[last:start]...), "null"...)
			last = end
		}
		i = skipSpace(doc, end)
		if i >= len(doc) {
			return dst, false
		}
		if doc[i] == '}' {
			if skipSpace(doc, i+1) != len(doc) {
				return dst, false
			}
			return append(dst, doc[last:]...), true
		}
		if doc[i] != ',' {
			return dst, false
		}
		i = skipSpace(doc, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// skipValue returns the index after the JSON value starting at b[i]: a
// string, an object or array (to its matching bracket, strings skipped),
// or a literal or number (to the next delimiter).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return end, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
		}
		return i, false
	}
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i, i > start
}
