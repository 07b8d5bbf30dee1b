package gen

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// Epoch is the first creation time generated incidents use.
func Epoch() time.Time { return time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC) }

// Times returns a small pool of creation times, so ties by recency happen.
func Times() []time.Time {
	var ts []time.Time
	for i := 0; i < 6; i++ {
		ts = append(ts, Epoch().Add(time.Duration(i*37)*time.Minute))
	}
	return ts
}

// IncidentIDs is a small pool of incident ids, so repeats happen.
func IncidentIDs() []string {
	var ids []string
	for i := 0; i < 12; i++ {
		ids = append(ids, fmt.Sprintf("inc_%02d", i))
	}
	return ids
}

// Notes is a small pool of analyst notes, the empty note first.
func Notes() []string {
	return []string{"", "known noisy alert", "Nightly ETL restart", "duplicate of INC-42", "Scanner from the red team", "  Known   NOISY alert ", "disk cleanup ran"}
}

// SourceAlertIDs is a small pool of source alert ids, none first.
func SourceAlertIDs() []string {
	return []string{"", "am-1a2b3c4d5e6f7a8b-1767258000", "pd-checkout-5xx", "h-00112233aabbccdd"}
}

// DeadEnds is a small pool of analyst dead ends.
func DeadEnds() []string {
	return []string{"restarting the pod", "scaling the deployment", "flushing the cache", "rolling back the release"}
}

// Identities is a small pool of alert identities: none first, then two rules
// of one service, one rule on two services and a rule without a service,
// so that memories of the same DNA and another identity are common.
func Identities() []openrecall.Identity {
	return []openrecall.Identity{{}, {Rule: "KubePodCrashLooping", Service: "checkout"}, {Rule: "MySQLRestarted", Service: "checkout"},
		{Rule: "KubePodCrashLooping", Service: "billing"}, {Rule: "disk <*> full on <*>"}}
}

// SeverityGen draws a severity: the normalized ones, unknown, and empty.
func SeverityGen() gopter.Gen {
	return Of(append(append([]openrecall.Severity(nil), openrecall.Severities...), ""), 0)
}

// IncidentGen generates retainable incidents: a valid fingerprint, a decision
// from openrecall.MemoryDecisions, notes, source alert ids, dead ends and
// creation times from small pools so that duplicates and ties happen.
func IncidentGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(openrecall.Incident{}), map[string]gopter.Gen{
		"ID":            Of(IncidentIDs(), 0),
		"Fingerprint":   AlertFingerprintGen(),
		"Decision":      Of(openrecall.MemoryDecisions, 0),
		"Note":          Of(Notes(), 0.2),
		"DeadEnds":      SliceUpTo(3, Of(DeadEnds(), 0), reflect.TypeOf("")),
		"Analyst":       Of([]string{"", "ana", "bo"}, 0.3),
		"ImpactMinutes": Of([]int{0, 5, 60}, 0.5),
		"SourceAlertID": Of(SourceAlertIDs(), 0.4),
		"CreatedAt":     Of(Times(), 0),
		"Identity":      Of(Identities(), 0.2),
		"Severity":      SeverityGen(),
	})
}

// MemoryMatchGen generates a recalled match: an incident and a score in
// [0, 1], edge scores (0, 1, exactly the strong threshold and its float
// neighbours, 89/98, 80/98) drawn often.
func MemoryMatchGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(openrecall.Match{}), map[string]gopter.Gen{
		"Incident": IncidentGen(),
		"Score":    scoreGen(ScoreEdges()),
	})
}

// StrongScores are scores at or above the default strong-match threshold.
func StrongScores() []float64 { return []float64{1, 0.85, 89.0 / 98, 0.9, 0.95} }

// StrongMatchGen generates a match whose score is at or above the default
// strong-match threshold.
func StrongMatchGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(openrecall.Match{}), map[string]gopter.Gen{
		"Incident": IncidentGen(),
		"Score":    Of(StrongScores(), 0.3),
	})
}

// StrongMatchSetGen generates up to 12 strong matches.
func StrongMatchSetGen() gopter.Gen {
	return SliceUpTo(12, StrongMatchGen(), reflect.TypeOf(openrecall.Match{}))
}

// FamilyIncidentGen generates retainable incidents whose fingerprints come
// from the small Families pool, so retains collide and recalls hit.
func FamilyIncidentGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(openrecall.Incident{}), map[string]gopter.Gen{
		"Fingerprint":   FamilyFingerprintGen(),
		"Decision":      Of(openrecall.MemoryDecisions, 0),
		"Note":          Of(Notes(), 0.3),
		"DeadEnds":      SliceUpTo(2, Of(DeadEnds(), 0), reflect.TypeOf("")),
		"SourceAlertID": Of(SourceAlertIDs(), 0.5),
		"CreatedAt":     Of(Times(), 0),
		"Identity":      Of(Identities(), 0.2),
		"Severity":      SeverityGen(),
	})
}

// RetainPlan is a set of retains applied in two orders. Listed returns the
// incidents followed by a re-retain of Incidents[r] for each r in Repeats
// (an equivalent incident: its note upper-cased and padded with white space,
// a later time); Permuted returns the same retains sorted by the keys in Order
// (missing keys count as 0, ties keep the listed order).
type RetainPlan struct {
	Incidents []openrecall.Incident
	Repeats   []int
	Order     []int
}

// Listed returns the retains in their first order.
func (p RetainPlan) Listed() []openrecall.Incident {
	out := append([]openrecall.Incident(nil), p.Incidents...)
	if len(p.Incidents) == 0 {
		return out
	}
	for _, r := range p.Repeats {
		inc := p.Incidents[r%len(p.Incidents)]
		inc.Note = " " + strings.ToUpper(inc.Note) + "  "
		inc.CreatedAt = inc.CreatedAt.Add(time.Minute)
		out = append(out, inc)
	}
	return out
}

// Permuted returns the retains in the plan's second order.
func (p RetainPlan) Permuted() []openrecall.Incident {
	listed := p.Listed()
	idx := make([]int, len(listed))
	for i := range idx {
		idx[i] = i
	}
	key := func(i int) int {
		if i < len(p.Order) {
			return p.Order[i]
		}
		return 0
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) > key(idx[b]) })
	out := make([]openrecall.Incident, 0, len(idx))
	for _, i := range idx {
		out = append(out, listed[i])
	}
	return out
}

// RetainPlanGen generates up to 12 incidents of a few families, up to 4
// equivalent re-retains and a reordering of them all.
func RetainPlanGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(RetainPlan{}), map[string]gopter.Gen{
		"Incidents": SliceUpTo(12, FamilyIncidentGen(), reflect.TypeOf(openrecall.Incident{})),
		"Repeats":   SliceUpTo(4, IntUpTo(11), reflect.TypeOf(0)),
		"Order":     SliceUpTo(16, IntUpTo(15), reflect.TypeOf(0)),
	})
}

// ConcurrentRetain is one decision retained through two connections at the
// same moment, the second time with its note written differently.
type ConcurrentRetain struct {
	Incident openrecall.Incident
	Note     NoteVariant
}

// ConcurrentRetainGen generates concurrent retains.
func ConcurrentRetainGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ConcurrentRetain{}), map[string]gopter.Gen{
		"Incident": FamilyIncidentGen(),
		"Note":     NoteVariantGen(),
	})
}

// SeparationCase is an alert (identity, fingerprint) and memories about it:
// Own are decisions on the alert itself; Others are memories of other
// identities whose fingerprints collide with the alert's (the same DNA, or
// the same critical fields), the case a memory must never vouch for.
type SeparationCase struct {
	Identity    openrecall.Identity
	Fingerprint openrecall.Fingerprint
	Own         int
	Others      []openrecall.Incident
}

// SeparationCaseGen generates identity cases: an alert with an identity (never
// none) and a fingerprint that is often empty (an alert with identity and
// no DNA), up to 12 benign memories of other identities with the same
// fingerprint or one differing only in a descriptive field, and 0 to 7 own
// benign memories.
func SeparationCaseGen() gopter.Gen {
	ids := Identities()[1:]
	fpGen := FamilyFingerprintGen()
	return func(gp *gopter.GenParameters) *gopter.GenResult {
		c := SeparationCase{Identity: ids[gp.Rng.Intn(len(ids))], Own: gp.Rng.Intn(8)}
		if gp.Rng.Intn(3) > 0 {
			c.Fingerprint = fpGen(gp).Result.(openrecall.Fingerprint)
		}
		n := 1 + gp.Rng.Intn(12)
		for i := 0; i < n; i++ {
			other := Identities()[gp.Rng.Intn(len(Identities()))]
			if other == c.Identity {
				other = openrecall.Identity{}
			}
			fp := c.Fingerprint
			if gp.Rng.Intn(3) == 0 {
				fp.SignalShape = openrecall.SignalShapes[gp.Rng.Intn(len(openrecall.SignalShapes))]
			}
			c.Others = append(c.Others, openrecall.Incident{Fingerprint: fp, Identity: other,
				Decision: []openrecall.Decision{openrecall.DecisionKnownBenign, openrecall.DecisionFalsePositive, openrecall.DecisionDuplicate}[gp.Rng.Intn(3)],
				Severity: openrecall.SeverityCritical, SourceAlertID: fmt.Sprintf("other-%d", i), CreatedAt: Epoch().Add(time.Duration(i) * time.Minute)})
		}
		return gopter.NewGenResult(c, identityCaseShrinker)
	}
}

// identityCaseShrinker removes other memories one at a time and lowers the
// number of own memories.
func identityCaseShrinker(v any) gopter.Shrink {
	c := v.(SeparationCase)
	var cands []any
	for i := range c.Others {
		d := c
		d.Others = append(append([]openrecall.Incident(nil), c.Others[:i]...), c.Others[i+1:]...)
		cands = append(cands, d)
	}
	if c.Own > 0 {
		d := c
		d.Own = c.Own - 1
		cands = append(cands, d)
	}
	return sliceShrink(cands)
}

// sliceShrink yields the candidates in order.
func sliceShrink(cands []any) gopter.Shrink {
	i := 0
	return func() (any, bool) {
		if i >= len(cands) {
			return nil, false
		}
		i++
		return cands[i-1], true
	}
}

// Escalation is a triage case and a severity at least as high as the
// case's own alert severity, as the severity clause ranks them.
type Escalation struct {
	Case   TriageCase
	Higher openrecall.Severity
}

// SeverityRank orders severities as the guard's clause does for an alert:
// info 0 … critical 4, unknown or empty counting as critical.
func SeverityRank(s openrecall.Severity) int {
	switch s {
	case openrecall.SeverityInfo:
		return 0
	case openrecall.SeverityLow:
		return 1
	case openrecall.SeverityMedium:
		return 2
	case openrecall.SeverityHigh:
		return 3
	}
	return 4
}

// EscalationGen generates severity escalations: a triage case (often with
// unanimous benign memories) and a severity ranked at or above its alert's.
func EscalationGen() gopter.Gen {
	tc := TriageCaseGen()
	return func(gp *gopter.GenParameters) *gopter.GenResult {
		c := tc(gp).Result.(TriageCase)
		var higher []openrecall.Severity
		for _, s := range append(append([]openrecall.Severity(nil), openrecall.Severities...), "") {
			if SeverityRank(s) >= SeverityRank(c.Severity) {
				higher = append(higher, s)
			}
		}
		return gopter.NewGenResult(Escalation{Case: c, Higher: higher[gp.Rng.Intn(len(higher))]}, escalationShrinker)
	}
}

// escalationShrinker shrinks the triage case, keeping the escalation.
func escalationShrinker(v any) gopter.Shrink {
	e := v.(Escalation)
	inner := TriageCaseShrinker(e.Case)
	return func() (any, bool) {
		c, ok := inner()
		if !ok {
			return nil, false
		}
		return Escalation{Case: c.(TriageCase), Higher: e.Higher}, true
	}
}
