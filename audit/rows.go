package audit

import (
	"crypto/hmac"
	"fmt"

	"github.com/openrecall/openrecall"
)

// rowVersion names the encoding RowSeal signs.
const rowVersion = "openrecall.row.v1-hmac-sha256"

// RowSeal returns the hex HMAC-SHA-256 under k of a row of the given kind
// (openrecall.RowMemory, RowWaiting, RowResult) whose readers' columns
// encode as content: the version name, the kind and content, each length
// prefixed. A row's seal is stored beside it and in the audit entry that
// binds it; without k no one can seal an edited row.
func RowSeal(k Key, kind string, content []byte) string { return k.mac(encodeRow(kind, content)) }

// RowSeal is RowSeal through the Sealer's pool of keyed states: a seal of
// a few hundred bytes costs two SHA-256 compressions and no HMAC set-up, so
// recall can check every memory it returns.
func (s Sealer) RowSeal(kind string, content []byte) string { return s.mac(encodeRow(kind, content)) }

// RowSealOK reports whether seal is the Sealer's RowSeal of the row.
func (s Sealer) RowSealOK(kind string, content []byte, seal string) bool {
	return seal != "" && hmac.Equal([]byte(s.RowSeal(kind, content)), []byte(seal))
}

func encodeRow(kind string, content []byte) []byte {
	enc := encoder{b: make([]byte, 0, 48+len(kind)+len(content))}
	enc.str(rowVersion)
	enc.str(kind)
	enc.b = append(enc.b, content...)
	return enc.b
}

// SealingMAC signs the record of the rows' adoption with k.
func SealingMAC(k Key, r openrecall.RowSealing) string {
	enc := encoder{}
	enc.str("openrecall.row-sealing.v1")
	enc.int(r.At.UTC().UnixNano())
	enc.int(r.EntrySeq)
	enc.int(r.Rows)
	enc.str(r.KeyID)
	return k.mac(enc.b)
}

// SealingMAC is SealingMAC with the Sealer's key.
func (s Sealer) SealingMAC(r openrecall.RowSealing) string { return SealingMAC(s.key, r) }

// KeyID returns the ID of the Sealer's key.
func (s Sealer) KeyID() string { return s.key.ID() }

// Problem kinds of sealed rows.
const (
	// KindRolledBack: a row carries a valid seal that is not the latest
	// the chain holds for it (an earlier state was put back).
	KindRolledBack = "rolled-back"
	// KindUnsealed: a row carries no seal although rows are sealed (it
	// was written outside the chain).
	KindUnsealed = "unsealed"
	// KindSealing: the record of the rows' adoption was changed or
	// deleted.
	KindSealing = "sealing"
)

// ChainRow is the Problem.Chain of rows bound to the chain (memories, what
// waits for a person, finished deliveries).
const ChainRow = "row"

// rowCheck judges sealed rows for a TrailVerifier.
type rowCheck struct {
	sealer   Sealer
	on       bool // rows are sealed: a row without a seal is a problem
	count    int64
	problems []Problem
}

// Row checks one sealed row (see openrecall.SealedRow), in any order.
func (t *TrailVerifier) Row(r openrecall.SealedRow) {
	c := &t.rows
	c.count++
	at := func(kind, detail string) {
		c.problems = append(c.problems, Problem{Chain: ChainRow, Sequence: r.ChainedSeq, AnalysisID: r.ID, Step: r.Kind, Kind: kind, Detail: detail})
	}
	if r.Missing {
		at(KindDeleted, fmt.Sprintf("the chain binds it (entry %d, %s) but the table no longer holds it, and no archive took it",
			r.ChainedSeq, r.BoundAt.UTC().Format("2006-01-02T15:04:05.999999999Z")))
		return
	}
	switch {
	case r.Seal == "" && r.Chained != "":
		at(KindEdited, fmt.Sprintf("its seal was cleared; the chain's is %s (entry %d)", short(r.Chained), r.ChainedSeq))
	case r.Seal == "" && c.on:
		at(KindUnsealed, "it carries no seal though rows are sealed: it was written outside the chain")
	case r.Seal == "":
	case !c.sealer.RowSealOK(r.Kind, r.Content, r.Seal):
		at(KindEdited, fmt.Sprintf("its columns do not match its seal %s: a column its readers use was changed", short(r.Seal)))
	case r.Chained != "" && !r.Pruned && !hmac.Equal([]byte(r.Chained), []byte(r.Seal)):
		at(KindRolledBack, fmt.Sprintf("its seal %s is not the chain's latest %s (entry %d): an earlier state was put back",
			short(r.Seal), short(r.Chained), r.ChainedSeq))
	}
}

// finishRows reports the rows' problems and those of the adoption record.
func (t *TrailVerifier) finishRows() []Problem {
	s, out := t.state, t.rows.problems
	switch {
	case s.Sealing.IsZero() && s.Adoptions > 0:
		out = append(out, Problem{Chain: ChainRow, Kind: KindSealing,
			Detail: "the chain records that rows were sealed, but the record of their sealing is gone: it was deleted"})
	case s.Sealing.IsZero():
	case !hmac.Equal([]byte(SealingMAC(t.key, s.Sealing)), []byte(s.Sealing.MAC)):
		out = append(out, Problem{Chain: ChainRow, Sequence: s.Sealing.EntrySeq, Kind: KindSealing,
			Detail: "the record of the rows' sealing does not match its signature: it was changed"})
	}
	return out
}
