package property

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// auditProperties are the rules of the keyed audit trail (DESIGN §9).
func auditProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P31_sealed_trail_verifies_any_tamper_fails",
			"Sealing then verifying succeeds (audit entries, unkeyed up to the keyed boundary and keyed after it, and keyed cost points); any single-field edit, deletion, reordering or truncation of a sealed trail, and any re-hashing without the key, fails verification against a checkpoint of its head.",
			"TrailCaseGen", gen.TrailCaseGen(), checkTrailTamper,
			pbt.Pin("truncation with the head rolled back", gen.TrailCase{MoreEntries: 3, Kind: 8, Other: 1}),
			pbt.Pin("the last entry deleted, the head record left", gen.TrailCase{MoreEntries: 3, Kind: 4, Target: 4}),
			pbt.Pin("one-link cost truncation", gen.TrailCase{Kind: 9}),
			pbt.Pin("downgrade of a keyed trail", gen.TrailCase{MoreEntries: 2, Legacy: 1, Kind: 11}),
			pbt.Classify(func(c gen.TrailCase) []string { return []string{c.Tamper()} }),
			pbt.Cover("none", 3), pbt.Cover("truncate-entries", 3), pbt.Cover("rehash-downgrade", 3),
		),
	}
}

var trailKey, _ = audit.NewKey(bytes.Repeat([]byte{0x5a}, audit.KeySize))

// costLink is a stored cost point with its place in the cost chain.
type costLink struct {
	Seq        int64
	Prev, Hash string
	P          openrecall.CostPoint
}

// trail is what a store holds: entries and cost links in stored order and
// the records of heads and boundary.
type trail struct {
	entries []openrecall.AuditEntry
	costs   []costLink
	state   audit.State
}

// sealTrail builds c's trail as the product writes one: the legacy entries
// with the unkeyed Seal, the rest keyed, the cost points keyed.
func sealTrail(c gen.TrailCase) trail {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	entries := make([]openrecall.AuditEntry, c.Entries())
	for i := range entries {
		entries[i] = openrecall.AuditEntry{AnalysisID: fmt.Sprintf("b-%06d", i/3), Batch: "b", AlertID: fmt.Sprintf("a%d", i/3),
			StepIndex: i % 3, Step: []string{openrecall.StepIntake, openrecall.StepFingerprint, openrecall.StepAnalysis}[i%3],
			Reason: "because", Outcome: openrecall.OutcomeOK, Cost: openrecall.NanoUSD(10 * i), Baseline: 90, Savings: openrecall.NanoUSD(90 - 10*i),
			Time: t0.Add(time.Duration(i) * time.Second)}
	}
	legacy := c.LegacyEntries()
	sealer := audit.NewSealer(trailKey)
	sealed := audit.Seal("", 1, entries[:legacy])
	prev := ""
	if legacy > 0 {
		prev = sealed[legacy-1].Hash
	}
	sealed = append(sealed, sealer.Seal(prev, int64(legacy+1), entries[legacy:])...)
	points := make([]openrecall.CostPoint, c.Costs())
	for i := range points {
		points[i] = openrecall.CostPoint{Index: i, Batch: "b", AlertID: fmt.Sprintf("a%d", i), Tier: openrecall.TierStrong,
			Cost: 10, Baseline: 30, CumulativeCost: openrecall.NanoUSD(10 * (i + 1)), CumulativeBaseline: openrecall.NanoUSD(30 * (i + 1))}
	}
	hashes := sealer.SealCosts("", 1, points)
	costs := make([]costLink, len(points))
	for i, p := range points {
		costs[i] = costLink{Seq: int64(i + 1), Hash: hashes[i], P: p}
		if i > 0 {
			costs[i].Prev = hashes[i-1]
		}
	}
	last, lastCost := sealed[len(sealed)-1], costs[len(costs)-1]
	st := audit.State{HeadSeq: last.Sequence, HeadHash: last.Hash, CostHeadSeq: lastCost.Seq, CostHeadHash: lastCost.Hash,
		LegacyThrough: int64(legacy), KeyID: trailKey.ID(), BoundaryMAC: audit.BoundaryMAC(trailKey, int64(legacy), 0)}
	return trail{entries: sealed, costs: costs, state: st}
}

// verifyModel verifies tr with the trail key against cp, as audit verify
// does over a snapshot. It returns the problems, or the error that stopped
// verification (a wrong key, a bad checkpoint).
func verifyModel(tr trail, cp *audit.Checkpoint) ([]audit.Problem, error) {
	tv, err := audit.NewTrailVerifier(trailKey, tr.state, cp)
	if err != nil {
		return nil, err
	}
	for _, e := range tr.entries {
		tv.Entry(e)
	}
	for _, l := range tr.costs {
		tv.Cost(l.Seq, l.Prev, l.Hash, l.P)
	}
	return tv.Finish().Problems, nil
}

// editField changes field f (modulo the number of fields) of the struct
// *ptr: a string gains a character, a number grows by one, a boolean
// flips, a time moves by a nanosecond. It returns the field's name.
func editField(ptr any, f int) string {
	v := reflect.ValueOf(ptr).Elem()
	fv := v.Field(f % v.NumField())
	name := v.Type().Field(f % v.NumField()).Name
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(fv.String() + "x")
	case reflect.Int, reflect.Int64:
		fv.SetInt(fv.Int() + 1)
	case reflect.Bool:
		fv.SetBool(!fv.Bool())
	case reflect.Struct:
		if t, ok := fv.Interface().(time.Time); ok {
			fv.Set(reflect.ValueOf(t.Add(time.Nanosecond)))
			break
		}
		// A record inside (TrailState.Archive): one of its fields.
		name += "." + editField(fv.Addr().Interface(), f/v.NumField())
	default:
		panic("editField: unhandled kind " + fv.Kind().String())
	}
	return name
}

// tamper applies c's tampering to a copy of tr and describes it.
func tamper(tr trail, c gen.TrailCase) (trail, string) {
	out := trail{entries: append([]openrecall.AuditEntry(nil), tr.entries...), costs: append([]costLink(nil), tr.costs...), state: tr.state}
	ne, nc := len(out.entries), len(out.costs)
	i, j := c.Target%ne, c.Other%ne
	ci, cj := c.Target%nc, c.Other%nc
	if j == i {
		j = (i + 1) % ne
	}
	if cj == ci {
		cj = (ci + 1) % nc
	}
	switch c.Tamper() {
	case "none":
		return out, "none"
	case "edit-entry":
		return out, fmt.Sprintf("entry %d field %s edited", i+1, editField(&out.entries[i], c.Field))
	case "edit-cost":
		if f := c.Field % 4; f < 3 { // the link fields, or the point's
			return out, fmt.Sprintf("cost link %d field %s edited", ci+1, editField(&out.costs[ci], f))
		}
		return out, fmt.Sprintf("cost point %d field %s edited", ci+1, editField(&out.costs[ci].P, c.Field/4))
	case "edit-state":
		return out, "state field " + editField(&out.state, c.Field) + " edited"
	case "delete-entry":
		out.entries = append(out.entries[:i], out.entries[i+1:]...)
		return out, fmt.Sprintf("entry %d deleted", i+1)
	case "delete-cost":
		out.costs = append(out.costs[:ci], out.costs[ci+1:]...)
		return out, fmt.Sprintf("cost link %d deleted", ci+1)
	case "swap-entries":
		out.entries[i], out.entries[j] = out.entries[j], out.entries[i]
		return out, fmt.Sprintf("entries %d and %d swapped", i+1, j+1)
	case "swap-costs":
		out.costs[ci], out.costs[cj] = out.costs[cj], out.costs[ci]
		return out, fmt.Sprintf("cost links %d and %d swapped", ci+1, cj+1)
	case "truncate-entries":
		keep := c.Other % ne // 0..ne-1: at least one entry goes
		out.entries = out.entries[:keep]
		out.state.HeadSeq, out.state.HeadHash = 0, ""
		if keep > 0 {
			out.state.HeadSeq, out.state.HeadHash = out.entries[keep-1].Sequence, out.entries[keep-1].Hash
		}
		return out, fmt.Sprintf("audit chain cut to %d entries, head rolled back", keep)
	case "truncate-costs":
		keep := c.Other % nc
		out.costs = out.costs[:keep]
		out.state.CostHeadSeq, out.state.CostHeadHash = 0, ""
		if keep > 0 {
			out.state.CostHeadSeq, out.state.CostHeadHash = out.costs[keep-1].Seq, out.costs[keep-1].Hash
		}
		return out, fmt.Sprintf("cost chain cut to %d links, head rolled back", keep)
	case "rehash":
		out.entries[i].Reason = "nothing to see here"
		rest := audit.Seal(out.entries[i].PrevHash, out.entries[i].Sequence, out.entries[i:])
		copy(out.entries[i:], rest)
		out.state.HeadHash = out.entries[ne-1].Hash
		return out, fmt.Sprintf("entry %d edited and the rest re-hashed unkeyed", i+1)
	case "rehash-downgrade":
		out.entries[i].Reason = "nothing to see here"
		copy(out.entries, audit.Seal("", 1, out.entries))
		out.state.HeadHash = out.entries[ne-1].Hash
		out.state.LegacyThrough = int64(ne)
		return out, fmt.Sprintf("entry %d edited, the chain re-hashed unkeyed, the boundary moved past it", i+1)
	}
	panic("unknown tamper kind " + c.Tamper())
}

func checkTrailTamper(c gen.TrailCase) error {
	tr := sealTrail(c)
	cp := audit.NewCheckpoint(trailKey, tr.state)
	cp, err := audit.ParseCheckpoint(cp.String()) // kept as text elsewhere
	if err != nil {
		return fmt.Errorf("checkpoint text: %w", err)
	}
	if problems, err := verifyModel(tr, nil); err != nil || len(problems) > 0 {
		return fmt.Errorf("a sealed trail fails verification without a checkpoint: %v %v", err, problems)
	}
	got, what := tamper(tr, c)
	problems, err := verifyModel(got, &cp)
	if c.Tamper() == "none" {
		if err != nil || len(problems) > 0 {
			return fmt.Errorf("a sealed trail fails verification against its checkpoint: %v %v", err, problems)
		}
		return nil
	}
	if err == nil && len(problems) == 0 {
		return fmt.Errorf("%s: verification against the checkpoint passed", what)
	}
	if err != nil && !errors.Is(err, audit.ErrWrongKey) {
		return fmt.Errorf("%s: verification stopped with %v, want problems (or a wrong key for an edited key id)", what, err)
	}
	if ne := len(tr.entries); c.Tamper() == "delete-entry" && c.Target%ne == ne-1 {
		// The last entry deleted, the head records left: the head record
		// names the entry the chain no longer reaches (the tail was
		// deleted), not the new last entry as if it had been replaced.
		problems, _ := verifyModel(got, nil)
		named := false
		for _, p := range problems {
			named = named || p.Kind == audit.KindHeadMismatch && p.Sequence == tr.state.HeadSeq
		}
		if !named {
			return fmt.Errorf("%s: no problem names the head record's entry %d: %v", what, tr.state.HeadSeq, problems)
		}
	}
	return nil
}
