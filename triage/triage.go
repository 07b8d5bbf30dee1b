package triage

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// Triage proposes a decision for an alert of severity sev and fingerprint fp
// from its recalled matches (DESIGN §6).
//
// Strong matches are those with Score ≥ cfg.StrongMatch that are not
// related (a related match never votes, whatever its score). Without one the
// proposal is escalated with the best score (or 0) as confidence. Otherwise
// the dominant decision among the strong matches wins by count; ties go to
// the decision whose best strong match scores higher, then to the one whose
// best strong match is newer, then to the smaller decision name. With n
// strong matches and consistency c = n_dominant/n, a c below
// cfg.Consistency escalates, and either way Confidence is
// c·(n+1)/(n+2), computed as Consistency*float64(n+1)/float64(n+2).
//
// Supporting lists, in match order, the ids of the strong matches that carry
// the dominant decision; an escalation for a split keeps them, and its
// ConsistentCount and Consistency, so a person sees the majority view.
//
// A strong match whose incident carries a decision that memory may not hold
// (escalated, or outside the closed set) counts as strong evidence that
// memory disagrees, but can never be the proposed decision. NaN scores are
// ignored. AlertSeverity is sev and SupportSeverity the most severe of the
// supporting memories; a benign proposal for an alert more severe than all
// of them (the guard's clause e) requires a person's approval. Triage does
// not modify fp or matches; cfg should have passed Validate. Confidence is
// always in [0, 1].
func Triage(fp openrecall.Fingerprint, sev openrecall.Severity, matches []openrecall.Match, cfg Config) openrecall.TriageResult {
	tr := openrecall.TriageResult{AlertSeverity: sev}
	haveBest := false
	for _, m := range matches {
		if math.IsNaN(m.Score) {
			continue
		}
		if !haveBest || m.Score > tr.BestScore {
			tr.BestScore = m.Score
			haveBest = true
		}
	}

	groups := map[openrecall.Decision]*group{}
	var order []*group
	for i, m := range matches {
		if !strong(m, cfg) {
			continue
		}
		tr.StrongCount++
		g := groups[m.Incident.Decision]
		if g == nil {
			g = &group{decision: m.Incident.Decision, best: i}
			groups[m.Incident.Decision] = g
			order = append(order, g)
		}
		g.count++
		if better(m, matches[g.best]) {
			g.best = i
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return ranks(order[i], order[j], matches) })

	switch {
	case tr.StrongCount == 0 && len(matches) == 0:
		tr.Decision = openrecall.DecisionEscalated
		tr.EscalationReason = "no memory matches"
	case tr.StrongCount == 0:
		tr.Decision = openrecall.DecisionEscalated
		tr.Confidence = clamp(tr.BestScore)
		if !haveBest {
			tr.EscalationReason = "no strong memory match (no match has a score)"
			break
		}
		best, thr := versus(tr.BestScore, cfg.StrongMatch, 2, 17)
		tr.EscalationReason = fmt.Sprintf("no strong memory match (best score %s < %s)", best, thr)
	default:
		var dom *group
		for _, g := range order {
			if g.decision.Retainable() {
				dom = g
				break
			}
		}
		if dom == nil {
			tr.Decision = openrecall.DecisionEscalated
			tr.EscalationReason = "strong memory matches carry no usable decision: " + split(order)
			break
		}
		n := tr.StrongCount
		tr.ConsistentCount = dom.count
		tr.Consistency = float64(dom.count) / float64(n)
		tr.Confidence = clamp(tr.Consistency * float64(n+1) / float64(n+2))
		var sevs []openrecall.Severity
		for _, m := range matches {
			if strong(m, cfg) && m.Incident.Decision == dom.decision {
				tr.Supporting = append(tr.Supporting, m.Incident.ID)
				sevs = append(sevs, m.Incident.Severity)
			}
		}
		tr.SupportSeverity = openrecall.MostSevere(sevs...)
		if tr.Consistency < cfg.Consistency {
			tr.Decision = openrecall.DecisionEscalated
			tr.EscalationReason = "memory split: " + split(order)
			break
		}
		tr.Decision = dom.decision
	}
	tr.RequiresHumanApproval = tr.Decision == openrecall.DecisionEscalated ||
		tr.Decision == openrecall.DecisionReal || fp.HasAttack() ||
		tr.Decision.Benign() && openrecall.MoreSevere(tr.AlertSeverity, tr.SupportSeverity)
	return tr
}

// strong reports whether m is a strong match: not related, and scored at or
// above the threshold (NaN never is).
func strong(m openrecall.Match, cfg Config) bool {
	return !m.Related && m.Score >= cfg.StrongMatch
}

// group is the strong matches that carry one decision.
type group struct {
	decision openrecall.Decision
	count    int
	best     int // index into matches of the group's best strong match
}

// better reports whether match a outranks b as its decision's best match:
// higher score, then newer.
func better(a, b openrecall.Match) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Incident.CreatedAt.After(b.Incident.CreatedAt)
}

// ranks reports whether group a comes before group b: more matches, then a
// better best match, then the smaller decision name.
func ranks(a, b *group, matches []openrecall.Match) bool {
	if a.count != b.count {
		return a.count > b.count
	}
	ma, mb := matches[a.best], matches[b.best]
	if better(ma, mb) {
		return true
	}
	if better(mb, ma) {
		return false
	}
	return a.decision < b.decision
}

// split describes the strong matches by decision, dominant first, such as
// "3 known_benign, 2 real".
func split(order []*group) string {
	parts := make([]string, len(order))
	for i, g := range order {
		name := string(g.decision)
		if !g.decision.Valid() {
			name = strconv.Quote(name)
		}
		parts[i] = fmt.Sprintf("%d %s", g.count, name)
	}
	return strings.Join(parts, ", ")
}

func clamp(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}

// versus formats v with at least minDecimals decimals, and more (up to
// maxDecimals) while it would read the same as the threshold it is compared
// with, and the threshold in its shortest form: so "0.8499 < 0.85" never
// reads "0.85 < 0.85".
func versus(v, threshold float64, minDecimals, maxDecimals int) (string, string) {
	thr := strconv.FormatFloat(threshold, 'f', -1, 64)
	for d := minDecimals; ; d++ {
		s := strconv.FormatFloat(v, 'f', d, 64)
		if v == threshold || d >= maxDecimals {
			return s, thr
		}
		if parsed, err := strconv.ParseFloat(s, 64); err == nil && parsed != threshold {
			return s, thr
		}
	}
}
