package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sync"
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
// unambiguous: no two different entries encode alike. Hash is the unkeyed
// hash of trails written before the chain was keyed; new entries use
// HashKeyed.
func Hash(e openrecall.AuditEntry) string {
	sum := sha256.Sum256(encodeEntry(hashVersion, e))
	return hex.EncodeToString(sum[:])
}

// keyedVersion names the encoding HashKeyed uses; it differs from
// hashVersion, so an unkeyed hash never passes for a keyed one.
const keyedVersion = "openrecall.audit.v2-hmac-sha256"

// HashKeyed returns the hex HMAC-SHA-256 under k of e's canonical encoding
// (as Hash describes, under its own version name). Without k no one can
// compute it, so a trail rewritten by whoever holds only the database file
// fails verification.
func HashKeyed(k Key, e openrecall.AuditEntry) string {
	return k.mac(encodeEntry(keyedVersion, e))
}

func encodeEntry(version string, e openrecall.AuditEntry) []byte {
	return appendEntry(make([]byte, 0, 256+len(e.AnalysisID)+len(e.Batch)+len(e.AlertID)+len(e.Reason)+len(e.EscalationReason)+len(e.PrevHash)), version, e)
}

// appendEntry appends e's canonical encoding under version to b.
func appendEntry(b []byte, version string, e openrecall.AuditEntry) []byte {
	enc := encoder{b: b}
	enc.str(version)
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
	return enc.b
}

// costVersion names the encoding CostHash uses.
const costVersion = "openrecall.cost.v1-hmac-sha256"

// CostHash returns the hex HMAC-SHA-256 under k of cost point p at place seq
// of the cost chain after prevHash: the version name, seq, every field of p
// in declaration order and prevHash, encoded as Hash describes.
func CostHash(k Key, seq int64, prevHash string, p openrecall.CostPoint) string {
	return k.mac(encodeCost(seq, prevHash, p))
}

func encodeCost(seq int64, prevHash string, p openrecall.CostPoint) []byte {
	return appendCost(make([]byte, 0, 128+len(p.Batch)+len(p.AlertID)+len(prevHash)), seq, prevHash, p)
}

// appendCost appends the encoding CostHash hashes to b.
func appendCost(b []byte, seq int64, prevHash string, p openrecall.CostPoint) []byte {
	enc := encoder{b: b}
	enc.str(costVersion)
	enc.int(seq)
	enc.int(int64(p.Index))
	enc.str(p.Batch)
	enc.str(p.AlertID)
	enc.str(string(p.Tier))
	enc.bool(p.Bypassed)
	enc.int(int64(p.Cost))
	enc.int(int64(p.Baseline))
	enc.int(int64(p.CumulativeCost))
	enc.int(int64(p.CumulativeBaseline))
	enc.str(prevHash)
	return enc.b
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

// Sealer seals audit entries and cost points into chains keyed with its
// Key. It is safe for concurrent use.
type Sealer struct {
	key Key
	// macs keeps HMAC states keyed with key (*macState), so a hash costs no
	// HMAC set-up (two SHA-256 blocks and allocations) and its message and
	// sum no allocation; nil in a zero Sealer.
	macs *sync.Pool
}

// macState is a keyed HMAC state with the buffers one hash uses: the
// message is encoded into msg and the sum written into sum, so a pooled
// hash allocates only its hex string.
type macState struct {
	h   hash.Hash
	msg []byte
	sum [sha256.Size]byte
}

// hex returns the hex HMAC of st.msg; st.h must be reset.
func (st *macState) hex() string {
	st.h.Write(st.msg)
	var dst [2 * sha256.Size]byte
	hex.Encode(dst[:], st.h.Sum(st.sum[:0]))
	return string(dst[:])
}

// NewSealer returns a Sealer that keys with k.
func NewSealer(k Key) Sealer {
	return Sealer{key: k, macs: &sync.Pool{New: func() any {
		return &macState{h: hmac.New(sha256.New, []byte(k.b)), msg: make([]byte, 0, 512)}
	}}}
}

// mac is k.mac through the pool of keyed states.
func (s Sealer) mac(msg []byte) string {
	if s.macs == nil {
		return s.key.mac(msg)
	}
	return s.macWith(func(b []byte) []byte { return append(b, msg...) })
}

// macWith is mac of the message encode appends to an empty buffer (a pooled
// one): the hot paths encode straight into it.
func (s Sealer) macWith(encode func(b []byte) []byte) string {
	if s.macs == nil {
		return s.key.mac(encode(nil))
	}
	st := s.macs.Get().(*macState)
	st.h.Reset()
	st.msg = encode(st.msg[:0])
	out := st.hex()
	if cap(st.msg) > 64<<10 {
		st.msg = nil // one huge message does not stay pinned in the pool
	}
	s.macs.Put(st)
	return out
}

// Seal is the keyed Seal: entries get HashKeyed hashes.
func (s Sealer) Seal(prevHash string, nextSeq int64, entries []openrecall.AuditEntry) []openrecall.AuditEntry {
	return seal(prevHash, nextSeq, entries, func(e openrecall.AuditEntry) string {
		return s.macWith(func(b []byte) []byte { return appendEntry(b, keyedVersion, e) })
	})
}

// SealCosts returns the CostHash of each point chained after prevHash, point
// i taking sequence nextSeq+i. It does not modify points.
func (s Sealer) SealCosts(prevHash string, nextSeq int64, points []openrecall.CostPoint) []string {
	out := make([]string, len(points))
	for i, p := range points {
		seq := nextSeq + int64(i)
		out[i] = s.macWith(func(b []byte) []byte { return appendCost(b, seq, prevHash, p) })
		prevHash = out[i]
	}
	return out
}

// Seal returns copies of entries chained after prevHash: entry i gets
// Sequence nextSeq+i, the previous entry's Hash as PrevHash (prevHash for
// the first), and its own Hash. A new chain starts with Seal("", 1, ...).
// Seal does not modify entries.
// Seal hashes with the unkeyed Hash, as trails were written before the chain
// was keyed; Sealer.Seal is the keyed form.
func Seal(prevHash string, nextSeq int64, entries []openrecall.AuditEntry) []openrecall.AuditEntry {
	return seal(prevHash, nextSeq, entries, Hash)
}

func seal(prevHash string, nextSeq int64, entries []openrecall.AuditEntry, hash func(openrecall.AuditEntry) string) []openrecall.AuditEntry {
	out := make([]openrecall.AuditEntry, len(entries))
	for i, e := range entries {
		e.Sequence = nextSeq + int64(i)
		e.PrevHash = prevHash
		e.Hash = hash(e)
		prevHash = e.Hash
		out[i] = e
	}
	return out
}
