package audit

import (
	"crypto/hmac"
	"fmt"

	"github.com/openrecall/openrecall"
)

// VerifyLinks checks the audit entries of one analysis where they sit in
// the chain, without reading the rest of it: each entry's hash against its
// content (keyed or not, as the trail in state s says) and its PrevHash
// against the hash of the entry before it, which must be in entries too
// (or be the chain's start, or the end of a signed archive record); the
// last entry of the chain must match the head record. entries holds the
// analysis's entries and their predecessors, in any order; only those of
// analysisID are judged. It returns an error wrapping ErrNoKey or
// ErrWrongKey as NewTrailVerifier does. A whole-trail verification (what
// `audit verify` runs) checks more: every link, the cost chain, the sealed
// rows and the records.
func VerifyLinks(k Key, s State, entries []openrecall.AuditEntry, analysisID string) ([]Problem, error) {
	if err := keyFits(k, s, nil); err != nil {
		return nil, err
	}
	bySeq := make(map[int64]openrecall.AuditEntry, len(entries))
	for _, e := range entries {
		bySeq[e.Sequence] = e
	}
	archived := s.Archive
	signed := !archived.IsZero() && ArchiveSigned(k, archived)
	var out []Problem
	for _, e := range entries {
		if e.AnalysisID != analysisID {
			continue
		}
		l := Problem{Sequence: e.Sequence, AnalysisID: e.AnalysisID, Step: e.Step}
		report := func(kind, detail string) {
			p := l
			p.Kind, p.Detail = kind, detail
			out = append(out, p)
		}
		want := Hash(e)
		if !k.IsZero() && e.Sequence > s.LegacyThrough {
			want = HashKeyed(k, e)
		}
		if !hmac.Equal([]byte(want), []byte(e.Hash)) {
			report(KindEdited, fmt.Sprintf("stored hash %s does not match its content", short(e.Hash)))
		}
		prev, at := "", e.Sequence-1
		switch pe, ok := bySeq[at]; {
		case at == 0:
		case ok:
			prev = pe.Hash
		case !archived.IsZero() && at == archived.Through && signed:
			prev = archived.ThroughHash
		case !archived.IsZero() && at <= archived.Through:
			report(KindArchive, fmt.Sprintf("it follows entry %d, archived under a record that does not match its signature", at))
			continue
		default:
			report(KindDeleted, fmt.Sprintf("entry %d before it is missing: it was deleted", at))
			continue
		}
		if e.PrevHash != prev {
			report(KindDeleted, fmt.Sprintf("its prev hash %s does not match the hash %s of entry %d: an entry between them was deleted or replaced",
				short(e.PrevHash), short(prev), at))
		}
		if e.Sequence == s.HeadSeq && e.Hash != s.HeadHash {
			report(KindHeadMismatch, fmt.Sprintf("it is the last entry but the head record names hash %s", short(s.HeadHash)))
		}
	}
	return out, nil
}
