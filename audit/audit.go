package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/openrecall/openrecall"
)

// Entries returns one audit entry per step of r, in step order, stamped with
// now. Sequence, PrevHash and Hash are left empty for Seal. Savings is
// Baseline minus Cost. Entries does not modify r.
func Entries(r openrecall.Result, now time.Time) []openrecall.AuditEntry {
	now = now.Round(0) // drop the monotonic reading: the entry is data
	out := make([]openrecall.AuditEntry, len(r.Steps))
	for i, s := range r.Steps {
		out[i] = openrecall.AuditEntry{
			AnalysisID:       r.AnalysisID,
			Batch:            r.Batch,
			AlertID:          r.Alert.ID,
			StepIndex:        i,
			Step:             s.Step,
			Model:            s.Model,
			Tier:             s.Tier,
			Reason:           s.Reason,
			Outcome:          s.Outcome,
			MemoryHits:       s.MemoryHits,
			ProposedDecision: s.Proposed,
			EscalationReason: s.EscalationReason,
			Live:             s.Live,
			Skipped:          s.Skipped,
			Cost:             s.Cost,
			Baseline:         s.Baseline,
			Savings:          s.Baseline - s.Cost,
			Latency:          s.Latency,
			Time:             now,
		}
	}
	return out
}

// hashVersion names the encoding Hash uses. A new encoding gets a new name,
// so entries hashed under the old one stay verifiable by their version.
const hashVersion = "openrecall.audit.v1"

// Hash returns the hex SHA-256 of e's canonical encoding: the version name,
// then every field except Hash in declaration order, strings as a uvarint
// byte length and the bytes, integers as 8 big-endian bytes, booleans as one
// byte, Time as its UTC Unix nanoseconds. Length prefixes make the encoding
// unambiguous: no two different entries encode alike.
func Hash(e openrecall.AuditEntry) string {
	enc := encoder{b: make([]byte, 0, 256+len(e.AnalysisID)+len(e.Batch)+len(e.AlertID)+len(e.Reason)+len(e.EscalationReason)+len(e.PrevHash))}
	enc.str(hashVersion)
	enc.int(e.Sequence)
	enc.str(e.AnalysisID)
	enc.str(e.Batch)
	enc.str(e.AlertID)
	enc.int(int64(e.StepIndex))
	enc.str(e.Step)
	enc.str(e.Model)
	enc.str(string(e.Tier))
	enc.str(e.Reason)
	enc.str(e.Outcome)
	enc.int(int64(e.MemoryHits))
	enc.str(string(e.ProposedDecision))
	enc.str(e.EscalationReason)
	enc.bool(e.Live)
	enc.bool(e.Skipped)
	enc.int(int64(e.Cost))
	enc.int(int64(e.Baseline))
	enc.int(int64(e.Savings))
	enc.int(int64(e.Latency))
	enc.int(e.Time.UTC().UnixNano())
	enc.str(e.PrevHash)
	sum := sha256.Sum256(enc.b)
	return hex.EncodeToString(sum[:])
}

type encoder struct{ b []byte }

func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) int(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
		return
	}
	e.b = append(e.b, 0)
}

// Seal returns copies of entries chained after prevHash: entry i gets
// Sequence nextSeq+i, the previous entry's Hash as PrevHash (prevHash for
// the first), and its own Hash. A new chain starts with Seal("", 1, ...).
// Seal does not modify entries.
func Seal(prevHash string, nextSeq int64, entries []openrecall.AuditEntry) []openrecall.AuditEntry {
	out := make([]openrecall.AuditEntry, len(entries))
	for i, e := range entries {
		e.Sequence = nextSeq + int64(i)
		e.PrevHash = prevHash
		e.Hash = Hash(e)
		prevHash = e.Hash
		out[i] = e
	}
	return out
}
